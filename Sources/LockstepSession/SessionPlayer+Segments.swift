import Lockstep

extension SessionPlayer {
    /// A stretch of device samples that played the session on one origin: from a start (a
    /// start, seek or resume) to the halt or pause that ended it.
    public struct PlaySegment: Sendable, Hashable {
        /// The first device sample that played the session.
        public var from: Int64
        /// A device sample up to which (excluded) the session surely played: four periods before
        /// the device's time when the halt or pause began, before its fade (JACK's estimate of
        /// the time may run a few periods ahead after a late cycle). Nil: still playing.
        public var until: Int64?
        /// Session sample `originPosition` plays on device sample `originDevice`.
        public var originDevice: Int64
        /// The session sample on ``originDevice``.
        public var originPosition: Int64

        /// The session sample on device sample `deviceTime` (inside the segment).
        public func position(atDeviceTime deviceTime: Int64) -> Int64 { originPosition + deviceTime - originDevice }

        /// Whether device sample `deviceTime` played the session in this segment.
        public func contains(_ deviceTime: Int64) -> Bool { deviceTime >= from && until.map { deviceTime < $0 } ?? true }
    }

    /// How many segments the player remembers.
    static let segmentHistory = 64

    /// The latest segments of device samples that played the session, oldest first: what maps a
    /// device sample rendered a while ago (a recording's, a hash's) to its session sample.
    public var segments: [PlaySegment] { state.withLock { $0.segments } }

    /// Ends the segment playing (a halt or a pause begins): the session surely played up to a
    /// little before the device's time now; later samples may hold a fade or silence.
    func endSegment() {
        let now = engine.currentTime().sampleTime - 4 * Int64(max(1, engine.device.periodFrames))
        state.withLock { state in
            guard let last = state.segments.indices.last, state.segments[last].until == nil else { return }
            state.segments[last].until = max(state.segments[last].from, now)
        }
    }
}
