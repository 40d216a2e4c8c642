/// Building a show while it runs: any key of a cue set, cues added, duplicated, removed and moved.
/// Each edit rewrites the session's text where it changes (``SessionFileEditor``), reads it again
/// — so a refused edit says what `session check` of the saved file would say — and installs it as
/// ``edit(_:_:)`` does; ``undo()`` takes it back.
extension SessionPlayer {
    /// Sets key `key` of cue `name` to `value` as written in the session file (`at: manual`,
    /// `file: media/door.wav`, `target: bed`; nil removes the key): any key of any cue type.
    /// - Throws: ``PlayerError``: an unknown cue or key, or an edit the session check refuses.
    @discardableResult
    public func setValue(_ name: String, key: String, value: String?) throws(PlayerError) -> EditResult {
        try setValues(name, [CueValueChange(key: key, value: value)])
    }

    /// Sets several keys of cue `name` in one edit, checked once (a type changed with the keys it
    /// needs: `type: fade`, `target`, `level`, `duration`, no `file`).
    /// - Throws: ``PlayerError``: an unknown cue or key, or an edit the session check refuses.
    @discardableResult
    public func setValues(_ name: String, _ changes: [CueValueChange]) throws(PlayerError) -> EditResult {
        let changes = changes.map { CueValueChange(key: $0.key.lowercased(), value: $0.value) }
        guard let first = changes.first else { throw PlayerError(.invalidEdit, "set of cue '\(name)': no key to set") }
        if let unknown = changes.first(where: { !SessionParser.cueKeys.contains($0.key) }) {
            throw PlayerError(.invalidEdit, "\(unknown.key) of cue '\(name)': unknown key\(Suggest.hint(for: unknown.key, in: SessionParser.cueKeys)); a cue's keys are \(SessionParser.cueKeys.joined(separator: ", "))")
        }
        let key = changes.count == 1 ? first.key : changes.map(\.key).joined(separator: ", ")
        let label = "\(key) of cue '\(name)'"
        return try structural(label, key: key) { state throws(PlayerError) in
            let index = try Self.documentIndex(of: name, in: state.document, verb: key)
            let text = try Self.editing(state.session, label: label) { text, document throws(SessionFileEditError) in
                var text = text, document = document
                for (number, change) in changes.enumerated() {
                    text = try SessionFileEditor.setting(change.key, to: change.value, ofCue: index, in: text, document: document)
                    if number < changes.count - 1 {
                        // Where the next key is written, in the text as changed.
                        var parser = SessionParser(path: document.path, text: text)
                        guard let next = try? parser.parseCollecting().0, next.cues.count == document.cues.count else {
                            throw SessionFileEditError("\(change.key): the value does not read back as YAML; write it as a single value")
                        }
                        document = next
                    }
                }
                return text
            }
            var newName = name
            if let rename = changes.last(where: { $0.key == "name" }), let value = rename.value { newName = value.trimmingCharacters(in: .whitespaces) }
            return (text, newName == name ? [:] : [name: newName], newName)
        }
    }

    /// Sets keys of layer `name` in one edit: its `gain` (heard from where the edit lands) and
    /// `channel_map` (its cues take it as any cue edit: at once when waiting, at their next start
    /// when placed), and `ports` (live, with a ``portConnector``: the layer moves between the
    /// master mix and outputs of its own on one cycle's first frame, ``EditResult/routedSampleTime``).
    /// - Throws: ``PlayerError``: an unknown layer or key, or an edit the session check refuses.
    @discardableResult
    public func setLayerValues(_ name: String, _ changes: [CueValueChange]) throws(PlayerError) -> EditResult {
        let changes = changes.map { CueValueChange(key: $0.key.lowercased(), value: $0.value) }
        let key = changes.map(\.key).joined(separator: ", ")
        let label = "\(key) of layer '\(name)'"
        if let unknown = changes.first(where: { !SessionParser.layerKeys.contains($0.key) }) {
            throw PlayerError(.invalidEdit, "\(label): unknown key '\(unknown.key)'\(Suggest.hint(for: unknown.key, in: SessionParser.layerKeys)); a layer's keys are \(SessionParser.layerKeys.joined(separator: ", "))")
        }
        return try structural(label, key: key) { state throws(PlayerError) in
            guard let index = state.document.layers.firstIndex(where: { $0.name == name }) else {
                throw PlayerError(.unknownLayer, "\(label): unknown layer '\(name)'\(Suggest.hint(for: name, in: state.document.layers.map(\.name)))")
            }
            let text = try Self.editing(state.session, label: label) { text, document throws(SessionFileEditError) in
                var text = text, document = document
                for change in changes {
                    text = try SessionFileEditor.setting(change.key, to: change.value, ofLayer: index, in: text, document: document)
                    var parser = SessionParser(path: document.path, text: text)
                    guard let next = try? parser.parseCollecting().0, next.layers.count == document.layers.count else {
                        throw SessionFileEditError("\(change.key): the value does not read back as YAML; write it as a single value")
                    }
                    document = next
                }
                return text
            }
            return (text, [:], name)
        }
    }

