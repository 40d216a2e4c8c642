/// A MIDI message, as the MIDI control surface reads it: the messages triggers answer, anything
/// else valid kept by kind, and a broken message refused with what is wrong.
///
/// ```swift
/// let message = try MIDIMessage(bytes: [0x90, 60, 100])    // .noteOn(channel: 1, note: 60, velocity: 100)
/// let msc = try MIDIMessage(bytes: [0xF0, 0x7F, 0x01, 0x02, 0x10, 0x01, 0x31, 0x2E, 0x35, 0xF7])
/// // .showControl(ShowControlMessage(device: 1, format: 0x10, command: 1, cueNumber: "1.5", …))
/// ```
public enum MIDIMessage: Sendable, Hashable, CustomStringConvertible {
    /// A note on with a velocity above 0 (channel 1…16).
    case noteOn(channel: Int, note: Int, velocity: Int)
    /// A note off, or a note on with velocity 0 (which MIDI defines as a note off).
    case noteOff(channel: Int, note: Int, velocity: Int)
    /// A control change.
    case controlChange(channel: Int, controller: Int, value: Int)
    /// A program change (program 0…127, as sent).
    case programChange(channel: Int, program: Int)
    /// A MIDI Show Control command (universal real-time SysEx, sub-ID 02).
    case showControl(ShowControlMessage)
    /// Any other well-formed message (aftertouch, pitch bend, clock, other SysEx…), by its status
    /// byte: nothing answers it.
    case other(status: UInt8)

    /// Reads one message.
    /// - Throws: ``MIDIMessageError`` for an empty message, a missing status byte, the wrong
    ///   number of data bytes, a data byte of 128 or more, or a SysEx message that does not end
    ///   with `F7` (or is a broken MIDI Show Control message).
    public init(bytes: [UInt8]) throws(MIDIMessageError) {
        guard let status = bytes.first else { throw MIDIMessageError("an empty MIDI message") }
        guard status >= 0x80 else {
            throw MIDIMessageError("a MIDI message must start with a status byte (80…FF), not \(Self.hex(status))")
        }
        if status == 0xF0 {
            guard bytes.count >= 2, bytes.last == 0xF7 else { throw MIDIMessageError("a SysEx message that does not end with F7") }
            guard let bad = bytes.dropFirst().dropLast().first(where: { $0 >= 0x80 }) else {
                if bytes.count >= 4 && bytes[1] == 0x7F && bytes[3] == 0x02 {
                    self = .showControl(try ShowControlMessage(sysex: bytes))
                } else {
                    self = .other(status: status)
                }
                return
            }
            throw MIDIMessageError("a SysEx message with status byte \(Self.hex(bad)) inside it")
        }
        let expected: Int
        switch status {
        case 0x80...0xBF, 0xE0...0xEF, 0xF2: expected = 3
        case 0xC0...0xDF, 0xF1, 0xF3: expected = 2
        case 0xF7: throw MIDIMessageError("an F7 (end of SysEx) with no SysEx before it")
        default: expected = 1                       // F4…FF: tune request, real-time, undefined
        }
        guard bytes.count == expected else {
            throw MIDIMessageError("a \(Self.hex(status)) message has \(bytes.count - 1) data byte\(bytes.count == 2 ? "" : "s"); it takes \(expected - 1)")
        }
        if let bad = bytes.dropFirst().first(where: { $0 >= 0x80 }) {
            throw MIDIMessageError("a \(Self.hex(status)) message with data byte \(Self.hex(bad)); data bytes are 00…7F")
        }
        let channel = Int(status & 0x0F) + 1
        switch status & 0xF0 {
        case 0x90 where bytes[2] > 0: self = .noteOn(channel: channel, note: Int(bytes[1]), velocity: Int(bytes[2]))
        case 0x80, 0x90: self = .noteOff(channel: channel, note: Int(bytes[1]), velocity: Int(bytes[2]))
        case 0xB0: self = .controlChange(channel: channel, controller: Int(bytes[1]), value: Int(bytes[2]))
        case 0xC0: self = .programChange(channel: channel, program: Int(bytes[1]))
        default: self = .other(status: status)
        }
    }

    /// A short human-readable form: `note 60 velocity 100 ch 1`, `cc 20=127 ch 1`,
    /// `program 4 ch 1`, `msc go 1.5 device 1`.
    public var description: String {
        switch self {
        case .noteOn(let channel, let note, let velocity): return "note \(note) velocity \(velocity) ch \(channel)"
        case .noteOff(let channel, let note, _): return "note off \(note) ch \(channel)"
        case .controlChange(let channel, let controller, let value): return "cc \(controller)=\(value) ch \(channel)"
        case .programChange(let channel, let program): return "program \(program) ch \(channel)"
        case .showControl(let message): return message.description
        case .other(let status): return "MIDI \(Self.hex(status))"
        }
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }
}

