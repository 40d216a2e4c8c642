import Foundation
import LockstepFiles

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
    public internal(set) var layers: [Layer]
    /// The cues, in file order.
    public internal(set) var cues: [Cue]
    /// Gain changes, per layer index, sorted by time.
    public private(set) var automation: [[AutomationPoint]]
    /// Earlier placements of cues fired again (``refire(_:at:fade:)``), by layer index, in the
    /// order they were left: what they played stays on the timeline (a stop's fade-out sounds on
    /// under the new placement; a seek back before it plays it again).
    public internal(set) var retired: [Int: [Cue]] = [:]
    /// Edits of cues placed when they were made, by cue index: each cue as it is after the edit,
    /// taken when the cue is next placed (``refire(_:at:fade:offset:)``) or the session reset.
    public internal(set) var pendingEdits: [Int: Cue] = [:]
    /// Counts the edits installed: cues may have moved, changed layers or gone (what a layer's
    /// renderer found of its cues is found again).
    public internal(set) var structure = 0
    /// A whole-session pause under way: from this session sample every layer fades to silence
    /// over ``SessionPlayer/pauseFadeSeconds`` and stays silent (nil: none). Live only; the
    /// player clears it once the layers stopped.
    public internal(set) var pauseFade: Int64?

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
        /// Who it is through a run's edits: its index when the session was read, a new number for
        /// a cue added since (an index moves when cues are added, removed or reordered).
        public var id = 0
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
        /// How its file's channels become the session's: its or its layer's `channel_map`, or the
        /// default downmix for a file with more channels than the session; nil when the file's
        /// channels go straight through (mono on every channel, otherwise channel to channel).
        public var channelMatrix: ChannelMatrix? = nil
        /// Pauses and stops a control surface placed on it while the session ran, in session
        /// order (see ``SessionTimeline/Interruption``).
        public var interruptions: [Interruption] = []
        /// Changes of its own level a control surface made while the session ran, in session
        /// order (``gainDB`` applies before the first).
        public var levelChanges: [AutomationPoint] = []

        /// In a looping playlist group: where its passes sound (nil for every other cue).
        public var repeats: Repeats? = nil

        /// How many times it was placed anew after an earlier placement (0: its first).
        public var instance = 0
        /// The session sample of the go that placed it last, when a go did: a cue loaded to a
        /// time starts before it and is first heard there.
        public var placedAt: Int64?
        /// Load cues that loaded it (``Load``), in the order they were carried out.
        public var loads: [Load] = []

        /// The session sample it is first heard on: its start, or the go's sample when it was
        /// loaded to a time (nil until placed).
        public var firstHeard: Int64? { start.map { max($0, placedAt ?? $0) } }
        /// What it does: plays its file, or acts on another cue or a layer (``SessionTimeline/Action``).
        public var action = Action.audio
        /// The group cue it is in (its index); nil at the top of the cue list.
        public var group: Int? = nil
        /// A group cue's audio and group cues, its groups' included, in file order (empty for
        /// other cues).
        public var members: [Int] = []

        /// Whether it plays audio (an audio cue) rather than acting on others.
        public var isAudio: Bool { action == .audio }

        /// Whether it waits for a `go` (itself or through the cue it chains to).
        public var isManual: Bool { trigger != nil }
        /// Whether a `go` places it: a manual cue (not one chained to another).
        public var isGoTarget: Bool { trigger == index }
    }

    /// One gain change of a layer.
    public struct AutomationPoint: Sendable, Hashable, Codable {
        /// The session sample the ramp starts.
        public var start: Int64
        /// Its length in samples (0: a step).
        public var ramp: Int64
        /// The gain reached, in dB.
        public var gainDB: Double
        /// The ramp's shape.
        public var curve = SessionDocument.FadeCurve.linear

        /// A change to `gainDB` from `start` over `ramp` samples, along `curve`.
        public init(start: Int64, ramp: Int64, gainDB: Double, curve: SessionDocument.FadeCurve = .linear) {
            self.start = start
            self.ramp = ramp
            self.gainDB = gainDB
            self.curve = curve
        }
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

    /// Places manual cue `cue` again, played or not: every cue of its chain placed before is
    /// left on the timeline as it was (``retired``) — cut there with a fade-out over `fade`
    /// samples if it still sounds at `sample`, dropped if it had not started — and placed anew
    /// from `sample`, without the pauses, stops and level changes of its earlier placement.
    /// - Returns: the cues placed (empty if `cue` is not manual); every cue of the chain left
    ///   changes from `sample`.
    ///
    /// With `offset` (a cue loaded to a time), the chain is placed `offset` samples before
    /// `sample`, so that it sounds from `offset` samples in.
    @discardableResult
    public mutating func refire(_ cue: Int, at sample: Int64, fade: Int64, offset: Int64 = 0) -> [Int] {
        guard cues.indices.contains(cue), cues[cue].isGoTarget else { return [] }
        for index in cues.indices where cues[index].trigger == cue { retire(index, at: sample, fade: fade) }
        let placed = fire(cue, at: sample - max(0, offset))
        for index in placed { cues[index].placedAt = sample }
        return placed
    }

    /// Leaves cue `index`'s placement (if any) on the timeline as ``retired`` and makes it wait
    /// again; see ``refire(_:at:fade:)``.
    mutating func retire(_ index: Int, at sample: Int64, fade: Int64) {
        var old = cues[index]
        guard let start = old.start else { return }
        let state = old.state(at: sample)
        if state == .playing || state == .paused {
            old.interruptions.append(Interruption(fadeStart: sample, fade: state == .playing ? fade : 0, isStop: true))
            old.interruptions.sort { $0.fadeStart < $1.fadeStart }
        }
        if start < sample { retired[old.layer, default: []].append(old) }
        if var edited = pendingEdits.removeValue(forKey: index) {
            edited.instance = old.instance
            cues[index] = edited
        }
        cues[index].start = nil
        cues[index].placedAt = nil
        cues[index].interruptions = []
        cues[index].levelChanges = []
        cues[index].instance += 1
    }

    /// Adds a gain change to a layer (a `gain` command), after every change already there.
    public mutating func addAutomation(layer: Int, _ point: AutomationPoint) {
        guard automation.indices.contains(layer) else { return }
        automation[layer].removeAll { $0.start >= point.start }
        automation[layer].append(point)
    }

    /// How many groups cue `index` is inside (0 at the top of the cue list).
    public func depth(of index: Int) -> Int {
        var depth = 0
        var group = cues[index].group
        while let above = group {
            depth += 1
            group = cues[above].group
        }
        return depth
    }

    /// The manual cues that have not been fired, in file order.
    public var waitingCues: [Cue] { cues.filter { $0.isGoTarget && $0.start == nil } }

    /// The manual cues (those a `go` places), played or not, in file order: the cue list the
    /// playhead moves along.
    public var manualCues: [Cue] { cues.filter(\.isGoTarget) }

    /// The session sample after everything placed has finished (cues that end and automation);
    /// nil if a placed cue loops forever. A paused cue counts as ending where it fell silent.
    public var end: Int64? {
        var end: Int64 = 0
        for cue in cues where cue.start != nil {
            guard let cueEnd = cue.end else { return nil }
            end = max(end, cueEnd)
        }
        for cue in retired.values.joined() { end = max(end, cue.end ?? end) }
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
                return Self.interpolate(from: value, to: point.gainDB, point.curve, fraction)
            }
            value = point.gainDB
        }
        return value
    }

    /// Ramps in dB along `curve`; a ramp to or from −∞ runs in dB down to −96 and lands on silence
    /// at its end (``SessionDocument/FadeCurve/linearGain``: in amplitude, from and to 0).
    static func interpolate(from: Double, to: Double, _ curve: SessionDocument.FadeCurve = .linear, _ fraction: Double) -> Double {
        if curve == .linearGain {
            let a = SessionGain.linear(from), b = SessionGain.linear(to)
            let gain = a + (b - a) * fraction
            return gain > 0 ? 20 * log10(gain) : -.infinity
        }
        let floor = -96.0
        let a = from == -.infinity ? floor : from
        let b = to == -.infinity ? floor : to
        return a + (b - a) * curve.shape(fraction)
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
///
/// Linear in the number of cues and automation entries (names are looked up in dictionaries, a
/// chain of `after`/`with` is followed without recursion), so a session of 100 000 cues, or an
/// `after` chain 100 000 long, resolves in a fraction of a second.
struct SessionTimelineBuilder {
    /// The matrix a cue plays through (see ``SessionTimeline/Cue/channelMatrix``); a map that does
    /// not fit the file was reported by ``Session/parse(text:path:)`` and falls back to the default.
    static func channelMatrix(_ cue: SessionDocument.Cue, layer: SessionDocument.Layer?, fileChannels: Int,
                              outputs: Int) -> ChannelMatrix? {
        if let map = cue.channelMap ?? layer?.channelMap,
           let matrix = try? map.matrix(inputs: fileChannels, outputs: outputs) {
            return matrix
        }
        return ChannelMatrix.standardDownmix(from: fileChannels, to: outputs)
    }

    let session: Session
    let rate: Double
    var diagnostics: [SessionDiagnostic] = []
    var cues: [SessionTimeline.Cue] = []
    /// Each cue's index by name (the first cue with a name).
    var cueIndex: [String: Int] = [:]
    /// 0: not visited, 1: in progress, 2: done, 3: failed.
    var state: [Int8] = []
    /// Each cue's start as its continue mode and the previous cue's make it (a cue a previous
    /// cue continues into starts with or after it).
    var starts: [SessionDocument.Start] = []
    /// Samples added to each cue's start: its pre-wait, and the post-wait of an auto-continue
    /// into it.
    var waits: [Int64] = []
    /// Each cue's previous cue in its list (the cue list, or its group's): the one it follows
    /// when it names no start.
    var previous: [Int?] = []
    /// Each cue's next cue in its list.
    var next: [Int?] = []
    /// The crossfade a cue of a playlist group takes from its group when it gives none.
    var inheritedCrossfade: [SessionTime?] = []
    /// Each group's own cues, by group index, in file order.
    var children: [Int: [Int]] = [:]
    /// Names "did you mean" may still compare: each suggestion searches every name, so once
    /// 200 000 comparisons are spent unknown names get none (thousands of unknown references to
    /// thousands of cues stay linear). The first suggestion is always made.
    private var suggestionBudget = 200_000

    /// The latest sample a cue may start on: far beyond any show, and far enough inside `Int64`
    /// that its end (at most a week later) and a `go` time added to it cannot overflow.
    static let latestStart = Int64.max / 4

    init(session: Session, rate: Double) {
        self.session = session
        self.rate = rate
    }

    mutating func build() throws(SessionError) -> SessionTimeline {
        let document = session.document
        let layers = document.layers.map { SessionTimeline.Layer(name: $0.name, gainDB: $0.gainDB, ports: $0.ports) }
        let layerNames = layers.map(\.name)
        var layerIndex: [String: Int] = [:]
        for (index, name) in layerNames.enumerated() where layerIndex[name] == nil { layerIndex[name] = index }
        cues.reserveCapacity(document.cues.count)
        for (index, cue) in document.cues.enumerated() {
            let info = session.files[index]
            let name = SessionParser.excerpt(cue.name), file = SessionParser.excerpt(cue.file)
            let layer = layerIndex[cue.layer] ?? 0
            let playsOnLayer = cue.action.type == .audio || (cue.action.type == .fade && cue.keyLocations["layer"] != nil)
            if playsOnLayer && layerIndex[cue.layer] == nil {
                diagnostics.append(.init(.unknownLayer, at: cue.location(of: "layer"),
                    "cue '\(name)': unknown layer '\(SessionParser.excerpt(cue.layer))'\(suggestion(for: cue.layer, in: layerNames)); declare it under 'layers:' or use \(Self.oneOf(layerNames))"))
            }
            let regionStart = cue.from.map { $0.samples(at: info.sampleRate) } ?? 0
            let regionEnd = cue.to.map { $0.samples(at: info.sampleRate) } ?? info.frameCount
            if info.frameCount > 0 {      // (an unreadable file is reported already)
                if regionEnd > info.frameCount {
                    diagnostics.append(.init(.invalidTime, at: cue.location(of: "to"),
                        "cue '\(name)': 'to' \(cue.to!) is past the end of '\(file)' (\(info.frameCount) frames, \(Self.seconds(Double(info.frameCount) / info.sampleRate))); use a position inside the file or leave 'to' out"))
                } else if regionStart >= regionEnd {
                    diagnostics.append(.init(.invalidTime, at: cue.location(of: cue.to != nil && regionStart < info.frameCount ? "to" : "from"),
                        "cue '\(name)': the region from frame \(regionStart) to \(regionEnd) of '\(file)' is empty; 'from' must come before 'to' (and before the file's end, \(info.frameCount) frames)"))
                }
            }
            let playCount: Int? = if case .times(let n) = cue.loop { n } else { nil }
            let regionFrames = max(0, regionEnd - regionStart)
            var length: Int64?
            if cue.action.type != .audio {
                length = cue.action.duration?.samples(at: rate) ?? 0
            } else if let playCount {
                // In floating point: a long region played a million times overflows Int64.
                let samples = (Double(regionFrames) * Double(playCount) * rate / info.sampleRate).rounded()
                if samples <= Double(SessionTime.maximumSamples) {
                    length = Int64(samples)
                } else {
                    length = SessionTime.maximumSamples
                    diagnostics.append(.init(.invalidTime, at: cue.location(of: cue.keyLocations["loop"] != nil ? "loop" : "file"),
                        "cue '\(name)' plays \(Self.seconds(samples / rate)), longer than a week; play fewer loops or a shorter region"))
                }
            }
            cues.append(SessionTimeline.Cue(
                name: cue.name, index: index, layer: layer, path: info.path, fileRate: info.sampleRate,
                fileChannels: info.channelCount, regionStart: regionStart, regionEnd: regionEnd, playCount: playCount,
                trigger: nil, offsetFromTrigger: 0, start: nil, length: length, gainDB: cue.gainDB,
                fadeIn: cue.fadeIn?.samples(at: rate) ?? 0, fadeOut: cue.fadeOut?.samples(at: rate) ?? 0,
                crossfadeIn: 0, crossfadeOut: 0,
                channelMatrix: Self.channelMatrix(cue, layer: document.layers.first { $0.name == cue.layer },
                                                  fileChannels: info.channelCount, outputs: document.channelCount)))
            cues[index].group = cue.action.parent
            cues[index].id = index
            if cueIndex[cue.name] == nil { cueIndex[cue.name] = index }
            if let length {
                for (key, value) in [("fade_in", cue.fadeIn), ("fade_out", cue.fadeOut)] {
                    if let value, value.samples(at: rate) > length {
                        diagnostics.append(.init(.conflict, at: cue.location(of: key),
                            "cue '\(name)': \(key) \(value) is longer than the cue (\(Self.seconds(Double(length) / rate))); shorten it"))
                    }
                }
            } else if cue.fadeOut != nil {
                diagnostics.append(.init(.conflict, at: cue.location(of: "fade_out"),
                    "cue '\(name)' loops forever, so it has no end to fade out at; give 'loop' a count or remove 'fade_out'"))
            }
        }
        resolveContinueModes()
        state = Array(repeating: 0, count: cues.count)
        for index in cues.indices where state[index] == 0 { resolveChain(from: index) }
        resolveGroupLengths()
        resolveActions(layerIndex: layerIndex)

        // Automation, sorted by time per layer (each point with its entry, for errors).
        var entries = Array(repeating: [(point: SessionTimeline.AutomationPoint, entry: Int)](), count: layers.count)
        for (number, entry) in document.automation.enumerated() {
            guard let layer = layerIndex[entry.layer] else {
                diagnostics.append(.init(.unknownLayer, at: entry.keyLocations["layer"] ?? entry.location,
                    "automation: unknown layer '\(SessionParser.excerpt(entry.layer))'\(suggestion(for: entry.layer, in: layerNames)); use \(Self.oneOf(layerNames))"))
                continue
            }
            // A ramp is 0 to an hour, as a control command's (ControlRange: one range, one message).
            let ramp = entry.ramp.samples(at: rate)
            do throws(ControlRangeError) {
                try ControlRange.checkRamp(seconds: Double(ramp) / rate, for: "automation \(number + 1)")
            } catch {
                diagnostics.append(.init(.invalidTime, at: entry.keyLocations["ramp"] ?? entry.location, error.message))
                continue
            }
            entries[layer].append((.init(start: entry.at.samples(at: rate), ramp: ramp, gainDB: entry.gainDB), number))
        }
        for index in entries.indices { entries[index].sort { ($0.point.start, $0.entry) < ($1.point.start, $1.entry) } }
        for (layer, points) in entries.enumerated() {
            for (a, b) in zip(points, points.dropFirst()) where a.point.start + a.point.ramp > b.point.start {
                diagnostics.append(.init(.conflict, at: document.automation[b.entry].location,
                    "automation on layer '\(SessionParser.excerpt(layers[layer].name))': a ramp starts at \(Self.seconds(Double(b.point.start) / rate)) while the previous one (until \(Self.seconds(Double(a.point.start + a.point.ramp) / rate))) still runs; start it later or shorten the earlier ramp"))
            }
        }
        if !diagnostics.isEmpty { throw SessionError(diagnostics) }
        var timeline = SessionTimeline(rate: rate, channelCount: document.channelCount, layers: layers, cues: cues,
                                       automation: entries.map { $0.map(\.point) })
        // The action cues placed from the session's start act from the start.
        timeline.applyActions(of: timeline.cues.indices.filter { timeline.cues[$0].trigger == nil })
        return timeline
    }

    /// The cue `index`'s start depends on (through `after`, `with` or the list order), or nil
    /// when it starts on its own (`at`, `manual`, the first cue) or names no cue (reported when
    /// it is resolved).
    private func dependency(of index: Int) -> Int? {
        switch starts[index] {
        case .at, .atTimecode, .manual: return nil
        case .after(let name), .with(let name): return cueIndex[name]
        case .afterPrevious: return previous[index]
        }
    }

    /// Resolves cue `start` and every unresolved cue its start depends on: follows the chain of
    /// dependencies (reporting a cycle where it closes), then resolves it from its far end.
    mutating func resolveChain(from start: Int) {
        var chain: [Int] = []
        var current: Int? = start
        while let index = current, state[index] < 2 {
            if state[index] == 1 {
                let names = chain[chain.lastIndex(of: index)!...].map { cues[$0].name } + [cues[index].name]
                let cue = session.document.cues[index]
                diagnostics.append(.init(.cycle, at: cue.location(of: Self.startKey(cue.start)),
                    "cue '\(SessionParser.excerpt(cue.name))': its start depends on itself (\(Self.path(names))); break the cycle by giving one of these cues 'at:'"))
                state[index] = 3
                break
            }
            state[index] = 1
            chain.append(index)
            current = dependency(of: index)
        }
        for index in chain.reversed() where state[index] == 1 {
            state[index] = resolve(index) ? 2 : 3
            if state[index] == 2, cues[index].trigger == nil { cues[index].start = cues[index].offsetFromTrigger }
        }
    }

    /// Resolves cue `index`'s trigger and offset, once the cue it depends on is resolved (or
    /// has failed); false if it cannot be placed.
    private mutating func resolve(_ index: Int) -> Bool {
        let cue = session.document.cues[index]
        let offset = (cue.offset?.samples(at: rate) ?? 0) + waits[index]
        switch starts[index] {
        case .at(let time):
            cues[index].offsetFromTrigger = time.samples(at: rate) + offset
            return true
        case .atTimecode(let label):
            // (Checked by the parser: the session declares its timecode, the label is valid.)
            guard let timecode = session.document.timecode, let sample = try? timecode.sample(of: label, sampleRate: rate) else { return false }
            cues[index].offsetFromTrigger = sample + offset
            return true
        case .manual:
            cues[index].trigger = index
            cues[index].offsetFromTrigger = offset
            return true
        case .with(let name), .after(let name):
            let isAfter = if case .after = starts[index] { true } else { false }
            guard let target = cueIndex[name] else {
                let names = suggestionBudget > 0 ? cues.map(\.name) : []
                diagnostics.append(.init(.unknownCue, at: cue.location(of: isAfter ? "after" : "with"),
                    "cue '\(SessionParser.excerpt(cue.name))': unknown cue '\(SessionParser.excerpt(name))'\(suggestion(for: name, in: names)); name a cue of this session"))
                return false
            }
            return follow(index, target: target, isAfter: isAfter, offset: offset)
        case .afterPrevious:
            guard let before = previous[index] else {
                cues[index].offsetFromTrigger = offset
                return true
            }
            return follow(index, target: before, isAfter: true, offset: offset)
        }
    }

    private mutating func follow(_ index: Int, target: Int, isAfter: Bool, offset: Int64) -> Bool {
        guard state[target] == 2 else { return false }
        let cue = session.document.cues[index]
        let name = SessionParser.excerpt(cue.name), targetName = SessionParser.excerpt(cues[target].name)
        cues[index].trigger = cues[target].trigger
        var start = cues[target].offsetFromTrigger + offset
        if isAfter {
            if isGroup(target) { resolveGroupLength(target) }
            guard let length = cues[target].length else {
                diagnostics.append(.init(.conflict, at: cue.location(of: Self.startKey(cue.start)),
                    "cue '\(name)' follows '\(targetName)', which loops forever and never ends; give '\(targetName)' a loop count, or start this cue with 'at:' or 'with:'"))
                return false
            }
            // (A group's own `crossfade` is between its cues.)
            let written = (cue.action.type == .group ? nil : cue.crossfade) ?? inheritedCrossfade[index]
            let crossfade = written?.samples(at: rate) ?? 0
            if crossfade > 0 {
                let mine = cues[index].length
                if crossfade > length || (mine != nil && crossfade > mine!) {
                    diagnostics.append(.init(.conflict, at: cue.location(of: "crossfade"),
                        "cue '\(name)': crossfade \(written!) is longer than \(crossfade > length ? "'\(targetName)' (\(Self.seconds(Double(length) / rate)))" : "this cue"); shorten the crossfade"))
                    return false
                }
                cues[index].crossfadeIn = crossfade
                cues[target].crossfadeOut = max(cues[target].crossfadeOut, crossfade)
            }
            start += length - crossfade
        }
        // Each step adds at most a few weeks: only an absurdly long chain gets here.
        guard start <= Self.latestStart else {
            diagnostics.append(.init(.conflict, at: cue.location(of: Self.startKey(cue.start)),
                "cue '\(name)' would start more than \(Self.latestStart) samples after \(cues[index].trigger == nil ? "the session's start" : "its go"), beyond what the timeline counts; shorten the chain of cues before it"))
            return false
        }
        cues[index].offsetFromTrigger = start
        return true
    }

    /// `; did you mean 'x'?` while the budget lasts, else nothing.
    mutating func suggestion(for word: String, in candidates: [String]) -> String {
        guard suggestionBudget > 0, !candidates.isEmpty else { return "" }
        suggestionBudget -= candidates.count
        return Suggest.hint(for: word, in: candidates)
    }

    /// "one of a, b, c", or for many names the first few and how many there are.
    static func oneOf(_ names: [String]) -> String {
        if names.isEmpty { return "a declared layer" }
        if names.count <= 8 { return "one of " + names.map(SessionParser.excerpt).joined(separator: ", ") }
        return "one of the \(names.count) layers (" + names.prefix(5).map(SessionParser.excerpt).joined(separator: ", ") + ", …)"
    }

    /// `'a' → 'b' → 'a'`, shortened in the middle when long.
    static func path(_ names: [String]) -> String {
        let quoted = { (name: String) in "'\(SessionParser.excerpt(name))'" }
        if names.count <= 10 { return names.map(quoted).joined(separator: " → ") }
        return (names.prefix(5).map(quoted) + ["… (\(names.count - 1) cues in all)"] + names.suffix(3).map(quoted))
            .joined(separator: " → ")
    }

    private static func startKey(_ start: SessionDocument.Start) -> String {
        switch start {
        case .after: return "after"
        case .with: return "with"
        case .at, .atTimecode, .manual: return "at"
        case .afterPrevious: return "file"
        }
    }

    static func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }
}
