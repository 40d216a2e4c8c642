import Foundation
import Lockstep

/// Reset: the show back to its top, as a rehearsal restart needs, without restarting the program.
extension SessionPlayer {
    /// What ``reset()`` did.
    public struct ResetResult: Sendable, Hashable {
        /// The cues that were scheduled, playing or paused, stopped (in file order).
        public var stopped: [String]
        /// The session sample the stop's fade began (the session's position then).
        public var stoppedAt: Int64
        /// The manual cue at the playhead afterwards: the first of the session.
        public var playhead: String?
        /// The device sample the session's start plays on again; nil when the session was paused
        /// or not playing (it plays from its start on resume).
        public var sampleTime: Int64?
    }

    /// Takes the show back to its top: every cue still sounding fades out over
    /// ``declickSeconds``, the timeline returns to the session file's (every manual cue waiting
    /// for go, every level and gain change, pause and stop of the run undone), the playhead goes
    /// to the first manual cue, the double-GO window starts afresh, and the session plays from
    /// its start again — its timed cues from their times, as at the first start. A paused (or
    /// not yet started) session stays paused, at its start.
    ///
    /// - Returns: what was stopped and where the start plays again.
    /// - Throws: ``AudioQueueError`` if the layers cannot restart.
    /// - Parameter startTime: the device sample the start plays on again (nil: as soon as every
    ///   layer is computed, or ``relocationLead`` later).
    @discardableResult
    public func reset(at startTime: Int64? = nil) throws(AudioQueueError) -> ResetResult {
        let wasPlaying = state.withLock { $0.phase == .playing }
        let at = wasPlaying ? startTime ?? relocationTime() : nil
        var result = ResetResult(stopped: [], stoppedAt: position, playhead: nil, sampleTime: nil)
        if wasPlaying {
            let stopped = stopAll(fade: Self.declickSeconds)
            result.stopped = stopped.cues
            result.stoppedAt = stopped.start
            // The fade is heard whole before the layers stop (a device that renders on its
            // caller's thread — offline — is rendering on another one, or cuts it).
            let silent = deviceTime(forPosition: stopped.silentFrom)
            if !engine.waitUntilRendered(through: silent, timeout: 1) {
                let deadline = ContinuousClock.now + .seconds(1)
                while engine.renderedSampleTime < silent && ContinuousClock.now < deadline { usleep(500) }
            }
            try halt()
        } else {
            result.stopped = timeline.cues.filter { [.scheduled, .playing, .paused].contains($0.state(at: result.stoppedAt)) }.map(\.name)
        }
        result.playhead = state.withLock { state in
            let fresh = state.initial
            state.timeline = fresh
            state.fired = []
            state.loaded = [:]
            state.gainChanges = []
            state.playhead = fresh.manualCues.first?.index
            state.lastPlainGo = nil
            state.pausedPosition = 0
            return state.playhead.map { fresh.cues[$0].name }
        }
        noteChange()
        if wasPlaying {
            if let at {
                if startTime == nil { announceRelocation(to: 0, at: at, isReset: true) }
                result.sampleTime = try start(from: 0, at: at)
            } else {
                result.sampleTime = try start(from: 0, lead: Self.resetLead)
            }
        }
        return result
    }

    /// Seconds between the moment every layer's first buffers are computed again after a reset and
    /// the session's start playing.
    static let resetLead = 0.05
}
