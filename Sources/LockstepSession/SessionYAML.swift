// libyaml, as Yams builds it (the module Yams itself reads YAML with). The session parser reads its
// events directly instead of through `Yams.compose`, which cannot bound alias expansion (a
// "billion laughs" alias used as a mapping key is hashed node by node while composing), resolves
// every scalar's tag with regular expressions (a third of a 100 000-cue check) and cannot be given
// the alias's own position.
internal import CYaml
import Foundation

/// One node of a session file as libyaml reads it: a scalar, a sequence or a mapping, with where it
/// starts. An alias is the node its anchor names, placed where the alias is written.
struct YAMLNode: Sendable {
    /// What the node holds.
    enum Content: Sendable {
        /// A scalar's text, as written (no tag resolution: `1.0`, `true` and `~` are text too).
        case scalar(String)
        /// A sequence's items.
        case sequence([YAMLNode])
        /// A mapping's entries, in file order (duplicate keys included; the session parser
        /// reports them).
        case mapping([YAMLPair])
    }

    /// What the node holds.
    var content: Content
    /// The line the node starts on, from 1.
    var line: Int32
    /// The column it starts at, from 1 (in characters, as libyaml counts).
    var column: Int32
    /// Nodes it holds with every alias expanded, itself included (saturating at `Int32.max`).
    var expandedSize: Int32
    /// Whether it is a plain scalar without a tag (`true` and `~` there mean a boolean and null,
    /// not words).
    var isPlain: Bool
    /// The bytes of the file it spans (for an alias: the alias as written).
    var bytes: Range<Int> = 0..<0
    /// Whether it is a mapping written in flow style (`{ a: 1 }`).
    var isFlow = false

    /// The scalar's text, or nil for a collection.
    var scalar: String? {
        if case .scalar(let text) = content { return text }
        return nil
    }

    /// Whether it is YAML's null: a plain `~`, `null` (any case YAML allows) or nothing at all.
    var isNull: Bool {
        guard isPlain, let text = scalar else { return false }
        return text.isEmpty || text == "~" || text == "null" || text == "Null" || text == "NULL"
    }

    /// Whether it is a plain boolean (`true`/`false`, as YAML 1.2 writes them).
    var isBoolean: Bool {
        guard isPlain, let text = scalar else { return false }
        return ["true", "True", "TRUE", "false", "False", "FALSE"].contains(text)
    }
}

/// A mapping entry.
struct YAMLPair: Sendable {
    /// The key.
    var key: YAMLNode
    /// The value.
    var value: YAMLNode
}

/// Reads one YAML document into ``YAMLNode``s, event by event, refusing documents whose aliases
/// expand too far and reporting libyaml's syntax errors with their line and column.
struct YAMLReader {
    /// How many nodes aliases may add to a document: with every alias replaced by the node its
    /// anchor names, the document may hold at most this many nodes more than as written.
    static let maximumAliasExpansion = 100_000
    /// The deepest nesting read (libyaml's own limit is 1000; a session needs four levels).
    static let maximumDepth = 256

    /// The file's path, for locations.
    let path: String

    /// Reads `text`'s single document; nil for an empty file.
    /// - Throws: ``SessionError`` with one diagnostic: the syntax error, an undefined alias, a
    ///   second document, nesting deeper than ``maximumDepth``, or an alias that takes the
    ///   expansion beyond ``maximumAliasExpansion`` (named at the alias).
    func read(_ text: String) throws(SessionError) -> YAMLNode? {
        var text = text
        var outcome: Result<YAMLNode?, SessionError> = .success(nil)
        text.withUTF8 { bytes in
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else {
                outcome = .failure(SessionError(.syntax, at: location(1, 1), "libyaml could not start (out of memory)"))
                return
            }
            defer { yaml_parser_delete(&parser) }
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            // (libyaml asserts its input is not NULL, which an empty buffer's address may be: an
            // empty file holds no document.)
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
            yaml_parser_set_input_string(&parser, base, bytes.count)
            do throws(SessionError) {
                outcome = .success(try compose(&parser, bytes))
            } catch {
                outcome = .failure(error)
            }
        }
        return try outcome.get()
    }

    /// A collection being read.
    private struct Frame {
        var isMapping: Bool
        var anchor: String?
        var line: Int32
        var column: Int32
        var items: [YAMLNode] = []
        var expandedSize: Int32 = 1
        var start = 0
        var isFlow = false
    }

