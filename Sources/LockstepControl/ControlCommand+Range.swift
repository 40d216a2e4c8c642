import LockstepSession

extension ControlCommand {
    /// The command with every number checked against its range (``LockstepSession/ControlRange``)
    /// before anything converts it: a seek's time 0 to a week, a level's or gain's dB −∞ to +12
    /// and its ramp 0 to an hour (in samples: up to ``LockstepSession/SessionTime/maximumSamples``;
    /// an hour of them at the session's rate is checked where the rate is known). Every surface
    /// builds commands that pass; a command made in code may not. Pure, any thread.
    /// - Throws: ``ControlError`` naming `address`, the value and its range.
    public func checked(address: String) throws(ControlError) -> ControlCommand {
        do throws(ControlRangeError) {
            switch self {
            case .seek(let time), .loadCue(_, let time, _):
                _ = try ControlRange.time(time, for: address)
            case .panicIn(let fade), .panicCue(_, fade: let fade?):
                _ = try ControlRange.ramp(fade, for: address)
            case .panicCue(_, fade: nil):
                break
            case .setCueLevel(_, let decibels, let ramp), .setLayerGain(_, let decibels, let ramp):
                try ControlRange.gain(decibels, for: address)
                _ = try ControlRange.ramp(ramp, for: address)
            case .go, .stop, .panic, .pause, .resume, .startCue, .stopCue, .pauseCue, .resumeCue, .selectNext,
                 .selectPrevious, .selectPlayhead, .status, .reset:
                break
            case .editCue, .restructure, .learnMIDI, .audition, .stopAudition, .save, .undo, .redo, .override:
                break       // (the player checks an edit's value with the cue it edits)
            }
        } catch {
            throw ControlError(.outOfRange, error.message)
        }
        return self
    }
}
