import Foundation
import Lockstep
import LockstepFiles
import Synchronization

/// Control of single cues: stop, pause, resume, level; stopping everything.
extension SessionPlayer {
    /// Stops cue `name` (a group: every cue in it) where the control lands (on session sample `position` when given and not
    /// yet computed): a playing cue fades out over ``declickSeconds``, a paused one ends, a
    /// scheduled one is cancelled (it will not play).
    /// - Throws: ``PlayerError`` for an unknown cue, or one that waits for go, has ended or is
    ///   stopped already.
    ///
    /// With `fade` (seconds, a panic of one cue), a playing cue fades out over that long instead
    /// (at least ``declickSeconds``).
    @discardableResult
    public func stopCue(_ name: String, at position: Int64? = nil, fade: Double? = nil) throws(PlayerError) -> CueChange {
        try interrupt(name, stop: true, at: position, fade: fade)
    }

    /// Pauses cue `name` where the control lands, or on session sample `position` when given and
    /// not yet computed (fading out over ``declickSeconds``); the rest of the session plays on. ``resumeCue(_:)`` plays it on from there.
    /// - Throws: ``PlayerError`` for an unknown cue or one that is not playing.
    @discardableResult
    public func pauseCue(_ name: String, at position: Int64? = nil) throws(PlayerError) -> CueChange {
        try interrupt(name, stop: false, at: position)
    }

    /// Stops or pauses one cue where the control lands.
    func interrupt(_ name: String, stop: Bool, at position: Int64?, fade seconds: Double? = nil) throws(PlayerError) -> CueChange {
        let verb = stop ? "stop" : "pause"
        return try control(at: position) { state throws(PlayerError) -> CueChange in
            let cue = try Self.cue(name, in: state.timeline, verb: verb)
            let sample = state.controlSample
            let allowed: [SessionTimeline.CueState] = stop ? [.scheduled, .playing, .paused] : [.playing]
            let targets = state.timeline.controlledCues(of: cue.index).filter {
                let target = state.timeline.cues[$0]
                return allowed.contains(target.state(at: sample)) && (stop || !target.awaitsResume)
            }
            guard !targets.isEmpty else {
                let cueState = cue.state(at: sample)
                let why = !stop && cue.awaitsResume ? "is paused already" : Self.describe(cueState)
                throw PlayerError(.wrongState, "\(verb): cue '\(name)' \(why); only a \(stop ? "scheduled, playing or paused cue can be stopped" : "playing cue can be paused")")
            }
            let declick = declickFade(state)
            var end = sample
            for target in targets {
                let fade = state.timeline.cues[target].state(at: sample) != .playing ? 0
                    : declick == 0 ? 0 : max(declick, seconds.map { Int64(($0 * rate).rounded()) } ?? 0)
                state.timeline.interrupt(target, .init(fadeStart: sample, fade: fade, isStop: stop))
                state.touch(layer: state.timeline.cues[target].layer, from: sample)
                end = max(end, sample + fade)
            }
            return CueChange(cue: name, start: sample, end: end)
        }
    }

    /// Plays paused cue `name` on from where it paused, fading in over ``declickSeconds``, from
    /// where the control lands (or session sample `position`, when given and not yet computed).
    /// - Throws: ``PlayerError`` for an unknown cue or one that is not paused.
    @discardableResult
    public func resumeCue(_ name: String, at position: Int64? = nil) throws(PlayerError) -> CueChange {
        try control(at: position) { state throws(PlayerError) -> CueChange in
            let cue = try Self.cue(name, in: state.timeline, verb: "resume")
            var change: CueChange?
            for target in state.timeline.controlledCues(of: cue.index) {
                guard let at = state.timeline.resume(target, at: state.controlSample) else { continue }
                let fade = state.timeline.cues[target].interruptions.last { $0.resume == at }?.fade ?? 0
                state.touch(layer: state.timeline.cues[target].layer, from: at)
                change = CueChange(cue: name, start: min(change?.start ?? at, at), end: max(change?.end ?? at, at + fade))
            }
            guard let change else {
                throw PlayerError(.wrongState, "resume: cue '\(name)' is not paused (it \(Self.describe(cue.state(at: state.controlSample)))); pause it first")
            }
            return change
        }
    }

    /// What a stop of every cue did.
    public struct StopResult: Sendable, Hashable {
        /// The cues stopped (or cancelled), in file order.
        public var cues: [String]
        /// The session sample the fade-outs begin.
        public var start: Int64
        /// The session sample from which everything they played is silent.
        public var silentFrom: Int64
    }

    /// Stops every cue that is scheduled, playing or paused where the control lands (or on
    /// session sample `position`, when given and not yet computed): playing
    /// cues fade out over `fade` seconds (at least ``declickSeconds``; none while the session is
    /// paused), the others end at once. Manual cues waiting for go stay ready.
    /// - Returns: the cues stopped and where.
    @discardableResult
    public func stopAll(fade seconds: Double = SessionPlayer.declickSeconds, at position: Int64? = nil) -> StopResult {
        let rate = self.rate
        return control(at: position) { state in
            let sample = state.controlSample
            let playingFade = declickFade(state) == 0 ? 0 : Int64((max(seconds, Self.declickSeconds) * rate).rounded())
            var result = StopResult(cues: [], start: sample, silentFrom: sample)
            for cue in state.timeline.cues {
                let cueState = cue.state(at: sample)
                guard [.scheduled, .playing, .paused].contains(cueState) else { continue }
                let fade = cueState == .playing ? playingFade : 0
                state.timeline.interrupt(cue.index, .init(fadeStart: sample, fade: fade, resume: nil, isStop: true))
                state.touch(layer: cue.layer, from: sample)
                result.cues.append(cue.name)
                result.silentFrom = max(result.silentFrom, sample + fade)
            }
            return result
        }
    }

    /// Changes cue `name`'s own level to `decibels` over `ramp` seconds, from where the control
    /// lands or session sample `position` (when given and not yet computed); its layer's gain
    /// applies on top.
    /// - Returns: the session sample the change starts.
    /// - Throws: ``PlayerError`` for an unknown cue or a bad level or ramp.
    @discardableResult
    public func setCueLevel(_ name: String, decibels: Double, ramp: Double = 0, at position: Int64? = nil) throws(PlayerError) -> Int64 {
        try Self.check(decibels: decibels, ramp: ramp, verb: "level")
        let rate = self.rate
        return try control(at: position) { state throws(PlayerError) -> Int64 in
            let cue = try Self.cue(name, in: state.timeline, verb: "level")
            let sample = state.controlSample
            for target in state.timeline.controlledCues(of: cue.index) {
                state.timeline.addLevelChange(target, .init(start: sample, ramp: Int64((ramp * rate).rounded()), gainDB: decibels))
                state.touch(layer: state.timeline.cues[target].layer, from: sample)
            }
            return sample
        }
    }
}
