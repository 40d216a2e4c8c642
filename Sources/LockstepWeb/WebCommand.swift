import Foundation
import LockstepControl
import LockstepSession

/// One command from the web page (or any WebSocket or HTTP client), as a JSON object: the verb
/// of the typed-line surface in `command`, with its arguments named.
///
/// ```json
/// {"command": "go"}                    {"command": "go", "cue": "bell"}
/// {"command": "start", "cue": "2"}     {"command": "stop"}          {"command": "panic"}
/// {"command": "pause"}                 {"command": "resume", "cue": "bed"}
/// {"command": "next"}                  {"command": "previous"}      {"command": "select", "cue": "horn"}
/// {"command": "gain", "layer": "bed", "decibels": -6, "ramp": 0.05}
/// {"command": "level", "cue": "bell", "decibels": -3}
/// {"command": "seek", "time": "1:30"}  {"command": "status"}
/// ```
///
/// The reply's `address` is the verb, as for a typed line. A cue is its name, or its number
/// (a JSON number or a string) as ``LockstepControl/CueReference`` resolves it.
public enum WebCommand {
    /// The largest command accepted, in bytes (a WebSocket message or an HTTP body).
    public static let maximumSize = 16 * 1024

    /// Parses one JSON command into the dispatcher's command and the reply's address.
    /// - Throws: ``LockstepControl/ControlError`` saying what is wrong and how to write it.
    public static func parse(_ text: String) throws(ControlError) -> (command: ControlCommand, address: String) {
        guard text.utf8.count <= maximumSize else {
            throw ControlError("the command is \(text.utf8.count) bytes; the limit is \(maximumSize). Send one short JSON object, e.g. {\"command\":\"go\"}")
        }
        let value: ControlValue
        do { value = try JSONDecoder().decode(ControlValue.self, from: Data(text.utf8)) } catch {
            throw ControlError("not JSON: send one object such as {\"command\":\"go\"}")
        }
        guard case .object(let fields) = value else {
            throw ControlError("a command is a JSON object such as {\"command\":\"go\"}, not \(value.json.prefix(40))")
        }
        guard let verb = fields["command"]?.stringValue?.lowercased() else {
            throw ControlError("the object has no \"command\" string; write e.g. {\"command\":\"go\"} (commands: \(ControlLine.verbs.joined(separator: ", ")))")
        }
        return (try command(verb, fields), verb)
    }

    private static func command(_ verb: String, _ fields: [String: ControlValue]) throws(ControlError) -> ControlCommand {
        func cue(required: Bool) throws(ControlError) -> CueReference? {
            switch fields["cue"] {
            case nil, .null?:
                if required { throw ControlError("'\(verb)' needs a cue: {\"command\":\"\(verb)\",\"cue\":\"NAME\"} (a name, or its number)") }
                return nil
            case .string(let name)?: return .name(name)
            case .integer(let number)?: return .number(Int(clamping: number))
            default: throw ControlError("\(verb): \"cue\" is a name or a number")
            }
        }
        func number(_ key: String, default value: Double? = nil) throws(ControlError) -> Double {
            switch fields[key] {
            case .integer(let number)?: return Double(number)
            case .number(let number)? where number.isFinite: return number
            case .string(let text)? where key == "decibels" && SessionGain.parse(text) != nil: return SessionGain.parse(text)!
            case nil where value != nil: return value!
            default: throw ControlError("\(verb): \"\(key)\" is a number\(key == "decibels" ? " of dB (or \"-inf\")" : " of seconds")")
            }
        }
        switch verb {
        case "go": return .go(try cue(required: false))
        case "start": return .startCue(try cue(required: true)!)
        case "stop": return try cue(required: false).map(ControlCommand.stopCue) ?? .stop
        case "pause": return try cue(required: false).map(ControlCommand.pauseCue) ?? .pause
        case "resume": return try cue(required: false).map(ControlCommand.resumeCue) ?? .resume
        case "panic": return .panic
        case "next": return .selectNext
        case "previous": return .selectPrevious
        case "status": return .status
        case "select": return .selectPlayhead(try cue(required: true)!)
        case "seek":
            guard let text = fields["time"]?.stringValue ?? fields["time"]?.integerValue.map(String.init),
                  let time = SessionTime.parse(text) else {
                throw ControlError("seek needs a \"time\": {\"command\":\"seek\",\"time\":\"1:30\"}; \(SessionTime.formsHint)")
            }
            return .seek(time)
        case "gain":
            guard let layer = fields["layer"]?.stringValue else {
                throw ControlError("gain needs a \"layer\": {\"command\":\"gain\",\"layer\":\"bed\",\"decibels\":-6}")
            }
            let ramp = try number("ramp", default: 0)
            guard ramp >= 0 && ramp <= 3600 else { throw ControlError("gain: \"ramp\" is 0 to 3600 seconds") }
            return .setLayerGain(layer: layer, decibels: try number("decibels"), ramp: ramp)
        case "level":
            let ramp = try number("ramp", default: 0)
            guard ramp >= 0 && ramp <= 3600 else { throw ControlError("level: \"ramp\" is 0 to 3600 seconds") }
            return .setCueLevel(try cue(required: true)!, decibels: try number("decibels"), ramp: ramp)
        default:
            throw ControlError("unknown command '\(verb)'; the commands are \(ControlLine.verbs.joined(separator: ", "))")
        }
    }
}
