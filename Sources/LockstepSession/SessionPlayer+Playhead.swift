import Foundation
import Lockstep
import LockstepFiles
import Synchronization

/// The playhead, and the checks and descriptions control shares.
extension SessionPlayer {
    /// The manual cue a plain ``go(_:at:)`` fires next; nil past the last one.
    public var playhead: String? {
        state.withLock { state in state.playhead.map { state.timeline.cues[$0].name } }
    }

    /// Selects manual cue `name` (played or not) as the one a plain ``go(_:at:)`` fires next.
    /// - Throws: ``PlayerError`` for an unknown cue or one that is not manual.
    @discardableResult
    public func select(_ name: String) throws(PlayerError) -> String {
        let selected = try state.withLock { state throws(PlayerError) -> String in
            let cue = try Self.cue(name, in: state.timeline, verb: "playhead")
            guard cue.isGoTarget else { _ = try Self.manualCue(name, in: state.timeline, verb: "playhead"); return name }
            state.playhead = cue.index
            return cue.name
        }
        scheduleArming()
        return selected
    }

    /// Moves the playhead to the next manual cue (`forward`) or the previous one, in file order
    /// (from past the last one, back to the last); at the first (or last) one it stays there, as
    /// QLab's does.
    /// - Returns: the cue selected.
    /// - Throws: ``PlayerError`` when the playhead is past the last cue and `forward`, or the
    ///   session has no manual cue.
    @discardableResult
    public func selectAdjacent(forward: Bool) throws(PlayerError) -> String {
        defer { scheduleArming() }
        return try state.withLock { state throws(PlayerError) -> String in
            let manual = state.timeline.manualCues
            let current = state.playhead
            let candidate = forward ? manual.first { current != nil && $0.index > current! }
                                    : manual.last { current == nil || $0.index < current! }
            guard let cue = candidate else {
                guard let current else {
                    throw PlayerError(.nothingWaiting, manual.isEmpty ? "select: the session has no manual cue (at: manual)"
                        : "select: the playhead is past the last manual cue; nothing follows (select a cue, previous, or reset)")
                }
                return state.timeline.cues[current].name
            }
            state.playhead = cue.index
            return cue.name
        }
    }

    /// The fade for a pause, resume or stop: ``declickSeconds`` while playing, 0 while paused.
    func declickFade(_ state: State) -> Int64 {
        state.phase.isRunning ? Int64((Self.declickSeconds * rate).rounded()) : 0
    }

    /// ``declickFade(_:)`` now.
    func declickFade() -> Int64 { state.withLock { declickFade($0) } }

    /// The double-GO window: a plain ``go(_:at:notBefore:)`` whose cue would start within this
    /// many session samples after the previous plain `go`'s is ignored (0, the default: none is).
    public var doubleGoWindow: Int64 {
        get { state.withLock { $0.doubleGoWindow } }
        set { state.withLock { $0.doubleGoWindow = max(0, newValue) } }
    }

    /// The session sample the last plain `go` placed its cue on (the double-GO window counts
    /// from there); nil before the first, and after a ``reset()``.
    public var lastPlainGoPosition: Int64? { state.withLock { $0.lastPlainGo } }

    /// How many plain `go`s the double-GO window ignored.
    public var ignoredGoCount: Int { state.withLock { $0.ignoredGos } }

    /// Ignores a plain `go` that lands inside the window, before anything is computed for it:
    /// against the sample a change would land on now (or `position`, when later).
    func checkDoubleGo(at position: Int64?) throws(PlayerError) {
        let now = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime)
        try state.withLock { state throws(PlayerError) in
            let landing = state.phase.isRunning
                ? max(state.originPosition, state.originPosition + now - state.originDevice, position ?? .min)
                : state.pausedPosition
            try Self.checkDoubleGo(&state, at: landing)
        }
    }

    /// Throws (and counts) when a plain `go` on session sample `sample` falls in the window.
    static func checkDoubleGo(_ state: inout State, at sample: Int64) throws(PlayerError) {
        guard state.doubleGoWindow > 0, let last = state.lastPlainGo, sample >= last, sample - last < state.doubleGoWindow else { return }
        state.ignoredGos += 1
        throw PlayerError(.doubleGo, "go ignored: \(sample - last) samples after the previous go, inside the \(state.doubleGoWindow)-sample double-GO window; go again once it has passed")
    }

    /// "has ended", "waits for go"… for error messages.
    static func describe(_ state: SessionTimeline.CueState) -> String {
        switch state {
        case .waiting: return "waits for go"
        case .scheduled: return "has not started yet"
        case .playing: return "is playing"
        case .paused: return "is paused"
        case .stopped: return "is stopped"
        case .done: return "has ended"
        }
    }

    /// Checks a level or gain and its ramp (``ControlRange``: the same ranges and messages as
    /// every control surface), before either becomes samples.
    static func check(decibels: Double, ramp: Double, verb: String) throws(PlayerError) {
        do throws(ControlRangeError) {
            try ControlRange.gain(decibels, for: verb)
            try ControlRange.checkRamp(seconds: ramp, for: verb)
        } catch {
            throw PlayerError(.outOfRange, error.message)
        }
    }

    /// Fires manual cue `name` at session sample `sample` exactly (offline renders, tests), anew
    /// if it played before (see ``go(_:at:notBefore:)``).
    /// - Throws: ``PlayerError`` if the cue is unknown, not manual or paused.
    public func go(_ name: String, atPosition sample: Int64) throws(PlayerError) {
        // (A cue cut by its own go fades as in the live run it renders or carries over.)
        let fade = Int64((Self.declickSeconds * rate).rounded())
        try control { state throws(PlayerError) in
            let cue = try Self.manualCue(name, in: state.timeline, verb: "go")
            _ = state.refire(cue.index, at: sample, fade: fade)
            state.fired.append((name, sample, state.lastOffset))
            state.movePlayhead(after: cue.index, always: false)
        }
    }

    /// Ramps a layer's gain to `decibels` over `ramp` seconds, starting at the first sample not
    /// yet computed, or at session sample `position` when that is later.
    /// - Returns: the session sample the ramp starts.
    /// - Throws: ``PlayerError`` for an unknown layer or a bad gain or ramp.
    @discardableResult
    public func setGain(layer name: String, decibels: Double, ramp: Double = 0, at position: Int64? = nil) throws(PlayerError) -> Int64 {
        try Self.check(decibels: decibels, ramp: ramp, verb: "gain")
        let rate = self.rate
        return try control(at: position) { state throws(PlayerError) -> Int64 in
            guard let layer = state.timeline.layers.firstIndex(where: { $0.name == name }) else {
                throw PlayerError(.unknownLayer, "gain: unknown layer '\(name)'\(Suggest.hint(for: name, in: state.timeline.layers.map(\.name))); the layers are \(state.timeline.layers.map(\.name).joined(separator: ", "))")
            }
            let sample = state.controlSample
            let point = SessionTimeline.AutomationPoint(start: sample, ramp: Int64((ramp * rate).rounded()), gainDB: decibels)
            state.timeline.addAutomation(layer: layer, point)
            state.gainChanges.append((layer, point))
            state.touch(layer: layer, from: sample)
            return sample
        }
    }

    /// Stops refilling without waiting for the buffers (an offline render that is done: its
    /// device renders no more, so the buffers would never come back).
    func finishRendering() {
        state.withLock { state in
            state.phase = .stopped
        }
    }
}
