import Foundation
import Lockstep
import LockstepControl
import LockstepJACK
import LockstepOSC
import LockstepSchema
import LockstepSession
import LockstepShow

/// One live run of a session (`session run`, and `play` under control): the options wired to a
/// ``LiveSession`` (the show engine) and the control surfaces, the display, the summary.
final class SessionRun {
    /// What to run and how: `session run`'s options, or those `play` gives for its files.
    struct Settings {
        /// The command's name in messages (`session run`, `play`).
        var command: String
        /// The session file, or what stands for it in messages and the summary.
        var file: String
        var jack: JACKOptions
        var surfaces: ControlOptions
        var transport = false
        var from: SessionTime?
        var duration: SessionTime?
        var json = false
        /// Live events as JSON Lines on standard output (`--json-events`).
        var jsonEvents = false
        /// Where to record the master mix, from the session's first sample.
        var recordPath: String?
        /// End once everything placed has played and every manual cue has been fired, even with a
        /// control surface (`play` always does; `session run` with `--exit-when-done`).
        var exitWhenDone = true
        /// The double-GO window in seconds (``LockstepSession/SessionPlayer/doubleGoWindow``).
        var doubleGoSeconds = 0.0
        /// Where auditions play (`--audition`); empty: no audition output.
        var auditionPorts: [String] = []
        /// Where the MIDI output of MIDI cues is connected (`--midi-out`).
        var midiOutPorts: [String] = []
        /// LTC sent on `ltc_1` (`--ltc-out`), and where it goes.
        var timecode: SessionPlayer.TimecodeSetting?
        var timecodeConnections: [String] = []
        /// MTC sent on `mtc_out` (`--mtc-out`), and where it goes.
        var midiTimecode: SessionPlayer.TimecodeSetting?
        var midiTimecodeConnections: [String] = []
        /// `--chase ltc:PORT` or `mtc:PORT` (nil: none), and its setting at the device's rate.
        var chaseSource: TimecodeChaser.Source?
        var chaseSetting: ((Double) throws -> TimecodeChaser.Setting?)?
        /// Drive JACK transport from the session (`--transport-master`).
        var transportMaster = false
        /// Where the run's edits are journaled (nil: nowhere).
        var journal: String?
        /// The file as on disk when the session plays edits recovered from a journal (what a
        /// save compares and writes over), and how many.
        var savedFile: SessionFile.Base?
        var recoveredEdits = 0
        /// The journaled run to resume (`--resume`).
        var resume: LiveSession.Resume?
        /// Main or backup of a show link (`--main`, `--backup-of`).
        var link: LinkOptions?
    }

    let command: Settings
    let session: Session
    let launcher = ServerLauncher()

    init(settings: Settings, session: Session) {
        self.command = settings
        self.session = session
    }

    func fail(_ error: any Error) -> CLIError {
        if let error = error as? SessionError {
            return CLIError(message: "\(command.command): at the server's rate:\n\(error.description)")
        }
        return CLIError(message: "\(command.command): \(userMessage(error))")
    }

