import Foundation

/// A session resolved to sample times at one rate: what plays where, when, how loud.
///
/// Cue start times are absolute session samples (sample 0 is the session's start). A cue that
/// waits for a `go` — and every cue chained to it with `after`/`with` — has no start until
/// ``fire(_:at:)`` places it.
public struct SessionTimeline: Sendable, Hashable {
    /// The rate every sample count here is at.
    public let rate: Double
    /// Master channels.
    public let channelCount: Int
    /// The layers, in file order.
    public let layers: [Layer]
    /// The cues, in file order.
    public internal(set) var cues: [Cue]
    /// Gain changes, per layer index, sorted by time.
    public private(set) var automation: [[AutomationPoint]]

    /// A layer: a named output queue.
    public struct Layer: Sendable, Hashable {
        /// Its name.
        public var name: String
        /// Its gain in dB before any automation.
        public var gainDB: Double
        /// JACK ports its own outputs connect to.
        public var ports: [String]
    }

    /// A cue resolved to samples.
    public struct Cue: Sendable, Hashable {
        /// Its name.
        public var name: String
        /// Its index in ``SessionTimeline/cues``.
        public var index: Int
        /// Its layer's index in ``SessionTimeline/layers``.
        public var layer: Int
        /// The audio file's absolute path.
        public var path: String
        /// The file's rate.
        public var fileRate: Double
        /// The file's channels.
        public var fileChannels: Int
        /// The first file frame of the region that plays.
        public var regionStart: Int64
        /// The file frame after the region.
        public var regionEnd: Int64
        /// Passes of the region; nil: forever.
        public var playCount: Int?
        /// The manual cue whose `go` places this cue (itself for a manual cue), or nil when the
        /// cue is placed from the session's start.
        public var trigger: Int?
        /// Samples from the trigger (or session start) to the cue's first sample.
        public var offsetFromTrigger: Int64
        /// The session sample of its first sample; nil until its trigger fires.
        public var start: Int64?
        /// Its length in session samples; nil when it loops forever.
        public var length: Int64?
        /// Its own gain in dB (the layer's and the automation's come on top).
        public var gainDB: Double
        /// Fade-in samples (quarter-sine).
        public var fadeIn: Int64
        /// Fade-out samples (quarter-sine), at its end.
        public var fadeOut: Int64
        /// Samples it fades in over while the cue it follows fades out (equal-power).
        public var crossfadeIn: Int64
        /// Samples at its end over which it fades out under a follower's crossfade.
        public var crossfadeOut: Int64
        /// Pauses and stops a control surface placed on it while the session ran, in session
        /// order (see ``SessionTimeline/Interruption``).
        public var interruptions: [Interruption] = []
        /// Changes of its own level a control surface made while the session ran, in session
        /// order (``gainDB`` applies before the first).
        public var levelChanges: [AutomationPoint] = []

        /// Whether it waits for a `go` (itself or through the cue it chains to).
        public var isManual: Bool { trigger != nil }
    }

    /// One gain change of a layer.
    public struct AutomationPoint: Sendable, Hashable {
        /// The session sample the ramp starts.
        public var start: Int64
        /// Its length in samples (0: a step).
        public var ramp: Int64
        /// The gain reached, in dB.
        public var gainDB: Double
    }

    /// Places a manual cue: it (and everything chained to it) starts at session sample `sample`.
    /// - Returns: the cues placed, or an empty list if `cue` is not manual or already placed.
    @discardableResult
    public mutating func fire(_ cue: Int, at sample: Int64) -> [Int] {
        guard cues.indices.contains(cue), cues[cue].trigger == cue, cues[cue].start == nil else { return [] }
        var placed: [Int] = []
        for index in cues.indices where cues[index].trigger == cue {
            cues[index].start = sample + cues[index].offsetFromTrigger
            placed.append(index)
        }
        return placed
    }

    /// Adds a gain change to a layer (a `gain` command), after every change already there.
    public mutating func addAutomation(layer: Int, _ point: AutomationPoint) {
        guard automation.indices.contains(layer) else { return }
        automation[layer].removeAll { $0.start >= point.start }
        automation[layer].append(point)
    }

