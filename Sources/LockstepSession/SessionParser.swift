import Foundation
import LockstepFiles

/// Reads a session file (YAML, through libyaml as Yams builds it) into a ``SessionDocument``,
/// checking every key and value and collecting every problem with its line and column.
///
/// Hostile input is refused, never trusted: aliases may add at most ``maximumAliasExpansion``
/// nodes to the document (an alias bomb is one error at the alias), no value may be longer than
/// ``maximumValueLength`` characters, and a value of the wrong type (a boolean, null, a list or a
/// mapping where a number, a name or a time belongs) is an error at the value. The work is linear
/// in the size of the file.
///
/// Files are not opened here; ``Session/load(path:)`` does that.
public struct SessionParser {
    /// The keys of the top-level mapping.
    public static let topKeys = ["rate", "channels", "timecode", "layers", "cues", "automation", "triggers"]
    /// The keys of a layer.
    public static let layerKeys = ["gain", "ports", "channel_map"]
    /// The keys of a cue.
    public static let cueKeys = ["name", "layer", "file", "at", "after", "with", "offset", "gain", "fade_in",
                                 "fade_out", "from", "to", "loop", "crossfade", "channel_map", "number",
                                 "type", "target", "level", "duration", "curve", "stop_target", "pre_wait", "post_wait",
                                 "continue", "mode", "children", "destination", "message", "load_time"] + midiCueKeys
    /// The keys of an automation entry.
    public static let automationKeys = ["layer", "at", "gain", "ramp"]
    /// The keys of a MIDI trigger: one message key (note, cc, program, msc) and what narrows or
    /// follows it.
    public static let triggerKeys = ["note", "cc", "program", "msc", "channel", "velocity", "value", "device", "do"]
    /// The layer cues play on when they name none.
    public static let defaultLayerName = "main"
    /// How many nodes aliases may add to a session file: with every alias (`*name`) replaced by
    /// the value its anchor (`&name`) names, the file may hold at most this many nodes more than as
    /// written. An alias of a single value adds none; an alias bomb is refused at the alias that
    /// crosses the limit, before anything is expanded.
    public static let maximumAliasExpansion = YAMLReader.maximumAliasExpansion
    /// The longest value (a name, a path, a time…) a session file may hold, in characters.
    public static let maximumValueLength = 4096

    let path: String
    let text: String
    var diagnostics: [SessionDiagnostic] = []
    /// The cues (by index in the document) whose `layer` value was reported.
    private var cuesWithoutLayer: [Int] = []

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
    /// problems found; throws only when there is no document at all (a YAML syntax error, an
    /// alias bomb, a file that is not a mapping).
    mutating func parseCollecting() throws(SessionError) -> (SessionDocument, [SessionDiagnostic]) {
        let root = try YAMLReader(path: path).read(text)
        let directory = (URL(fileURLWithPath: path).deletingLastPathComponent().path as String)
        var document = SessionDocument(path: path, baseDirectory: directory, rate: 48000, channelCount: 2,
                                       layers: [], cues: [], automation: [], declaresLayers: false)
        guard let root, case .mapping(let top) = root.content else {
            throw SessionError(.invalidValue, at: root.map(location(of:)) ?? SourceLocation(path: path, line: 1, column: 1),
                "a session file is a mapping with the keys rate, channels, layers, cues and automation; start with 'cues:' and a list of cues")
        }
        var sawCues = false
        for (key, value) in entries(top, allowed: Self.topKeys, context: "the session") {
            switch key {
            case "rate":
                if let text = scalar(value, "rate", expecting: "a sample rate in Hz"),
                   let rate = Self.wholeNumber(text), rate >= 1000, rate <= 768_000 {
                    document.rate = Double(rate)
                } else if isScalarValue(value) {
                    report(.invalidValue, value, "rate '\(Self.excerpt(value.scalar ?? ""))' is not a sample rate; write a whole number of Hz from 1000 to 768000, e.g. 48000")
                }
            case "channels":
                if let text = scalar(value, "channels", expecting: "a channel count"),
                   let count = Self.wholeNumber(text), count >= 1, count <= 64 {
                    document.channelCount = count
                } else if isScalarValue(value) {
                    report(.invalidValue, value, "channels '\(Self.excerpt(value.scalar ?? ""))' is not a channel count; write a whole number from 1 to 64")
                }
            case "layers":
                document.declaresLayers = true
                document.layers = parseLayers(value)
            case "cues":
                sawCues = true
                document.cues = parseCues(value, baseDirectory: directory)
                if case .sequence = value.content { document.cueList = CueListSpan(value) }
            case "automation":
                document.automation = parseAutomation(value)
            case "triggers":
                document.triggers = parseTriggers(value)
                if case .sequence = value.content { document.triggerList = CueListSpan(value) }
            case "timecode":
                document.timecode = parseTimecode(value)
            default: break
            }
        }
        checkTimecodeStarts(document)
        if !sawCues {
            report(.missingKey, root, "the session has no 'cues:'; add a list of cues, each with at least a 'file:'")
        }
        // A cue whose 'layer' is reported goes on the first layer, not "unknown layer 'main'" too.
        if let first = document.layers.first {
            for index in cuesWithoutLayer { document.cues[index].layer = first.name }
        }
        if !document.declaresLayers {
            var seen: Set<String> = []
            for cue in document.cues where cue.action.type == .audio && seen.insert(cue.layer).inserted {
                document.layers.append(.init(name: cue.layer, gainDB: 0, ports: [], location: cue.location(of: "layer")))
            }
        }
        // A session of MIDI, network or wait cues alone still has a (silent) layer for them to sit on.
        if document.layers.isEmpty && !document.cues.isEmpty {
            document.layers.append(.init(name: Self.defaultLayerName, gainDB: 0, ports: [], location: location(of: root)))
        }
        return (document, diagnostics)
    }