    /// Adds a cue with `values` (keys and values as written in the session file; a `name` is made
    /// up when none is given: `cue 8`) at `place`.
    /// - Throws: ``PlayerError``: an unknown place, or a cue the session check refuses.
    @discardableResult
    public func addCue(_ values: [CueValue], at place: SessionFileEditor.Place = .init(last: true)) throws(PlayerError) -> EditResult {
        try structural("add", key: "add") { state throws(PlayerError) in
            var values = values
            var name = values.last { $0.key == "name" }?.value.trimmingCharacters(in: .whitespaces) ?? ""
            if name.isEmpty {
                name = Self.freshName("cue \(state.document.cues.count + 1)", in: state.document)
                values.removeAll { $0.key == "name" }
                values.insert(CueValue(key: "name", value: name), at: 0)
            }
            let item = SessionFileEditor.item(values.map { ($0.key, $0.value) })
            let text = try Self.editing(state.session, label: "add of cue '\(name)'") { text, document throws(SessionFileEditError) in
                try SessionFileEditor.inserting(item, at: place, in: text, document: document)
            }
            return (text, [:], name)
        }
    }

    /// Adds a copy of cue `name` right after it, named `name copy` (`name copy 2`…), without its
    /// number.
    /// - Throws: ``PlayerError``: an unknown cue, a group (copy its cues one by one).
    @discardableResult
    public func duplicateCue(_ name: String) throws(PlayerError) -> EditResult {
        try structural("duplicate of cue '\(name)'", key: "duplicate") { state throws(PlayerError) in
            let index = try Self.documentIndex(of: name, in: state.document, verb: "duplicate")
            let copy = Self.freshName("\(name) copy", in: state.document)
            let text = try Self.editing(state.session, label: "duplicate of cue '\(name)'") { text, document throws(SessionFileEditError) in
                try SessionFileEditor.duplicating(cue: index, as: copy, in: text, document: document)
            }
            return (text, [:], copy)
        }
    }

    /// Puts cue `name` in a new group (`mode: timeline`), named `group` (default `NAME group`),
    /// that takes its place: the group starts where the cue did (it takes the cue's `at`,
    /// `after`, `with`, `offset`, `continue` and `post_wait`) and the cue starts with it.
    /// - Throws: ``PlayerError``: an unknown cue, a name already taken, a cue in a `[ … ]` list.
    @discardableResult
    public func groupCue(_ name: String, as group: String? = nil) throws(PlayerError) -> EditResult {
        try structural("group of cue '\(name)'", key: "group") { state throws(PlayerError) in
            let index = try Self.documentIndex(of: name, in: state.document, verb: "group")
            let groupName = group ?? Self.freshName("\(name) group", in: state.document)
            if state.document.cues.contains(where: { $0.name == groupName }) {
                throw PlayerError(.invalidEdit, "group of cue '\(name)' refused: a cue is already named '\(groupName)'; give the group another name")
            }
            let text = try Self.editing(state.session, label: "group of cue '\(name)'") { text, document throws(SessionFileEditError) in
                try SessionFileEditor.grouping(cue: index, as: groupName, in: text, document: document)
            }
            return (text, [:], groupName)
        }
    }

    /// Removes cue `name` (a group with its cues). A removed cue that sounds stops where the edit
    /// lands (a declick fade); cues that name it must be changed first (the check says which).
    /// - Throws: ``PlayerError``: an unknown cue, the last cue of a group, a cue others refer to.
    @discardableResult
    public func deleteCue(_ name: String) throws(PlayerError) -> EditResult {
        try structural("delete of cue '\(name)'", key: "delete") { state throws(PlayerError) in
            let index = try Self.documentIndex(of: name, in: state.document, verb: "delete")
            let text = try Self.editing(state.session, label: "delete of cue '\(name)'") { text, document throws(SessionFileEditError) in
                try SessionFileEditor.removing(cue: index, in: text, document: document)
            }
            return (text, [:], name)
        }
    }