    /// The manual cues that have not been fired, in file order.
    public var waitingCues: [Cue] { cues.filter { $0.trigger == $0.index && $0.start == nil } }

    /// The session sample after everything placed has finished (cues that end and automation);
    /// nil if a placed cue loops forever. A paused cue counts as ending where it fell silent.
    public var end: Int64? {
        var end: Int64 = 0
        for cue in cues where cue.start != nil {
            guard let cueEnd = cue.end else { return nil }
            end = max(end, cueEnd)
        }
        for points in automation {
            for point in points { end = max(end, point.start + point.ramp) }
        }
        return end
    }

    /// The layer's gain in dB at session sample `sample`, automation included.
    public func layerGainDB(_ layer: Int, at sample: Int64) -> Double {
        Self.gainDB(from: layers[layer].gainDB, points: automation[layer], at: sample)
    }

    /// The gain in dB at session sample `sample` of something that starts at `base` dB and follows
    /// `points` (sorted by time).
    static func gainDB(from base: Double, points: [AutomationPoint], at sample: Int64) -> Double {
        var value = base
        for point in points {
            if sample < point.start { break }
            if point.ramp > 0 && sample < point.start + point.ramp {
                let fraction = Double(sample - point.start) / Double(point.ramp)
                return Self.interpolate(from: value, to: point.gainDB, fraction)
            }
            value = point.gainDB
        }
        return value
    }

    /// Ramps in dB; a ramp to or from −∞ runs in dB down to −96 and lands on silence at its end.
    static func interpolate(from: Double, to: Double, _ fraction: Double) -> Double {
        let floor = -96.0
        let a = from == -.infinity ? floor : from
        let b = to == -.infinity ? floor : to
        return a + (b - a) * fraction
    }

    /// The cue's own envelope (gain, fades, crossfades) at sample `k` of the cue, linear.
    public static func envelope(_ cue: Cue, at k: Int64) -> Double {
        var g = 1.0
        if k < cue.fadeIn { g *= sin(.pi / 2 * Double(k) / Double(cue.fadeIn)) }
        if k < cue.crossfadeIn { g *= sin(.pi / 2 * Double(k) / Double(cue.crossfadeIn)) }
        if let length = cue.length {
            if cue.fadeOut > 0, k >= length - cue.fadeOut {
                g *= sin(.pi / 2 * Double(length - k) / Double(cue.fadeOut))
            }
            if cue.crossfadeOut > 0, k >= length - cue.crossfadeOut {
                g *= cos(.pi / 2 * Double(k - (length - cue.crossfadeOut)) / Double(cue.crossfadeOut))
            }
        }
        return g
    }

    init(rate: Double, channelCount: Int, layers: [Layer], cues: [Cue], automation: [[AutomationPoint]]) {
        self.rate = rate
        self.channelCount = channelCount
        self.layers = layers
        self.cues = cues
        self.automation = automation
    }
}

/// Builds a ``SessionTimeline`` from a ``Session``: resolves references, detects cycles, checks
/// regions and crossfades, collecting every problem.
struct SessionTimelineBuilder {
    let session: Session
    let rate: Double
    private var diagnostics: [SessionDiagnostic] = []
    private var cues: [SessionTimeline.Cue] = []
    /// 0: not visited, 1: in progress, 2: done, 3: failed.
    private var state: [Int] = []

    init(session: Session, rate: Double) {
        self.session = session
        self.rate = rate
    }