    // MARK: - Sections

    private mutating func parseLayers(_ node: YAMLNode) -> [SessionDocument.Layer] {
        guard case .mapping(let mapping) = node.content else {
            report(.invalidValue, node, node.isNull
                ? "'layers' has no value; list the layers under it (e.g. 'drums: { gain: -3dB }') or remove the key"
                : "'layers' must be a mapping of layer names to their settings, e.g. 'drums: { gain: -3dB }'")
            return []
        }
        var layers: [SessionDocument.Layer] = []
        var declared: [String: Int32] = [:]
        for pair in mapping {
            let nameNode = pair.key, settings = pair.value
            guard let name = scalar(nameNode, "a layer name", expecting: "a name"), !name.isEmpty else {
                if isScalarValue(nameNode) { report(.invalidValue, nameNode, "a layer name must be a non-empty string") }
                continue
            }
            if let line = declared[name] {
                report(.duplicateName, nameNode, "layer '\(Self.excerpt(name))' is declared twice (first at line \(line)); give each layer its own name")
                continue
            }
            declared[name] = nameNode.line
            var layer = SessionDocument.Layer(name: name, gainDB: 0, ports: [], location: location(of: nameNode))
            layer.settingsBytes = settings.bytes
            if case .mapping(let pairs) = settings.content { layer.source = SourceSpans(settings, pairs: pairs) }
            let label = "layer '\(Self.excerpt(name))'"
            switch settings.content {
            case .scalar where settings.isNull:
                break  // `drums:` with nothing: defaults
            case .mapping(let pairs):
                for (key, value) in entries(pairs, allowed: Self.layerKeys, context: label) {
                    switch key {
                    case "gain":
                        if let gain = gain(value, what: "\(label) gain") { layer.gainDB = gain }
                    case "ports":
                        layer.ports = ports(value, label: label)
                    case "channel_map":
                        layer.channelMap = channelMap(value, label: label)
                        layer.channelMapLocation = location(of: value)
                    default: break
                    }
                }
            default:
                report(.invalidValue, settings, "\(label) must be a mapping such as '{ gain: -3dB, ports: [system:playback_1] }'")
            }
            layers.append(layer)
        }
        return layers
    }

