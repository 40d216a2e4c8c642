import Lockstep
import LockstepSession
import LockstepTimecode

/// One thing a chase did, reported with its device sample time (`--json-events`, the web page).
public struct ChaseEvent: Sendable, Hashable {
    /// What happened.
    public enum Kind: String, Sendable, Hashable {
        /// Two frames in a row agreed: the session follows the timecode.
        case lock
        /// No timecode for two frames: freewheeling.
        case loss
        /// The timecode jumped (confirmed by the next frame).
        case jump
        /// Every layer was prepared again to play from ``ChaseEvent/position`` on ``ChaseEvent/sampleTime``.
        case relocate
        /// The timecode stopped and freewheeling ran out: the session halted at ``ChaseEvent/position``.
        case stop
    }

    /// What happened.
    public var kind: Kind
    /// The session sample concerned.
    public var position: Int64
    /// The device sample it is on.
    public var sampleTime: Int64
    /// The label read, when a frame caused it.
    public var timecode: Timecode?

    /// The line the display shows.
    public var text: String {
        let label = timecode.map { " (timecode \($0))" } ?? ""
        switch kind {
        case .lock: return "chase: locked\(label): session sample \(position) on device sample \(sampleTime)"
        case .loss: return "chase: timecode lost after device sample \(sampleTime); freewheeling"
        case .jump: return "chase: timecode jumped\(label) on device sample \(sampleTime)"
        case .relocate: return "chase: relocated: session sample \(position) plays on device sample \(sampleTime)"
        case .stop: return "chase: timecode stopped; halted at session sample \(position) (device sample \(sampleTime))"
        }
    }
}

extension LiveSession {
    /// Acts on what the chaser read: locates the player (every layer from the timecode's
    /// position, on the sample that position plays on), halts it, and reports each step.
    func followChase(_ chaser: TimecodeChaser) throws {
        let (happenings, problem) = chaser.take()
        if let problem { onNote(ShowNote(.error, "--chase \(chaser.setting.source): \(problem)")) }
        let following = overrides.isEnabled(.timecodeInputEnabled)
        for happening in happenings {
            switch happening.action {
            case .locate(let position, let sampleTime) where !following, .stop(let position, let sampleTime) where !following:
                onNote(ShowNote(.notice, "--chase \(chaser.setting.source): the override timecodeInputEnabled is off: not following the timecode to session sample \(max(0, position)) on device sample \(sampleTime)"))
            case .lock(let position, let sampleTime):
                report(ChaseEvent(kind: .lock, position: position, sampleTime: sampleTime, timecode: happening.timecode))
            case .jump(_, let position, let sampleTime):
                report(ChaseEvent(kind: .jump, position: position, sampleTime: sampleTime, timecode: happening.timecode))
            case .loss(let position, let sampleTime):
                report(ChaseEvent(kind: .loss, position: position, sampleTime: sampleTime))
            case .locate(let position, let sampleTime):
                let (from, at) = try locate(position, playingOn: sampleTime)
                report(ChaseEvent(kind: .relocate, position: from, sampleTime: at, timecode: happening.timecode))
            case .stop(let position, let sampleTime):
                player.halt(at: max(0, position))
                report(ChaseEvent(kind: .stop, position: max(0, position), sampleTime: sampleTime))
            }
        }
    }

    /// Plays every layer on the mapping "session sample `position` on device sample
    /// `sampleTime`", from the first sample it can still start on exactly (a lead after now);
    /// before the session's start, from its start on the sample the mapping gives it.
    /// - Returns: the session sample it plays from and the device sample that plays on.
    private func locate(_ position: Int64, playingOn sampleTime: Int64) throws -> (Int64, Int64) {
        let soonest = engine.currentTime().sampleTime + Int64((options.lead * player.rate).rounded())
        var at = engine.nearestStartTime(atOrAfter: soonest)
        var from = position + at - sampleTime
        if from < 0 {
            at -= from
            from = 0
        }
        player.halt(at: from)
        try player.start(from: from, at: at)
        return (from, at)
    }

    func report(_ event: ChaseEvent) {
        onNote(ShowNote(.notice, event.text))
        onChase(event)
    }
}
