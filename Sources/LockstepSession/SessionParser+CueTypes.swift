import Foundation

/// The keys of QLab's cue model: `type`, `target`, a fade's `level`, `duration`, `curve` and
/// `stop_target`, `pre_wait`, `post_wait` and `continue`.
extension SessionParser {
    /// Reads one of those keys of a cue.
    mutating func actionKey(_ key: String, _ value: YAMLNode, of cue: inout SessionDocument.Cue, label: String) {
        switch key {
        case "type":
            if let type: SessionDocument.CueType = choice(value, label: label, key: "type", what: "cue type", plural: "types") {
                cue.action.type = type
            } else {
                // Reported alone: the cue stands as an empty wait, with no file or layer to miss.
                cue.action.type = .wait
                cue.action.hasUnknownType = true
            }
        case "target":
            if let name = scalar(value, "\(label) target", expecting: "a cue name or number"), !name.isEmpty { cue.action.target = name }
            else if isScalarValue(value) { report(.invalidValue, value, "\(label): 'target' must name a cue") }
        case "level": cue.action.level = gain(value, what: "\(label) level")
        case "duration": cue.action.duration = time(value, what: "\(label) duration")
        case "load_time": cue.action.loadTime = time(value, what: "\(label) load_time")
        case "pre_wait": cue.action.preWait = time(value, what: "\(label) pre_wait")
        case "post_wait": cue.action.postWait = time(value, what: "\(label) post_wait")
        case "destination":
            guard let text = scalar(value, "\(label) destination", expecting: "HOST:PORT") else { break }
            if let problem = Self.destinationProblem(text) { report(.invalidValue, value, "\(label): destination '\(Self.excerpt(text))' \(problem)") }
            else { cue.action.destination = text }
        case "message":
            guard let text = scalar(value, "\(label) message", expecting: "an OSC message such as /cue/12/go") else { break }
            do { cue.action.message = try NetworkMessage.parse(text) } catch {
                report(.invalidValue, value, "\(label): message \(error.message)")
            }
        case "mode":
            if let mode: SessionDocument.GroupMode = choice(value, label: label, key: "mode", what: "group mode", plural: "modes") {
                cue.action.groupMode = mode
            }
        case "curve":
            if let curve: SessionDocument.FadeCurve = choice(value, label: label, key: "curve", what: "curve", plural: "curves") {
                cue.action.curve = curve
            }
        case "stop_target":
            guard value.isBoolean, let text = value.scalar?.lowercased() else {
                report(.invalidValue, value, "\(label): 'stop_target' is true or false")
                return
            }
            cue.action.stopsTarget = ["true", "yes", "on", "y"].contains(text)
        case "continue":
            // (`continue: no`, a YAML boolean, is read as none.)
            if value.isBoolean, let text = value.scalar?.lowercased(), ["false", "no", "off", "n"].contains(text) {
                cue.action.continueMode = SessionDocument.ContinueMode.none
            } else if let mode: SessionDocument.ContinueMode = choice(value, label: label, key: "continue", what: "continue mode", plural: "modes") {
                cue.action.continueMode = mode
            }
        default: midiKey(key, value, of: &cue, label: label)
        }
    }

    /// One of the values of `T` (case-insensitive), else nil with one error naming the value,
    /// the nearest one and every one.
    mutating func choice<T: RawRepresentable & CaseIterable>(_ value: YAMLNode, label: String, key: String, what: String,
                                                              plural: String) -> T? where T.RawValue == String {
        let names = T.allCases.map(\.rawValue)
        let list = names.joined(separator: ", ")
        guard let text = scalar(value, "\(label) \(key)", expecting: "a \(what) (\(list))") else { return nil }
        if let found = T(rawValue: text.lowercased()) { return found }
        report(.invalidValue, value, "\(label): unknown \(what) '\(Self.excerpt(text))'\(Suggest.hint(for: text.lowercased(), in: names)); the \(plural) are \(list)")
        return nil
    }

