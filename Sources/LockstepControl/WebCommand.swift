import Foundation
import LockstepSession

/// One command from the web page (or any WebSocket or HTTP client), as a JSON object: the verb
/// of the typed-line surface in `command`, with its arguments named.
///
/// ```json
/// {"command": "go"}                    {"command": "go", "cue": "bell"}
/// {"command": "start", "cue": "2"}     {"command": "stop"}          {"command": "panic"}
/// {"command": "pause"}                 {"command": "resume", "cue": "bed"}
/// {"command": "next"}                  {"command": "previous"}      {"command": "select", "cue": "horn"}
/// {"command": "gain", "layer": "bed", "gainDB": -6, "ramp": 0.05}
/// {"command": "level", "cue": "bell", "gainDB": -3, "ramp": "250ms"}
/// {"command": "seek", "time": "1:30"}  {"command": "status"}  {"command": "reset"}
/// {"command": "panic", "time": 3}      {"command": "panic", "cue": "bed", "time": "500ms"}
/// {"command": "load", "cue": "3", "time": "0:30"}
/// {"command": "set", "cue": "bell", "key": "pre_wait", "value": "1.5"}
/// {"command": "audition", "cue": "bell"}   {"command": "stop-audition"}
/// {"command": "save"}                  {"command": "save", "force": true}
/// {"command": "undo"}                  {"command": "redo"}
/// {"command": "set", "cue": "bell", "values": {"type": "fade", "target": "bed", "level": -12, "file": null}}
/// {"command": "add", "values": {"file": "door.wav", "at": "manual"}, "after": "bell"}
/// {"command": "set-layer", "layer": "bed", "values": {"gain": "-6dB", "channel_map": "2,1"}}
/// {"command": "learn", "do": "go bell"}  {"command": "learn", "cancel": true}
/// {"command": "duplicate", "cue": "bell"}  {"command": "delete", "cue": "bell"}
/// {"command": "move", "cue": "bell", "after": "intro"}  {"command": "move", "cue": "bell", "group": "act 2"}
/// ```
///
/// The reply's `address` is the verb, as for a typed line. A cue is its name, or its number
/// (a JSON number or a string) as ``CueReference`` resolves it. Pure (text in, command or error
/// out), so the web server (`LockstepWeb`), the tests and the fuzzer share it.
public enum WebCommand {
    /// The largest command accepted, in bytes (a WebSocket message or an HTTP body).
    public static let maximumSize = 16 * 1024

    /// The page's GO, byte for byte as its `JSON.stringify` writes it: recognized without a JSON
    /// decoder, whose code and data, cold after the streamers' work among thousands of layers,
    /// cost a GO 60–100 µs. Any other spelling is decoded.
    static let pageGo = #"{"command":"go"}"#

    /// Parses one JSON command into the dispatcher's command and the reply's address.
    /// - Throws: ``ControlError`` saying what is wrong and how to write it.
    public static func parse(_ text: String) throws(ControlError) -> (command: ControlCommand, address: String) {
        guard text.utf8.count <= maximumSize else {
            throw ControlError(.malformed, "the command is \(text.utf8.count) bytes; the limit is \(maximumSize). Send one short JSON object, e.g. {\"command\":\"go\"}")
        }
        if text == pageGo { return (.go(nil), "go") }
        // An object at once: a command is one (trying other kinds first costs a thrown error each).
        let decoder = JSONDecoder()
        let data = Data(text.utf8)
        guard let fields = try? decoder.decode([String: ControlValue].self, from: data) else {
            guard let value = try? decoder.decode(ControlValue.self, from: data) else {
                throw ControlError(.malformed, "not JSON: send one object such as {\"command\":\"go\"}")
            }
            throw ControlError(.malformed, "a command is a JSON object such as {\"command\":\"go\"}, not \(value.json.prefix(40))")
        }
        guard let verb = fields["command"]?.stringValue?.lowercased() else {
            throw ControlError(.malformed, "the object has no \"command\" string; write e.g. {\"command\":\"go\"} (commands: \(ControlLine.verbs.joined(separator: ", ")))")
        }
        return (try command(verb, fields), verb)
    }

