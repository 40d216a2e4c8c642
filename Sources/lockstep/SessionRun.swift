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
                                                 midiInput: command.surfaces.usesMIDI ? "midi_in" : nil)
        var options = LiveSession.Options()
        options.from = command.from
        options.duration = command.duration
        options.followsTransport = command.transport
        options.connections = command.jack.connections
        options.recordPath = command.recordPath
        options.runsUntilStopped = !command.exitWhenDone
        options.doubleGoSeconds = command.doubleGoSeconds
        options.auditionPorts = command.auditionPorts
        let show: LiveSession
        do { show = try LiveSession(session: session, device: device, options: options) } catch let error as AudioQueueError {
            throw CLIError(message: "\(command.command): \(command.file): \(error.message)")
        } catch { throw fail(error) }
        let outputs = command.jack.reportAlignment(device)
        // Typed commands are shown in the live display, not echoed over it.
        let echo = command.surfaces.control == "-" && Terminal.stderrIsTerminal && !command.json ? TerminalEcho.off() : nil
        defer { echo?.restore() }
        var display = SessionDisplay(enabled: Terminal.display != .none && !command.json, player: show.player)
        show.onNote = { note in display.note(note.text, level: note.level.logLevel) }
        do { try show.start() } catch { throw fail(error) }
        let dispatcher = ControlDispatcher(player: show.player)
        dispatcher.audition = show.audition
        defer { show.audition?.stop() }
        let events = JSONEvents(enabled: command.jsonEvents)
        // Network cues: their messages go out as the session reaches them (checked every step).
        let network = NetworkCueSender.isNeeded(for: session) ? NetworkCueSender(player: show.player) : nil
        show.onPlayerReplaced = { player in
            dispatcher.replacePlayer(player)
            network?.replacePlayer(player)
            display = SessionDisplay(enabled: Terminal.display != .none && !self.command.json, player: player)
        }
        show.onRateChange = { events.rateChange(to: $0.sampleRate, at: $0.sampleTime) }
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
            dispatcher.poll()
            display.update()
            usleep(5_000)
        }
        display.finish()

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