    func run() throws {
        let interrupt = InterruptFlag(command: command.command)
        let notes = NoteQueue()
        let surfaces = try ControlSurfaces(options: command.surfaces, command: command.command, notes: notes)
        defer { surfaces.web?.stop() }
        defer { launcher.stop() }
        let triggers = try MIDITriggers(session: session)
        if command.surfaces.usesMIDI && triggers.entries.isEmpty {
            log.warning("\(command.file) has no 'triggers:', so MIDI fires nothing; add triggers (Docs/ShowControl.md)")
        }
        let device = try command.jack.openDevice(command.command, launcher: launcher, channels: session.document.channelCount,
                                                 inputs: command.chaseSource.map { if case .ltc = $0 { 1 } else { 0 } } ?? 0,
                                                 midiInput: command.surfaces.usesMIDI || command.chaseSource.map({ if case .mtc = $0 { true } else { false } }) == true ? "midi_in" : nil,
                                                 midiOutputs: (MIDICueScheduler.isNeeded(for: session) ? [MIDICueScheduler.portName] : [])
                                                     + (command.midiTimecode == nil ? [] : [MTCSender.portName]))
        if command.link?.freeClock == true {
            if let layer = session.document.layers.first(where: { !$0.ports.isEmpty }) {
                throw CLIError(message: "\(command.command): --free-clock: layer '\(layer.name)' has ports of its own, and steering resamples the master outputs only; route it through the outputs (leave out its ports), or run without --free-clock")
            }
            if command.timecode != nil {
                throw CLIError(message: "\(command.command): --free-clock: LTC out has ports of its own, and steering resamples the master outputs only; leave out --ltc-out on the backup, or run without --free-clock")
            }
            do { try device.enableSteering() } catch {
                throw CLIError(message: "\(command.command): --free-clock: \(error.message)")
            }
        }
        // A backup joins its main first: it starts where the main is, with the main's edits.
        let joined = try joinMain()
        let session = try adopt(joined?.1)
        var options = LiveSession.Options()
        options.from = command.from
        options.duration = command.duration
        options.followsTransport = command.transport
        options.connections = command.jack.connections
        options.recordPath = command.recordPath
        options.runsUntilStopped = !command.exitWhenDone
        options.doubleGoSeconds = command.doubleGoSeconds
        options.auditionPorts = command.auditionPorts
        options.timecode = command.timecode
        options.timecodeConnections = command.timecodeConnections
        options.midiTimecode = command.midiTimecode
        options.midiTimecodeConnections = command.midiTimecodeConnections
        options.chase = try command.chaseSetting?(device.sampleRate)
        options.drivesTransport = command.transportMaster
        options.resume = command.resume ?? joined.map { welcome in
            var moment = welcome.1.moment
            moment.jackFrame = nil     // (the main's server: by the system clock)
            moment.time -= device.steeringDelay / device.sampleRate   // (steered: sounds that much later)
            return LiveSession.Resume(run: welcome.1.run, moment: moment, point: .now)
        }
        let show: LiveSession
        do { show = try LiveSession(session: session, device: device, options: options) } catch let error as AudioQueueError {
            throw CLIError(message: "\(command.command): \(command.file): \(error.message)")
        } catch { throw fail(error) }
        try connectMIDIOutput(of: device)
        let outputs = command.jack.reportAlignment(device)
        // Typed commands are shown in the live display, not echoed over it.
        let echo = command.surfaces.control == "-" && Terminal.stderrIsTerminal && !command.json ? TerminalEcho.off() : nil
        defer { echo?.restore() }
        var display = SessionDisplay(enabled: Terminal.display != .none && !command.json, player: show.player)
        show.onNote = { note in display.note(note.text, level: note.level.logLevel) }
        do { try show.start() } catch { throw fail(error) }
        let dispatcher = ControlDispatcher(player: show.player, overrides: show.overrides)
        dispatcher.audition = show.audition
        if let base = command.savedFile { dispatcher.savedFile = base }
        let journal = try startJournal(player: { dispatcher.player }, device: device)
        if let resumed = show.resumed, joined == nil {
            dispatcher.resumed = resumed.status
            noteResume(resumed, display: display)
        }
        let link = try startLink(joined: joined, show: show, dispatcher: dispatcher, device: device, notes: notes, display: display)
        defer { link.stop() }
        defer {
            // Kept while it holds edits the file does not: the next run offers them back.
            journal?.stop(remove: journal?.isSaved(in: command.file) == true)
        }
        if command.recoveredEdits > 0 {
            display.note("recovered \(command.recoveredEdits) edit\(command.recoveredEdits == 1 ? "" : "s") from \(command.journal ?? "the journal"), not yet saved: 'save' writes them into \(command.file)")
        }
        defer { show.audition?.stop() }
        let events = JSONEvents(enabled: command.jsonEvents)
        // Network cues: their messages go out as the session reaches them (checked every step).
        let network = NetworkCueSender.isNeeded(for: session) ? NetworkCueSender(player: show.player, overrides: show.overrides) : nil
        show.onPlayerReplaced = { player in
            dispatcher.replacePlayer(player)
            network?.replacePlayer(player)
            display = SessionDisplay(enabled: Terminal.display != .none && !self.command.json, player: player)
        }
        show.onRateChange = { events.rateChange(to: $0.sampleRate, at: $0.sampleTime) }
        show.onChase = { event in
            let rate = dispatcher.player.rate
            dispatcher.updates.publish([ControlUpdate(.chase, position: event.position, sampleTime: event.sampleTime,
                                                      seconds: Double(event.position) / rate, state: event.kind.rawValue,
                                                      timecode: event.timecode?.description)])
        }
        let eventSubscription = events.enabled ? dispatcher.updates.subscribe { update in
            if update.kind != .heartbeat { events.emit(update) }
        } : nil
        try surfaces.attach(to: dispatcher, device: device, triggers: triggers)
        defer { surfaces.stop() }
        var interrupted = false
        var ended: ShowEnd?
        while ended == nil {
            if interrupt.received != 0 { interrupted = true; break }
            if command.jack.reconnect && device.isWaitingForServer, let note = launcher.restartIfDied() { display.note(note) }
            do { ended = try show.step(canStillCommand: surfaces.canStillCommand) } catch { throw fail(error) }
            for line in surfaces.controls?.take() ?? [] { typed(line, dispatcher: dispatcher, display: display) }
            for note in notes.take() { display.note(note) }
            for sent in network?.step() ?? [] { noteNetwork(sent, dispatcher: dispatcher, display: display) }
            for sent in show.midiCues?.takeSent() ?? [] { noteMIDI(sent, dispatcher: dispatcher, display: display) }
            dispatcher.poll()
            display.update()
            usleep(5_000)
        }
        display.finish()

        // A backup is told the main ended; a backup stops following.
        link.stop()
        // Fade out, then stop (what the last cues did is published first).
        let endPosition = show.fadeOut()
        dispatcher.poll()
        eventSubscription?.cancel()
        surfaces.stop()
        for note in notes.take() { log.notice("\(note)") }
        let outcome = show.stop()
        report(show, outcome: outcome, endPosition: endPosition, surfaces: surfaces, outputs: outputs, interrupted: interrupted)
        device.stop()
        if let error = outcome.error { throw CLIError(message: "\(command.command): \(error)") }
        try interrupt.exitIfRaised()
    }