    private func compose(_ parser: inout yaml_parser_t, _ bytes: UnsafeBufferPointer<UInt8>) throws(SessionError) -> YAMLNode? {
        var anchors: [String: YAMLNode] = [:]
        var stack: [Frame] = []
        var root: YAMLNode?
        var added = 0
        var documents = 0
        var event = yaml_event_t()
        while true {
            guard yaml_parser_parse(&parser, &event) == 1 else { throw syntaxError(parser, bytes) }
            defer { yaml_event_delete(&event) }
            let line = Self.clamp(event.start_mark.line + 1), column = Self.clamp(event.start_mark.column + 1)
            var node: YAMLNode
            var anchor: String?
            switch event.type {
            case YAML_STREAM_END_EVENT:
                return root
            case YAML_DOCUMENT_START_EVENT:
                documents += 1
                if documents > 1 {
                    throw SessionError(.syntax, at: location(line, column),
                        "the file is not valid YAML: it holds a second document (after '---' or '...'); a session is one document, so remove the separator or split the file")
                }
                continue
            case YAML_SCALAR_EVENT:
                let scalar = event.data.scalar
                let text = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
                node = YAMLNode(content: .scalar(text), line: line, column: column, expandedSize: 1,
                                isPlain: scalar.style == YAML_PLAIN_SCALAR_STYLE && scalar.tag == nil,
                                bytes: event.start_mark.index..<max(event.start_mark.index, event.end_mark.index))
                anchor = Self.string(scalar.anchor)
            case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                if stack.count >= Self.maximumDepth {
                    throw SessionError(.syntax, at: location(line, column),
                        "the file nests collections more than \(Self.maximumDepth) deep; a session needs four levels (cues, a cue, its keys, a list of ports), so close the brackets or remove indentation")
                }
                let isMapping = event.type == YAML_MAPPING_START_EVENT
                stack.append(Frame(isMapping: isMapping, line: line, column: column, start: event.start_mark.index,
                                   isFlow: isMapping ? event.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE
                                                     : event.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE))
                stack[stack.count - 1].anchor = Self.string(isMapping ? event.data.mapping_start.anchor
                                                                     : event.data.sequence_start.anchor)
                continue
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                let frame = stack.removeLast()
                var content = YAMLNode.Content.sequence(frame.items)
                if frame.isMapping {
                    var pairs: [YAMLPair] = []
                    pairs.reserveCapacity(frame.items.count / 2)
                    var index = 0
                    while index + 1 < frame.items.count {
                        pairs.append(YAMLPair(key: frame.items[index], value: frame.items[index + 1]))
                        index += 2
                    }
                    content = .mapping(pairs)
                }
                node = YAMLNode(content: content, line: frame.line, column: frame.column,
                                expandedSize: frame.expandedSize, isPlain: false,
                                bytes: frame.start..<max(frame.start, event.end_mark.index), isFlow: frame.isFlow)
                anchor = frame.anchor
            case YAML_ALIAS_EVENT:
                let name = Self.string(event.data.alias.anchor) ?? ""
                guard let target = anchors[name] else {
                    throw SessionError(.syntax, at: location(line, column),
                        "the file is not valid YAML: alias '*\(SessionParser.excerpt(name))' names no anchor before it; define it with '&\(SessionParser.excerpt(name))' on an earlier value, or write the value out")
                }
                added += Int(target.expandedSize) - 1
                if added > Self.maximumAliasExpansion {
                    throw SessionError(.aliasLimit, at: location(line, column),
                        "alias '*\(SessionParser.excerpt(name))' takes the document past the alias limit: with its aliases expanded it would hold more than \(Self.maximumAliasExpansion) nodes beyond those written (an alias bomb?); write the values out, or use fewer aliases of large anchors")
                }
                node = target
                node.line = line
                node.column = column
                node.bytes = event.start_mark.index..<max(event.start_mark.index, event.end_mark.index)
            default:    // stream start, document end
                continue
            }
            if let anchor { anchors[anchor] = node }
            if stack.isEmpty {
                root = node
            } else {
                stack[stack.count - 1].items.append(node)
                let sum = Int(stack[stack.count - 1].expandedSize) + Int(node.expandedSize)
                stack[stack.count - 1].expandedSize = Int32(clamping: sum)
            }
        }
    }

    private static func clamp(_ value: Int) -> Int32 { Int32(clamping: value) }

    private static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        guard let pointer else { return nil }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: strlen(pointer)), as: UTF8.self)
    }

    private func location(_ line: Int32, _ column: Int32) -> SourceLocation {
        SourceLocation(path: path, line: Int(line), column: Int(column))
    }

    /// libyaml's error as a diagnostic at its problem mark.
    private func syntaxError(_ parser: yaml_parser_t, _ bytes: UnsafeBufferPointer<UInt8>) -> SessionError {
        let problem = parser.problem.map { String(cString: $0) } ?? "unknown problem"
        if parser.error == YAML_MEMORY_ERROR {
            return SessionError(.syntax, at: location(1, 1), "the file is too large for libyaml to read (out of memory)")
        }
        if parser.error == YAML_READER_ERROR {
            // The reader reports a byte offset: count lines and characters up to it.
            let end = min(parser.problem_offset, bytes.count)
            var line = 1, column = 1
            for byte in bytes[..<end] {
                if byte == 0x0A { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
            }
            let value = parser.problem_value >= 0 ? String(format: " (0x%02X)", parser.problem_value) : ""
            return SessionError(.syntax, at: SourceLocation(path: path, line: line, column: column),
                "the file is not valid YAML: \(problem)\(value); a session is UTF-8 text without control characters, so remove that character")
        }
        let context = parser.context.map { " (\(String(cString: $0)))" } ?? ""
        let nesting = problem.hasPrefix("Maximum nesting level")
        return SessionError(.syntax, at: location(Self.clamp(parser.problem_mark.line + 1), Self.clamp(parser.problem_mark.column + 1)),
            nesting ? "the file nests collections too deep for libyaml (1000 levels); a session needs four levels, so close the brackets or remove indentation"
                : "the file is not valid YAML: \(problem)\(context); fix the syntax there (indent with spaces, quote values that contain ': ' or '#')")
    }
}