    /// Moves cue `name` (a group with its cues) to `place`: in the same list, into a group, or out
    /// of one. Where it starts follows from its new place as the file says (a cue without a start
    /// key follows the cue now before it).
    /// - Throws: ``PlayerError``: an unknown cue or place, a group moved into itself.
    @discardableResult
    public func moveCue(_ name: String, to place: SessionFileEditor.Place) throws(PlayerError) -> EditResult {
        try structural("move of cue '\(name)'", key: "move") { state throws(PlayerError) in
            let index = try Self.documentIndex(of: name, in: state.document, verb: "move")
            let text = try Self.editing(state.session, label: "move of cue '\(name)'") { text, document throws(SessionFileEditError) in
                try SessionFileEditor.moving(cue: index, to: place, in: text, document: document)
            }
            return (text, [:], name)
        }
    }

    /// Adds a MIDI trigger (`values` as the session file writes them: `note` `60`, `channel` `1`,
    /// `do` `go bell`) at the end of the session's `triggers:` — MIDI learn's result.
    /// - Throws: ``PlayerError``: a trigger the session check refuses.
    @discardableResult
    public func addTrigger(_ values: [CueValue]) throws(PlayerError) -> EditResult {
        let action = values.last { $0.key == "do" }?.value ?? ""
        return try structural("trigger '\(action)'", key: "trigger") { state throws(PlayerError) in
            let item = SessionFileEditor.item(values.map { ($0.key, $0.value) })
            let text = try Self.editing(state.session, label: "trigger '\(action)'") { text, document throws(SessionFileEditError) in
                try SessionFileEditor.addingTrigger(item, in: text, document: document)
            }
            // (The cue its action names, for the reply; else the action.)
            let words = action.split(separator: " ", maxSplits: 1)
            return (text, [:], words.count == 2 ? String(words[1]) : action)
        }
    }

    /// Removes MIDI triggers `indices` (of the session's `triggers:`), written out of the file.
    /// - Throws: ``PlayerError``: no such trigger.
    @discardableResult
    public func removeTriggers(_ indices: [Int], of cue: String) throws(PlayerError) -> EditResult {
        try structural("triggers of cue '\(cue)'", key: "unlearn") { state throws(PlayerError) in
            guard !indices.isEmpty else { throw PlayerError(.invalidEdit, "unlearn: cue '\(cue)' has no MIDI trigger") }
            let text = try Self.editing(state.session, label: "unlearn of cue '\(cue)'") { text, document throws(SessionFileEditError) in
                try SessionFileEditor.removingTriggers(indices, in: text, document: document)
            }
            return (text, [:], cue)
        }
    }

    /// Applies an edit made to the session's text: `change` gives the new text, the renames it made
    /// (old name → new) and the cue it is about.
    private func structural(_ label: String, key: String,
                            _ change: (State) throws(PlayerError) -> (text: String, renames: [String: String], focus: String)) throws(PlayerError) -> EditResult {
        try control { state throws(PlayerError) -> EditResult in
            let (text, renames, focus) = try change(state)
            let next = try reread(text, of: state.session, label: label)
            return try commit(next, in: &state, renames: renames, focus: focus, key: key, label: label)
        }
    }

    /// The text `edit` makes of `session`'s.
    private static func editing(_ session: Session, label: String,
                                _ edit: (String, SessionDocument) throws(SessionFileEditError) -> String) throws(PlayerError) -> String {
        guard !session.text.isEmpty else {
            throw PlayerError(.invalidEdit, "\(label) refused: this run was not read from a session file (lockstep play makes its session from its files); cues are added and removed in a session file")
        }
        do { return try edit(session.text, session.document) } catch {
            throw PlayerError(.invalidEdit, "\(label) refused: \(error.message)")
        }
    }

    /// `base`, or `base 2`, `base 3`…: the first no cue of `document` is named.
    static func freshName(_ base: String, in document: SessionDocument) -> String {
        let names = Set(document.cues.map(\.name))
        if !names.contains(base) { return base }
        var number = 2
        while names.contains("\(base) \(number)") { number += 1 }
        return "\(base) \(number)"
    }
}

/// A key of a cue and its value, as the session file writes them (`at` `manual`).
public struct CueValue: Sendable, Hashable {
    /// The key.
    public var key: String
    /// The value as written.
    public var value: String

    /// `key: value`.
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }

    /// The keys a cue takes, in the order the session format lists them.
    public static var keys: [String] { SessionParser.cueKeys }
}

/// A key of a cue set to a value as the session file writes it, or removed (nil).
public struct CueValueChange: Sendable, Hashable {
    /// The key.
    public var key: String
    /// The value as written; nil removes the key.
    public var value: String?

    /// `key` set to `value` (nil: removed).
    public init(key: String, value: String?) {
        self.key = key
        self.value = value
    }
}