    mutating func build() throws(SessionError) -> SessionTimeline {
        let document = session.document
        let layers = document.layers.map { SessionTimeline.Layer(name: $0.name, gainDB: $0.gainDB, ports: $0.ports) }
        let layerNames = layers.map(\.name)
        for (index, cue) in document.cues.enumerated() {
            let info = session.files[index]
            var layerIndex = layerNames.firstIndex(of: cue.layer) ?? 0
            if !layerNames.contains(cue.layer) {
                layerIndex = 0
                diagnostics.append(.init(.unknownLayer, at: cue.location(of: "layer"),
                    "cue '\(cue.name)': unknown layer '\(cue.layer)'\(Suggest.hint(for: cue.layer, in: layerNames)); declare it under 'layers:' or use one of \(layerNames.joined(separator: ", "))"))
            }
            let regionStart = cue.from.map { $0.samples(at: info.sampleRate) } ?? 0
            let regionEnd = cue.to.map { $0.samples(at: info.sampleRate) } ?? info.frameCount
            if info.frameCount > 0 {      // (an unreadable file is reported already)
                if regionEnd > info.frameCount {
                    diagnostics.append(.init(.invalidTime, at: cue.location(of: "to"),
                        "cue '\(cue.name)': 'to' \(cue.to!) is past the end of '\(cue.file)' (\(info.frameCount) frames, \(Self.seconds(Double(info.frameCount) / info.sampleRate))); use a position inside the file or leave 'to' out"))
                } else if regionStart >= regionEnd {
                    diagnostics.append(.init(.invalidTime, at: cue.location(of: cue.from != nil ? "from" : "to"),
                        "cue '\(cue.name)': the region from frame \(regionStart) to \(regionEnd) of '\(cue.file)' is empty; 'from' must come before 'to' (and before the file's end, \(info.frameCount) frames)"))
                }
            }
            let playCount: Int? = if case .times(let n) = cue.loop { n } else { nil }
            let regionFrames = max(0, regionEnd - regionStart)
            let length = playCount.map { Int64((Double(regionFrames * Int64($0)) * rate / info.sampleRate).rounded()) }
            cues.append(SessionTimeline.Cue(
                name: cue.name, index: index, layer: layerIndex, path: info.path, fileRate: info.sampleRate,
                fileChannels: info.channelCount, regionStart: regionStart, regionEnd: regionEnd, playCount: playCount,
                trigger: nil, offsetFromTrigger: 0, start: nil, length: length, gainDB: cue.gainDB,
                fadeIn: cue.fadeIn?.samples(at: rate) ?? 0, fadeOut: cue.fadeOut?.samples(at: rate) ?? 0,
                crossfadeIn: 0, crossfadeOut: 0))
            if let length {
                for (key, value) in [("fade_in", cue.fadeIn), ("fade_out", cue.fadeOut)] {
                    if let value, value.samples(at: rate) > length {
                        diagnostics.append(.init(.conflict, at: cue.location(of: key),
                            "cue '\(cue.name)': \(key) \(value) is longer than the cue (\(Self.seconds(Double(length) / rate))); shorten it"))
                    }
                }
            } else if cue.fadeOut != nil {
                diagnostics.append(.init(.conflict, at: cue.location(of: "fade_out"),
                    "cue '\(cue.name)' loops forever, so it has no end to fade out at; give 'loop' a count or remove 'fade_out'"))
            }
        }
        state = Array(repeating: 0, count: cues.count)
        for index in cues.indices { resolve(index, path: []) }

        // Automation.
        var automation = Array(repeating: [SessionTimeline.AutomationPoint](), count: layers.count)
        for entry in document.automation {
            guard let layer = layerNames.firstIndex(of: entry.layer) else {
                diagnostics.append(.init(.unknownLayer, at: entry.keyLocations["layer"] ?? entry.location,
                    "automation: unknown layer '\(entry.layer)'\(Suggest.hint(for: entry.layer, in: layerNames)); use one of \(layerNames.joined(separator: ", "))"))
                continue
            }
            automation[layer].append(.init(start: entry.at.samples(at: rate), ramp: entry.ramp.samples(at: rate),
                                           gainDB: entry.gainDB))
        }
        for index in automation.indices { automation[index].sort { $0.start < $1.start } }
        for (layer, points) in automation.enumerated() {
            for (a, b) in zip(points, points.dropFirst()) where a.start + a.ramp > b.start {
                let entry = document.automation.first { $0.layer == layers[layer].name && $0.at.samples(at: rate) == b.start }
                diagnostics.append(.init(.conflict, at: entry?.location ?? document.layers[layer].location,
                    "automation on layer '\(layers[layer].name)': a ramp starts at \(Self.seconds(Double(b.start) / rate)) while the previous one (until \(Self.seconds(Double(a.start + a.ramp) / rate))) still runs; start it later or shorten the earlier ramp"))
            }
        }
        if !diagnostics.isEmpty { throw SessionError(diagnostics) }
        return SessionTimeline(rate: rate, channelCount: document.channelCount, layers: layers, cues: cues,
                               automation: automation)
    }

