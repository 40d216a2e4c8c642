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
            with 'ports' gets its own ports (<layer>_1…) connected there instead. Exits when every \
            placed cue has ended and no manual cue can still be fired; Ctrl-C fades out and exits.

            --control reads commands, one a line, from standard input (-) or a file/FIFO (the same commands come over OSC with --osc: see Docs/ShowControl.md):
              go [CUE]               fire the playhead's manual cue (or CUE)
              start CUE              fire CUE, the playhead stays
              next | previous        move the playhead
              select CUE             put the playhead on CUE
              stop [CUE]             stop every cue (or CUE)
              pause [CUE]            pause the session (or CUE) with a 5 ms fade
              resume [CUE]           resume where it paused
              panic                  fade everything out over 1 s, then stop
              level CUE DB [RAMP]    set a cue's level over RAMP (a time: 2, 250ms, 0:02, 4800 samples)
              gain LAYER DB [RAMP]   set a layer's gain over RAMP (a time, as for level)
              seek TIME              jump to a session time (90, 1:30, "4800 samples")
              status                 print one JSON line describing the state

            --midi registers a JACK MIDI input, <client>:midi_in (connect a controller with \
            --midi-connect or any patchbay); the session's 'triggers:' map notes, control changes, \
            program changes and MIDI Show Control to these commands. Each command lands \
            --midi-latency samples after its MIDI event, on the sample a render with --midi-file \
            gives it.

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

    @Option(name: .customLong("record"), help: ArgumentHelp("Record the master mix into this file, from the session's first sample, on the same timeline.", valueName: "file"))
    var recordPath: String?

    @Flag(help: "With --record: replace the file if it exists (without it, an existing file is never touched).")
    var force = false

    @Flag(name: .customLong("json-events"), help: "Print live events as JSON Lines on standard output, one object a line as each happens: the updates OSC clients get, heartbeats left out (Docs/JSON.md).")
    var jsonEvents = false

    @OptionGroup(title: "Messages")
    var global: GlobalOptions

    @Flag(help: "Print one JSON object with the results (and status lines) on standard output.")
    var json = false

    func validate() throws {
        try TimeOption.checkDuration(duration)
        if recordPath != nil && transport {
            throw ValidationError("--record cannot follow --transport yet (the recording starts on the session's first sample); leave one out")
        }
        if force && recordPath == nil { throw ValidationError("--force replaces the --record file; give --record FILE") }
    }

    func run() throws {
        let session = try loadSession(file, command: "run")
        if let recordPath {
            do { try OutputSafety.refuseOverwritingInputs(output: recordPath, inputs: [file] + session.files.map(\.path), option: "--record") } catch {
                throw CLIError(message: "session run: \(error.description)", exitCode: 64)
            }
            try refuseToReplace(recordPath, force: force, command: "session run")
        }
        let settings = SessionRun.Settings(command: "session run", file: file, jack: jack, surfaces: surfaces, transport: transport,
                                           from: from, duration: duration, json: json, jsonEvents: jsonEvents,
                                           recordPath: recordPath)
        try SessionRun(settings: settings, session: session).run()
    }
}

