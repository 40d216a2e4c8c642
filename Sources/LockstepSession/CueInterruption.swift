import Foundation

extension SessionTimeline {
    /// A pause or a stop of one placed cue, made by a control surface while the session runs.
    ///
    /// The cue fades out (quarter-cosine) over ``fade`` samples from ``fadeStart`` and is silent
    /// from ``silentFrom``. A stop is final. A pause ends when it is resumed: the cue plays on
    /// from ``resume``, fading in over ``fade`` samples, from the cue sample at which it fell
    /// silent (so everything after it in the cue comes that much later in the session).
    public struct Interruption: Sendable, Hashable, Codable {
        /// The session sample the fade-out begins.
        public var fadeStart: Int64
        /// The fade-out (and, after a resume, fade-in) length in samples; 0 cuts.
        public var fade: Int64
        /// The session sample a resumed pause plays on from; nil while paused, and for a stop.
        public var resume: Int64?
        /// Whether this is a stop (never resumed).
        public var isStop: Bool

        /// Creates an interruption (a stop when `isStop`, else a pause, resumed at `resume`).
        public init(fadeStart: Int64, fade: Int64, resume: Int64? = nil, isStop: Bool) {
            self.fadeStart = fadeStart
            self.fade = fade
            self.resume = resume
            self.isStop = isStop
        }

        /// The first session sample at which the cue is silent.
        public var silentFrom: Int64 { fadeStart + fade }

        /// The factor it applies at session sample `sample`: 1 before the fade-out and after the
        /// fade-in, 0 while silent.
        func gain(at sample: Int64) -> Double {
            if sample < fadeStart { return 1 }
            if sample < silentFrom { return cos(.pi / 2 * Double(sample - fadeStart) / Double(fade)) }
            guard !isStop, let resume, sample >= resume else { return 0 }
            if sample < resume + fade { return sin(.pi / 2 * Double(sample - resume) / Double(fade)) }
            return 1
        }

        /// Whether its factor is exactly 1 at `sample` (before the fade-out, or after the fade-in).
        func isTransparent(at sample: Int64) -> Bool {
            sample < fadeStart || (!isStop && resume.map { sample >= $0 + fade } ?? false)
        }
    }

    /// Where a cue stands at a session sample.
    public enum CueState: String, Sendable, Hashable, Codable, CaseIterable {
        /// A manual cue (or one chained to it) that has not been fired.
        case waiting
        /// Placed, starting later.
        case scheduled
        /// Sounding (fades of a pause or stop under way included).
        case playing
        /// Paused by a control surface; a resume plays it on.
        case paused
        /// Stopped by a control surface (or cancelled before it started).
        case stopped
        /// Played to its end.
        case done
    }

    /// The manual cues paused and not resumed (nor stopped), in file order: a control surface can
    /// still play them on.
    public var pausedCues: [Cue] { cues.filter(\.awaitsResume) }

    /// The next cue to start after session sample `position`: the earliest scheduled one, else the
    /// manual cue at `playhead` (a cue index), which a `go` fires next.
    public func nextCue(at position: Int64, playhead: Int?) -> Cue? {
        let scheduled = cues.filter { $0.state(at: position) == .scheduled }.min { $0.start! < $1.start! }
        if let scheduled { return scheduled }
        if let playhead, cues.indices.contains(playhead), cues[playhead].isGoTarget { return cues[playhead] }
        return nil
    }

    /// Adds a pause or stop to cue `cue` (kept in session order).
    mutating func interrupt(_ cue: Int, _ interruption: Interruption) {
        cues[cue].interruptions.append(interruption)
        cues[cue].interruptions.sort { $0.fadeStart < $1.fadeStart }
    }

    /// Resumes cue `cue`'s pause at session sample `sample` (or where it falls silent, if later).
    /// - Returns: the session sample it plays on from; nil if it is not paused.
    @discardableResult
    mutating func resume(_ cue: Int, at sample: Int64) -> Int64? {
        guard cues[cue].awaitsResume,
              let index = cues[cue].interruptions.lastIndex(where: { !$0.isStop && $0.resume == nil }) else { return nil }
        let at = max(sample, cues[cue].interruptions[index].silentFrom)
        cues[cue].interruptions[index].resume = at
        return at
    }

    /// Adds a change of cue `cue`'s own level, after every change already there.
    mutating func addLevelChange(_ cue: Int, _ point: AutomationPoint) {
        cues[cue].levelChanges.removeAll { $0.start >= point.start }
        cues[cue].levelChanges.append(point)
    }
}

