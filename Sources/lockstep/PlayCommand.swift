import ArgumentParser
import Dispatch
import Foundation
import Lockstep
import LockstepFiles
import LockstepControl
import LockstepJACK
import LockstepSession
import Synchronization

/// `lockstep play`: plays files as layers through one JACK client, first frames on one sample.
struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play audio files as sample-aligned layers through one JACK client.",
        discussion: """
            Every layer's first frame lands on the same device sample time (plus its --offset). Gains \
            and offsets apply to the files in order. Exits when every layer has finished (or after \
            --duration); Ctrl-C fades out and exits cleanly. If no JACK server runs, one is started \
            (the ALSA driver when there is a sound card, else the dummy driver) and stopped at exit.

            '-' as a file reads standard input: a pipe is played as it arrives (WAV, AU, FLAC, Ogg, MP3 and the other formats libsndfile reads without seeking), once, from its start. On a terminal the display shows the elapsed and remaining time, the master meter (CLIP stays lit once it reached 0 dBFS) and a meter per layer.

            Examples:
              lockstep play drums.wav bass.flac --gain -3 --offset 0 --offset 1.5
              lockstep play stems/*.wav --ports-per-file --no-connect --json
              lockstep play drums.wav bass.flac --json-events | jq -c 'select(.kind == "discontinuity")'
              sox in.mp3 -t wav - | lockstep play -
            """
    )

    @Argument(help: "The audio files to play (any format libsndfile reads; - reads standard input).")
    var files: [String] = []

    @Option(name: .customLong("gain"), parsing: .unconditionalSingleValue,
            help: "Gain of the next file in dB (-inf…+12), e.g. -6 or -6dB; repeat per file.")
    var gains: [String] = []

    @Option(name: .customLong("offset"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Time from the common start to the next file's first frame (\(TimeOption.forms); samples at the server's rate); repeat per file.",
                               valueName: TimeOption.valueName),
            transform: TimeOption.parse)
    var offsets: [SessionTime] = []

    @Option(name: .customLong("channel-map"), parsing: .unconditionalSingleValue, help: ChannelMapOption.help)
    var channelMaps: [String] = []

    @OptionGroup(title: "JACK")
    var jack: JACKOptions

    @Flag(name: .customLong("ports-per-file"), help: "Give every layer its own ports (<file>_1…) besides the master mix.")
    var portsPerFile = false

    @Flag(help: "Follow JACK transport: rolling starts, stopping pauses, relocating seeks.")
    var transport = false

    @Flag(name: .customLong("loop"), help: "Loop every layer until interrupted (or --duration).")
    var loop = false

    @Option(help: ArgumentHelp("Stop after this long (\(TimeOption.forms)).", valueName: TimeOption.valueName),
            transform: TimeOption.parse)
    var duration: SessionTime?

    @OptionGroup(title: "Control")
    var surfaces: ControlOptions

    @OptionGroup(title: "Messages")
    var global: GlobalOptions

    @Flag(help: "Print one JSON object with the results on standard output.")
    var json = false

    @Flag(name: .customLong("json-events"), help: "Print live events as JSON Lines on standard output, one object a line as each happens (Docs/JSON.md).")
    var jsonEvents = false

    @Option(name: .customLong("record"), help: "Record the master mix (or the --record-port ports) into this file, on the same timeline.")
    var recordPath: String?

    @Option(name: .customLong("record-port"), help: ArgumentHelp("With --record: record this port instead of the mix (repeat: one channel per port).", valueName: "port"),
            completion: Completions.ports)
    var recordPorts: [String] = []

    @Flag(help: "With --record: replace the file if it exists (without it, an existing file is never touched).")
    var force = false

    func validate() throws {
        if !recordPorts.isEmpty && recordPath == nil {
            throw ValidationError("--record-port needs --record FILE to say where to record")
        }
        try TimeOption.checkDuration(duration)
    }

    func run() throws {
        guard !files.isEmpty else {
            throw CLIError(message: "play: no input files; give one or more audio files, e.g. lockstep play a.wav b.wav", exitCode: 64)
        }
        try InputFiles.checkStandardInput(files, command: "play")
        if loop, files.contains(where: StandardStreams.names), StandardStreams.inputIsStream {
            throw CLIError(message: "play: --loop cannot loop '-' (standard input on a pipe): a stream plays once, as it arrives; save it to a file first (sox … out.wav) and loop that", exitCode: 64)
        }
        var layers = try LayerArguments(command: "play", files: files, gains: gains, offsets: offsets)
        let maps = try ChannelMapOption.parse(channelMaps, files: files.count, command: "play")
        layers.channelMaps = maps
        for (path, map) in zip(files, maps) {
            guard let map, let reader = try? AudioFileReader(path: path, warnings: FileWarnings()) else { continue }
            do { _ = try map.matrix(inputs: reader.format.channelCount, outputs: 2) } catch {
                throw CLIError(message: "play: \(path): --channel-map '\(map)': \(error.problem)", exitCode: 64)
            }
        }
        if let recordPath {
            do { try OutputSafety.refuseOverwritingInputs(output: recordPath, inputs: files, option: "--record") } catch {
                throw CLIError(message: "play: \(error.description)", exitCode: 64)
            }
            try refuseToReplace(recordPath, force: force, command: "play")
        }
        if surfaces.isRequested {
            // Under control the files play as a session, through the one command path.
            if portsPerFile || !recordPorts.isEmpty {
                let option = portsPerFile ? "--ports-per-file" : "--record-port"
                throw CLIError(message: "play: \(option) cannot be used with --control, --osc, --osc-tcp or --midi yet; write a session whose layers name their 'ports' (Docs/SessionFormat.md) and use lockstep session run", exitCode: 64)
            }
            if recordPath != nil && transport {
                throw CLIError(message: "play: --record cannot follow --transport under control; leave one out", exitCode: 64)
            }
            let session = try PlayControl.session(layers: layers, loop: loop)
            let settings = SessionRun.Settings(command: "play", file: layers.files.count == 1 ? layers.files[0] : "\(layers.files.count) files",
                                               jack: jack, surfaces: surfaces, transport: transport, duration: duration,
                                               json: json, jsonEvents: jsonEvents, recordPath: recordPath)
            try SessionRun(settings: settings, session: session).run()
            return
        }
        let session = PlaySession(command: self, layers: layers)
        try session.run()
    }
}

