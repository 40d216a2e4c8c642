import LockstepSession

/// Building the cue list while the show runs (``ControlCommand/restructure(_:)``): any key of a
/// cue set as the session file writes it, cues added, duplicated, deleted and moved
/// (``LockstepSession/SessionPlayer/setValue(_:key:value:)`` and the rest).
///
/// Typed: `set CUE KEY VALUE` (any key), `add KEY=VALUE… [after CUE] [in GROUP]`,
/// `duplicate CUE`, `delete CUE`, `move CUE after OTHER | first [in GROUP] | in GROUP`,
/// `group CUE [as NAME]`.
public enum CueStructureEdit: Sendable, Hashable {
    /// Sets keys of a cue in one edit (a nil value removes its key).
    case set(CueReference, [CueValueChange])
    /// Adds a cue with these keys and values at a place.
    case add([CueValue], SessionFileEditor.Place)
    /// Adds a copy of a cue after it.
    case duplicate(CueReference)
    /// Removes a cue (a group with its cues).
    case delete(CueReference)
    /// Moves a cue to a place.
    case move(CueReference, SessionFileEditor.Place)
    /// Puts a cue in a new group that takes its place (named, or `CUE group`).
    case group(CueReference, name: String?)
    /// Adds a MIDI trigger (MIDI learn's result): its keys and values as the file writes them.
    case addTrigger([CueValue])
    /// Removes the MIDI triggers whose action names a cue.
    case unlearn(CueReference)
    /// Sets keys of a layer (`gain`, `channel_map`) in one edit.
    case setLayer(String, [CueValueChange])

    /// The verb a reply and the edit's key name.
    public var verb: String {
        switch self {
        case .set: "set"
        case .add: "add"
        case .duplicate: "duplicate"
        case .delete: "delete"
        case .move: "move"
        case .group: "group"
        case .addTrigger: "learn"
        case .setLayer: "set-layer"
        case .unlearn: "unlearn"
        }
    }

    /// The typed verbs.
    static let verbs = ["add", "duplicate", "delete", "move", "group", "set-layer", "unlearn"]

    /// Reads a typed line of one of ``verbs`` (`words`: the line split at blanks, quotes kept
    /// together).
    /// - Throws: ``ControlError`` saying how to write it.
    public static func parse(typed words: [String]) throws(ControlError) -> CueStructureEdit {
        let verb = words[0].lowercased()
        let rest = Array(words.dropFirst())
        switch verb {
        case "set-layer":
            guard rest.count >= 2 else {
                throw ControlError(.malformed, "write 'set-layer LAYER KEY VALUE', e.g. set-layer bed gain -6dB (keys: gain, channel_map; no value: the key removed)")
            }
            let value = rest.dropFirst(2).joined(separator: " ")
            return .setLayer(rest[0], [CueValueChange(key: rest[1].lowercased(), value: value.isEmpty || value.lowercased() == "none" ? nil : unquoted(value))])
        case "duplicate", "delete", "unlearn":
            guard !rest.isEmpty else { throw ControlError(.malformed, "'\(verb)' takes one cue: write '\(verb) CUE'") }
            let cue = CueReference.name(unquoted(rest.joined(separator: " ")))
            return verb == "delete" ? .delete(cue) : verb == "unlearn" ? .unlearn(cue) : .duplicate(cue)
        case "group":
            let split = rest.lastIndex { $0.lowercased() == "as" }
            let cue = unquoted((split.map { Array(rest[..<$0]) } ?? rest).joined(separator: " "))
            let name = split.map { unquoted(rest[($0 + 1)...].joined(separator: " ")) }
            guard !cue.isEmpty, name?.isEmpty != true else {
                throw ControlError(.malformed, "write 'group CUE' or 'group CUE as NAME': the cue goes into a new group that takes its place")
            }
            return .group(.name(cue), name: name)
        case "move":
            guard let name = rest.first, let place = try? place(Array(rest.dropFirst()), moving: true) else {
                throw ControlError(.malformed, "write 'move CUE after OTHER', 'move CUE first [in GROUP]' or 'move CUE in GROUP'")
            }
            return .move(.name(name), place)
        default:
            var values: [CueValue] = []
            var index = 0
            while index < rest.count, let equals = rest[index].firstIndex(of: "=") {
                let key = String(rest[index][..<equals]).lowercased()
                values.append(CueValue(key: key, value: unquoted(String(rest[index][rest[index].index(after: equals)...]))))
                index += 1
            }
            guard !values.isEmpty, let place = try? place(Array(rest[index...]), moving: false) else {
                throw ControlError(.malformed, "write 'add KEY=VALUE… [after CUE] [in GROUP]', e.g. add file=door.wav at=manual after bell (a value with blanks in quotes: name=\"door slam\")")
            }
            return .add(values, place)
        }
    }

    /// `after CUE`, `first`, `in GROUP` (its end, or first when moving), `in GROUP after CUE`,
    /// `first in GROUP`; nothing (only to add): the end of the top-level list.
    private static func place(_ words: [String], moving: Bool) throws(ControlError) -> SessionFileEditor.Place {
        var place = SessionFileEditor.Place()
        var index = 0
        var said = false
        while index < words.count {
            let word = words[index].lowercased()
            if word == "first" { said = true; index += 1; continue }
            guard index + 1 < words.count, word == "after" || word == "in" else { throw ControlError(.malformed, "") }
            if word == "after" { place.after = words[index + 1] } else { place.group = words[index + 1] }
            said = true
            index += 2
        }
        if place.after == nil && !words.contains(where: { $0.lowercased() == "first" }) && !moving { place.last = true }
        guard said || !moving else { throw ControlError(.malformed, "") }
        return place
    }

