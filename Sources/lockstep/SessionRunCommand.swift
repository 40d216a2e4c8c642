import ArgumentParser
import Foundation
import Lockstep
import LockstepFiles
import LockstepControl
import LockstepJACK
import LockstepOSC
import LockstepSession
import LockstepWeb
import Synchronization

/// `lockstep session run FILE`: plays a session live through one JACK client.
struct SessionRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Play a session live through one JACK client.",
        discussion: """
            Each layer is an output queue; all start on one sample and mix to out_1…out_N. A layer \
            with 'ports' gets its own ports (<layer>_1…) connected there instead. With a control \
            surface (--control, --osc, --web, --midi) the show stays up until you quit (Ctrl-C fades \
            out and exits, as does the end of a --control file): cues can be fired again and reset \
            brings the show back to its top. --exit-when-done ends it once everything placed has \
            played and every manual cue has been fired; without a surface it ends there anyway.

            --control reads commands, one a line, from standard input (-) or a file/FIFO (the same commands come over OSC with --osc: see Docs/ShowControl.md):
              go [CUE]               fire the playhead's manual cue (or CUE)
              start CUE              fire CUE, the playhead stays
              next | previous        move the playhead
              select CUE             put the playhead on CUE
              stop [CUE]             stop every cue (or CUE)
              pause [CUE]            pause the session (or CUE) with a 5 ms fade
              resume [CUE]           resume where it paused
              panic [CUE]            fade everything (or CUE) out over 1 s, then stop
              panic-in TIME          the same over TIME
              load CUE TIME          the next go of CUE starts it TIME in
              level CUE DB [RAMP]    set a cue's level over RAMP (a time: 2, 250ms, 0:02, 4800 samples)
              gain LAYER DB [RAMP]   set a layer's gain over RAMP (a time, as for level)
              seek TIME              jump to a session time (90, 1:30, "4800 samples")
              reset                  back to the top: everything stops, every cue waits again
              status                 print one JSON line describing the state

            --midi registers a JACK MIDI input, <client>:midi_in (connect a controller with \
            --midi-connect or any patchbay); the session's 'triggers:' map notes, control changes, \
            program changes and MIDI Show Control to these commands, carried out as they come (a GO \
            sounds from the next cycle); with --midi-latency SAMPLES each lands that many samples \
            after its MIDI event, on the sample a render with --midi-file gives it.

            Examples:
              lockstep session run show.yaml --control -
              lockstep session run show.yaml --osc 53000
              lockstep session run show.yaml --json-events > events.jsonl
              lockstep session run show.yaml --midi --midi-connect system:midi_capture_1
            """
    )

    @Argument(help: "The session file (YAML).")
    var file: String

    @OptionGroup(title: "JACK")
    var jack: JACKOptions

    @Flag(help: "Follow JACK transport: rolling plays from the transport position, stopping pauses, relocating seeks.")
    var transport = false

    @Option(help: ArgumentHelp("Start at this session time (every cue under way plays from the right place): \(TimeOption.forms).",
                               valueName: TimeOption.valueName),
            transform: TimeOption.parse)
    var from: SessionTime?

    @Option(help: ArgumentHelp("Stop after playing this long (\(TimeOption.forms)).", valueName: TimeOption.valueName),
            transform: TimeOption.parse)
    var duration: SessionTime?

    @OptionGroup(title: "Control")
    var surfaces: ControlOptions

    @OptionGroup(title: "Control")
    var doubleGo: DoubleGoOption

    @Option(name: .customLong("audition"), help: ArgumentHelp("Where auditions play (audition CUE, QLab's /cue/{cue}/audition and preview): a JACK port, apart from the show. Repeat it for one port per channel.", valueName: "port"))
    var auditionPorts: [String] = []

    @Option(name: .customLong("midi-out"), help: ArgumentHelp("Where MIDI cues go: connect <client>:midi_out (made when the session has MIDI cues) to this JACK MIDI port. Repeat it for several.", valueName: "port"))
    var midiOutPorts: [String] = []
    @Option(name: .customLong("ltc-out"), help: ArgumentHelp("Send SMPTE LTC following session time on the client's own output ltc_1, connected to this JACK port (repeat it for more ports): each frame's first bit on its timecode's exact sample; it relocates with seeks and stops and starts with the session (Docs/Timecode.md).", valueName: "port"))
    var ltcPorts: [String] = []

    @Option(name: .customLong("mtc-out"), help: ArgumentHelp("Send MIDI time code following session time on the client's MIDI output mtc_out, connected to this JACK MIDI port (repeat it for more ports): a full-frame message on every start and relocation, each quarter-frame on its exact sample; --ltc-fps and --ltc-start set its rate and start too (Docs/Timecode.md).", valueName: "port"))
    var mtcPorts: [String] = []

    @OptionGroup(title: "Timecode")
    var timecode: TimecodeOptions

    @OptionGroup(title: "Timecode")
    var chase: ChaseOptions

    @Flag(name: .customLong("exit-when-done"), help: "With a control surface: end once everything placed has played and every manual cue has been fired (for scripts); without it the show stays up until you quit.")
    var exitWhenDone = false

    @Option(name: .customLong("record"), help: ArgumentHelp("Record the master mix into this file, from the session's first sample, on the same timeline.", valueName: "file"))
    var recordPath: String?

    @Flag(help: "With --record: replace the file if it exists (without it, an existing file is never touched).")
    var force = false

    @OptionGroup(title: "Journal")
    var journal: JournalOptions

    @OptionGroup(title: "Main and backup")
    var link: LinkOptions

    @Flag(name: .customLong("json-events"), help: "Print live events as JSON Lines on standard output, one object a line as each happens: the updates OSC clients get, heartbeats left out (Docs/JSON.md).")
    var jsonEvents = false

    @OptionGroup(title: "Messages")
    var global: GlobalOptions

    @Flag(help: "Print one JSON object with the results (and status lines) on standard output.")
    var json = false

    func validate() throws {
        try TimeOption.checkDuration(duration)
        if journal.resumePath != nil && from != nil {
            throw ValidationError("--resume plays on where the journaled run was; leave out --from")
        }
        if recordPath != nil && transport {
            throw ValidationError("--record cannot follow --transport yet (the recording starts on the session's first sample); leave one out")
        }
        if force && recordPath == nil { throw ValidationError("--force replaces the --record file; give --record FILE") }
        try chase.check(transport: transport, midi: surfaces.usesMIDI)
        if recordPath != nil && chase.source != nil {
            throw ValidationError("--record cannot follow --chase yet (the recording starts on the session's first sample); leave one out")
        }
        if link.backupOf != nil && (journal.resumePath != nil || from != nil || transport || chase.source != nil) {
            throw ValidationError("--backup-of plays where its main is; leave out --resume, --from, --transport and --chase")
        }
        try timecode.checkUsed(by: "--ltc-out, --mtc-out or --chase ltc:/mtc:", given: !ltcPorts.isEmpty || !mtcPorts.isEmpty || chase.parsedSource() != nil)
    }

    func run() throws {
        let onDisk = try loadSession(file, command: "run")
        let journalPath = journal.journalPath(for: file, surfaces: surfaces.isRequested, backup: link.backupOf != nil)
        let (session, recovered, resume) = try journal.resolve(onDisk, file: file, journal: journalPath)
        if let recordPath {
            do { try OutputSafety.refuseOverwritingInputs(output: recordPath, inputs: [file] + session.files.map(\.path), option: "--record") } catch {
                throw CLIError(message: "session run: \(error.description)", exitCode: 64)
            }
            try refuseToReplace(recordPath, force: force, command: "session run")
        }
        var settings = SessionRun.Settings(command: "session run", file: file, jack: jack, surfaces: surfaces, transport: transport || chase.chasesTransport,
                                           from: from, duration: duration, json: json, jsonEvents: jsonEvents,
                                           recordPath: recordPath, exitWhenDone: exitWhenDone,
                                           doubleGoSeconds: doubleGo.seconds, auditionPorts: auditionPorts,
                                           midiOutPorts: midiOutPorts)
        settings.timecode = try timecode.setting(ports: ltcPorts, session: session.document)
        settings.timecodeConnections = ltcPorts
        settings.midiTimecode = try timecode.setting(ports: mtcPorts, session: session.document)
        settings.midiTimecodeConnections = mtcPorts
        settings.chaseSource = try chase.parsedSource()
        settings.chaseSetting = { [chase, timecode] rate in try chase.setting(timecode: timecode, session: session.document, rate: rate) }
        settings.transportMaster = chase.transportMaster
        settings.journal = journalPath
        settings.resume = resume
        settings.link = link
        if recovered > 0 {
            settings.savedFile = SessionFile.Base(onDisk)
            settings.recoveredEdits = recovered
        }
        try SessionRun(settings: settings, session: session).run()
    }
}
