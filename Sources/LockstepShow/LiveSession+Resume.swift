import Foundation
import Lockstep
import LockstepJACK
import LockstepSession

/// Resuming a run from its journal (`session run --resume`): the show as it was, playing on
/// where the clock says it would be now, or where the journal last saw it.
extension LiveSession {
    /// What to resume, read from a journal (``ShowJournal/read(at:)``).
    public struct Resume: Sendable {
        /// Where to play on from.
        public enum Point: String, Sendable, Hashable, CaseIterable {
            /// Where the show would be now had it not stopped: on the same JACK server, its
            /// frame clock says so to the sample; otherwise the wall clock does.
            case now
            /// Where the journal last saw it (its last record, at most
            /// ``ShowJournal/clockInterval`` before the crash).
            case crash
        }

        /// What the run had added.
        public var run: SessionPlayer.RunState
        /// The last moment journaled.
        public var moment: ShowJournal.Moment
        /// Where to play on from.
        public var point: Point

        /// Creates a resume.
        public init(run: SessionPlayer.RunState, moment: ShowJournal.Moment, point: Point) {
            self.run = run
            self.moment = moment
            self.point = point
        }
    }

    /// What a resume did: one discontinuity of the show, from the last sample journaled to the
    /// one it played on from.
    public struct Resumed: Sendable, Hashable {
        /// The session sample it plays on from (the paused position when paused).
        public var position: Int64
        /// The device sample that plays on (nil: resumed paused).
        public var sampleTime: Int64?
        /// The session sample the journal last saw playing (or paused at).
        public var lastJournaled: Int64
        /// Session samples skipped between the two: the crash and the restart (at most this
        /// much was not heard; 0 when resumed paused or from the crash point).
        public var gap: Int64
        /// The clock the position was taken from: `jack` (the same server's frame clock, exact),
        /// `wall` (the system clock: the server was restarted), `crash` (the last record), or
        /// `paused`.
        public var clock: String
        /// Seconds between the last record and the restart.
        public var secondsAway: Double
        /// What of the journaled run no longer fits the session.
        public var problems: [String]
    }

    /// Restores the journaled run into the player and starts it where ``Resume/point`` says
    /// (or halts it at the paused position). Called by ``start()``.
    func resume(_ resume: Resume) throws -> Resumed {
        let problems = player.restore(resume.run)
        let rate = player.rate
        let factor = rate / resume.moment.rate
        let last = Int64((Double(resume.moment.position) * factor).rounded())
        let away = Date().timeIntervalSince1970 - resume.moment.time
        guard resume.moment.isPlaying, !resume.run.isPaused else {
            let at = Int64((Double(resume.run.pausedPosition) * rate / resume.run.rate).rounded())
            player.halt(at: at)
            return Resumed(position: at, sampleTime: nil, lastJournaled: last, gap: 0, clock: "paused", secondsAway: away, problems: problems)
        }
        // Room to compute every layer's first buffers before the start (a start later than
        // that skips ahead on the same mapping and says so).
        let now = engine.currentTime().sampleTime
        let at = engine.nearestStartTime(atOrAfter: now + Int64(((options.lead + Self.resumeRoom) * rate).rounded()))
        var position = last
        var clock = "crash"
        if resume.point == .now {
            let wallElapsed = device.wallClock(forSampleTime: at).map { ($0 - resume.moment.time) * rate }
                ?? (Date().timeIntervalSince1970 - resume.moment.time) * rate + Double(at - now)
            clock = "wall"
            position = last + Int64(wallElapsed.rounded())
            if let then = resume.moment.jackFrame, resume.moment.rate == rate {
                // On the same server (its frame clock agrees with the wall clock), the frames
                // elapsed since are exact.
                let frames = Int64(device.jackFrameTime(forSampleTime: at) &- UInt32(truncatingIfNeeded: then))
                if abs(Double(frames) - wallElapsed) < rate / 2 {
                    position = last + frames
                    clock = "jack"
                }
            }
        }
        position = max(0, position)
        let start = try player.start(from: position, at: at)
        engine.report(Discontinuity(kind: .resume, sampleTime: start, length: position - last, queues: player.queues.map(\.name),
                                    detail: (away * 1000).rounded()))
        return Resumed(position: position, sampleTime: start, lastJournaled: last, gap: position - last, clock: clock,
                       secondsAway: away, problems: problems)
    }

    /// Seconds added to the lead of a resumed start: it computes layers mid-file.
    static let resumeRoom = 0.25
}