/// A MIDI Show Control message: `F0 7F <device> 02 <format> <command> <data> F7`.
///
/// For GO, STOP, RESUME, LOAD and GO_OFF the data is an optional cue number, then (each after a
/// `00`) an optional cue list and cue path: ASCII digits and `.` (`1.5`).
public struct ShowControlMessage: Sendable, Hashable, CustomStringConvertible {
    /// The device ID it is addressed to: 0…111 a device, 112…126 a group, 127 all call.
    public var device: Int
    /// The command format (`01` lighting, `10` sound, `7F` all types…).
    public var format: UInt8
    /// The command byte (`01` GO, `02` STOP, `03` RESUME, `08` ALL_OFF…).
    public var command: UInt8
    /// The cue number it carries (`1.5`), nil for none.
    public var cueNumber: String?
    /// The cue list it names, nil for none.
    public var cueList: String?
    /// The cue path it names, nil for none.
    public var cuePath: String?

    /// The all-call device ID: every device answers it.
    public static let allCall = 127

    /// Creates a message.
    public init(device: Int, format: UInt8 = 0x10, command: UInt8, cueNumber: String? = nil, cueList: String? = nil,
                cuePath: String? = nil) {
        self.device = device
        self.format = format
        self.command = command
        self.cueNumber = cueNumber
        self.cueList = cueList
        self.cuePath = cuePath
    }

    /// Reads a complete SysEx message (`F0 7F … 02 … F7`).
    /// - Throws: ``MIDIMessageError`` when it is too short, or its cue fields hold anything but
    ///   digits and `.`.
    public init(sysex bytes: [UInt8]) throws(MIDIMessageError) {
        guard bytes.count >= 7, bytes[0] == 0xF0, bytes[1] == 0x7F, bytes[3] == 0x02, bytes.last == 0xF7 else {
            throw MIDIMessageError("a MIDI Show Control message is F0 7F <device> 02 <format> <command> … F7; this one has \(bytes.count) bytes")
        }
        device = Int(bytes[2])
        format = bytes[4]
        command = bytes[5]
        let data = Array(bytes[6..<(bytes.count - 1)])
        // GO, STOP, RESUME, LOAD, GO_OFF and friends carry Q_number 00 Q_list 00 Q_path.
        guard [0x01, 0x02, 0x03, 0x05, 0x0B, 0x10, 0x11].contains(command) else { return }
        var fields: [String] = []
        for part in data.split(separator: 0x00, omittingEmptySubsequences: false) {
            guard part.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }) else {
                throw MIDIMessageError("a MIDI Show Control cue number holds \(part.map(MIDIMessage.hex).joined(separator: " ")); cue numbers are ASCII digits and '.'")
            }
            fields.append(String(decoding: part, as: UTF8.self))
        }
        guard fields.count <= 3 else { throw MIDIMessageError("a MIDI Show Control message with \(fields.count) cue fields; it has at most number, list and path") }
        func field(_ index: Int) -> String? { fields.indices.contains(index) && !fields[index].isEmpty ? fields[index] : nil }
        cueNumber = field(0)
        cueList = field(1)
        cuePath = field(2)
    }

    /// The message's bytes.
    public var bytes: [UInt8] {
        var result: [UInt8] = [0xF0, 0x7F, UInt8(clamping: device), 0x02, format, command]
        let fields = [cueNumber, cueList, cuePath]
        let last = fields.lastIndex { $0 != nil } ?? -1
        if last >= 0 {
            for index in 0...last {
                if index > 0 { result.append(0x00) }
                result += Array((fields[index] ?? "").utf8)
            }
        }
        result.append(0xF7)
        return result
    }

    /// The command's name as MIDI Show Control names it (`go`, `stop`, `resume`, `all_off`…).
    public var commandName: String {
        switch command {
        case 0x01: return "go"
        case 0x02: return "stop"
        case 0x03: return "resume"
        case 0x04: return "timed_go"
        case 0x05: return "load"
        case 0x06: return "set"
        case 0x07: return "fire"
        case 0x08: return "all_off"
        case 0x09: return "restore"
        case 0x0A: return "reset"
        case 0x0B: return "go_off"
        default: return "command \(MIDIMessage.hex(command))"
        }
    }

    /// `msc go 1.5 device 1`.
    public var description: String {
        "msc \(commandName)\(cueNumber.map { " \($0)" } ?? "") device \(device)"
    }
}

/// A MIDI message that could not be read, and what is wrong with it.
public struct MIDIMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
