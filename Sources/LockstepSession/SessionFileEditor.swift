import Foundation

/// Where a cue is written in its session file, as byte ranges: its mapping, and each key with its
/// value — what ``SessionFileEditor`` needs to change a value without touching anything else.
struct SourceSpans: Sendable, Hashable {
    /// A key and its value.
    struct KeySpan: Sendable, Hashable {
        var key: Range<Int>
        var value: Range<Int>
    }

    /// The mapping (`{ … }` or the block of lines).
    var mapping: Range<Int>
    /// Whether it is written `{ key: value, … }`.
    var isFlow: Bool
    /// Each key as written (the last, when one is written twice).
    var keys: [String: KeySpan]
    /// The end of the last value.
    var lastValueEnd: Int
    /// The start of the first key.
    var firstKeyStart: Int
    /// The end of the last scalar or flow collection written in it, nested ones included: where
    /// its last line's content ends (a block collection's own end is where the next one starts).
    var contentEnd: Int
    /// A group's `children:` list.
    var children: CueListSpan?

    init?(_ node: YAMLNode, pairs: [YAMLPair]) {
        guard let first = pairs.first, let last = pairs.last else { return nil }
        mapping = node.bytes
        isFlow = node.isFlow
        keys = [:]
        for pair in pairs {
            if let name = pair.key.scalar { keys[name] = KeySpan(key: pair.key.bytes, value: pair.value.bytes) }
        }
        lastValueEnd = last.value.bytes.upperBound
        firstKeyStart = first.key.bytes.lowerBound
        contentEnd = Self.contentEnd(of: node)
        if let list = pairs.last(where: { $0.key.scalar == "children" })?.value, case .sequence = list.content {
            children = CueListSpan(list)
        }
    }

    /// Where `node`'s written content ends (see ``contentEnd``).
    static func contentEnd(of node: YAMLNode) -> Int {
        switch node.content {
        case .scalar: return node.bytes.upperBound
        case .sequence(let items):
            guard !node.isFlow, let last = items.last else { return node.bytes.upperBound }
            return max(node.bytes.lowerBound, contentEnd(of: last))
        case .mapping(let pairs):
            guard !node.isFlow, let last = pairs.last else { return node.bytes.upperBound }
            return max(node.bytes.lowerBound, contentEnd(of: last.value), last.key.bytes.upperBound)
        }
    }
}

/// Where a list of cues is written: the top-level `cues:` or a group's `children:`.
struct CueListSpan: Sendable, Hashable {
    /// The list's bytes.
    var bytes: Range<Int>
    /// Whether it is written `[ … ]`.
    var isFlow: Bool
    /// Whether it holds no item.
    var isEmpty: Bool
    /// Where its last item's written content ends (``SourceSpans/contentEnd``).
    var contentEnd: Int

    init(_ node: YAMLNode) {
        bytes = node.bytes
        isFlow = node.isFlow
        if case .sequence(let items) = node.content { isEmpty = items.isEmpty } else { isEmpty = true }
        contentEnd = SourceSpans.contentEnd(of: node)
    }
}

/// Writes the edits made to a session while it ran (``SessionPlayer/document``) into the text of
/// the file it was read from: each changed value replaced where it is written, a key the cue did
/// not have added at the end of its mapping, a key set to nothing removed — every other byte (the
/// other cues, the layers, comments, the file's own spelling of values) stays as it was.
public enum SessionFileEditor {
    /// The keys written back: those ``CueEdit`` changes, and the references a rename moves.
    static let keys = ["name", "number", "pre_wait", "post_wait", "continue", "duration", "from", "to", "gain",
                       "at", "after", "with", "target"]

