import Lockstep

/// What a watcher that acts on the session's own samples (MIDI cues sent on their sample) reads:
/// the timeline and where it plays on the device, with a count of the changes so far.
extension SessionPlayer {
    /// The session as it plays now.
    public struct Schedule: Sendable {
        /// The timeline (every cue placed so far).
        public var timeline: SessionTimeline
        /// Whether the layers play (not paused, halted, stopped or before the start).
        public var isPlaying: Bool
        /// Which start of the layers this is (``currentStart``).
        public var start: Int
        /// The device sample session sample ``originPosition`` plays on, while playing.
        public var originDevice: Int64
        /// The session sample that plays on ``originDevice``.
        public var originPosition: Int64
        /// The changes made before this was read (``changeCount``).
        public var changes: Int

        /// The device sample session sample `position` plays on (meaningful while playing).
        public func deviceTime(forPosition position: Int64) -> Int64 { originDevice + position - originPosition }
    }

    /// The session as it plays now, read at once.
    public var schedule: Schedule {
        let changes = changeCount
        return state.withLock { state in
            Schedule(timeline: state.timeline, isPlaying: state.phase == .playing, start: state.run,
                     originDevice: state.originDevice, originPosition: state.originPosition, changes: changes)
        }
    }

    /// How many changes of what plays or when were made so far: every control change (GO, stop,
    /// fade, edit…), start, halt, pause and reset counts one, and signals ``changes``.
    public var changeCount: Int { changeCounter.load(ordering: .acquiring) }

    /// Counts a change and wakes whoever waits on ``changes``.
    func noteChange() {
        changeCounter.add(1, ordering: .releasing)
        changes.signal()
    }
}