    /// Checks that a cue has the keys its type needs and none it does not take.
    mutating func checkActionKeys(of cue: inout SessionDocument.Cue, item: YAMLNode, label: String) {
        let type = cue.action.type
        guard !cue.action.hasUnknownType else { return }
        let allowed = SessionDocument.commonCueKeys.union(SessionDocument.keys(of: type))
        let name = cue.name.isEmpty ? "" : " ('\(Self.excerpt(cue.name))')"
        for key in cue.keyLocations.keys.sorted() where !allowed.contains(key) {
            let hint = type == .audio ? "; give it 'type:' (\(SessionDocument.CueType.allCases.filter { SessionDocument.keys(of: $0).contains(key) }.map(\.rawValue).joined(separator: ", "))) or remove the key"
                : "; it takes \(SessionDocument.keys(of: type).sorted().joined(separator: ", ")) besides the keys every cue takes"
            diagnostics.append(SessionDiagnostic(.conflict, at: cue.location(of: key),
                "\(label)\(name): a\(type == .audio ? "n" : "") \(type.rawValue) cue has no '\(key)'\(hint)"))
        }
        if type.takesTarget && cue.action.target == nil && !(type == .fade && cue.keyLocations["layer"] != nil)
            && cue.keyLocations["target"] == nil {
            let what = type == .fade ? "'target: CUE' (a cue's level) or 'layer: LAYER' (a layer's gain)" : "'target: CUE'"
            diagnostics.append(SessionDiagnostic(.missingKey, at: cue.location, "\(label)\(name): a \(type.rawValue) cue needs \(what)"))
        }
        if type == .fade {
            if cue.keyLocations["target"] != nil && cue.keyLocations["layer"] != nil {
                diagnostics.append(SessionDiagnostic(.conflict, at: cue.location(of: "layer"),
                    "\(label)\(name): a fade moves one thing: a cue's level ('target') or a layer's gain ('layer'); keep one"))
            }
            if cue.action.level == nil && cue.keyLocations["level"] == nil {
                diagnostics.append(SessionDiagnostic(.missingKey, at: cue.location, "\(label)\(name): a fade cue needs 'level:' (the dB it fades to, e.g. -inf or -12dB)"))
            }
            if cue.keyLocations["duration"] == nil { cue.action.duration = .seconds(SessionDocument.defaultFadeSeconds) }
        }
        if type == .network {
            for key in ["destination", "message"] where cue.keyLocations[key] == nil {
                diagnostics.append(SessionDiagnostic(.missingKey, at: cue.location, "\(label)\(name): a network cue needs '\(key):' (\(key == "message" ? "the OSC message, e.g. /cue/12/go" : "where it goes, HOST:PORT, e.g. 127.0.0.1:53000"))"))
            }
        }
        if type == .group && cue.action.groupMode == .timeline, let at = cue.keyLocations["loop"] {
            diagnostics.append(SessionDiagnostic(.conflict, at: at,
                "\(label)\(name): a timeline group plays its cues once, together; 'loop' repeats a playlist: add 'mode: playlist' or remove 'loop'"))
        }
        if type == .midi { finishMIDI(of: &cue, item: item, label: "\(label)\(name)") }
        if type == .wait && cue.keyLocations["duration"] == nil {
            diagnostics.append(SessionDiagnostic(.missingKey, at: cue.location, "\(label)\(name): a wait cue needs 'duration:' (how long it waits, e.g. 2.5)"))
        }
    }
}

extension SessionParser {
    /// What is wrong with a network cue's `destination` (`HOST:PORT`, `[IPV6]:PORT`), or nil.
    static func destinationProblem(_ text: String) -> String? {
        let port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return "is not [IPV6]:PORT; write e.g. [::1]:53000"
            }
            port = text[text.index(close, offsetBy: 2)...]
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty else { return "is not HOST:PORT; write e.g. 127.0.0.1:53000 or desk.local:8000" }
            port = parts[1]
        }
        guard let number = Int(port), (1...65535).contains(number) else { return "has no port from 1 to 65535; write e.g. 127.0.0.1:53000" }
        return nil
    }
}

extension SessionDocument {
    /// A fade cue's length when it gives no `duration` (QLab's default).
    public static let defaultFadeSeconds = 5.0
}