    /// `text` (the file `original` was read from) with `edited`'s changes to its cues written in.
    /// - Throws: ``SessionFileEditError`` when the cues do not match (one was added or removed) or
    ///   a cue was not read from this file.
    public static func apply(to text: String, original: SessionDocument, edited: SessionDocument) throws(SessionFileEditError) -> String {
        guard original.cues.count == edited.cues.count else {
            throw SessionFileEditError("the session has \(edited.cues.count) cues, its file \(original.cues.count); cues added or removed are not written back yet")
        }
        var bytes = Array(text.utf8)
        var patches: [(range: Range<Int>, text: String, order: Int)] = []
        for (before, after) in zip(original.cues, edited.cues) {
            for key in keys {
                let old = value(of: key, in: before), new = value(of: key, in: after)
                guard old != new else { continue }
                guard let spans = before.source else {
                    throw SessionFileEditError("cue '\(before.name)' is not written in the file; it cannot be edited there")
                }
                let change = patch(key, to: new, in: spans, bytes: bytes)
                patches.append((change.range, change.text, patches.count))
            }
        }
        // From the end of the file back, so that each range still means what it meant (keys added
        // at one place: the last first, so they read in the order of ``keys``).
        for patch in patches.sorted(by: { ($0.range.lowerBound, $0.order) > ($1.range.lowerBound, $1.order) }) {
            bytes.replaceSubrange(patch.range, with: Array(patch.text.utf8))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Key `key`'s value of `cue` as the file would say it (nil: not given).
    static func value(of key: String, in cue: SessionDocument.Cue) -> String? {
        func time(_ value: SessionTime?) -> String? {
            switch value {
            case nil: return nil
            case .seconds(let s)?: return s == s.rounded() && s.magnitude < 1e15 ? String(Int64(s)) : String(s)
            case .samples(let n)?: return "\(n) samples"
            }
        }
        switch key {
        case "name": return cue.name
        case "number": return cue.number
        case "pre_wait": return time(cue.action.preWait)
        case "post_wait": return time(cue.action.postWait)
        case "continue": return cue.action.continueMode?.rawValue
        case "duration": return time(cue.action.duration)
        case "from": return time(cue.from)
        case "to": return time(cue.to)
        case "gain": return cue.gainDB == 0 && cue.keyLocations["gain"] == nil ? nil
            : cue.gainDB == -.infinity ? "-inf" : String(format: "%g dB", cue.gainDB)
        case "at":
            switch cue.start {
            case .manual: return "manual"
            case .at(let at): return time(at)
            case .atTimecode(let label): return "tc \(label)"
            case .after, .with, .afterPrevious: return nil
            }
        case "after": if case .after(let name) = cue.start { return name } else { return nil }
        case "with": if case .with(let name) = cue.start { return name } else { return nil }
        case "target": return cue.action.target
        default: return nil
        }
    }

    /// The change that sets `key` to `value` (nil: removes it) in the mapping `spans` describes.
    static func patch(_ key: String, to value: String?, in spans: SourceSpans, bytes: [UInt8]) -> (range: Range<Int>, text: String) {
        if let written = spans.keys[key] {
            guard value == nil else { return (written.value, self.written(value!, key: key)) }
            // Removed: the pair and the separator before it (or after it, for the first pair).
            if spans.isFlow {
                var start = written.key.lowerBound
                var back = start - 1
                while back > spans.mapping.lowerBound && (bytes[back] == 0x20 || bytes[back] == 0x09) { back -= 1 }
                if bytes[back] == 0x2C { start = back; return (start..<written.value.upperBound, "") }
                var end = written.value.upperBound
                while end < spans.mapping.upperBound && (bytes[end] == 0x20 || bytes[end] == 0x2C) { end += 1 }
                return (written.key.lowerBound..<end, "")
            }
            var start = written.key.lowerBound
            while start > 0 && bytes[start - 1] != 0x0A { start -= 1 }
            var end = written.value.upperBound
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            return (start..<min(bytes.count, end + 1), "")
        }
        guard let value else { return (0..<0, "") }
        let at = spans.lastValueEnd
        if spans.isFlow { return (at..<at, ", \(key): \(self.written(value, key: key))") }
        var lineStart = spans.firstKeyStart
        while lineStart > 0 && bytes[lineStart - 1] != 0x0A { lineStart -= 1 }
        let indent = String(repeating: " ", count: spans.firstKeyStart - lineStart)
        if at > 0 && bytes[at - 1] == 0x0A { return (at..<at, "\(indent)\(key): \(self.written(value, key: key))\n") }
        return (at..<at, "\n\(indent)\(key): \(self.written(value, key: key))")
    }

    /// Keys whose value may be a YAML list or mapping (`[1, 2]`, `{ … }`).
    static let collectionKeys: Set<String> = ["channel_map", "ports", "message", "sysex", "children"]

    /// `value` as written for `key`: a list or mapping as it is for keys that take one, else
    /// ``quoted(_:)``.
    static func written(_ value: String, key: String) -> String {
        let text = value.trimmingCharacters(in: .whitespaces)
        let collection = (text.hasPrefix("[") && text.hasSuffix("]")) || (text.hasPrefix("{") && text.hasSuffix("}"))
        return collection && collectionKeys.contains(key) ? text : quoted(value)
    }

    /// `text` as a YAML scalar: plain when YAML reads it back as written, else double-quoted.
    static func quoted(_ text: String) -> String {
        let special = ":#,[]{}&*!|>'\"%@`\\"
        let plain = !text.isEmpty && text.first != " " && text.last != " " && !text.hasPrefix("- ") && text != "-" && text.first != "?"
            && !text.contains(where: { special.contains($0) || $0.isNewline })
        if plain { return text }
        return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

extension SessionDocument.Cue {
    /// The values ``CueEdit`` sets, as the session file says them (`pre_wait` → `0.5`, `gain` →
    /// `-6 dB`), for those the cue has: what an editor shows.
    public var editableValues: [String: String] {
        var values: [String: String] = [:]
        for key in CueEdit.keys { values[key] = SessionFileEditor.value(of: key, in: self) }
        return values
    }
}

/// Why edits cannot be written into a session file.
public struct SessionFileEditError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong and what to do.
    public var message: String
    init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
