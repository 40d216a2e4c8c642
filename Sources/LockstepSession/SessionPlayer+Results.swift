/// What the player's commands answer: a late start, a go, a change of one cue.
extension SessionPlayer {
    /// A start (or restart after a seek, a resume, a transport roll), or a control change on a
    /// layer, that came too late for its device sample: the layers started (the layer's new audio
    /// began) at the earliest possible sample instead, skipping `skippedFrames` frames so that
    /// they stay on the session's timeline (`session run --json` lists them as
    /// `SessionRunReport.LateStart`).
    public struct LateStart: Sendable, Hashable {
        /// The session sample the start (or change) was for.
        public var position: Int64
        /// The device sample at which the audio really began.
        public var sampleTime: Int64
        /// The frames skipped (the frames it was late by).
        public var skippedFrames: Int64

        /// Creates a record.
        public init(position: Int64, sampleTime: Int64, skippedFrames: Int64) {
            self.position = position
            self.sampleTime = sampleTime
            self.skippedFrames = skippedFrames
        }
    }

    /// What a `go` did.
    public struct GoResult: Sendable, Hashable {
        /// The manual cue fired.
        public var cue: String
        /// The cues it placed (itself and those chained to it).
        public var placed: [String]
        /// The session sample its timeline starts on: for a cue loaded to a time, that far before
        /// ``position`` (it is first heard on ``position``).
        public var start: Int64
        /// The manual cue the playhead selects afterwards (nil when none waits).
        public var playhead: String?
        /// The session sample the go landed on: ``start`` less the cue's own time after its go
        /// (`offset`, `pre_wait`).
        public var position: Int64 = 0
    }

    /// What a change of one cue (stop, pause, resume) did.
    public struct CueChange: Sendable, Hashable {
        /// The cue.
        public var cue: String
        /// The session sample the change begins: a fade-out (stop, pause) or the fade-in (resume).
        public var start: Int64
        /// The session sample it is silent from (stop, pause) or fully back (resume).
        public var end: Int64
    }
}