/// Files, gains and offsets as given on the command line, validated.
struct LayerArguments {
    var files: [String]
    var gains: [Double]
    /// Each file's offset (0 for files past the last `--offset`).
    var offsets: [SessionTime]
    /// Each file's `--channel-map`, nil for the default (a downmix when it has more channels).
    var channelMaps: [ChannelMap?] = []

    init(command: String, files: [String], gains: [String], offsets: [SessionTime]) throws {
        guard gains.count <= files.count else {
            throw CLIError(message: "\(command): \(gains.count) --gain values for \(files.count) files; give at most one --gain per file", exitCode: 64)
        }
        guard offsets.count <= files.count else {
            throw CLIError(message: "\(command): \(offsets.count) --offset values for \(files.count) files; give at most one --offset per file", exitCode: 64)
        }
        var values: [Double] = []
        for text in gains {
            guard let value = parseGain(text), value <= 12 else {
                throw CLIError(message: "\(command): --gain '\(text)' is not a gain from -inf to +12 dB; write e.g. -6 or -6dB", exitCode: 64)
            }
            values.append(value)
        }
        self.files = files
        self.gains = files.indices.map { $0 < values.count ? values[$0] : 0 }
        self.offsets = files.indices.map { $0 < offsets.count ? offsets[$0] : .seconds(0) }
    }
}