extension SessionTimeline.Cue {
    /// A stretch of session samples in which a cue sounds, with the cue sample at its first one.
    struct Stretch: Hashable {
        var from: Int64
        var to: Int64
        var cueSample: Int64
        /// The pass of a repeating cue it belongs to (``Repeats``; 0 otherwise).
        var pass = 0
    }

    /// The session sample after its last sound, when known: where it ends (later by every resumed
    /// pause), is stopped (for a cue cancelled before its start: where it was cancelled), or falls
    /// silent for a pause not resumed yet; nil before it is placed and for a cue that loops
    /// forever.
    public var end: Int64? {
        guard let start else { return nil }
        var origin = start, played: Int64 = 0
        for interruption in interruptions {
            if let length, played + (interruption.silentFrom - origin) >= length { return origin + length - played }
            guard !interruption.isStop, let resume = interruption.resume else { return interruption.silentFrom }
            played += interruption.silentFrom - origin
            origin = resume
        }
        return length.map { origin + $0 - played }
    }

    /// How many of its samples have sounded before session sample `position`: between its start
    /// and `position`, less its pauses, up to its end or a stop (every pass of a loop counted).
    public func samplesPlayed(before position: Int64) -> Int64 {
        guard let start else { return 0 }
        return stretches(from: start, to: position).reduce(0) { $0 + $1.to - $1.from }
    }

    /// Whether it is paused and not resumed (nor stopped).
    public var awaitsResume: Bool {
        !interruptions.contains(where: \.isStop) && interruptions.contains { !$0.isStop && $0.resume == nil }
    }

    /// Its state at session sample `position`.
    public func state(at position: Int64) -> SessionTimeline.CueState {
        guard let start else { return .waiting }
        if interruptions.contains(where: { $0.isStop && position >= $0.silentFrom }) { return .stopped }
        if position < start { return .scheduled }
        if interruptions.contains(where: { !$0.isStop && position >= $0.silentFrom && position < ($0.resume ?? .max) }) {
            return .paused
        }
        if let end, position >= end { return .done }
        return .playing
    }

    /// Its own level in dB at session sample `sample` (``gainDB``, then ``levelChanges``).
    public func levelDB(at sample: Int64) -> Double {
        levelChanges.isEmpty ? gainDB : SessionTimeline.gainDB(from: gainDB, points: levelChanges, at: sample)
    }

    /// The stretches of `[from, to)` in which it sounds (between its pauses, before a stop, up to
    /// its end), each with the cue sample at its first session sample.
    func stretches(from: Int64, to: Int64) -> [Stretch] {
        guard let start else { return [] }
        var result: [Stretch] = []
        var origin = start, played: Int64 = 0
        func add(until silent: Int64) {
            let last = length.map { min(silent, origin + $0 - played) } ?? silent
            let a = max(from, origin), b = min(to, last)
            if a < b { result.append(Stretch(from: a, to: b, cueSample: played + a - origin)) }
        }
        for interruption in interruptions {
            add(until: interruption.silentFrom)
            guard !interruption.isStop, let resume = interruption.resume else { return result }
            played += max(0, interruption.silentFrom - origin)
            origin = resume
        }
        add(until: .max)
        return result
    }

    /// The linear gain of its sample `k`, playing at session sample `sample`: its level, its
    /// envelope (fades, crossfades) and every pause or stop fade.
    func gain(at sample: Int64, cueSample k: Int64) -> Double {
        var g = SessionGain.linear(levelDB(at: sample)) * SessionTimeline.envelope(self, at: k)
        for interruption in interruptions { g *= interruption.gain(at: sample) }
        return g
    }

    /// How many samples from session sample `sample` (cue sample `k`), at most `limit`, take one
    /// constant gain — outside every fade, crossfade and level ramp; 0 when `sample` is inside one.
    func steadyRun(at sample: Int64, cueSample k: Int64, limit: Int64) -> Int64 {
        let steadyFrom = max(fadeIn, crossfadeIn)
        let steadyTo = length.map { $0 - max(fadeOut, crossfadeOut) } ?? .max
        guard k >= steadyFrom, k < steadyTo else { return 0 }
        var run = min(limit, steadyTo - k)
        for interruption in interruptions {
            guard interruption.isTransparent(at: sample) else { return 0 }
            if sample < interruption.fadeStart { run = min(run, interruption.fadeStart - sample) }
        }
        for point in levelChanges {
            if point.start > sample {
                run = min(run, point.start - sample)
            } else if sample < point.start + point.ramp {
                return 0
            }
        }
        return run
    }
}