    /// Connects the MIDI output of MIDI cues to `--midi-out`'s ports (or says why there is none).
    func connectMIDIOutput(of device: JACKDevice) throws {
        guard !command.midiOutPorts.isEmpty else { return }
        guard let output = device.midiOutput(named: MIDICueScheduler.portName) else {
            log.warning("\(command.file) has no MIDI cue ('type: midi'), so --midi-out connects nothing")
            return
        }
        for port in command.midiOutPorts {
            do throws(AudioQueueError) { try device.connect(output.portName, to: port) } catch {
                throw CLIError(message: "\(command.command): --midi-out: cannot connect \(output.portName) to '\(port)'; check the port name with 'lockstep ports'")
            }
        }
    }

    /// Says what a MIDI cue sent, and publishes its start.
    func noteMIDI(_ sent: MIDICueScheduler.Sent, dispatcher: ControlDispatcher, display: SessionDisplay) {
        let player = dispatcher.player
        let when = "\(SessionTime.clock(Double(sent.position) / player.rate)) (sample \(sent.position))"
        if sent.lateFrames > 0 {
            display.note("MIDI cue \(sent.cue): sent \(sent.message) \(sent.lateFrames) frames late, after device sample \(sent.sampleTime) (\(when))", level: .warning)
        } else {
            display.note("MIDI cue \(sent.cue): sent \(sent.message) at \(when), device sample \(sent.sampleTime)")
        }
        dispatcher.updates.publish([ControlUpdate(.cueStarted, cue: sent.cue, position: sent.position, sampleTime: sent.sampleTime,
                                                  seconds: Double(sent.position) / player.rate)])
    }

