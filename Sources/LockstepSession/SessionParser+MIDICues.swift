import Foundation

/// MIDI cues (`type: midi`): one message key (`note`, `note_off`, `cc`, `program`, `pitch_bend`,
/// `msc`, `sysex`, as triggers name them) and what goes with it.
extension SessionParser {
    /// The keys of a MIDI cue.
    public static let midiCueKeys = ["note", "note_off", "cc", "program", "pitch_bend", "msc", "sysex", "channel", "velocity",
                                     "value", "device", "command_format", "q_number", "q_list"]
    static let midiMessageKeys: Set<String> = ["note", "note_off", "cc", "program", "pitch_bend", "msc", "sysex"]

    /// Reads one of a MIDI cue's keys into its fields (checked together by ``finishMIDI(of:item:label:)``).
    mutating func midiKey(_ key: String, _ value: YAMLNode, of cue: inout SessionDocument.Cue, label: String) {
        func number(_ range: ClosedRange<Int>, _ what: String) -> Int? {
            guard let text = scalar(value, "\(label) \(key)", expecting: what) else { return nil }
            let signed = text.hasPrefix("-") ? Self.wholeNumber(String(text.dropFirst())).map { -$0 } : Self.wholeNumber(text)
            guard let number = signed, range.contains(number) else {
                report(.invalidValue, value, "\(label): \(key) '\(Self.excerpt(text))' is not \(what); write a whole number from \(range.lowerBound) to \(range.upperBound)")
                return nil
            }
            return number
        }
        var fields = cue.action.midiFields
        switch key {
        case _ where Self.midiMessageKeys.contains(key):
            if let first = fields.messageKey {
                report(.conflict, value, "\(label) has both '\(first)' and '\(key)'; a MIDI cue sends one message: keep one of \(Self.midiMessageKeys.sorted().joined(separator: ", "))")
                fields.broken = true
                break
            }
            fields.messageKey = key
            switch key {
            case "note", "note_off": fields.first = number(0...127, "a MIDI note number")
            case "cc": fields.first = number(0...127, "a MIDI controller number")
            case "program": fields.first = number(0...127, "a MIDI program number (as sent, 0 to 127)")
            case "pitch_bend": fields.first = number(-8192...8191, "a pitch bend (0 is the centre)")
            case "msc":
                let names = MIDICueMessage.ShowControlCommand.allCases.map(\.rawValue)
                guard let text = scalar(value, "\(label) msc", expecting: "a MIDI Show Control command") else { break }
                if let command = MIDICueMessage.ShowControlCommand(rawValue: text.lowercased()) {
                    fields.command = command
                } else {
                    report(.invalidValue, value, "\(label): msc '\(Self.excerpt(text))' is not a MIDI Show Control command a MIDI cue sends\(Suggest.hint(for: text.lowercased(), in: names)); use one of \(names.joined(separator: ", "))")
                }
            default:
                guard let text = scalar(value, "\(label) sysex", expecting: "hex bytes such as F0 7D 01 F7") else { break }
                switch MIDICueMessage.parseSystemExclusive(text) {
                case .success(let bytes): fields.sysex = bytes
                case .failure(let error): report(.invalidValue, value, "\(label): sysex \(error.message)")
                }
            }
            if fields.first == nil && fields.command == nil && fields.sysex == nil { fields.broken = true }
        case "channel": fields.channel = number(1...16, "a MIDI channel") ?? { fields.broken = true; return nil }()
        case "velocity": fields.second = number(0...127, "a note velocity") ?? { fields.broken = true; return nil }()
        case "value": fields.second = number(0...127, "a controller value") ?? { fields.broken = true; return nil }()
        case "device": fields.device = number(0...127, "a MIDI Show Control device ID (127: all call)") ?? { fields.broken = true; return nil }()
        case "command_format": fields.format = number(0...127, "a MIDI Show Control command format (1 lighting, 16 sound, 127 all types)")
            ?? { fields.broken = true; return nil }()
        case "q_number", "q_list":
            let what = key == "q_number" ? "a cue number such as 12 or 1.5" : "a cue list number such as 2"
            guard let text = scalar(value, "\(label) \(key)", expecting: what) else { fields.broken = true; break }
            guard !text.isEmpty, text.count <= 32, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) else {
                report(.invalidValue, value, "\(label): \(key) '\(Self.excerpt(text))' is not \(what); MIDI Show Control numbers are digits and '.'")
                fields.broken = true
                break
            }
            if key == "q_number" { fields.cueNumber = text } else { fields.cueList = text }
        default: return
        }
        cue.action.midiFields = fields
    }

    /// Makes a MIDI cue's message from its keys, or reports what is missing or does not go with it.
    mutating func finishMIDI(of cue: inout SessionDocument.Cue, item: YAMLNode, label: String) {
        let fields = cue.action.midiFields
        guard let key = fields.messageKey else {
            diagnostics.append(SessionDiagnostic(.missingKey, at: cue.location,
                "\(label): a MIDI cue needs a message: one of \(Self.midiMessageKeys.sorted().joined(separator: ", ")) (e.g. 'note: 60' or 'msc: go')"))
            return
        }
        let isVoice = !["msc", "sysex"].contains(key)
        let goesWith: [String: Bool] = [
            "channel": isVoice, "velocity": key == "note" || key == "note_off", "value": key == "cc",
            "device": key == "msc", "command_format": key == "msc",
            "q_number": key == "msc" && fields.command?.takesCue != false, "q_list": key == "msc" && fields.command?.takesCue != false,
        ]
        var fine = !fields.broken
        for (other, right) in goesWith.sorted(by: { $0.key < $1.key }) where !right {
            guard let at = cue.keyLocations[other] else { continue }
            diagnostics.append(SessionDiagnostic(.conflict, at: at, "\(label): '\(other)' does not go with '\(key)'\(key == "msc" && other.hasPrefix("q_") ? " \(fields.command?.rawValue ?? "")" : ""); remove it"))
            fine = false
        }
        if key == "cc" && fields.second == nil && cue.keyLocations["value"] == nil {
            diagnostics.append(SessionDiagnostic(.missingKey, at: cue.location, "\(label): a control change needs 'value:' (0 to 127)"))
            fine = false
        }
        if fields.cueList != nil && fields.cueNumber == nil {
            diagnostics.append(SessionDiagnostic(.missingKey, at: cue.location(of: "q_list"), "\(label): 'q_list' names the list of a cue number; add 'q_number:'"))
            fine = false
        }
        guard fine else { return }
        let kind: MIDICueMessage.Kind
        switch key {
        case "note": kind = .noteOn(note: fields.first ?? 0, velocity: fields.second ?? 64)
        case "note_off": kind = .noteOff(note: fields.first ?? 0, velocity: fields.second ?? 64)
        case "cc": kind = .controlChange(controller: fields.first ?? 0, value: fields.second ?? 0)
        case "program": kind = .programChange(fields.first ?? 0)
        case "pitch_bend": kind = .pitchBend(fields.first ?? 0)
        case "msc":
            guard let command = fields.command else { return }
            kind = .showControl(command, device: fields.device ?? MIDICueMessage.allCall, format: fields.format ?? MIDICueMessage.allTypes,
                                cueNumber: fields.cueNumber, cueList: fields.cueList)
        default:
            guard let bytes = fields.sysex else { return }
            kind = .systemExclusive(bytes)
        }
        cue.action.midi = MIDICueMessage(kind, channel: fields.channel ?? 1)
    }
}

extension SessionDocument.Cue.Action {
    /// A MIDI cue's keys as read: the message key and the numbers that go with it.
    struct MIDIFields: Sendable, Hashable {
        var messageKey: String?
        var first: Int?
        var second: Int?
        var channel: Int?
        var command: MIDICueMessage.ShowControlCommand?
        var device: Int?
        var format: Int?
        var cueNumber: String?
        var cueList: String?
        var sysex: [UInt8]?
        /// A key's value was refused (reported): make no message.
        var broken = false
    }
}