    /// Splits a typed line at blanks, keeping `"…"` together (quotes kept, for ``unquoted(_:)``).
    static func words(_ line: String) -> [String] {
        var words: [String] = [], word = "", quoted = false
        for character in line {
            if character == "\"" { quoted.toggle(); word.append(character); continue }
            if character.isWhitespace && !quoted {
                if !word.isEmpty { words.append(word); word = "" }
                continue
            }
            word.append(character)
        }
        if !word.isEmpty { words.append(word) }
        return words
    }

    private static func unquoted(_ text: String) -> String {
        text.count >= 2 && text.hasPrefix("\"") && text.hasSuffix("\"") ? String(text.dropFirst().dropLast()) : text
    }

    /// Reads a web command's fields: `{"command":"add","values":{"file":"a.wav"},"after":"bell","group":"g"}`,
    /// `{"command":"delete","cue":"x"}`, `{"command":"move","cue":"x","after":"y"}`.
    static func parse(web verb: String, _ fields: [String: ControlValue], cue: CueReference?) throws(ControlError) -> CueStructureEdit {
        if verb == "set" || verb == "set-layer" {
            let layer = fields["layer"]?.stringValue
            if verb == "set-layer" && layer == nil {
                throw ControlError(.malformed, "set-layer needs a \"layer\" and \"values\": {\"command\":\"set-layer\",\"layer\":\"bed\",\"values\":{\"gain\":\"-6dB\"}}")
            }
            guard cue != nil || layer != nil, case .object(let object)? = fields["values"], !object.isEmpty else {
                throw ControlError(.malformed, "set with \"values\" needs a \"cue\" and the keys: {\"command\":\"set\",\"cue\":\"bell\",\"values\":{\"type\":\"fade\",\"file\":null}}")
            }
            var changes: [CueValueChange] = []
            for (key, value) in object {
                guard let text = Self.text(value) else {
                    throw ControlError(.malformed, "set: the value of \"\(key)\" must be a string, a number, or null to remove it")
                }
                changes.append(CueValueChange(key: key, value: text))
            }
            // The name last (the others are found by the cue's name as it was); the rest in the
            // session format's order.
            let order = Dictionary(CueValue.keys.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            changes.sort { ($0.key == "name" ? 1 : 0, order[$0.key] ?? .max, $0.key) < ($1.key == "name" ? 1 : 0, order[$1.key] ?? .max, $1.key) }
            if verb == "set-layer", let layer { return .setLayer(layer, changes) }
            return .set(cue!, changes)
        }
        var place = SessionFileEditor.Place(group: fields["group"]?.stringValue, after: fields["after"]?.stringValue)
        switch verb {
        case "duplicate", "delete", "unlearn":
            guard let cue else { throw ControlError(.malformed, "\(verb) needs a \"cue\": {\"command\":\"\(verb)\",\"cue\":\"bell\"}") }
            return verb == "delete" ? .delete(cue) : verb == "unlearn" ? .unlearn(cue) : .duplicate(cue)
        case "group":
            guard let cue else { throw ControlError(.malformed, "group needs a \"cue\": {\"command\":\"group\",\"cue\":\"bell\"} (and a \"name\" for the group, if not 'CUE group')") }
            let name = fields["name"]?.stringValue
            guard name?.isEmpty != true else { throw ControlError(.malformed, "group: the \"name\" of the group is empty; leave it out for 'CUE group'") }
            return .group(cue, name: name)
        case "move":
            guard let cue else { throw ControlError(.malformed, "move needs a \"cue\" and where: {\"command\":\"move\",\"cue\":\"bell\",\"after\":\"intro\"} (\"group\" to move into one; no \"after\": first)") }
            return .move(cue, place)
        default:
            guard case .object(let object)? = fields["values"], !object.isEmpty else {
                throw ControlError(.malformed, "add needs \"values\", the new cue's keys as the session file writes them: {\"command\":\"add\",\"values\":{\"file\":\"door.wav\",\"at\":\"manual\"},\"after\":\"bell\"}")
            }
            var values: [CueValue] = []
            for (key, value) in object {
                guard let text = Self.text(value), let text else {
                    throw ControlError(.malformed, "add: the value of \"\(key)\" must be a string or a number")
                }
                values.append(CueValue(key: key, value: text))
            }
            // In the order the session format lists its keys (a JSON object has none).
            let order = Dictionary(CueValue.keys.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            values.sort { (order[$0.key] ?? .max, $0.key) < (order[$1.key] ?? .max, $1.key) }
            if fields["after"] == nil && fields["first"] != .bool(true) { place.last = true }
            return .add(values, place)
        }
    }

    /// A JSON value as a session file value: a string or number as written, null as nil (the
    /// key removed); nil for anything else.
    private static func text(_ value: ControlValue) -> String?? {
        switch value {
        case .string(let text): return .some(text)
        case .integer(let number): return .some(String(number))
        case .number(let number): return .some(String(number))
        case .null: return .some(nil)
        default: return nil
        }
    }
}