    private static func command(_ verb: String, _ fields: [String: ControlValue]) throws(ControlError) -> ControlCommand {
        func cue(required: Bool) throws(ControlError) -> CueReference? {
            switch fields["cue"] {
            case nil, .null?:
                if required { throw ControlError(.malformed, "'\(verb)' needs a cue: {\"command\":\"\(verb)\",\"cue\":\"NAME\"} (a name, or its number)") }
                return nil
            case .string(let name)?: return .name(name)
            case .integer(let number)?: return .number(Int(clamping: number))
            default: throw ControlError(.malformed, "\(verb): \"cue\" is a name or a number")
            }
        }
        /// Runs a range check (``LockstepSession/ControlRange``: the ranges and messages of every
        /// surface), its error as a ``ControlError``.
        func checked<T>(_ body: () throws(ControlRangeError) -> T) throws(ControlError) -> T {
            do { return try body() } catch { throw ControlError(.outOfRange, error.message) }
        }
        func number(_ key: String) throws(ControlError) -> Double {
            let decibels: Double
            switch fields[key] {
            case .integer(let number)?: decibels = Double(number)
            case .number(let number)? where !number.isNaN: decibels = number
            case .string(let text)? where SessionGain.parse(text) != nil: decibels = SessionGain.parse(text)!
            default: throw ControlError(.malformed, "\(verb): \"\(key)\" is a number of dB (or \"-inf\")")
            }
            return try checked { () throws(ControlRangeError) in try ControlRange.gain(decibels, for: verb) }
        }
        /// A ramp: seconds as a number, or a time in the one syntax as a string ("250ms",
        /// "4800 samples"); none is 0.
        func ramp() throws(ControlError) -> SessionTime {
            try checked { () throws(ControlRangeError) -> SessionTime in
                switch fields["ramp"] {
                case nil, .null?: return .seconds(0)
                case .integer(let number)?: return try ControlRange.ramp(seconds: Double(number), for: verb)
                case .number(let number)?: return try ControlRange.ramp(seconds: number, for: verb)
                case .string(let text)?: return try ControlRange.ramp(text: text, for: verb)
                case let other?: throw ControlRange.rampProblem(other.json, for: verb)
                }
            }
        }
        /// The \"time\": seconds as a number, or a time in the one syntax as a string.
        func time(_ what: String) throws(ControlError) -> SessionTime {
            switch fields["time"] {
            case .integer(let seconds)?:
                return try checked { () throws(ControlRangeError) in try ControlRange.time(seconds: Double(seconds), for: what) }
            case .number(let seconds)?:
                return try checked { () throws(ControlRangeError) in try ControlRange.time(seconds: seconds, for: what) }
            case .string(let text)?:
                do { return try SessionTime.parse(text, as: what) } catch { throw ControlError(error.isOutOfRange ? .outOfRange : .malformed, error.description) }
            default:
                throw ControlError(.malformed, "\(what) needs a \"time\": {\"command\":\"\(what)\",\"time\":\"1:30\"}; \(SessionTime.formsHint)")
            }
        }
        switch verb {
        case "go": return .go(try cue(required: false))
        case "start": return .startCue(try cue(required: true)!)
        case "stop": return try cue(required: false).map(ControlCommand.stopCue) ?? .stop
        case "pause": return try cue(required: false).map(ControlCommand.pauseCue) ?? .pause
        case "resume": return try cue(required: false).map(ControlCommand.resumeCue) ?? .resume
        case "panic":
            let cue = try cue(required: false)
            let fade: SessionTime? = fields["time"] == nil ? nil : try time("panic")
            if let cue { return .panicCue(cue, fade: fade) }
            return fade.map { .panicIn($0) } ?? .panic
        case "load":
            return .loadCue(try cue(required: true)!, try time("load"), .set)
        case "audition": return .audition(try cue(required: false))
        case "stop-audition": return .stopAudition
        case "undo": return .undo
        case "redo": return .redo
        case "override":
            guard let name = fields["key"]?.stringValue, let key = ShowOverrides.Key(rawValue: name) else {
                throw ControlError(.malformed, "override needs a \"key\" (\(ShowOverrides.Key.allCases.map(\.rawValue).joined(separator: ", "))) and \"enabled\": true or false (none: asks)")
            }
            if case .bool(let enabled)? = fields["enabled"] { return .override(key, enabled) }
            return .override(key, nil)
        case "save":
            if case .bool(let force)? = fields["force"] { return .save(force: force) }
            return .save(force: false)
        case "next": return .selectNext
        case "previous": return .selectPrevious
        case "status": return .status
        case "reset": return .reset
        case "select": return .selectPlayhead(try cue(required: true)!)
        case "seek": return .seek(try time("seek"))
        case "gain":
            guard let layer = fields["layer"]?.stringValue else {
                throw ControlError(.malformed, "gain needs a \"layer\": {\"command\":\"gain\",\"layer\":\"bed\",\"gainDB\":-6}")
            }
            return .setLayerGain(layer: layer, decibels: try number("gainDB"), ramp: try ramp())
        case "level":
            return .setCueLevel(try cue(required: true)!, decibels: try number("gainDB"), ramp: try ramp())
        case "add", "duplicate", "delete", "move", "group", "set-layer", "unlearn":
            return .restructure(try CueStructureEdit.parse(web: verb, fields, cue: try cue(required: false)))
        case "learn":
            if fields["cancel"] == .bool(true) { return .learnMIDI(nil) }
            guard let action = fields["do"]?.stringValue, !action.isEmpty else {
                throw ControlError(.malformed, "learn needs \"do\", the action the MIDI message will send: {\"command\":\"learn\",\"do\":\"go bell\"} (or \"cancel\": true)")
            }
            return .learnMIDI(action)
        case "set" where fields["values"] != nil:
            return .restructure(try CueStructureEdit.parse(web: verb, fields, cue: try cue(required: true)))
        case "set":
            let cue = try cue(required: true)!
            guard let key = fields["key"]?.stringValue else {
                throw ControlError(.malformed, "set needs a \"key\" (\(CueEdit.keys.joined(separator: ", "))): {\"command\":\"set\",\"cue\":\"bell\",\"key\":\"pre_wait\",\"value\":\"1.5\"}")
            }
            let value: String
            switch fields["value"] {
            case .string(let text)?: value = text
            case .integer(let number)?: value = String(number)
            case .number(let number)?: value = String(number)
            case .null?: value = "none"
            default: throw ControlError(.malformed, "set needs a \"value\": a string, a number, or null to clear")
            }
            return try ControlLine.edit(cue, key: key, value: value)
        default:
            throw ControlError(.unknownCommand, "unknown command '\(verb)'; the commands are \(ControlLine.verbs.joined(separator: ", "))")
        }
    }
}
