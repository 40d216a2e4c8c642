import Foundation
import Lockstep
import LockstepFiles
import Synchronization

/// The playhead, and the checks and descriptions control shares.
extension SessionPlayer {
    /// The manual cue a plain ``go(_:at:)`` fires next; nil when none waits.
    public var playhead: String? {
        state.withLock { state in state.playhead.map { state.timeline.cues[$0].name } }
    }

    /// Selects manual cue `name` (waiting for go) as the one a plain ``go(_:at:)`` fires next.
    /// - Throws: ``PlayerError`` for an unknown cue or one that does not wait for go.
    @discardableResult
    public func select(_ name: String) throws(PlayerError) -> String {
        let selected = try state.withLock { state throws(PlayerError) -> String in
            let cue = try Self.manualCue(name, in: state.timeline, verb: "playhead")
            state.playhead = cue.index
            return cue.name
        }
        scheduleArming()
        return selected
    }

    /// Moves the playhead to the next manual cue waiting (`forward`) or the previous one, in file
    /// order.
    /// - Returns: the cue selected.
    /// - Throws: ``PlayerError`` when there is none in that direction.
    @discardableResult
    public func selectAdjacent(forward: Bool) throws(PlayerError) -> String {
        defer { scheduleArming() }
        return try state.withLock { state throws(PlayerError) -> String in
            let waiting = state.timeline.waitingCues
            let current = state.playhead
            let candidate = forward ? waiting.first { current == nil || $0.index > current! }
                                    : waiting.last { current == nil || $0.index < current! }
            guard let cue = candidate else {
                let here = current.map { " \(forward ? "after" : "before") '\(state.timeline.cues[$0].name)'" } ?? ""
                throw PlayerError(.nothingWaiting, "select: no manual cue waits\(here); the playhead stays")
            }
            state.playhead = cue.index
            return cue.name
        }
    }

    /// The fade for a pause, resume or stop: ``declickSeconds`` while playing, 0 while paused.
    func declickFade(_ state: State) -> Int64 {
        state.phase.isRunning ? Int64((Self.declickSeconds * rate).rounded()) : 0
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

    /// Fires manual cue `name` at session sample `sample` exactly (offline renders, tests).
    /// - Throws: ``PlayerError`` if the cue is unknown, not manual or already fired.
    public func go(_ name: String, atPosition sample: Int64) throws(PlayerError) {
        try control { state throws(PlayerError) in
            guard let cue = state.timeline.cues.first(where: { $0.name == name }) else {
                throw PlayerError(.unknownCue, "unknown cue '\(name)'\(Suggest.hint(for: name, in: state.timeline.cues.map(\.name)))")
            }
            guard cue.trigger == cue.index, cue.start == nil else {
                throw PlayerError(.notManual, "cue '\(name)' is not a manual cue waiting for go; only cues with 'at: manual' can be placed")
            }
            state.touch(cues: state.timeline.fire(cue.index, at: sample), from: sample)
            state.fired.append((name, sample))
            if state.playhead == cue.index { state.playhead = Self.waitingCue(after: cue.index, in: state.timeline) }
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