    /// A `channel_map` value: a string such as `2,1` or `1:1,2:2,3:1@-3`, or a list such as
    /// `[2, 1]` (see ``LockstepFiles/ChannelMap``); errors name the entry at fault.
    private mutating func channelMap(_ node: YAMLNode, label: String) -> ChannelMap? {
        let text: String
        switch node.content {
        case .sequence(let items):
            var parts: [String] = []
            for item in items {
                guard let part = scalar(item, "\(label) channel_map entry", expecting: "a channel number or a route IN:OUT") else { return nil }
                parts.append(part)
            }
            text = parts.joined(separator: ",")
        default:
            guard let value = scalar(node, "\(label) channel_map", expecting: "a channel map such as 2,1 or 1:1,2:2") else { return nil }
            text = value
        }
        do {
            return try ChannelMap(parsing: text)
        } catch {
            report(.invalidValue, node, "\(label) channel_map '\(Self.excerpt(text))': \(error.problem)")
            return nil
        }
    }

    private mutating func ports(_ node: YAMLNode, label: String) -> [String] {
        let items: [YAMLNode]
        switch node.content {
        case .sequence(let sequence): items = sequence
        case .scalar where !node.isNull && !(node.scalar ?? "").isEmpty: items = [node]
        default:
            report(.invalidValue, node, "\(label) ports must be a list of JACK port names, e.g. [system:playback_1, system:playback_2]")
            return []
        }
        var result: [String] = []
        for item in items {
            guard let port = scalar(item, "\(label) port", expecting: "a JACK port name (client:port)") else { continue }
            guard port.contains(":") else {
                report(.invalidValue, item, "\(label) port '\(Self.excerpt(port))' is not a JACK port name; write client:port, e.g. system:playback_1")
                continue
            }
            result.append(port)
        }
        return result
    }

    /// What reading the cue list keeps across its cues and groups.
    struct CueListState {
        var cues: [SessionDocument.Cue] = []
        /// Name → the line of the first cue with it.
        var names: [String: Int] = [:]
        /// Number → the line of the cue with it.
        var numbers: [String: Int] = [:]
        let base: URL
        /// Paths and default names by file as written: URL work (a stat per path) once per file,
        /// however many cues play it.
        var resolvedPaths: [String: String] = [:]
        var stems: [String: String] = [:]
    }

    private mutating func parseCues(_ node: YAMLNode, baseDirectory: String) -> [SessionDocument.Cue] {
        guard case .sequence(let sequence) = node.content else {
            report(.invalidValue, node, "'cues' must be a list; start each cue with '- ' (e.g. '- { file: a.wav, at: 0 }')")
            return []
        }
        var list = CueListState(base: URL(fileURLWithPath: baseDirectory))
        list.cues.reserveCapacity(sequence.count)
        parseCueList(sequence, parent: nil, labelPrefix: "cue ", into: &list)
        return list.cues
    }