    /// Resolves cue `index`'s trigger and offset (depth first, detecting cycles).
    private mutating func resolve(_ index: Int, path: [Int]) {
        if state[index] >= 2 { return }
        let cue = session.document.cues[index]
        if state[index] == 1 {
            let cycle = (path.drop { $0 != index } + [index]).map { "'\(cues[$0].name)'" }.joined(separator: " → ")
            diagnostics.append(.init(.cycle, at: cue.location(of: Self.startKey(cue.start)),
                "cue '\(cue.name)': its start depends on itself (\(cycle)); break the cycle by giving one of these cues 'at:'"))
            state[index] = 3
            return
        }
        state[index] = 1
        let offset = cue.offset?.samples(at: rate) ?? 0
        var ok = true
        switch cue.start {
        case .at(let time):
            cues[index].offsetFromTrigger = time.samples(at: rate) + offset
        case .manual:
            cues[index].trigger = index
            cues[index].offsetFromTrigger = offset
        case .with(let name), .after(let name):
            let isAfter = if case .after = cue.start { true } else { false }
            guard let target = cues.firstIndex(where: { $0.name == name }) else {
                diagnostics.append(.init(.unknownCue, at: cue.location(of: isAfter ? "after" : "with"),
                    "cue '\(cue.name)': unknown cue '\(name)'\(Suggest.hint(for: name, in: cues.map(\.name))); name a cue of this session"))
                ok = false
                break
            }
            ok = follow(index, target: target, isAfter: isAfter, offset: offset, path: path + [index])
        case .afterPrevious:
            if index == 0 {
                cues[index].offsetFromTrigger = offset
            } else {
                ok = follow(index, target: index - 1, isAfter: true, offset: offset, path: path + [index])
            }
        }
        if state[index] == 3 { return }
        state[index] = ok ? 2 : 3
        if ok, cues[index].trigger == nil { cues[index].start = cues[index].offsetFromTrigger }
    }

    private mutating func follow(_ index: Int, target: Int, isAfter: Bool, offset: Int64, path: [Int]) -> Bool {
        let cue = session.document.cues[index]
        resolve(target, path: path)
        if state[index] == 3 { return false }
        guard state[target] == 2 else { return false }
        cues[index].trigger = cues[target].trigger
        if !isAfter {
            cues[index].offsetFromTrigger = cues[target].offsetFromTrigger + offset
            return true
        }
        guard let length = cues[target].length else {
            diagnostics.append(.init(.conflict, at: cue.location(of: Self.startKey(cue.start)),
                "cue '\(cue.name)' follows '\(cues[target].name)', which loops forever and never ends; give '\(cues[target].name)' a loop count, or start this cue with 'at:' or 'with:'"))
            return false
        }
        let crossfade = cue.crossfade?.samples(at: rate) ?? 0
        if crossfade > 0 {
            let mine = cues[index].length
            if crossfade > length || (mine != nil && crossfade > mine!) {
                diagnostics.append(.init(.conflict, at: cue.location(of: "crossfade"),
                    "cue '\(cue.name)': crossfade \(cue.crossfade!) is longer than \(crossfade > length ? "'\(cues[target].name)' (\(Self.seconds(Double(length) / rate)))" : "this cue"); shorten the crossfade"))
                return false
            }
            cues[index].crossfadeIn = crossfade
            cues[target].crossfadeOut = max(cues[target].crossfadeOut, crossfade)
        }
        cues[index].offsetFromTrigger = cues[target].offsetFromTrigger + length - crossfade + offset
        return true
    }

    private static func startKey(_ start: SessionDocument.Start) -> String {
        switch start {
        case .after: return "after"
        case .with: return "with"
        case .at, .manual: return "at"
        case .afterPrevious: return "file"
        }
    }

    static func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }
}