/// Signals that end a live command (SIGINT from Ctrl-C, SIGTERM, SIGHUP when the terminal
/// closes) turned into a flag the main loop polls: the command fades out, closes what it wrote,
/// prints its summary and exits with 128 + the signal's number, as shells expect.
///
/// A clean stop needs the JACK server to answer. When it does not (the server is stopped with
/// SIGSTOP, frozen, or hung), libjack calls block, so a watchdog ends the process anyway: a second
/// signal, or ``gracePeriod`` seconds after the first, deletes this process's temporary files, says
/// why on standard error and exits with 128 + the signal's number. Recordings keep what was written
/// (their header is kept valid while recording).
final class InterruptFlag: @unchecked Sendable {
    private let raised = Atomic<Int32>(0)
    private var sources: [DispatchSourceSignal] = []
    /// Seconds a clean stop may take before the watchdog ends the process.
    static let gracePeriod = 5.0

    /// Installs the handlers; `command` names the command in the watchdog's message.
    init(command: String = "lockstep") {
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [weak self] in
                guard let self else { return }
                let (first, _) = self.raised.compareExchange(expected: 0, desired: sig, ordering: .acquiringAndReleasing)
                if first {
                    DispatchQueue.global().asyncAfter(deadline: .now() + Self.gracePeriod) {
                        Self.forceExit(command: command, signal: sig,
                                       reason: "did not stop within \(Int(Self.gracePeriod)) s (is the JACK server stopped or frozen?)")
                    }
                } else {
                    Self.forceExit(command: command, signal: sig, reason: "a second signal arrived before the clean stop finished")
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Ends the process now: temporary files deleted, the reason on standard error, 128 + `signal`.
    private static func forceExit(command: String, signal: Int32, reason: String) -> Never {
        AtomicFileOutput.removeAllTemporaryFiles()
        let line = "lockstep: \(command): \(reason); exiting without a clean stop\n"
        _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
        _exit(128 + signal)
    }

    /// The signal received, or 0.
    var received: Int32 { raised.load(ordering: .acquiring) }

    /// Ends the command with 128 + the signal received (130 for Ctrl-C), if one was.
    func exitIfRaised() throws {
        let signal = received
        if signal != 0 { throw ExitCode(128 + signal) }
    }
}

/// One run of `lockstep play`.
final class PlaySession {
    let command: PlayCommand
    let layers: LayerArguments
    let launcher = ServerLauncher()

    init(command: PlayCommand, layers: LayerArguments) {
        self.command = command
        self.layers = layers
    }

    func run() throws {
        let interrupt = InterruptFlag(command: "play")
        let events = JSONEvents(enabled: command.jsonEvents)
        var discontinuitiesSeen = 0
        defer { launcher.stop() }
        // Every file is opened (header, size, truncation) before the server is reached or started:
        // a missing, damaged or special file is its own error, never a jackd started for nothing.
        var bytesPerSecond: [Double] = []
        for path in layers.files {
            do {
                let reader = try AudioFileReader(path: path, truncation: .reject, warnings: FileWarnings())
                bytesPerSecond.append(reader.format.sampleRate * Double(min(reader.format.channelCount, 2) * MemoryLayout<Float>.size))
                let length = reader.lengthIsKnown ? "\(reader.frameCount) frames" : "a stream, played as it arrives"
                log.info("\(path): \(reader.containerName), \(reader.codecName), \(Int(reader.format.sampleRate)) Hz, \(reader.format.channelCount) ch, \(length)")
            } catch {
                throw CLIError(message: "play: \(error.description)")
            }
        }
        let device = try command.jack.openDevice("play", launcher: launcher, channels: 2, inputs: command.recordPorts.count)
        let engine: Engine
        do {
            // A layer keeps at most six buffers (FilePlayer.Buffering): a small command ring per queue, not
            // the default's room for 256 buffers (56 KiB a queue, 230 MiB at 4096 layers).
            engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory, maximumQueues: max(16, layers.files.count),
                                maximumBuffersPerQueue: 16)
        } catch {
            throw CLIError(message: "play: \(error.message)")
        }
        engine.isMasterMeteringEnabled = true

        var players: [FilePlayer] = []
        // Disk reads and decoding of every layer run on threads of their own (one per processor),
        // not the callbacks'.
        let streamer = FileStreamer(threads: FileStreamer.machineThreadCount)
        let buffering = FilePlayer.Buffering(layersBytesPerSecond: bytesPerSecond.reduce(0, +))
        for (index, path) in layers.files.enumerated() {
            do {
                let routing: FilePlayer.ChannelRouting = (index < layers.channelMaps.count ? layers.channelMaps[index] : nil).map { .map($0, outputs: engine.channelCount) }
                    ?? .downmix(to: engine.channelCount)
                let player = try FilePlayer(path: path, engine: engine, playCount: command.loop ? .forever : .times(1),
                                            bufferDuration: buffering.seconds, bufferCount: buffering.count, truncation: .reject,
                                            streamer: streamer, channels: routing)
                try player.queue.setMixerGain(decibels: layers.gains[index])
                player.queue.isLevelMeteringEnabled = true
                if command.portsPerFile { try player.queue.enableDirectOutputs() }
                // Layers refill on different cycles, not all on one.
                try player.prepare(stagger: FilePlayer.stagger(forLayer: index))
                players.append(player)
            } catch let error as FileError {
                throw CLIError(message: "play: \(error.description)")
            } catch let error as AudioQueueError {
                throw CLIError(message: "play: \(path): \(error.message)")
            }
        }

        do {
            try device.start()
            for (source, destination) in zip(command.recordPorts, device.inputPortNames) {
                try device.connect(source, to: destination)
            }
            try device.connectMasterOutputs(to: command.jack.connections)
        } catch {
            throw CLIError(message: "play: \(error.message)")
        }
        let outputs = command.jack.reportAlignment(device)
        // The recording file is created only once every port is validated and connected.
        var recorder: FileRecorder?
        if let path = command.recordPath {
            do {
                recorder = try FileRecorder(engine: engine, path: path,
                                            channels: command.recordPorts.isEmpty ? 2 : command.recordPorts.count,
                                            source: command.recordPorts.isEmpty ? .mix : .deviceInput)
            } catch {
                throw CLIError(message: "play: \(error.description)")
            }
        }

        // Every layer's first frame on one sample (plus its offset).
        var rate = engine.sampleRate
        let offsetFrames = layers.offsets.map { $0.samples(at: rate) }
        var base = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime) + Int64(rate * 0.05)
        var follower: TransportFollower?
        var lateStarts = [Int64](repeating: 0, count: players.count)
        var startJACKFrame: UInt32?
        if command.transport {
            device.rendersOnlyWhileTransportRolls = true
            follower = TransportFollower(device: device, engine: engine, roll: { frameAtStart, start in
                // Every layer so that transport frame F plays file frame F − offset.
                for (index, player) in players.enumerated() {
                    let position = frameAtStart - offsetFrames[index]        // device frames into the layer
                    let ratio = player.fileFormat.sampleRate / engine.sampleRate
                    try player.reposition(toFrame: Int64((Double(max(0, position)) * ratio).rounded()))
                    if ((try? player.queue.prime()) ?? 0) > 0 {
                        try engine.start([player.queue], at: start + max(0, -position), ifLate: .skipAhead)
                    }
                }
            }, stop: { _ in
                for player in players { try? player.queue.stop(immediately: true) }
            })
            log.notice("following JACK transport; waiting for it to roll")
        } else {
            do {
                // Layers with the same offset start as one group (all on one sample or none).
                for offset in Set(offsetFrames).sorted() {
                    let group = players.indices.filter { offsetFrames[$0] == offset }
                    let start = try engine.start(group.map { players[$0].queue }, at: base + offset, ifLate: .skipAhead)
                    if start.framesLate > 0 {
                        for index in group { lateStarts[index] = start.queueTimeAtStart }
                        let names = group.map { URL(fileURLWithPath: players[$0].path).lastPathComponent }.joined(separator: ", ")
                        log.warning("\(names) started \(start.framesLate) frames (\(String(format: "%.1f", Double(start.framesLate) * 1000 / rate)) ms) late; skipped them to stay on the timeline")
                    }
                }
                try recorder?.start(at: base)
                startJACKFrame = device.jackFrameTime(forSampleTime: base)
            } catch let error as AudioQueueError {
                throw CLIError(message: "play: \(error.message)")
            } catch let error as FileError {
                throw CLIError(message: "play: \(error.description)")
            }
        }

        // A layer has finished once its queue really stopped after playing (not merely "not
        // running yet" because its start event has not been delivered).
        let finished = FinishedLayers()
        for player in players {
            let path = player.path
            player.queue.addEventHandler { queue, event in
                events.layer(path, event)
                if case .stopped = event { finished.insert(ObjectIdentifier(queue)) }
            }
        }
        var end: Int64? = command.duration.map { base + $0.samples(at: rate) }
        var display = LiveDisplay(enabled: Terminal.display != .none && !command.json, players: players, engine: engine,
                                  offsets: layers.offsets.map { $0.seconds(at: rate) }, duration: command.duration?.seconds(at: rate))
        // Where each layer is on the timeline: at device time `deviceTime` it plays file frame
        // `fileFrame` (of the whole play); moved by a rate change.
        var anchors = offsetFrames.map { LayerAnchor(deviceTime: base + $0, fileFrame: 0) }
        var rateChanges: [RateChangeRecord] = []
        let rateReports = RateChangeReports()
        var interrupted = false
        let serverWatch = ServerWatch(device: device)
        loop: while true {
            events.discontinuities(of: engine, seen: &discontinuitiesSeen)
            if interrupt.received != 0 { interrupted = true; break }
            if engine.deviceError != nil { break }
            serverWatch.poll { log.notice("\($0)") }
            if command.jack.reconnect && device.isWaitingForServer, let note = launcher.restartIfDied() {
                log.notice("\(note)")
            }
            if players.contains(where: { $0.queue.stopError != nil }) {
                // The server's rate changed and every layer stopped on that sample rather than play
                // at the wrong pitch: play on at the new rate from where each layer was.
                guard follower == nil else { break }
                let change: Discontinuity
                switch rateReports.next(engine) {
                case .change(let reported): change = reported
                case .pending: continue
                case .missing: break loop
                }
                let resumed: RateResume
                do {
                    resumed = try resume(players, anchors: anchors, at: change.sampleTime, oldRate: rate, engine: engine)
                } catch {
                    log.error("play: cannot play on at the new rate: \(userMessage(error))")
                    break
                }
                end = end.map { resumed.resumedAt + Int64((Double(max(0, $0 - change.sampleTime)) * engine.sampleRate / rate).rounded()) }
                let recordingNote = recorder != nil ? " (the recording ends at the change: its file stays at \(Int(rate)) Hz)" : ""
                log.notice("the server's rate changed from \(Int(rate)) Hz to \(Int(engine.sampleRate)) Hz at sample \(change.sampleTime); every layer plays on from where it was at sample \(resumed.resumedAt)\(recordingNote)")
                rateChanges.append(RateChangeRecord(sampleTime: change.sampleTime, sampleRate: Int(engine.sampleRate),
                                                      resumedSampleTime: resumed.resumedAt,
                                                      resumedJACKFrame: device.jackFrameTime(forSampleTime: resumed.resumedAt),
                                                      fileFrames: resumed.anchors.map(\.fileFrame)))
                events.rateChange(to: Int(engine.sampleRate), at: change.sampleTime)
                rate = engine.sampleRate
                players = resumed.players
                anchors = resumed.anchors
                for player in players {
                    let path = player.path
                    player.queue.addEventHandler { queue, event in
                        events.layer(path, event)
                        if case .stopped = event { finished.insert(ObjectIdentifier(queue)) }
                    }
                }
                display = LiveDisplay(enabled: Terminal.display != .none && !command.json, players: players, engine: engine,
                                      offsets: layers.offsets.map { $0.seconds(at: rate) }, duration: command.duration?.seconds(at: rate))
                continue
            }
            let now = engine.currentTime().sampleTime
            if let follower {
                do { try follower.poll() } catch {
                    throw CLIError(message: "play: \(userMessage(error))")
                }
                if let first = follower.firstStart, end == nil || base != first {
                    base = first
                    startJACKFrame = device.jackFrameTime(forSampleTime: first)
                    end = command.duration.map { first + $0.samples(at: rate) }
                }
                if follower.firstStart == nil { usleep(5_000); continue }
            }
            if let end, now >= end { break }
            if players.allSatisfy({ $0.hasEnqueuedEverything && !$0.queue.isRunning })
                && finished.containsAll(players.map { ObjectIdentifier($0.queue) })
                && (follower?.isRolling ?? true) { break }
            display.update(now: now, start: base)
            usleep(follower == nil ? 20_000 : 5_000)
        }
        display.finish()

        // Fade out, then stop (the recording holds the whole fade).
        engine.fadeOut(players.map(\.queue))
        let stoppedAt = engine.currentTime().sampleTime
        let playing = players.filter { $0.queue.isRunning }.map { ObjectIdentifier($0.queue) }
        for player in players { player.stop() }
        // Every layer's end is reported (its event printed) before the summary.
        engine.waitForDeliveries(timeout: 1) { finished.containsAll(playing) }
        var recording: FileRecorder.Summary?
        var recordError: String?
        if let recorder {
            do { recording = try recorder.stop() } catch { recordError = error.description }
        }

        events.discontinuities(of: engine, seen: &discontinuitiesSeen)
        let gaps = engine.discontinuities.map(DiscontinuityRecord.init)
        let (finalOutputs, outputLines) = command.jack.outputsAtEnd(outputs, device: device, until: stoppedAt)
        var summary = PlayReport(
            startSampleTime: base, startJACKFrame: startJACKFrame ?? device.jackFrameTime(forSampleTime: base),
            frames: max(0, stoppedAt - base), sampleRate: Int(rate), discontinuities: gaps,
            layers: players.enumerated().map { index, player in
                let peak = player.queue.peakHold.max() ?? 0
                return PlayReport.Layer(file: player.path, peakDB: Double(Decibels.fromLinear(peak)),
                                     ports: command.portsPerFile ? player.queue.directOutputNames : nil,
                                     skippedFrames: lateStarts[index])
            },
            interrupted: interrupted, server: launcher.description.isEmpty ? nil : launcher.description,
            error: engine.deviceError?.message ?? players.lazy.compactMap { $0.queue.stopError?.message }.first ?? recordError,
            recording: recording.map { PlayReport.Recording(file: $0.path, frames: $0.framesWritten,
                                                         startSampleTime: $0.startSampleTime, lostFrames: $0.lostFrames) },
            playbackLatency: device.playbackLatency, outputDelays: command.jack.alignOutputs ? device.outputDelays : nil,
            outputs: finalOutputs, rateChanges: rateChanges, callbackTime: PlayReport.CallbackTime(device.callbackTimes),
            renderHelper: device.hasRenderHelper
                ? PlayReport.RenderHelper(sharedCycles: engine.renderSharing.sharedCycles, helperChunks: engine.renderSharing.helperChunks)
                : nil)
        summary.discontinuityCounts = Dictionary(uniqueKeysWithValues: engine.discontinuityCounts.map { ($0.key.rawValue, $0.value) })
        if command.json {
            print(JSONSchema.line(summary))
        } else {
            let seconds = Double(summary.frames) / rate
            let peaks = summary.layers.map { layer in
                "\(URL(fileURLWithPath: layer.file).lastPathComponent) \(layer.peakDB.map { String(format: "%.1f dB", $0) } ?? "-inf dB")"
            }.joined(separator: ", ")
            print("played \(players.count) \(players.count == 1 ? "layer" : "layers") from sample \(base) for "
                  + "\(summary.frames) frames (\(Terminal.time(seconds))) at \(Int(rate)) Hz through '\(device.name)'"
                  + "; peaks: \(peaks); discontinuities: \(engine.discontinuityCount)"
                  + (interrupted ? " (interrupted)" : ""))
            for line in outputLines { print(line) }
        }
        engine.device.stop()
        if let error = engine.deviceError ?? (command.transport ? players.lazy.compactMap({ $0.queue.stopError }).first : nil) {
            throw CLIError(message: "play: \(error.message)")
        }
        if let recordError { throw CLIError(message: "play: \(recordError)") }
        try interrupt.exitIfRaised()
    }
}

