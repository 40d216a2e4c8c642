import ArgumentParser
import Foundation
import LockstepSession
import LockstepShow

/// `session run`'s journal (``LockstepSession/ShowJournal``): where it goes, what to do with
/// edits an earlier run did not save, and resuming a run that stopped without ending.
struct JournalOptions: ParsableArguments {
    @Option(name: .customLong("journal"), help: ArgumentHelp("Keep the run (its edits, every go on its sample, gains, the playhead) in this journal (default, with a control surface: $XDG_STATE_HOME/lockstep/journals, else ~/.local/state/lockstep/journals, one file per session file).", valueName: "file"))
    var path: String?

    @Flag(name: .customLong("no-journal"), help: "Keep no journal: an edit not saved is lost when the program ends, and a crashed run cannot be resumed.")
    var disabled = false

    @Flag(name: .customLong("recover-edits"), help: "Play the edits an earlier run of this file made and did not save (kept in its journal); 'save' then writes them into the file.")
    var recover = false

    @Flag(name: .customLong("discard-edits"), help: "Start from the file as it is, dropping the edits an earlier run made and did not save.")
    var discard = false

    @Option(name: .customLong("resume"), help: ArgumentHelp("Resume the run this journal kept, after a crash, a kill or a power cut: the same session (refused if its file changed), its edits, every cue already fired, manual cues still waiting, gains and fades as they were, playing on where the show would be now; the run journals on into the same file.", valueName: "journal"))
    var resumePath: String?

    @Option(name: .customLong("resume-at"), help: ArgumentHelp("With --resume: 'now' (default) plays on where the show would be had it not stopped (on the same JACK server to the sample, else by the system clock); 'crash' plays on from where the journal last saw it.", valueName: "now|crash"))
    var resumePoint: String?

    func validate() throws {
        if disabled && (path != nil || recover || resumePath != nil) {
            throw ValidationError("--no-journal keeps no journal; leave out --journal, --recover-edits and --resume")
        }
        if recover && discard { throw ValidationError("--recover-edits and --discard-edits ask for opposite things; give one") }
        if resumePath != nil && (recover || discard) {
            throw ValidationError("--resume plays the journaled run with its edits; leave out --recover-edits and --discard-edits")
        }
        if resumePoint != nil && resumePath == nil { throw ValidationError("--resume-at says where --resume plays on from; give --resume JOURNAL too") }
        if let resumePoint, LiveSession.Resume.Point(rawValue: resumePoint) == nil {
            throw ValidationError("--resume-at: '\(resumePoint)' is neither 'now' nor 'crash'")
        }
    }

    /// The journal of `file` for a run with (`surfaces`) or without a control surface: nil when
    /// none is kept. A backup's (`backup`) default journal is `NAME-HASH-backup.journal`, so that
    /// a main and its backup on one machine do not share one.
    func journalPath(for file: String, surfaces: Bool, backup: Bool = false) -> String? {
        if disabled || file == "-" { return nil }
        if let path { return path }
        if let resumePath { return resumePath }
        guard surfaces else { return nil }
        let path = ShowJournal.path(forSession: file)
        return backup ? String(path.dropLast(".journal".count)) + "-backup.journal" : path
    }

    /// The session to play: `session` as read from `file`, or — with ``recover`` — with the edits
    /// its journal at `journal` holds. Edits not saved and neither recovered nor discarded stop
    /// the run with a message saying both ways on. With ``resumePath``, the journaled run
    /// (``resume(_:file:)``).
    func resolve(_ session: Session, file: String, journal: String?) throws -> (session: Session, recovered: Int, resume: LiveSession.Resume?) {
        if resumePath != nil { return try resume(session, file: file) }
        guard let journal, let pending = ShowJournal.pending(at: journal, fileText: session.text) else {
            if recover { throw CLIError(message: "session run: --recover-edits: \(file) has no edits left to recover (no journal at \(journal ?? "—"), or every edit was saved)", exitCode: 64) }
            if let journal, let contents = ShowJournal.read(at: journal), !contents.ended, contents.run != nil, contents.base == session.text {
                log.notice("the last run of \(file) stopped without ending (journal \(journal)); --resume \(journal) would have played on from where it was, this run starts afresh and replaces the journal")
            }
            return (session, 0, nil)
        }
        if discard { return (session, 0, nil) }
        let when = DateFormatter.localizedString(from: pending.lastEdit, dateStyle: .short, timeStyle: .medium)
        guard recover else {
            throw CLIError(message: "session run: \(file): an earlier run made \(pending.edits) edit\(pending.edits == 1 ? "" : "s") that \(pending.edits == 1 ? "was" : "were") not saved (the last at \(when), kept in \(journal)); run again with --recover-edits to play them (save then writes them into the file), with --resume \(journal) to play on where that run was, or with --discard-edits to start from the file as it is", exitCode: 1)
        }
        do { return (try Session.parse(text: pending.text, path: file), pending.edits, nil) } catch {
            throw CLIError(message: "session run: --recover-edits: the journaled edits of \(file) no longer check (an audio file changed?):\n\(error.description)", exitCode: 1)
        }
    }

    /// The run the journal at ``resumePath`` kept, of `session` (as read from `file`): refused
    /// when there is none, when it ended normally, or when the file changed since.
    func resume(_ session: Session, file: String) throws -> (session: Session, recovered: Int, resume: LiveSession.Resume?) {
        guard let path = resumePath else { return (session, 0, nil) }
        guard let contents = ShowJournal.read(at: path) else {
            throw CLIError(message: "session run: --resume: no journal at \(path) (a run keeps one with a control surface or --journal)", exitCode: 66)
        }
        if contents.base != session.text {
            throw CLIError(message: "session run: --resume: \(file) changed since the run journaled in \(path) read it (\(SessionFile.firstDifference(contents.base, session.text))); put it back as it was to resume, or start afresh without --resume", exitCode: 1)
        }
        if contents.ended {
            throw CLIError(message: "session run: --resume: the run journaled in \(path) ended normally; there is nothing to resume (start afresh without --resume)", exitCode: 1)
        }
        guard let run = contents.run, let moment = contents.moment else {
            throw CLIError(message: "session run: --resume: the journal \(path) holds no state yet (that run stopped while starting); start afresh without --resume", exitCode: 1)
        }
        var played = session
        if contents.text != session.text {
            do { played = try Session.parse(text: contents.text, path: file) } catch {
                throw CLIError(message: "session run: --resume: the journaled edits of \(file) no longer check (an audio file changed?):\n\(error.description)", exitCode: 1)
            }
        }
        let point = resumePoint.flatMap(LiveSession.Resume.Point.init(rawValue:)) ?? .now
        return (played, contents.text != session.text ? contents.edits : 0, LiveSession.Resume(run: run, moment: moment, point: point))
    }
}