    /// Says what a network cue sent (or why it could not), and publishes its start.
    func noteNetwork(_ sent: NetworkCueSender.Sent, dispatcher: ControlDispatcher, display: SessionDisplay) {
        let player = dispatcher.player
        let when = "\(SessionTime.clock(Double(sent.position) / player.rate)) (sample \(sent.position))"
        if let problem = sent.problem {
            display.note("network cue \(sent.cue): \(sent.message.address) to \(sent.destination) not sent: \(problem)", level: .warning)
        } else {
            display.note("network cue \(sent.cue): sent \(sent.message) to \(sent.destination) at \(when)")
        }
        dispatcher.updates.publish([ControlUpdate(.cueStarted, cue: sent.cue, position: sent.position,
                                                  sampleTime: player.isRunning ? player.deviceTime(forPosition: sent.position) : nil,
                                                  seconds: Double(sent.position) / player.rate)])
    }
}

extension SessionRun {
    /// Starts the run's journal (``Settings/journal``), or nil when none is kept.
    func startJournal(player: @escaping @Sendable () -> SessionPlayer, device: JACKDevice) throws -> ShowJournal? {
        guard let path = command.journal, !session.text.isEmpty else { return nil }
        let fileText = command.savedFile?.text ?? session.text
        do {
            return try ShowJournal(path: path, file: command.file, fileText: fileText, recovered: command.recoveredEdits,
                                   player: player, moment: Self.moment(on: device))
        } catch {
            throw CLIError(message: "\(command.command): \(error.localizedDescription); give another place with --journal FILE, or --no-journal")
        }
    }

    /// How a run's moment is taken (the journal's, the link's).
    static func moment(on device: JACKDevice) -> @Sendable (SessionPlayer) -> ShowJournal.Moment {
        { player in
            // A session sample and the device sample it plays on (before a start's first sample
            // plays: that one, not now), and the wall-clock time of that device sample.
            let wall = Date().timeIntervalSince1970
            let now = player.engine.currentTime().sampleTime
            let position = player.position(atDeviceTime: now)
            let playing = player.isRunning
            let at = playing ? player.deviceTime(forPosition: position) : now
            // (By the device's own wall clock; steered, a sample sounds the stage's delay later.)
            let time = device.wallClock(forSampleTime: at) ?? wall + Double(at - now) / player.rate
            return ShowJournal.Moment(position: position, isPlaying: playing, jackFrame: Int64(device.jackFrameTime(forSampleTime: at)),
                                      time: time + device.steeringDelay / player.rate, rate: player.rate)
        }
    }
}

extension SessionRun {
    /// Says where a resumed run plays on from.
    func noteResume(_ resumed: LiveSession.Resumed, display: SessionDisplay) {
        let rate = display.player.rate
        func when(_ sample: Int64) -> String { "\(SessionTime.clock(Double(sample) / rate)) (sample \(sample))" }
        let away = String(format: "%.1f", resumed.secondsAway)
        let text: String
        if let at = resumed.sampleTime {
            let clock = resumed.clock == "jack" ? "by the same JACK server's clock" : resumed.clock == "wall" ? "by the system clock" : "from where the journal last saw it"
            text = "resumed the run journaled in \(command.journal ?? "the journal"): playing on from \(when(resumed.position)) on device sample \(at), \(clock); "
                + "the journal last saw \(when(resumed.lastJournaled)) \(away) s before: a gap of \(resumed.gap) samples"
        } else {
            text = "resumed the run journaled in \(command.journal ?? "the journal"): paused at \(when(resumed.position)), as the run was \(away) s before"
        }
        display.note(text)
        for problem in resumed.problems { display.note("resume: \(problem)", level: .warning) }
    }
}