/// Where a layer is on the device timeline: at `deviceTime` it plays `fileFrame` (frames of the
/// whole play, at the file's rate; before `deviceTime` it waits).
struct LayerAnchor {
    var deviceTime: Int64
    var fileFrame: Int64
}

/// The layers made again after a sample-rate change.
struct RateResume {
    var players: [FilePlayer]
    var anchors: [LayerAnchor]
    var resumedAt: Int64
}

extension PlaySession {
    /// After a sample-rate change at `changeTime` stopped every layer (their audio was converted
    /// for `oldRate`), makes each layer again at the device's new rate — new queue, conversion
    /// for the new ratio — positioned on the file frame it had reached (exact in the file's
    /// frames, rounded once), and starts them together; a layer that had not started yet keeps
    /// its remaining wait, scaled to the new rate.
    func resume(_ players: [FilePlayer], anchors: [LayerAnchor], at changeTime: Int64, oldRate: Double,
                engine: Engine) throws -> RateResume {
        let newRate = engine.sampleRate
        var frames: [Int64] = []
        var waits: [Int64] = []
        for (player, anchor) in zip(players, anchors) {
            if changeTime >= anchor.deviceTime {
                let played = Double(changeTime - anchor.deviceTime) * player.fileFormat.sampleRate / oldRate
                frames.append(anchor.fileFrame + Int64(played.rounded()))
                waits.append(0)
            } else {
                frames.append(anchor.fileFrame)
                waits.append(Int64((Double(anchor.deviceTime - changeTime) * newRate / oldRate).rounded()))
            }
        }
        let old = Set(players.map { ObjectIdentifier($0.queue) })
        for player in players {
            player.stop()
            try? player.queue.dispose()
        }
        // The old queues' own ports (--ports-per-file) must be gone before the new ones take the names.
        let deadline = Date().addingTimeInterval(2)
        while engine.queues.contains(where: { old.contains(ObjectIdentifier($0)) }) && Date() < deadline { usleep(2_000) }
        var fresh: [FilePlayer] = []
        for (index, player) in players.enumerated() {
            let again = try FilePlayer(path: player.path, engine: engine, playCount: player.playCount,
                                       bufferDuration: player.bufferDuration, bufferCount: player.bufferCount, truncation: .reject,
                                       streamer: player.streamer, channels: player.channelRouting)
            try again.queue.setMixerGain(decibels: layers.gains[index])
            again.queue.isLevelMeteringEnabled = true
            if command.portsPerFile { try again.queue.enableDirectOutputs() }
            try again.prepare(stagger: FilePlayer.stagger(forLayer: index))
            try again.reposition(toFrame: frames[index])
            fresh.append(again)
        }
        let resumedAt = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime) + Int64(newRate * 0.05)
        for wait in Set(waits).sorted() {
            let group = fresh.indices.filter { waits[$0] == wait }
            try engine.start(group.map { fresh[$0].queue }, at: resumedAt + wait, ifLate: .skipAhead)
        }
        let moved = zip(frames, waits).map { LayerAnchor(deviceTime: resumedAt + $0.1, fileFrame: $0.0) }
        return RateResume(players: fresh, anchors: moved, resumedAt: resumedAt)
    }
}

/// The queues that have stopped after playing, filled from the engine's callback thread.
final class FinishedLayers: Sendable {
    private let stopped = Mutex<Set<ObjectIdentifier>>([])
    func insert(_ id: ObjectIdentifier) { stopped.withLock { _ = $0.insert(id) } }
    var count: Int { stopped.withLock { $0.count } }
    /// Whether every one of `queues` has stopped after playing.
    func containsAll(_ queues: [ObjectIdentifier]) -> Bool { stopped.withLock { $0.isSuperset(of: queues) } }
}

extension PlayReport.CallbackTime {
    /// The report of a device's callback durations; nil before any cycle ran.
    init?(_ times: JACKDevice.CallbackTimes) {
        guard times.cycles > 0 else { return nil }
        self.init(cycles: times.cycles, medianSeconds: times.median, p99Seconds: times.p99, maxSeconds: times.longest,
                  overPeriodCycles: times.overPeriod)
    }
}
