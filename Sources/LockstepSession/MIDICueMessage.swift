/// The MIDI message a MIDI cue sends (`type: midi`), as its keys give it, with its bytes on the
/// wire: a channel voice message, a MIDI Show Control command or a SysEx message.
///
/// ```yaml
/// - { name: lights, type: midi, note: 60, velocity: 100, channel: 2, at: 5 }
/// - { name: desk,   type: midi, msc: go, q_number: 12, device: 1, at: manual }
/// ```
public struct MIDICueMessage: Sendable, Hashable, CustomStringConvertible {
    /// What it says.
    public enum Kind: Sendable, Hashable {
        /// A note on (`note`, `velocity`).
        case noteOn(note: Int, velocity: Int)
        /// A note off (`note_off`, `velocity`).
        case noteOff(note: Int, velocity: Int)
        /// A control change (`cc`, `value`).
        case controlChange(controller: Int, value: Int)
        /// A program change (`program`, 0…127 as sent).
        case programChange(Int)
        /// A pitch bend (`pitch_bend`, −8192…8191, 0 the centre).
        case pitchBend(Int)
        /// A MIDI Show Control command (`msc`) to `device` in `format`, with an optional cue
        /// number and list.
        case showControl(ShowControlCommand, device: Int, format: Int, cueNumber: String?, cueList: String?)
        /// A whole SysEx message (`sysex`), `F0` to `F7`.
        case systemExclusive([UInt8])
    }

    /// The MIDI Show Control commands a MIDI cue sends, with their command bytes.
    public enum ShowControlCommand: String, Sendable, Hashable, CaseIterable {
        /// GO (01).
        case go
        /// STOP (02).
        case stop
        /// RESUME (03).
        case resume
        /// LOAD (05).
        case load
        /// ALL_OFF (08).
        case allOff = "all_off"
        /// RESTORE (09).
        case restore
        /// RESET (0A).
        case reset
        /// GO_OFF (0B).
        case goOff = "go_off"

        /// The command byte.
        public var byte: UInt8 {
            switch self {
            case .go: return 0x01
            case .stop: return 0x02
            case .resume: return 0x03
            case .load: return 0x05
            case .allOff: return 0x08
            case .restore: return 0x09
            case .reset: return 0x0A
            case .goOff: return 0x0B
            }
        }

        /// Whether it carries a cue number and list.
        public var takesCue: Bool { [.go, .stop, .resume, .load, .goOff].contains(self) }
    }

    /// What it says.
    public var kind: Kind
    /// The channel of a channel voice message (1…16; ignored by MSC and SysEx).
    public var channel: Int

    /// The longest message sent, in bytes (a SysEx message longer is refused by the parser).
    public static let maximumBytes = 256
    /// The MIDI Show Control all-call device ID.
    public static let allCall = 127
    /// MIDI Show Control's "all types" command format.
    public static let allTypes = 0x7F

    /// A message on `channel`.
    public init(_ kind: Kind, channel: Int = 1) {
        self.kind = kind
        self.channel = channel
    }

    /// The message's bytes as they go out.
    public var bytes: [UInt8] {
        let status = UInt8(max(0, min(15, channel - 1)))
        switch kind {
        case .noteOn(let note, let velocity): return [0x90 | status, UInt8(note), UInt8(velocity)]
        case .noteOff(let note, let velocity): return [0x80 | status, UInt8(note), UInt8(velocity)]
        case .controlChange(let controller, let value): return [0xB0 | status, UInt8(controller), UInt8(value)]
        case .programChange(let program): return [0xC0 | status, UInt8(program)]
        case .pitchBend(let value):
            let raw = value + 8192
            return [0xE0 | status, UInt8(raw & 0x7F), UInt8(raw >> 7)]
        case .showControl(let command, let device, let format, let number, let list):
            var bytes: [UInt8] = [0xF0, 0x7F, UInt8(device), 0x02, UInt8(format), command.byte]
            if let number {
                bytes += Array(number.utf8)
                if let list { bytes += [0x00] + Array(list.utf8) }
            }
            return bytes + [0xF7]
        case .systemExclusive(let bytes): return bytes
        }
    }

    /// A short form: `note 60 velocity 100 ch 2`, `msc go 12 device 1`, `sysex F0 7D 01 F7`.
    public var description: String {
        switch kind {
        case .noteOn(let note, let velocity): return "note \(note) velocity \(velocity) ch \(channel)"
        case .noteOff(let note, let velocity): return "note off \(note) velocity \(velocity) ch \(channel)"
        case .controlChange(let controller, let value): return "cc \(controller)=\(value) ch \(channel)"
        case .programChange(let program): return "program \(program) ch \(channel)"
        case .pitchBend(let value): return "pitch bend \(value) ch \(channel)"
        case .showControl(let command, let device, _, let number, let list):
            return "msc \(command.rawValue)" + (number.map { " \($0)" } ?? "") + (list.map { " list \($0)" } ?? "") + " device \(device)"
        case .systemExclusive(let bytes): return "sysex " + Self.hex(bytes)
        }
    }

    /// `bytes` as upper-case hex pairs separated by spaces.
    public static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { $0 < 16 ? "0" + String($0, radix: 16, uppercase: true) : String($0, radix: 16, uppercase: true) }
            .joined(separator: " ")
    }

    /// Reads a SysEx message written as hex pairs (`F0 7D 01 02 F7`, spaces optional).
    /// - Returns: the bytes, or what is wrong with them and how to write them.
    public static func parseSystemExclusive(_ text: String) -> Result<[UInt8], MIDICueMessageError> {
        let digits = text.filter { !$0.isWhitespace }
        guard digits.count.isMultiple(of: 2), !digits.isEmpty else {
            return .failure(MIDICueMessageError("'\(text.prefix(40))' is not hex bytes; write pairs of hex digits such as F0 7D 01 F7"))
        }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else {
                return .failure(MIDICueMessageError("'\(digits[index..<next])' is not a hex byte; write pairs of hex digits such as F0 7D 01 F7"))
            }
            bytes.append(byte)
            index = next
        }
        guard bytes.count >= 3, bytes.first == 0xF0, bytes.last == 0xF7 else {
            return .failure(MIDICueMessageError("a SysEx message starts with F0, ends with F7 and has data between; write e.g. F0 7D 01 F7"))
        }
        if let bad = bytes.dropFirst().dropLast().first(where: { $0 >= 0x80 }) {
            return .failure(MIDICueMessageError("a SysEx message's data bytes are 00…7F; this one holds \(hex([bad]))"))
        }
        guard bytes.count <= maximumBytes else {
            return .failure(MIDICueMessageError("a SysEx message of \(bytes.count) bytes; a MIDI cue sends at most \(maximumBytes)"))
        }
        return .success(bytes)
    }
}

/// Why a MIDI cue's message cannot be read.
public struct MIDICueMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong and how to write it.
    public var message: String
    init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