/// One live run of a session.
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
    }

    let command: Settings
    let session: Session
    let launcher = ServerLauncher()

    init(settings: Settings, session: Session) {
        self.command = settings
        self.session = session
    }

    func run() throws {
        let interrupt = InterruptFlag(command: command.command)
        // The OSC port is bound first, so that a port in use fails before any server starts.
        let oscSocket: OSCUDPSocket?
        let oscListener: OSCTCPServer.Listener?
        do throws(OSCError) {
            oscSocket = try command.surfaces.osc.map { text throws(OSCError) in try OSCUDPSocket(binding: try OSCEndpoint.parse(text)) }
            oscListener = try command.surfaces.oscTCP.map { text throws(OSCError) in
                try OSCTCPServer.Listener(binding: try OSCEndpoint.parse(text, option: "--osc-tcp"))
            }
        } catch {
            throw CLIError(message: "\(command.command): \(error.message)")
        }
        // So is the web page's (it says "starting" until the session plays).
        let notes = NoteQueue()
        let web = try command.surfaces.web.map { text in
            let (host, port) = try WebControlServer.endpoint(text)
            let server = WebControlServer(options: .init(host: host, port: port, token: command.surfaces.webToken), log: { notes.add($0) })
            do throws(WebError) { try server.start() } catch { throw CLIError(message: "\(command.command): \(error.message)") }
            return server
        }
        defer { web?.stop() }
        defer { launcher.stop() }
        let triggers = try MIDITriggers(session: session)
        if command.surfaces.usesMIDI && triggers.entries.isEmpty {
            log.warning("\(command.file) has no 'triggers:', so MIDI fires nothing; add triggers (Docs/ShowControl.md)")
        }
        let device = try command.jack.openDevice(command.command, launcher: launcher, channels: session.document.channelCount,
                                                 midiInput: command.surfaces.usesMIDI ? "midi_in" : nil)
        let engine: Engine
        let player: SessionPlayer
        do {
            engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory,
                                maximumQueues: max(16, session.document.layers.count))
            engine.isMasterMeteringEnabled = true
            // Eight buffers of 2048 frames a layer (341 ms at 48 kHz) computed ahead, on a thread
            // per processor (ordinary ones, which the system may hold up for a while); a control
            // change cuts what is queued, so the lookahead adds no latency to it.
            let streamer = FileStreamer(name: "lockstep.layers", threads: FileStreamer.machineThreadCount)
            player = try SessionPlayer(session: session, engine: engine, directOutputs: true, bufferFrames: 2048, bufferCount: 8,
                                       streamer: streamer)
            try device.start()
        } catch let error as AudioQueueError {
            throw CLIError(message: "\(command.command): \(error.message)")
        } catch let error as SessionError {
            throw CLIError(message: "\(command.command): at the server's rate:\n\(error.description)")
        }
        var rate = engine.sampleRate
        do throws(AudioQueueError) {
            try device.connectMasterOutputs(to: command.jack.connections)
            try connectLayerPorts(player, device: device)
        } catch {
            throw CLIError(message: "\(command.command): \(command.file): \(error.message)")
        }
        let outputs = command.jack.reportAlignment(device)

        // The recording file is created only once every port is connected.
        var recorder: FileRecorder?
        if let path = command.recordPath {
            do {
                recorder = try FileRecorder(engine: engine, path: path, channels: session.document.channelCount, source: .mix)
            } catch {
                throw CLIError(message: "\(command.command): \(error.description)")
            }
        }
        let controls = command.surfaces.control.map { ControlReader(path: $0) }
        // Typed commands are shown in the live display, not echoed over it.
        let echo = command.surfaces.control == "-" && Terminal.stderrIsTerminal && !command.json ? TerminalEcho.off() : nil
        defer { echo?.restore() }
        let fromPosition = command.from?.samples(at: rate) ?? 0
        var follower: TransportFollower?
        var startedAt: Int64?
        if command.transport {
            device.rendersOnlyWhileTransportRolls = true
            // Session sample = transport frame: rolling plays from the transport position, stopping
            // halts, relocating while stopped moves the paused position.
            follower = TransportFollower(device: device, engine: engine, roll: { frame, start in
                player.halt(at: frame)
                try player.start(from: frame, at: start)
            }, stop: { frame in
                player.halt(at: frame)
            }, whileStopped: { frame in
                if player.position != frame { _ = try? player.seek(to: frame) }
            })
            player.halt(at: fromPosition)
            log.notice("following JACK transport; waiting for it to roll")
        } else {
            do {
                // 50 ms after the layers' first buffers are computed (hundreds of layers take a while).
                let at = try player.start(from: fromPosition, lead: 0.05)
                startedAt = at
                try recorder?.start(at: at)
            } catch {
                throw CLIError(message: "\(command.command): \(userMessage(error))")
            }
        }
        let dispatcher = ControlDispatcher(player: player)
        let events = JSONEvents(enabled: command.jsonEvents)
        let eventSubscription = events.enabled ? dispatcher.updates.subscribe { update in
            if update.kind != .heartbeat { events.emit(update) }
        } : nil
        var osc: OSCUDPServer?
        if let oscSocket {
            let options = OSCControlServer.Options(passcode: command.surfaces.oscPasscode,
                                                   replyPort: UInt16(command.surfaces.oscReplyPort ?? Int(OSCEndpoint.defaultReplyPort)))
            let server = OSCUDPServer(socket: oscSocket, dispatcher: dispatcher, options: options, log: { notes.add($0) })
            let passcodeNote = options.passcode == nil ? "" : "; /connect with the passcode first"
            log.notice("OSC control on \(server.localAddress) (UDP); replies to port \(options.replyPort)\(passcodeNote)")
            if let warning = server.exposureWarning { log.warning("\(warning)") }
            osc = server
        }
        var oscTCP: OSCTCPServer?
        if let oscListener {
            let options = OSCControlServer.Options(passcode: command.surfaces.oscPasscode)
            do throws(OSCError) {
                let server = try OSCTCPServer(listener: oscListener, dispatcher: dispatcher, options: options, log: { notes.add($0) })
                let passcodeNote = options.passcode == nil ? "" : "; /connect with the passcode first"
                log.notice("OSC control on \(server.localAddress) (TCP, SLIP framing); replies on the connection\(passcodeNote)")
                if let warning = server.exposureWarning { log.warning("\(warning)") }
                oscTCP = server
            } catch {
                throw CLIError(message: "\(command.command): \(error.message)")
            }
        }
        if let web {
            web.attach(SessionWebShow(dispatcher: dispatcher))
            log.notice("web page on \(web.url)")
            if let warning = web.exposureWarning { log.warning("\(warning)") }
        }
        var midi: MIDIReader?
        if let input = device.midiInput {
            let period = Int64(max(1, device.periodFrames))
            let latency = Int64(command.surfaces.midiLatency ?? max(MIDIDefaults.latency, Int(2 * period)))
            for source in command.surfaces.midiConnect {
                do { try device.connect(source, to: input.portName) } catch {
                    throw CLIError(message: "\(command.command): --midi-connect: \(error.message)")
                }
            }
            midi = MIDIReader(input: input, device: device, control: MIDIControl(dispatcher: dispatcher, triggers: triggers, latency: latency),
                              log: { notes.add($0) })
            let lateWarning = latency < 2 * period ? " (warning: less than two periods of \(period); commands can land late)" : ""
            log.notice("MIDI control on \(input.portName): \(triggers.entries.count) trigger\(triggers.entries.count == 1 ? "" : "s"); commands land \(latency) samples after their event\(lateWarning)")
        }
        defer { midi?.stop() }
        // --duration counts seconds of playing: device frames while the session runs (from its
        // first sample), whatever seeks do to its position; a pause does not count.
        var stopAfter = command.duration.map { $0.samples(at: rate) }
        var playedFrames: Int64 = 0
        var countedUntil = startedAt ?? engine.currentTime().sampleTime
        // The player playing now (made again at a new rate after a sample-rate change).
        var live = player
        var display = SessionDisplay(enabled: Terminal.display != .none && !command.json, player: live)
        var rateChanges: [RateChangeRecord] = []
        let rateReports = RateChangeReports()
        var interrupted = false
        var lateReported = 0
        let serverWatch = ServerWatch(device: device)
        loop: while true {
            if interrupt.received != 0 { interrupted = true; break }
            if engine.deviceError != nil { break }
            serverWatch.poll { text in
                display.note(text)
            }
            if command.jack.reconnect && device.isWaitingForServer, let note = launcher.restartIfDied() {
                display.note(note)
            }
            if live.queues.contains(where: { $0.stopError != nil }) {
                // The server's rate changed and every layer stopped on that sample rather than play
                // at the wrong pitch: play on at the new rate from the same place in the session.
                guard follower == nil else { break }
                let change: Discontinuity
                switch rateReports.next(engine) {
                case .change(let reported): change = reported
                case .pending: continue
                case .missing: break loop
                }
                do {
                    let factor = engine.sampleRate / live.rate
                    let position = Int64((Double(live.position(atDeviceTime: change.sampleTime)) * factor).rounded())
                    let wasPaused = live.isPaused
                    live.dispose()
                    let old = Set(live.queues.map { ObjectIdentifier($0) })
                    let deadline = Date().addingTimeInterval(2)
                    while engine.queues.contains(where: { old.contains(ObjectIdentifier($0)) }) && Date() < deadline { usleep(2_000) }
                    let next = try live.carried(to: engine)
                    try connectLayerPorts(next, device: device)
                    var resumedAt: Int64?
                    if wasPaused {
                        next.halt(at: position)
                    } else {
                        resumedAt = try next.start(from: position, lead: 0.05)
                    }
                    let text = "the server's rate changed from \(Int(live.rate)) Hz to \(Int(next.rate)) Hz at sample \(change.sampleTime); "
                        + "the session plays on from \(Terminal.time(Double(position) / next.rate))"
                    display.note(text)
                    events.rateChange(to: Int(next.rate), at: change.sampleTime)
                    rateChanges.append(RateChangeRecord(sampleTime: change.sampleTime, sampleRate: Int(next.rate), position: position,
                                                  resumedSampleTime: resumedAt,
                                                  resumedJACKFrame: resumedAt.map { device.jackFrameTime(forSampleTime: $0) }))
                    playedFrames = Int64((Double(playedFrames) * factor).rounded())
                    stopAfter = command.duration.map { $0.samples(at: next.rate) }
                    countedUntil = max(countedUntil, resumedAt ?? engine.currentTime().sampleTime)
                    rate = next.rate
                    live = next
                    dispatcher.replacePlayer(next)
                    display = SessionDisplay(enabled: Terminal.display != .none && !command.json, player: live)
                    continue
                } catch {
                    log.error("\(command.command): cannot play on at the new rate: \(userMessage(error))")
                    break
                }
            }
            if let follower {
                do { try follower.poll() } catch {
                    throw CLIError(message: "\(command.command): \(userMessage(error))")
                }
            }
            for line in controls?.take() ?? [] { typed(line, dispatcher: dispatcher, display: display) }
            for note in notes.take() { display.note(note) }
            dispatcher.poll()
            reportLateStarts(live.lateStarts, reported: &lateReported, rate: rate, display: display)
            let now = engine.currentTime().sampleTime
            if live.isRunning && now > countedUntil { playedFrames += now - countedUntil }
            countedUntil = max(countedUntil, now)
            if let stopAfter, playedFrames >= stopAfter { break }
            let timeline = live.timeline
            let canStillGo = command.surfaces.canStillCommand(controlFinished: controls?.isFinished ?? true)
            // Done when everything placed has played and no manual cue can still be fired nor a
            // paused one resumed (a transport follower runs until stopped).
            // (Against what has been rendered, not the estimate of now: the fade-out that follows
            // must not reach the last frames of the last cue.)
            if follower == nil, let end = timeline.end, live.position(atDeviceTime: engine.renderedSampleTime) >= end,
               (timeline.waitingCues.isEmpty && timeline.pausedCues.isEmpty) || !canStillGo {
                break
            }
            display.update()
            usleep(5_000)
        }
        display.finish()

        // Fade out, then stop (what the last cues did is published first).
        let endPosition = live.position
        engine.fadeOut(live.queues)
        dispatcher.poll()
        eventSubscription?.cancel()
        osc?.stop()
        oscTCP?.stop()
        midi?.stop()
        web?.stop()
        for note in notes.take() { log.notice("\(note)") }
        live.stop()
        controls?.close()
        var recording: FileRecorder.Summary?
        var recordError: String?
        if let recorder {
            do { recording = try recorder.stop() } catch { recordError = error.description }
        }
        let timeline = live.timeline
        let gaps = engine.discontinuities
        reportLateStarts(live.lateStarts, reported: &lateReported, rate: rate, display: display)
        let error = engine.deviceError?.message ?? live.queues.lazy.compactMap { $0.stopError?.message }.first
            ?? live.error?.description ?? recordError
        let (finalOutputs, outputLines) = command.jack.outputsAtEnd(outputs, device: device, until: engine.renderedSampleTime)
        let counts = Dictionary(uniqueKeysWithValues: engine.discontinuityCounts.map { ($0.key.rawValue, $0.value) })
        if command.json {
            var report = SessionRunReport(
                file: command.file, startSampleTime: startedAt, from: fromPosition, endPosition: endPosition,
                sampleRate: Int(rate), interrupted: interrupted, discontinuities: gaps.map(DiscontinuityRecord.init),
                cues: TimelineReport(path: command.file, timeline: timeline).cues, error: error,
                server: launcher.description.isEmpty ? nil : launcher.description,
                lateStarts: live.lateStarts.map { .init(position: $0.position, sampleTime: $0.sampleTime, skippedFrames: $0.skippedFrames) },
                rateChanges: rateChanges, osc: osc?.statistics, oscTCP: oscTCP?.statistics, midi: midi?.summary,
                web: web?.statistics,
                recording: recording.map { .init(file: $0.path, frames: $0.framesWritten,
                                                 startSampleTime: $0.startSampleTime, lostFrames: $0.lostFrames) },
                outputs: finalOutputs, callbackTime: PlayReport.CallbackTime(device.callbackTimes),
                renderHelper: device.hasRenderHelper
                    ? PlayReport.RenderHelper(sharedCycles: engine.renderSharing.sharedCycles,
                                              helperChunks: engine.renderSharing.helperChunks)
                    : nil)
            report.discontinuityCounts = counts
            report.startJACKFrame = startedAt.map { device.jackFrameTime(forSampleTime: $0) }
            print(JSONSchema.line(report))
        } else {
            let placed = timeline.cues.filter { $0.start != nil }.count
            print("\(command.command == "play" ? "played" : "ran") \(command.file): \(placed) of \(timeline.cues.count) cues placed, ended at \(Terminal.time(Double(endPosition) / rate)) "
                  + "(\(endPosition) samples) at \(Int(rate)) Hz through '\(device.name)'; discontinuities: \(engine.discontinuityCount)"
                  + (osc.map { "; OSC: \($0.statistics.received) received, \($0.statistics.replies) replies, \($0.statistics.dropped) dropped" } ?? "")
                  + (oscTCP.map { "; OSC over TCP: \($0.statistics.connections) connections, \($0.statistics.received) received, "
                                  + "\($0.statistics.replies) replies, \($0.statistics.dropped) dropped" } ?? "")
                  + (midi.map { let s = $0.summary
                                return "; MIDI: \(s.received) received, \(s.matched) matched, \(s.broken) broken, \(s.dropped) dropped" } ?? "")
                  + (web.map { let s = $0.statistics
                               return "; web: \(s.clients) pages, \(s.commands) commands, \(s.refused) refused" } ?? "")
                  + (recording.map { "; recorded \($0.framesWritten) frames to \($0.path)" } ?? "")
                  + (interrupted ? " (interrupted)" : ""))
            for line in outputLines { print(line) }
        }
        engine.device.stop()
        if let error { throw CLIError(message: "\(command.command): \(error)") }
        try interrupt.exitIfRaised()
    }

    /// Connects the own outputs of every layer that names ports to those ports.
    func connectLayerPorts(_ player: SessionPlayer, device: JACKDevice) throws(AudioQueueError) {
        for (layer, queue) in zip(player.timeline.layers, player.queues) where !layer.ports.isEmpty {
            for (output, destination) in zip(queue.directOutputNames, layer.ports) {
                do { try device.connect(output, to: destination) } catch {
                    throw AudioQueueError(error.code, "layer '\(layer.name)': cannot connect \(output) to '\(destination)': \(error.message); check the port name with 'lockstep ports'")
                }
            }
        }
    }

    /// Tells the user (display or standard error) about late starts not reported yet.
    func reportLateStarts(_ starts: [SessionPlayer.LateStart], reported: inout Int, rate: Double, display: SessionDisplay) {
        guard starts.count > reported else { return }
        for late in starts[reported...] {
            let text = "started \(late.skippedFrames) frames (\(String(format: "%.1f", Double(late.skippedFrames) * 1000 / rate)) ms) late "
                + "at sample \(late.sampleTime); skipped them to stay on the session's timeline"
            display.note(text, level: .warning)
        }
        reported = starts.count
    }

    /// The typed-line surface: parses one line into a command, has the dispatcher carry it out,
    /// and shows the reply — `status` as one JSON line on standard output, anything else as a
    /// note (errors as `control: …`).
    func typed(_ line: String, dispatcher: ControlDispatcher, display: SessionDisplay) {
        let verb = ControlLine.verb(of: line)
        let command: ControlCommand
        do { command = try ControlLine.parse(line) } catch {
            display.note("control: \(error.message)", level: .error)
            return
        }
        let reply = dispatcher.execute(command, address: verb)
        if !reply.isOK {
            display.note("control: \(reply.summary)", level: .error)
        } else if command == .status, let data = reply.data {
            // Above the live display, so the next redraw does not overwrite it.
            StatusArea.shared.printAbove(data.json + "\n", to: STDOUT_FILENO)
        } else {
            display.note(reply.summary)
        }
    }
}

