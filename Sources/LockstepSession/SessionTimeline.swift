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
