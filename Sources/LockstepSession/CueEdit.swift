/// One change to a cue's properties while the session runs (``SessionPlayer/edit(_:_:)``):
/// QLab's cue setters.
public enum CueEdit: Sendable, Hashable {
    /// Renames the cue; every `after`, `with` and `target` naming it follows.
    case name(String)
    /// Gives the cue a number (nil: none), unique in the session.
    case number(String?)
    /// The time between its trigger and its start (nil: none).
    case preWait(SessionTime?)
    /// With auto-continue, the time from its start to the next cue's (nil: none).
    case postWait(SessionTime?)
    /// How the next cue of its list starts.
    case continueMode(SessionDocument.ContinueMode)
    /// A fade's or wait's length; an audio cue's region length (its `to` moves, each pass that
    /// long).
    case duration(SessionTime)
    /// Where an audio cue's region starts in its file (nil: the file's start).
    case from(SessionTime?)
    /// Where an audio cue's region ends in its file (nil: the file's end).
    case to(SessionTime?)
    /// The cue's own gain in dB.
    case gain(Double)

    /// The session file's key it edits.
    public var key: String {
        switch self {
        case .name: return "name"
        case .number: return "number"
        case .preWait: return "pre_wait"
        case .postWait: return "post_wait"
        case .continueMode: return "continue"
        case .duration: return "duration"
        case .from: return "from"
        case .to: return "to"
        case .gain: return "gain"
        }
    }
}

extension CueEdit {
    /// The keys ``parse(key:value:)`` takes: the session file's.
    public static let keys = ["name", "number", "pre_wait", "post_wait", "continue", "duration", "from", "to", "gain"]

    /// The edit of session-file key `key` to `value` as typed (a time in the session format's
    /// syntax, a gain in dB, a continue mode; `none` clears a number, a wait or a region bound).
    /// - Throws: ``CueEditSyntaxError`` naming the key, the value and how to write it.
    public static func parse(key: String, value: String) throws(CueEditSyntaxError) -> CueEdit {
        let text = value.trimmingCharacters(in: .whitespaces)
        let clears = text.lowercased() == "none"
        func time() throws(CueEditSyntaxError) -> SessionTime? {
            if clears { return nil }
            do { return try SessionTime.parse(text, as: key) } catch {
                throw CueEditSyntaxError(key: key, value: text, isOutOfRange: error.isOutOfRange, message: error.description)
            }
        }
        switch key.lowercased() {
        case "name": return .name(text)
        case "number": return .number(clears || text.isEmpty ? nil : text)
        case "pre_wait": return .preWait(try time())
        case "post_wait": return .postWait(try time())
        case "from": return .from(try time())
        case "to": return .to(try time())
        case "duration":
            guard let duration = try time() else {
                throw CueEditSyntaxError(key: key, value: text, message: "duration: a cue's duration cannot be none; give a time such as 2.5")
            }
            return .duration(duration)
        case "continue":
            guard let mode = SessionDocument.ContinueMode(rawValue: text.lowercased()) else {
                let modes = SessionDocument.ContinueMode.allCases.map(\.rawValue)
                throw CueEditSyntaxError(key: key, value: text, message: "continue: unknown continue mode '\(text)'\(Suggest.hint(for: text.lowercased(), in: modes)); the modes are \(modes.joined(separator: ", "))")
            }
            return .continueMode(mode)
        case "gain":
            guard let gain = SessionGain.parse(text) else {
                throw CueEditSyntaxError(key: key, value: text, isOutOfRange: Double(text) != nil,
                                         message: "gain: '\(text)' is not a gain; write dB up to +\(Int(SessionGain.maximum)), e.g. -6 or -6dB or -inf")
            }
            return .gain(gain)
        default:
            throw CueEditSyntaxError(key: key, value: text, message: "unknown cue key '\(key)'\(Suggest.hint(for: key.lowercased(), in: keys)); the keys a cue edit takes are \(keys.joined(separator: ", "))")
        }
    }

    /// The new value as written back (`2 s`, `none`, `-6.0 dB`, `auto-follow`).
    public var valueText: String {
        switch self {
        case .name(let name): return name
        case .number(let number): return number ?? "none"
        case .preWait(let time), .postWait(let time), .from(let time), .to(let time): return time?.description ?? "none"
        case .continueMode(let mode): return mode.rawValue
        case .duration(let time): return time.description
        case .gain(let decibels): return SessionGain.format(decibels)
        }
    }
}

/// Why a typed cue edit cannot be read.
public struct CueEditSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key as given.
    public var key: String
    /// The value as given.
    public var value: String
    /// Whether the value was readable but out of range (else malformed).
    public var isOutOfRange = false
    /// What is wrong and how to write it.
    public var message: String
    /// The message.
    public var description: String { message }
}
