import LockstepSession

/// One command to a running session, as every control surface (typed lines, OSC, later MIDI and
/// the web page) produces it for the ``ControlDispatcher``.
///
/// Every change lands on the earliest session sample the device can still change (see
/// ``LockstepSession/SessionPlayer``), and its reply says which.
public enum ControlCommand: Sendable, Hashable {
    /// Fires a manual cue: the one named, or the one the playhead selects; the playhead then moves
    /// to the next manual cue in file order (a cue played before fires again).
    case go(CueReference?)
    /// Stops every cue that is scheduled, playing or paused (a 5 ms fade); manual cues waiting for
    /// go stay ready, and the session's time runs on.
    case stop
    /// Fades every cue out over the panic time, then stops them; a second panic while that fade
    /// runs stops everything at once.
    case panic
    /// Pauses the whole session (fading out), keeping its position.
    case pause
    /// Plays the whole session on from where it paused.
    case resume
    /// Fires one manual cue without moving the playhead.
    case startCue(CueReference)
    /// Stops one cue (fading out if it plays; a scheduled cue is cancelled).
    case stopCue(CueReference)
    /// Pauses one playing cue; the rest of the session plays on.
    case pauseCue(CueReference)
    /// Plays a paused cue on from where it paused.
    case resumeCue(CueReference)
    /// Sets one cue's own level in dB, over a ramp (seconds, or samples at the session's rate).
    case setCueLevel(CueReference, decibels: Double, ramp: SessionTime)
    /// Moves the playhead to the next manual cue.
    case selectNext
    /// Moves the playhead to the previous manual cue.
    case selectPrevious
    /// Puts the playhead on a manual cue.
    case selectPlayhead(CueReference)
    /// Ramps a layer's gain to a level in dB over a ramp (seconds, or samples at the session's
    /// rate).
    case setLayerGain(layer: String, decibels: Double, ramp: SessionTime)
    /// Moves the session to a time (seconds or samples at the session's rate).
    case seek(SessionTime)
    /// Answers with the session's state (``ControlStatus``).
    case status
    /// Fades every cue out over a time (QLab's `/panicInTime`), then stops them; a second panic
    /// during the fade stops at once.
    case panicIn(SessionTime)
    /// Fades one cue out over a time (nil: the panic time), then stops it (QLab's
    /// `/cue/{cue}/panic`).
    case panicCue(CueReference, fade: SessionTime?)
    /// Loads a manual cue to a time (``LockstepSession/SessionPlayer/load(_:at:change:)``): its
    /// next go starts it that far in.
    case loadCue(CueReference, SessionTime, SessionPlayer.LoadChange)
    /// Takes the show back to its top (``LockstepSession/SessionPlayer/reset()``): everything
    /// sounding stops, every cue waits again, the playhead goes to the first manual cue, and the
    /// session plays from its start.
    case reset
    /// Edits a cue (QLab's setters; ``LockstepSession/SessionPlayer/edit(_:_:)``): at once when
    /// it waits to be placed, else from its next start.
    case editCue(CueReference, CueEdit)
    /// Plays a cue (nil: the playhead's) on the audition outputs, apart from the show
    /// (``LockstepSession/CueAudition``); QLab's audition and preview.
    case audition(CueReference?)
    /// Stops the audition playing.
    case stopAudition
    /// Writes the run's edits into the session file (``LockstepSession/SessionFile``); with
    /// `force`, even though the file changed on disk since it was read.
    case save(force: Bool)
    /// Sets any key of a cue, adds, duplicates, deletes or moves a cue: the cue list built while
    /// the show runs, written into the session's text (``CueStructureEdit``).
    case restructure(CueStructureEdit)
    /// MIDI learn: the next note, control change, program change or MIDI Show Control message
    /// from the MIDI input becomes a trigger of `action` (a typed command: `go bell`), written into
    /// the session's `triggers:`; nil cancels a learn under way.
    case learnMIDI(String?)
    /// Undoes the last cue edit (``LockstepSession/SessionPlayer/undo()``).
    case undo
    /// Makes the last undone edit again (``LockstepSession/SessionPlayer/redo()``).
    case redo
    /// Switches a show-control override on or off (``ShowOverrides``); nil asks whether it is on.
    case override(ShowOverrides.Key, Bool?)
}

/// How a command names a cue: by name, or by its number (1 for the first cue of the session
/// file, in file order).
public enum CueReference: Sendable, Hashable, CustomStringConvertible {
    /// The cue's name; when no cue has this name and it is a whole number, the cue with that
    /// number.
    case name(String)
    /// The cue's position in the session file, from 1.
    case number(Int)

    /// The name, or `#N` for a number.
    public var description: String {
        switch self {
        case .name(let name): return name
        case .number(let number): return "#\(number)"
        }
    }
}
