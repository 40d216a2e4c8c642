import Foundation
import Yams

/// Reads a session file (YAML, through Yams) into a ``SessionDocument``, checking every key and
/// value and collecting every problem with its line and column.
///
/// Files are not opened here; ``Session/load(path:)`` does that.
public struct SessionParser {
    /// The keys of the top-level mapping.
    public static let topKeys = ["rate", "channels", "layers", "cues", "automation"]
    /// The keys of a layer.
    public static let layerKeys = ["gain", "ports"]
    /// The keys of a cue.
    public static let cueKeys = ["name", "layer", "file", "at", "after", "with", "offset", "gain", "fade_in",
                                 "fade_out", "from", "to", "loop", "crossfade"]
    /// The keys of an automation entry.
    public static let automationKeys = ["layer", "at", "gain", "ramp"]
    /// The layer cues play on when they name none.
    public static let defaultLayerName = "main"

    let path: String
    let text: String
    private var diagnostics: [SessionDiagnostic] = []

    /// Creates a parser for `text`, the contents of the session file at `path`.
    public init(path: String, text: String) {
        self.path = path
        self.text = text
    }

    /// Parses the file.
    /// - Throws: ``SessionError`` listing every problem found.
    public mutating func parse() throws(SessionError) -> SessionDocument {
        let (document, problems) = try parseCollecting()
        if !problems.isEmpty { throw SessionError(problems) }
        return document
    }