    /// Reads the cues of `sequence` (the top-level list, or a group's `children:` with `parent` the
    /// group's index) into `list`, each group followed by its own cues.
    mutating func parseCueList(_ sequence: [YAMLNode], parent: Int?, labelPrefix: String, into list: inout CueListState) {
        for (index, item) in sequence.enumerated() {
            let label = "\(labelPrefix)\(index + 1)"
            guard case .mapping(let pairs) = item.content else {
                report(.invalidValue, item, "\(label) must be a mapping with at least 'file:'")
                continue
            }
            var cue = SessionDocument.Cue(name: "", layer: Self.defaultLayerName, file: "", resolvedFile: "",
                                          start: .afterPrevious, offset: nil, gainDB: 0, fadeIn: nil, fadeOut: nil,
                                          from: nil, to: nil, loop: .times(1), crossfade: nil,
                                          location: location(of: item), keyLocations: [:])
            cue.action.parent = parent
            cue.source = SourceSpans(item, pairs: pairs)
            var startKeys: [(String, YAMLNode)] = []
            var nameNode: YAMLNode?
            var crossfadeNode: YAMLNode?
            var children: YAMLNode?
            for (key, value) in entries(pairs, allowed: Self.cueKeys, context: label) {
                cue.keyLocations[key] = location(of: value)
                switch key {
                case "name":
                    nameNode = value
                    if let name = scalar(value, "\(label) name", expecting: "a name"), !name.isEmpty { cue.name = name }
                    else if isScalarValue(value) { report(.invalidValue, value, "\(label): 'name' must be a non-empty string") }
                case "layer":
                    if let name = scalar(value, "\(label) layer", expecting: "a layer name"), !name.isEmpty { cue.layer = name }
                    else {
                        if isScalarValue(value) { report(.invalidValue, value, "\(label): 'layer' must name a layer") }
                        cuesWithoutLayer.append(list.cues.count)
                    }
                case "file":
                    if let file = scalar(value, "\(label) file", expecting: "the path of an audio file"), !file.isEmpty {
                        cue.file = file
                        cue.resolvedFile = list.resolvedPaths[file] ?? (file.hasPrefix("/") ? file
                            : list.base.appendingPathComponent(file).standardizedFileURL.path)
                        list.resolvedPaths[file] = cue.resolvedFile
                    } else if isScalarValue(value) {
                        report(.invalidValue, value, "\(label): 'file' must be the path of an audio file")
                    }
                case "at", "after", "with":
                    startKeys.append((key, value))
                case "channel_map": cue.channelMap = channelMap(value, label: label)
                case "number":
                    if let number = scalar(value, "\(label) number", expecting: "a cue number such as 1, 2.5 or A3"),
                       !number.isEmpty, !number.contains(where: \.isWhitespace) {
                        if let line = list.numbers[number] {
                            report(.duplicateName, value, "\(label): cue number '\(Self.excerpt(number))' is already used by the cue at line \(line); give every cue its own number")
                        } else {
                            list.numbers[number] = cue.location.line
                            cue.number = number
                        }
                    } else if isScalarValue(value) {
                        report(.invalidValue, value, "\(label): 'number' must be a cue number without spaces, such as 1, 2.5 or A3")
                    }
                case "offset": cue.offset = time(value, what: "\(label) offset")
                case "gain": if let gain = gain(value, what: "\(label) gain") { cue.gainDB = gain }
                case "fade_in": cue.fadeIn = time(value, what: "\(label) fade_in")
                case "fade_out": cue.fadeOut = time(value, what: "\(label) fade_out")
                case "from": cue.from = time(value, what: "\(label) from")
                case "to": cue.to = time(value, what: "\(label) to")
                case "crossfade":
                    crossfadeNode = value
                    cue.crossfade = time(value, what: "\(label) crossfade")
                case "loop":
                    let expecting = "a play count (a whole number from 1 to 1000000) or forever"
                    guard let text = scalar(value, "\(label) loop", expecting: expecting) else { break }
                    if text.lowercased() == "forever" {
                        cue.loop = .forever
                    } else if let count = Self.wholeNumber(text), (1...1_000_000).contains(count) {
                        cue.loop = .times(count)
                    } else {
                        report(.invalidValue, value, "\(label): loop '\(Self.excerpt(text))' is not a play count; write a whole number from 1 to 1000000, or forever")
                    }
                case "children": children = value
                default: actionKey(key, value, of: &cue, label: label)
                }
            }
            checkActionKeys(of: &cue, item: item, label: label)
            let number = String(label.dropFirst("cue ".count))     // 3, or 3.2 for a group's second cue
            if cue.action.type != .audio {
                if cue.name.isEmpty {
                    let name = "\(cue.action.type.rawValue) \(number)"
                    cue.name = list.names[name] == nil ? name : "cue \(number)"
                }
            } else if cue.file.isEmpty && cue.keyLocations["file"] == nil {
                report(.missingKey, item, "\(label) has no 'file:'; add the audio file it plays (relative to the session file's folder)")
            }
            if cue.name.isEmpty && cue.action.type == .audio {
                let stem = list.stems[cue.file] ?? URL(fileURLWithPath: cue.file).deletingPathExtension().lastPathComponent
                list.stems[cue.file] = stem
                cue.name = stem.isEmpty ? "cue \(number)" : stem
                if list.names[cue.name] != nil { cue.name = "\(cue.name) \(number)" }
            } else if let line = list.names[cue.name] {
                report(.duplicateName, nameNode ?? item,
                       "\(label): cue name '\(Self.excerpt(cue.name))' is already used by the cue at line \(line); give every cue its own name")
            }
            if list.names[cue.name] == nil { list.names[cue.name] = cue.location.line }
            if startKeys.count > 1 {
                let keys = startKeys.map(\.0).joined(separator: "', '")
                report(.conflict, startKeys[1].1, "\(label) ('\(Self.excerpt(cue.name))') has '\(keys)'; a cue starts in one way only: keep one of at, after and with")
            }
            if let (key, value) = startKeys.first {
                switch key {
                case "at":
                    if value.scalar?.lowercased() == "manual" { cue.start = .manual }
                    else if let label = value.scalar.flatMap(Self.timecodeStart) { cue.start = .atTimecode(label) }
                    else if let t = time(value, what: "\(label) at", allowManual: true) { cue.start = .at(t) }
                case "after", "with":
                    if let name = scalar(value, "\(label) \(key)", expecting: "a cue name"), !name.isEmpty {
                        cue.start = key == "after" ? .after(name) : .with(name)
                    } else if isScalarValue(value) {
                        report(.invalidValue, value, "\(label): '\(key)' must name a cue")
                    }
                default: break
                }
            }
            if let crossfadeNode, cue.crossfade != nil, cue.action.type != .group,
               !(startKeys.contains { $0.0 == "after" } || cue.start == .afterPrevious) {
                report(.conflict, crossfadeNode,
                       "\(label) ('\(Self.excerpt(cue.name))'): 'crossfade' overlaps the cue this one follows, so it needs 'after: CUE' (or no start key, to follow the previous cue); remove it or use 'after'")
            }
            checkGroupMember(&cue, startKeys: startKeys, label: label, in: list)
            let groupIndex = list.cues.count
            list.cues.append(cue)
            if cue.action.type == .group { parseGroupCues(children, of: groupIndex, item: item, label: label, into: &list) }
        }
    }

