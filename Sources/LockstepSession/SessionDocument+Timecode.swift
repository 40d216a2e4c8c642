import LockstepTimecode

extension SessionDocument {
    /// The session's timecode (`timecode:`): session time 0 is frame ``start`` at ``rate``. Cues
    /// placed `at: tc` count from it; `--ltc-out`, `--mtc-out` and `--ltc-channel` send it unless
    /// `--ltc-fps`/`--ltc-start` say otherwise.
    public struct SessionTimecode: Sendable, Hashable {
        /// The frame rate (`fps`, default 25).
        public var rate: TimecodeRate
        /// The label of session time 0 (`start`, default 00:00:00:00).
        public var start: Timecode
        /// Where `timecode:` is.
        public var location: SourceLocation

        /// The session sample frame `label` starts on at `sampleRate` (a label before ``start``
        /// is on the next day: timecode wraps at 24 hours).
        public func sample(of label: Timecode, sampleRate: Double) throws(TimecodeError) -> Int64 {
            let clock = try TimecodeClock(rate: rate, sampleRate: Int(sampleRate.rounded()), start: start)
            let day = rate.framesPerDay
            return clock.startSample(ofFrame: ((label.frameNumber(at: rate) - start.frameNumber(at: rate)) % day + day) % day)
        }
    }
}
