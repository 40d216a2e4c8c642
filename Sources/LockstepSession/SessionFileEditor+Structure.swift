import Foundation

/// Changes to the cue lists of a session file's text: a key set, a cue added, removed, moved or
/// duplicated — each touching only the lines of the cues it changes (``SessionPlayer``'s
/// structural edits write the file this way, then read it again).
extension SessionFileEditor {
    /// Where a cue list's new item goes: after a cue of the list, or first in it.
    public struct Place: Sendable, Hashable {
        /// The group whose `children:` list it is (nil: the top-level `cues:`).
        public var group: String?
        /// The cue it follows (nil: first in the list); without `group`, in that cue's own list.
        public var after: String?
        /// Last in the list (`after` unused).
        public var last = false

        /// After cue `after` (nil: first) of `group`'s list (nil: the top-level list, or `after`'s
        /// own); with `last`, at the end of the list.
        public init(group: String? = nil, after: String? = nil, last: Bool = false) {
            self.group = group
            self.after = after
            self.last = last
        }
    }

    /// `text` with key `key` of cue `index` set to `value` (nil: removed).
    static func setting(_ key: String, to value: String?, ofCue index: Int, in text: String,
                        document: SessionDocument) throws(SessionFileEditError) -> String {
        let spans = try spans(of: index, in: document)
        var bytes = Array(text.utf8)
        let change = patch(key, to: value, in: spans, bytes: bytes)
        bytes.replaceSubrange(change.range, with: Array(change.text.utf8))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` with key `key` of layer `index` set to `value` (nil: removed).
    static func setting(_ key: String, to value: String?, ofLayer index: Int, in text: String,
                        document: SessionDocument) throws(SessionFileEditError) -> String {
        let layer = document.layers[index]
        var bytes = Array(text.utf8)
        if let spans = layer.source {
            let change = patch(key, to: value, in: spans, bytes: bytes)
            bytes.replaceSubrange(change.range, with: Array(change.text.utf8))
            return String(decoding: bytes, as: UTF8.self)
        }
        guard let value else { return text }
        guard let settings = layer.settingsBytes else {
            throw SessionFileEditError("layer '\(layer.name)' is not written in the file (its cues name it); declare it under 'layers:' to set its \(key)")
        }
        // `{}` or nothing: the settings are written anew.
        var start = settings.lowerBound
        if settings.isEmpty { while start > 0 && bytes[start - 1] == 0x20 { start -= 1 } }
        bytes.replaceSubrange(start..<settings.upperBound, with: Array(((settings.isEmpty ? " " : "") + "{ \(key): \(written(value, key: key)) }").utf8))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` with cue `index` (a group with its cues) removed.
    static func removing(cue index: Int, in text: String, document: SessionDocument) throws(SessionFileEditError) -> String {
        var bytes = Array(text.utf8)
        let range = try itemRange(of: index, in: document, bytes: bytes)
        let parent = document.cues[index].action.parent
        let siblings = document.cues.indices.filter { document.cues[$0].action.parent == parent }
        if siblings.count == 1 {
            guard parent == nil else {
                throw SessionFileEditError("cue '\(document.cues[index].name)' is the only cue of group '\(document.cues[parent!].name)'; a group holds at least one cue: delete the group, or move another cue into it first")
            }
            // The last cue: the list is written empty (`cues: []`).
            bytes.replaceSubrange(range, with: [])
            guard let list = document.cueList, let key = keyEnd("cues", before: list.bytes.lowerBound, in: bytes) else {
                throw SessionFileEditError("cannot find the 'cues:' key of \(document.path) to write its list empty")
            }
            bytes.insert(contentsOf: Array(" []".utf8), at: key)
            return String(decoding: bytes, as: UTF8.self)
        }
        bytes.replaceSubrange(range, with: [])
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` with `item` (a list item as written at column 0: `- { file: a.wav }`, or several
    /// lines) inserted at `place`.
    static func inserting(_ item: String, at place: Place, in text: String, document: SessionDocument) throws(SessionFileEditError) -> String {
        var bytes = Array(text.utf8)
        let (position, indent, emptyList) = try insertion(at: place, in: document, bytes: bytes)
        if let emptyList {
            // `cues: []` (or no `cues:`): the list begins with this item.
            let lines = "\n" + indented(item, by: 2).dropLast()
            if emptyList.isEmpty {
                var tail = bytes.last == 0x0A || bytes.isEmpty ? "" : "\n"
                tail += "cues:" + lines + "\n"
                bytes += Array(tail.utf8)
            } else {
                var start = emptyList.lowerBound
                while start > 0 && bytes[start - 1] == 0x20 { start -= 1 }
                bytes.replaceSubrange(start..<emptyList.upperBound, with: Array(lines.utf8))
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        var written = indented(item, by: indent)
        if position == bytes.count && position > 0 && bytes[position - 1] != 0x0A { written = "\n" + written }
        bytes.insert(contentsOf: Array(written.utf8), at: position)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` with cue `index` (a group with its cues) moved to `place`.
    static func moving(cue index: Int, to place: Place, in text: String, document: SessionDocument) throws(SessionFileEditError) -> String {
        let bytes = Array(text.utf8)
        let name = document.cues[index].name
        if let group = place.group {
            var above = document.cues.firstIndex { $0.name == group }
            while let at = above {
                if at == index { throw SessionFileEditError("cue '\(name)' cannot move into '\(group)': it is that group or holds it") }
                above = document.cues[at].action.parent
            }
        }
        if place.after == name { return text }
        let range = try itemRange(of: index, in: document, bytes: bytes)
        let item = unindented(String(decoding: bytes[range], as: UTF8.self))
        let removed = try removing(cue: index, in: text, document: document)
        // Read the text without the cue again, so the place is found where it now is.
        var parser = SessionParser(path: document.path, text: removed)
        guard let shorter = try? parser.parseCollecting().0 else {
            throw SessionFileEditError("cue '\(name)' cannot be moved: the session without it does not read back")
        }
        return try inserting(item, at: place, in: removed, document: shorter)
    }

    /// The keys that say where a cue starts and how the list goes on after it: when a cue is put
    /// in a new group, the group takes them (it takes the cue's place in its list).
    static let placeKeys = ["at", "after", "with", "offset", "continue", "post_wait"]

    /// `text` with cue `index` put in a new group named `group` (`mode: timeline`) that takes its
    /// place: the group is written where the cue was, with the cue's ``placeKeys``, and holds the
    /// cue without them (it starts with its group).
    static func grouping(cue index: Int, as group: String, in text: String, document: SessionDocument) throws(SessionFileEditError) -> String {
        var bytes = Array(text.utf8)
        let range = try itemRange(of: index, in: document, bytes: bytes)
        let spans = try spans(of: index, in: document)
        var moved: [(key: String, value: String)] = []
        var changes: [(range: Range<Int>, text: String)] = []
        for key in placeKeys {
            guard let written = spans.keys[key] else { continue }
            moved.append((key, String(decoding: bytes[written.value], as: UTF8.self)))
            changes.append(patch(key, to: nil, in: spans, bytes: bytes))
        }
        var end = range.upperBound
        for change in changes.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            bytes.replaceSubrange(change.range, with: Array(change.text.utf8))
            end += change.text.utf8.count - change.range.count
        }
        let child = unindented(String(decoding: bytes[range.lowerBound..<end], as: UTF8.self))
        // (A value is copied as written: quoted, a list or a mapping stays so.)
        var item = "- name: \(written(group, key: "name"))\n  type: group\n  mode: timeline\n"
        for (key, value) in moved { item += "  \(key): \(value)\n" }
        item += "  children:\n" + indented(child, by: 4)
        bytes.replaceSubrange(range.lowerBound..<end, with: Array(indented(item, by: dashColumn(range.lowerBound, bytes)).utf8))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` with a copy of cue `index` named `newName` (without a number: numbers are unique)
    /// written right after it.
    static func duplicating(cue index: Int, as newName: String, in text: String, document: SessionDocument) throws(SessionFileEditError) -> String {
        let cue = document.cues[index]
        guard cue.action.type != .group else {
            throw SessionFileEditError("cue '\(cue.name)' is a group; duplicate its cues one by one (their names must differ)")
        }
        let bytes = Array(text.utf8)
        let range = try itemRange(of: index, in: document, bytes: bytes)
        var copy = Array(unindented(String(decoding: bytes[range], as: UTF8.self)).utf8)
        let copyText = String(decoding: copy, as: UTF8.self)
        guard let node = try? YAMLReader(path: document.path).read(copyText), case .sequence(let items) = node.content,
              let first = items.first, case .mapping(let pairs) = first.content, let spans = SourceSpans(first, pairs: pairs) else {
            throw SessionFileEditError("cue '\(cue.name)' cannot be copied as written")
        }
        for change in [patch("name", to: newName, in: spans, bytes: copy), patch("number", to: nil, in: spans, bytes: copy)]
            .sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            copy.replaceSubrange(change.range, with: Array(change.text.utf8))
        }
        let sibling = document.cues[index]
        return try inserting(String(decoding: copy, as: UTF8.self),
                             at: Place(group: sibling.action.parent.map { document.cues[$0].name }, after: sibling.name),
                             in: text, document: document)
    }

    /// `text` with `item` (`- { note: 60, do: go }`) added at the end of the `triggers:` list
    /// (made at the end of the file when there is none).
    static func addingTrigger(_ item: String, in text: String, document: SessionDocument) throws(SessionFileEditError) -> String {
        var bytes = Array(text.utf8)
        guard let list = document.triggerList else {
            var tail = bytes.last == 0x0A || bytes.isEmpty ? "" : "\n"
            tail += "triggers:\n" + indented(item, by: 2)
            return text + tail
        }
        if list.isFlow {
            guard list.isEmpty else {
                throw SessionFileEditError("the 'triggers:' list of \(document.path) is written [ … ]; write it one '- ' per line to add a trigger")
            }
            var start = list.bytes.lowerBound
            while start > 0 && bytes[start - 1] == 0x20 { start -= 1 }
            bytes.replaceSubrange(start..<list.bytes.upperBound, with: Array(("\n" + indented(item, by: 2).dropLast()).utf8))
            return String(decoding: bytes, as: UTF8.self)
        }
        var end = list.contentEnd
        while end < bytes.count && bytes[end] != 0x0A { end += 1 }
        let position = min(bytes.count, end + 1)
        var written = indented(item, by: dashColumn(lineStart(list.bytes.lowerBound, bytes), bytes))
        if position == bytes.count && position > 0 && bytes[position - 1] != 0x0A { written = "\n" + written }
        bytes.insert(contentsOf: Array(written.utf8), at: position)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` without triggers `indices` (of `document.triggers`); `triggers: []` when none is left.
    static func removingTriggers(_ indices: [Int], in text: String, document: SessionDocument) throws(SessionFileEditError) -> String {
        var bytes = Array(text.utf8)
        if document.triggerList?.isFlow == true {
            throw SessionFileEditError("the 'triggers:' list of \(document.path) is written [ … ]; write it one '- ' per line to remove a trigger")
        }
        for index in Set(indices).sorted(by: >) {
            guard document.triggers.indices.contains(index), let spans = document.triggers[index].source else {
                throw SessionFileEditError("trigger \(index + 1) is not written in the file")
            }
            bytes.replaceSubrange(itemRange(of: spans, bytes: bytes), with: [])
        }
        if Set(indices).count == document.triggers.count, let list = document.triggerList,
           let key = keyEnd("triggers", before: list.bytes.lowerBound, in: bytes) {
            bytes.insert(contentsOf: Array(" []".utf8), at: key)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A new cue's list item: `- { key: value, … }` (a value written `[…]` or `{…}` stays YAML).
    static func item(_ values: [(key: String, value: String)]) -> String {
        let pairs = values.map { "\($0.key): \(written($0.value, key: $0.key))" }
        return "- { \(pairs.joined(separator: ", ")) }\n"
    }

    // MARK: - Where things are written

    private static func spans(of index: Int, in document: SessionDocument) throws(SessionFileEditError) -> SourceSpans {
        guard let spans = document.cues[index].source else {
            throw SessionFileEditError("cue '\(document.cues[index].name)' is not written in the file; it cannot be edited there")
        }
        return spans
    }

    /// From the start of the line of the cue's `- ` to the end of its last line.
    static func itemRange(of index: Int, in document: SessionDocument, bytes: [UInt8]) throws(SessionFileEditError) -> Range<Int> {
        let spans = try spans(of: index, in: document)
        if isInFlowList(index, document) {
            throw SessionFileEditError("cue '\(document.cues[index].name)' is in a list written [ … ]; write the list one '- ' per line to add, remove or move its cues")
        }
        return itemRange(of: spans, bytes: bytes)
    }

    /// The lines of the block-list item `spans` describes: from the start of the line of its `- `
    /// to the end of its last line.
    static func itemRange(of spans: SourceSpans, bytes: [UInt8]) -> Range<Int> {
        var start = lineStart(spans.mapping.lowerBound, bytes)
        if !bytes[start..<spans.mapping.lowerBound].contains(0x2D), start > 0 {
            // `-` alone on the line before.
            start = lineStart(start - 1, bytes)
        }
        var end = spans.contentEnd
        while end < bytes.count && bytes[end] != 0x0A { end += 1 }
        return start..<min(bytes.count, end + 1)
    }

    private static func isInFlowList(_ index: Int, _ document: SessionDocument) -> Bool {
        if let parent = document.cues[index].action.parent { return document.cues[parent].source?.children?.isFlow ?? false }
        return document.cueList?.isFlow ?? false
    }

    /// Where an item for `place` goes, with its indentation; for the empty top-level list, the
    /// list's bytes (`[]`; an empty range when the file has no `cues:`).
    private static func insertion(at place: Place, in document: SessionDocument, bytes: [UInt8]) throws(SessionFileEditError)
        -> (position: Int, indent: Int, emptyList: Range<Int>?) {
        var parent: Int?
        if place.group == nil, !place.last, let after = place.after, let at = document.cues.firstIndex(where: { $0.name == after }) {
            parent = document.cues[at].action.parent
        } else if let group = place.group {
            guard let at = document.cues.firstIndex(where: { $0.name == group }) else {
                throw SessionFileEditError("no cue is named '\(group)'\(Suggest.hint(for: group, in: document.cues.map(\.name)))")
            }
            guard document.cues[at].action.type == .group else {
                throw SessionFileEditError("cue '\(group)' is a \(document.cues[at].action.type.rawValue) cue, not a group; only a group holds cues")
            }
            parent = at
        }
        let list = document.cues.indices.filter { document.cues[$0].action.parent == parent }
        if let after = place.last ? list.last.map({ document.cues[$0].name }) : place.after {
            guard let at = list.first(where: { document.cues[$0].name == after }) else {
                let whose = place.group.map { "group '\($0)'" } ?? "the top-level cue list"
                throw SessionFileEditError("cue '\(after)' is not in \(whose); name a cue of that list to add after")
            }
            let range = try itemRange(of: at, in: document, bytes: bytes)
            return (range.upperBound, dashColumn(range.lowerBound, bytes), nil)
        }
        if let first = list.first {
            let range = try itemRange(of: first, in: document, bytes: bytes)
            return (range.lowerBound, dashColumn(range.lowerBound, bytes), nil)
        }
        guard let cues = document.cueList else { return (bytes.count, 2, 0..<0) }
        guard cues.isFlow && cues.isEmpty else {
            throw SessionFileEditError("the 'cues:' list of \(document.path) is not written as a list this editor can add to; write it one '- ' per line")
        }
        return (cues.bytes.lowerBound, 2, cues.bytes)
    }

    private static func lineStart(_ position: Int, _ bytes: [UInt8]) -> Int {
        var start = min(position, bytes.count)
        while start > 0 && bytes[start - 1] != 0x0A { start -= 1 }
        return start
    }

    private static func dashColumn(_ lineStart: Int, _ bytes: [UInt8]) -> Int {
        var at = lineStart
        while at < bytes.count && bytes[at] == 0x20 { at += 1 }
        return at - lineStart
    }

    /// The end of key `key:` written last before `position` (where ` []` goes after `cues:`).
    private static func keyEnd(_ key: String, before position: Int, in bytes: [UInt8]) -> Int? {
        let needle = Array((key + ":").utf8)
        var at = min(position, bytes.count) - needle.count
        while at >= 0 {
            if Array(bytes[at..<(at + needle.count)]) == needle && (at == 0 || bytes[at - 1] == 0x0A) { return at + needle.count }
            at -= 1
        }
        return nil
    }

    /// `text`'s lines with their common indentation removed.
    static func unindented(_ text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let common = lines.filter { !$0.allSatisfy { $0 == " " } }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { String($0.dropFirst(min(common, $0.prefix { $0 == " " }.count))) }.joined(separator: "\n")
    }

    /// `text` (written at column 0) indented by `indent` spaces, ending in a newline.
    static func indented(_ text: String, by indent: Int) -> String {
        let pad = String(repeating: " ", count: indent)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines.map { $0.isEmpty ? $0 : pad + $0 }.joined(separator: "\n") + "\n"
    }
}

extension Session {
    /// Cue `index`'s keys and values as its session text writes them (a quoted value without its
    /// quotes, a list or mapping as written), with what ``SessionDocument/Cue/editableValues``
    /// says for the keys it does not write: what an editor shows.
    public func writtenValues(ofCue index: Int) -> [String: String] {
        guard document.cues.indices.contains(index) else { return [:] }
        let cue = document.cues[index]
        return cue.editableValues.merging(written(cue.source), uniquingKeysWith: { _, written in written })
    }

    /// Layer `index`'s keys and values as its session text writes them (`gain`, `ports`,
    /// `channel_map`).
    public func writtenValues(ofLayer index: Int) -> [String: String] {
        guard document.layers.indices.contains(index) else { return [:] }
        return written(document.layers[index].source)
    }

    /// The keys of `spans` with their values as written (a quoted value without its quotes).
    private func written(_ spans: SourceSpans?) -> [String: String] {
        guard let spans else { return [:] }
        var values: [String: String] = [:]
        let bytes = Array(text.utf8)
        for (key, span) in spans.keys where key != "children" && span.value.upperBound <= bytes.count {
            var value = String(decoding: bytes[span.value], as: UTF8.self)
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = String(value.dropFirst().dropLast())
            }
            values[key] = value
        }
        return values
    }
}