/// Turns terminal echo off on standard input (canonical line input stays), and back on.
struct TerminalEcho {
    private var saved = termios()

    /// Turns echo off; nil when standard input is not a terminal.
    static func off() -> TerminalEcho? {
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        var echo = TerminalEcho()
        guard tcgetattr(STDIN_FILENO, &echo.saved) == 0 else { return nil }
        var quiet = echo.saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        return echo
    }

    /// Restores the terminal as it was.
    func restore() {
        var saved = self.saved
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }
}

/// Lines from other threads (the OSC server's log) for the run loop to show.
final class NoteQueue: Sendable {
    private let lines = Mutex<[String]>([])

    func add(_ line: String) { lines.withLock { $0.append(line) } }

    /// The lines added since the last call.
    func take() -> [String] { lines.withLock { list in defer { list.removeAll() }; return list } }
}

/// Reads control commands, one a line, on a thread of its own: from standard input, a file, or
/// a FIFO (reopened after each writer closes it).
final class ControlReader: @unchecked Sendable {
    private let lines = Mutex<[String]>([])
    private let finished = Atomic<Bool>(false)
    private let closed = Atomic<Bool>(false)
    let path: String

    init(path: String) {
        self.path = path
        let thread = Thread { [self] in self.read() }
        thread.name = "lockstep-control"
        thread.start()
    }