    private mutating func parseAutomation(_ node: YAMLNode) -> [SessionDocument.Automation] {
        guard case .sequence(let sequence) = node.content else {
            report(.invalidValue, node, "'automation' must be a list such as '- { layer: drums, at: 12, gain: -12dB, ramp: 2 }'")
            return []
        }
        var result: [SessionDocument.Automation] = []
        for (index, item) in sequence.enumerated() {
            let label = "automation \(index + 1)"
            guard case .mapping(let pairs) = item.content else {
                report(.invalidValue, item, "\(label) must be a mapping with layer, at, gain and ramp")
                continue
            }
            var layer: String?
            var at: SessionTime?
            var gainDB: Double?
            var ramp = SessionTime.seconds(0)
            var locations: [String: SourceLocation] = [:]
            var complete = true
            for (key, value) in entries(pairs, allowed: Self.automationKeys, context: label) {
                locations[key] = location(of: value)
                switch key {
                case "layer":
                    if let name = scalar(value, "\(label) layer", expecting: "a layer name"), !name.isEmpty { layer = name }
                    else {
                        if isScalarValue(value) { report(.invalidValue, value, "\(label): 'layer' must name a layer") }
                        complete = false
                    }
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
            for key in ["layer", "at", "gain"] where locations[key] == nil {
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

    // MARK: - Keys and values

    /// The entries of a mapping whose keys are known words, in file order: a key that is not a
    /// word, not one of `allowed`, or given a second time is reported and left out.
    mutating func entries(_ pairs: [YAMLPair], allowed: [String], context: String) -> [(String, YAMLNode)] {
        var result: [(String, YAMLNode)] = []
        var seen: [String: Int32] = [:]
        for pair in pairs {
            guard let key = keyName(pair.key, allowed: allowed, context: context) else { continue }
            if let line = seen[key] {
                report(.conflict, pair.key, "\(context): '\(key)' is given twice (first at line \(line)); keep one")
                continue
            }
            seen[key] = pair.key.line
            result.append((key, pair.value))
        }
        return result
    }

    private mutating func keyName(_ node: YAMLNode, allowed: [String], context: String) -> String? {
        guard let key = node.scalar, !node.isNull, key.utf8.count <= Self.maximumValueLength else {
            report(.invalidValue, node, "\(context): keys must be plain words, such as \(allowed.prefix(3).joined(separator: ", "))")
            return nil
        }
        if allowed.contains(key) { return key }
        let suggestion = Suggest.closest(to: key, in: allowed)
        report(.unknownKey, node, "\(context): unknown key '\(Self.excerpt(key))'"
               + (suggestion.map { "; did you mean '\($0)'?" } ?? "; the keys are \(allowed.joined(separator: ", "))"))
        return nil
    }

    /// The text of a scalar value for `what`, or nil, reporting a value of the wrong type: a list
    /// or mapping, null (nothing written), a boolean, or text longer than ``maximumValueLength``.
    /// An empty quoted string is returned (callers refuse it with their own message).
    mutating func scalar(_ node: YAMLNode, _ what: String, expecting: String) -> String? {
        switch node.content {
        case .sequence:
            report(.invalidValue, node, "\(what) must be \(expecting), not a list; write one value without '-' or '[ ]'")
            return nil
        case .mapping:
            report(.invalidValue, node, "\(what) must be \(expecting), not a mapping; write one value without 'key:' or '{ }'")
            return nil
        case .scalar(let text):
            if node.isNull {
                report(.invalidValue, node, "\(what) has no value; write \(expecting) after the colon, or remove the key")
                return nil
            }
            if node.isBoolean {
                report(.invalidValue, node, "\(what) is '\(text)', a YAML boolean; write \(expecting)"
                       + (expecting.contains("name") ? " (quote the word, \"\(text)\", to use it as a name)" : ""))
                return nil
            }
            let length = text.utf8.count
            if length > Self.maximumValueLength {
                report(.invalidValue, node, "\(what) is \(length) bytes long; a value is at most \(Self.maximumValueLength), so shorten it")
                return nil
            }
            return text
        }
    }

    /// Whether `node` is a scalar that ``scalar(_:_:expecting:)`` accepts, so that a caller refusing
    /// its text reports the value (and a value reported for its type is not reported twice).
    func isScalarValue(_ node: YAMLNode) -> Bool {
        guard let text = node.scalar else { return false }
        return !node.isNull && !node.isBoolean && text.utf8.count <= Self.maximumValueLength
    }

    mutating func time(_ node: YAMLNode, what: String, allowManual: Bool = false) -> SessionTime? {
        let expecting = allowManual ? "a time or manual" : "a time"
        guard let text = scalar(node, what, expecting: expecting) else { return nil }
        guard let reason = SessionTime.reason(for: text) else { return SessionTime.parse(text) }
        report(.invalidTime, node, "\(what) '\(Self.excerpt(text))' \(reason)" + (allowManual && reason.hasPrefix("is not a time") ? ", or manual" : ""))
        return nil
    }

    mutating func gain(_ node: YAMLNode, what: String) -> Double? {
        guard let text = scalar(node, what, expecting: "a gain in dB") else { return nil }
        if let value = SessionGain.parse(text) { return value }
        report(.invalidGain, node, "\(what) '\(Self.excerpt(text))' is not a gain; write decibels from -inf to +\(Int(SessionGain.maximum)), e.g. -6dB, 0 or -inf")
        return nil
    }

    /// A whole number written as decimal digits only (no sign, point, exponent or hex), if it
    /// fits an `Int`.
    static func wholeNumber(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    /// `text` for an error message: at most 60 characters, the rest elided.
    public static func excerpt(_ text: String) -> String {
        guard text.count > 60 else { return text }
        return String(text.prefix(57)) + "…"
    }

    func location(of node: YAMLNode) -> SourceLocation {
        SourceLocation(path: path, line: Int(node.line), column: Int(node.column))
    }

    mutating func report(_ kind: SessionDiagnostic.Kind, _ node: YAMLNode, _ message: String) {
        diagnostics.append(SessionDiagnostic(kind, at: location(of: node), message))
    }
}