    /// Parses the file, returning the document (with defaults where values were bad) and the
    /// problems found; throws only when there is no document at all (a YAML syntax error, say).
    mutating func parseCollecting() throws(SessionError) -> (SessionDocument, [SessionDiagnostic]) {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw SessionError(.syntax, at: location(of: error), "the file is not valid YAML: \(Self.problem(of: error)); fix the syntax there (indent with spaces, quote values that contain ': ' or '#')")
        } catch {
            throw SessionError(.syntax, at: SourceLocation(path: path, line: 1, column: 1), "the file is not valid YAML: \(error)")
        }
        let directory = (URL(fileURLWithPath: path).deletingLastPathComponent().path as String)
        var document = SessionDocument(path: path, baseDirectory: directory, rate: 48000, channelCount: 2,
                                       layers: [], cues: [], automation: [], declaresLayers: false)
        guard let root, case .mapping(let top) = root else {
            throw SessionError(.invalidValue, at: SourceLocation(path: path, line: 1, column: 1),
                "a session file is a mapping with the keys rate, channels, layers, cues and automation; start with 'cues:' and a list of cues")
        }
        var sawCues = false
        for (keyNode, value) in top {
            guard let key = keyName(keyNode, allowed: Self.topKeys, context: "the session") else { continue }
            switch key {
            case "rate":
                if let rate = number(value, "rate"), rate >= 1000, rate <= 768_000, rate == rate.rounded() {
                    document.rate = rate
                } else {
                    report(.invalidValue, value, "rate '\(string(value) ?? "?")' is not a sample rate; write a whole number of Hz from 1000 to 768000, e.g. 48000")
                }
            case "channels":
                if let count = number(value, "channels"), count >= 1, count <= 64, count == count.rounded() {
                    document.channelCount = Int(count)
                } else {
                    report(.invalidValue, value, "channels '\(string(value) ?? "?")' is not a channel count; write a whole number from 1 to 64")
                }
            case "layers":
                document.declaresLayers = true
                document.layers = parseLayers(value)
            case "cues":
                sawCues = true
                document.cues = parseCues(value, baseDirectory: directory)
            case "automation":
                document.automation = parseAutomation(value)
            default: break
            }
        }
        if !sawCues {
            report(.missingKey, root, "the session has no 'cues:'; add a list of cues, each with at least a 'file:'")
        }
        if !document.declaresLayers {
            var seen: [String] = []
            for cue in document.cues where !seen.contains(cue.layer) {
                seen.append(cue.layer)
                document.layers.append(.init(name: cue.layer, gainDB: 0, ports: [], location: cue.location(of: "layer")))
            }
        }
        return (document, diagnostics)
    }

    // MARK: - Sections

    private mutating func parseLayers(_ node: Node) -> [SessionDocument.Layer] {
        guard case .mapping(let mapping) = node else {
            report(.invalidValue, node, "'layers' must be a mapping of layer names to their settings, e.g. 'drums: { gain: -3dB }'")
            return []
        }
        var layers: [SessionDocument.Layer] = []
        for (nameNode, settings) in mapping {
            guard let name = string(nameNode), !name.isEmpty else {
                report(.invalidValue, nameNode, "a layer name must be a non-empty string")
                continue
            }
            if layers.contains(where: { $0.name == name }) {
                report(.duplicateName, nameNode, "layer '\(name)' is declared twice; give each layer its own name")
                continue
            }
            var layer = SessionDocument.Layer(name: name, gainDB: 0, ports: [], location: location(of: nameNode))
            switch settings {
            case .scalar(let scalar) where scalar.string.isEmpty || scalar.string == "~" || scalar.string == "null":
                break  // `drums:` with nothing: defaults
            case .mapping(let entries):
                for (keyNode, value) in entries {
                    guard let key = keyName(keyNode, allowed: Self.layerKeys, context: "layer '\(name)'") else { continue }
                    switch key {
                    case "gain":
                        if let gain = gain(value, what: "layer '\(name)' gain") { layer.gainDB = gain }
                    case "ports":
                        layer.ports = ports(value, layer: name)
                    default: break
                    }
                }
            default:
                report(.invalidValue, settings, "layer '\(name)' must be a mapping such as '{ gain: -3dB, ports: [system:playback_1] }'")
            }
            layers.append(layer)
        }
        return layers
    }

    private mutating func ports(_ node: Node, layer: String) -> [String] {
        switch node {
        case .scalar(let scalar) where !scalar.string.isEmpty:
            return [scalar.string]
        case .sequence(let sequence):
            var result: [String] = []
            for item in sequence {
                guard let port = string(item), port.contains(":") else {
                    report(.invalidValue, item, "layer '\(layer)' port '\(string(item) ?? "?")' is not a JACK port name; write client:port, e.g. system:playback_1")
                    continue
                }
                result.append(port)
            }
            return result
        default:
            report(.invalidValue, node, "layer '\(layer)' ports must be a list of JACK port names, e.g. [system:playback_1, system:playback_2]")
            return []
        }
    }

    private mutating func parseCues(_ node: Node, baseDirectory: String) -> [SessionDocument.Cue] {
        guard case .sequence(let sequence) = node else {
            report(.invalidValue, node, "'cues' must be a list; start each cue with '- ' (e.g. '- { file: a.wav, at: 0 }')")
            return []
        }
        var cues: [SessionDocument.Cue] = []
        for (index, item) in sequence.enumerated() {
            guard case .mapping(let entries) = item else {
                report(.invalidValue, item, "cue \(index + 1) must be a mapping with at least 'file:'")
                continue
            }
            var cue = SessionDocument.Cue(name: "", layer: Self.defaultLayerName, file: "", resolvedFile: "",
                                          start: .afterPrevious, offset: nil, gainDB: 0, fadeIn: nil, fadeOut: nil,
                                          from: nil, to: nil, loop: .times(1), crossfade: nil,
                                          location: location(of: item), keyLocations: [:])
            var startKeys: [(String, Node)] = []
            let label = "cue \(index + 1)"
            for (keyNode, value) in entries {
                guard let key = keyName(keyNode, allowed: Self.cueKeys, context: label) else { continue }
                cue.keyLocations[key] = location(of: value)
                switch key {
                case "name":
                    if let name = string(value), !name.isEmpty { cue.name = name } else {
                        report(.invalidValue, value, "\(label): 'name' must be a non-empty string")
                    }
                case "layer":
                    if let name = string(value), !name.isEmpty { cue.layer = name } else {
                        report(.invalidValue, value, "\(label): 'layer' must name a layer")
                    }
                case "file":
                    if let file = string(value), !file.isEmpty {
                        cue.file = file
                        cue.resolvedFile = file.hasPrefix("/") ? file
                            : URL(fileURLWithPath: baseDirectory).appendingPathComponent(file).standardizedFileURL.path
                    } else {
                        report(.invalidValue, value, "\(label): 'file' must be the path of an audio file")
                    }
                case "at", "after", "with":
                    startKeys.append((key, value))
                case "offset": cue.offset = time(value, what: "\(label) offset")
                case "gain": if let gain = gain(value, what: "\(label) gain") { cue.gainDB = gain }
                case "fade_in": cue.fadeIn = time(value, what: "\(label) fade_in")
                case "fade_out": cue.fadeOut = time(value, what: "\(label) fade_out")
                case "from": cue.from = time(value, what: "\(label) from")
                case "to": cue.to = time(value, what: "\(label) to")
                case "crossfade": cue.crossfade = time(value, what: "\(label) crossfade")
                case "loop":
                    let text = string(value)?.lowercased() ?? ""
                    if text == "forever" || text == "true" || text == "inf" {
                        cue.loop = .forever
                    } else if let count = Int(text), (1...1_000_000).contains(count) {
                        cue.loop = .times(count)
                    } else {
                        report(.invalidValue, value, "\(label): loop '\(text)' is not a play count; write a whole number from 1 to 1000000, or forever")
                    }
                default: break
                }
            }
            if cue.file.isEmpty && cue.keyLocations["file"] == nil {
                report(.missingKey, item, "\(label) has no 'file:'; add the audio file it plays (relative to the session file's folder)")
            }
            if cue.name.isEmpty {
                let stem = URL(fileURLWithPath: cue.file).deletingPathExtension().lastPathComponent
                cue.name = stem.isEmpty ? "cue \(index + 1)" : stem
                if cues.contains(where: { $0.name == cue.name }) { cue.name = "\(cue.name) \(index + 1)" }
            } else if let other = cues.first(where: { $0.name == cue.name }) {
                report(.duplicateName, entries.first(where: { string($0.key) == "name" })?.value ?? item,
                       "\(label): cue name '\(cue.name)' is already used by the cue at line \(other.location.line); give every cue its own name")
            }
            if startKeys.count > 1 {
                let names = startKeys.map(\.0).joined(separator: "', '")
                report(.conflict, startKeys[1].1, "\(label) ('\(cue.name)') has '\(names)'; a cue starts in one way only: keep one of at, after and with")
            }
            if let (key, value) = startKeys.first {
                let text = string(value) ?? ""
                switch key {
                case "at":
                    if text.lowercased() == "manual" { cue.start = .manual }
                    else if let t = time(value, what: "\(label) at", allowManual: true) { cue.start = .at(t) }
                case "after":
                    if text.isEmpty { report(.invalidValue, value, "\(label): 'after' must name a cue") }
                    else { cue.start = .after(text) }
                case "with":
                    if text.isEmpty { report(.invalidValue, value, "\(label): 'with' must name a cue") }
                    else { cue.start = .with(text) }
                default: break
                }
            }
            if cue.crossfade != nil, !(startKeysContain(startKeys, "after") || cue.start == .afterPrevious) {
                report(.conflict, entries.first(where: { string($0.key) == "crossfade" })!.value,
                       "\(label) ('\(cue.name)'): 'crossfade' overlaps the cue this one follows, so it needs 'after: CUE' (or no start key, to follow the previous cue); remove it or use 'after'")
            }
            cues.append(cue)
        }
        return cues
    }

    private func startKeysContain(_ keys: [(String, Node)], _ key: String) -> Bool { keys.contains { $0.0 == key } }

    private mutating func parseAutomation(_ node: Node) -> [SessionDocument.Automation] {
        guard case .sequence(let sequence) = node else {
            report(.invalidValue, node, "'automation' must be a list such as '- { layer: drums, at: 12, gain: -12dB, ramp: 2 }'")
            return []
        }
        var result: [SessionDocument.Automation] = []
        for (index, item) in sequence.enumerated() {
            let label = "automation \(index + 1)"
            guard case .mapping(let entries) = item else {
                report(.invalidValue, item, "\(label) must be a mapping with layer, at, gain and ramp")
                continue
            }
            var layer: String?
            var at: SessionTime?
            var gainDB: Double?
            var ramp = SessionTime.seconds(0)
            var locations: [String: SourceLocation] = [:]
            var complete = true
            for (keyNode, value) in entries {
                guard let key = keyName(keyNode, allowed: Self.automationKeys, context: label) else { continue }
                locations[key] = location(of: value)
                switch key {
                case "layer": layer = string(value)
                case "at":
                    at = time(value, what: "\(label) at")
                    if at == nil { complete = false }
                case "gain":
                    gainDB = gain(value, what: "\(label) gain")
                    if gainDB == nil { complete = false }
                case "ramp":
                    if let t = time(value, what: "\(label) ramp") { ramp = t } else { complete = false }
                default: break
                }
            }
            for (key, present) in [("layer", layer != nil), ("at", locations["at"] != nil), ("gain", locations["gain"] != nil)] where !present {
                report(.missingKey, item, "\(label) has no '\(key):'; an automation entry needs layer, at and gain (ramp is optional)")
                complete = false
            }
            if complete, let layer, let at, let gainDB {
                result.append(.init(layer: layer, at: at, gainDB: gainDB, ramp: ramp, location: location(of: item),
                                    keyLocations: locations))
            }
        }
        return result
    }

    // MARK: - Values

    private mutating func keyName(_ node: Node, allowed: [String], context: String) -> String? {
        guard let key = string(node) else {
            report(.invalidValue, node, "\(context): keys must be plain words")
            return nil
        }
        if allowed.contains(key) { return key }
        let suggestion = Suggest.closest(to: key, in: allowed)
        report(.unknownKey, node, "\(context): unknown key '\(key)'"
               + (suggestion.map { "; did you mean '\($0)'?" } ?? "; the keys are \(allowed.joined(separator: ", "))"))
        return nil
    }

    private mutating func time(_ node: Node, what: String, allowManual: Bool = false) -> SessionTime? {
        let text = string(node) ?? ""
        if let value = SessionTime.parse(text) { return value }
        let negative = text.trimmingCharacters(in: .whitespaces).hasPrefix("-")
        report(.invalidTime, node, negative ? "\(what) '\(text)' is negative; times count from the session's start (or the file's), so use 0 or more"
               : "\(what) '\(text)' is not a time; " + SessionTime.formsHint + (allowManual ? ", or manual" : ""))
        return nil
    }

    private mutating func gain(_ node: Node, what: String) -> Double? {
        let text = string(node) ?? ""
        if let value = SessionGain.parse(text) { return value }
        report(.invalidGain, node, "\(what) '\(text)' is not a gain; write decibels from -inf to +\(Int(SessionGain.maximum)), e.g. -6dB, 0 or -inf")
        return nil
    }

    private mutating func number(_ node: Node, _ what: String) -> Double? {
        guard let text = string(node), let value = Double(text), value.isFinite else { return nil }
        return value
    }

    private func string(_ node: Node) -> String? {
        if case .scalar(let scalar) = node { return scalar.string }
        return nil
    }

    private func location(of node: Node) -> SourceLocation {
        let mark = node.mark
        return SourceLocation(path: path, line: mark?.line ?? 1, column: mark?.column ?? 1)
    }

    private mutating func report(_ kind: SessionDiagnostic.Kind, _ node: Node, _ message: String) {
        diagnostics.append(SessionDiagnostic(kind, at: location(of: node), message))
    }

    private func location(of error: YamlError) -> SourceLocation {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
            return SourceLocation(path: path, line: mark.line, column: mark.column)
        case .duplicatedKeysInMapping(_, let context):
            return SourceLocation(path: path, line: context.mark.line, column: context.mark.column)
        default:
            return SourceLocation(path: path, line: 1, column: 1)
        }
    }

    private static func problem(of error: YamlError) -> String {
        switch error {
        case .scanner(let context, let problem, _, _), .parser(let context, let problem, _, _),
             .composer(let context, let problem, _, _):
            return context.map { "\(problem) (\($0.text))" } ?? problem
        case .duplicatedKeysInMapping(let duplicates, _):
            return "duplicated keys \(duplicates.joined(separator: ", "))"
        default:
            return "\(error)"
        }
    }
}