    /// Whether no more commands can come (standard input or a plain file reached its end).
    var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// The commands received since the last call.
    func take() -> [String] { lines.withLock { list in defer { list.removeAll() }; return list } }

    func close() { closed.store(true, ordering: .releasing) }

    private func read() {
        var isFIFO = false
        if path != "-" {
            var info = stat()
            if stat(path, &info) == 0 { isFIFO = (info.st_mode & S_IFMT) == S_IFIFO }
        }
        repeat {
            let handle: UnsafeMutablePointer<FILE>? = path == "-" ? fdopen(dup(STDIN_FILENO), "r") : fopen(path, "r")
            guard let handle else {
                log.error("control: cannot open '\(path)': \(String(cString: strerror(errno))); no commands will be read")
                break
            }
            var buffer: UnsafeMutablePointer<CChar>?
            var capacity = 0
            while getline(&buffer, &capacity, handle) >= 0 {
                let line = String(cString: buffer!).trimmingCharacters(in: .whitespacesAndNewlines)
                if !line.isEmpty && !line.hasPrefix("#") { lines.withLock { $0.append(line) } }
                if closed.load(ordering: .acquiring) { break }
            }
            free(buffer)
            fclose(handle)
        } while isFIFO && !closed.load(ordering: .acquiring)
        finished.store(true, ordering: .releasing)
    }
}
