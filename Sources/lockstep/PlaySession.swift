import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepSchema
import LockstepShow
import LockstepControl

/// One run of `lockstep play`: the options wired to a ``LiveLayers`` (the show engine), the live
/// display, the events and the summary.
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
        var live: [LiveLayers.Layer] = []
        for (index, path) in layers.files.enumerated() {
            do {
                let reader = try AudioFileReader(path: path, truncation: .reject, warnings: FileWarnings())
                let length = reader.lengthIsKnown ? "\(reader.frameCount) frames" : "a stream, played as it arrives"
                log.info("\(path): \(reader.containerName), \(reader.codecName), \(Int(reader.format.sampleRate)) Hz, \(reader.format.channelCount) ch, \(length)")
                live.append(LiveLayers.Layer(path: path, format: reader.format, gainDB: layers.gains[index], offset: layers.offsets[index],
                                             channelMap: index < layers.channelMaps.count ? layers.channelMaps[index] : nil))
            } catch {
                throw CLIError(message: "play: \(error.description)")
            }
        }
        let device = try command.jack.openDevice("play", launcher: launcher, channels: 2, inputs: command.recordPorts.count)
        var options = LiveLayers.Options()
        options.loop = command.loop
        options.directOutputs = command.portsPerFile
        options.followsTransport = command.transport
        options.duration = command.duration
        options.connections = command.jack.connections
        options.recordPath = command.recordPath
        options.recordPorts = command.recordPorts
        let show: LiveLayers
        do { show = try LiveLayers(layers: live, device: device, options: options) } catch {
            throw CLIError(message: "play: \(userMessage(error))")
        }
        let outputs = command.jack.reportAlignment(device)
        show.onNote = { note in log.log(level: note.level.logLevel, "\(note.text)") }
        show.onLayerEvent = { path, event in events.layer(path, event) }
        do { try show.start() } catch { throw CLIError(message: "play: \(userMessage(error))") }

        func makeDisplay(_ show: LiveLayers) -> LiveDisplay {
            LiveDisplay(enabled: Terminal.display != .none && !command.json, players: show.players, engine: show.engine,
                        offsets: layers.offsets.map { $0.seconds(at: show.rate) }, duration: command.duration?.seconds(at: show.rate))
        }
        var display = makeDisplay(show)
        show.onPlayersReplaced = { [unowned show] _ in display = makeDisplay(show) }
        show.onRateChange = { events.rateChange(to: $0.sampleRate, at: $0.sampleTime) }
        var interrupted = false
        // Read once: ArgumentParser's property wrappers cost more than the rest of a step.
        let reconnect = command.jack.reconnect, pause: UInt32 = command.transport ? 5_000 : 20_000
        while true {
            events.discontinuities(of: show.engine, seen: &discontinuitiesSeen)
            if interrupt.received != 0 { interrupted = true; break }
            if reconnect && device.isWaitingForServer, let note = launcher.restartIfDied() { log.notice("\(note)") }
            let ended: ShowEnd?
            do { ended = try show.step() } catch { throw CLIError(message: "play: \(userMessage(error))") }
            if ended != nil { break }
            if show.hasStarted { display.update(now: show.engine.currentTime().sampleTime, start: show.startSampleTime) }
            usleep(pause)
        }
        display.finish()

        // Fade out, then stop (the recording holds the whole fade; every layer's end is
        // reported before the summary).
        let stoppedAt = show.fadeOut()
        let outcome = show.stop()
        events.discontinuities(of: show.engine, seen: &discontinuitiesSeen)
        report(show, outcome: outcome, stoppedAt: stoppedAt, outputs: outputs, interrupted: interrupted)
        device.stop()
        if let error = show.engine.deviceError ?? (command.transport ? outcome.error : nil) {
            throw CLIError(message: "play: \(error.message)")
        }
        if let recordError = outcome.recordError { throw CLIError(message: "play: \(recordError)") }
        try interrupt.exitIfRaised()
    }

    /// Prints the summary: one line (and the outputs' changes), or with `--json` one ``PlayReport``.
    func report(_ show: LiveLayers, outcome: LiveLayers.Outcome, stoppedAt: Int64,
                outputs: [JACKDevice.OutputCompensation], interrupted: Bool) {
        let engine = show.engine, device = show.device, rate = show.rate, base = show.startSampleTime
        let (finalOutputs, outputLines) = command.jack.outputsAtEnd(outputs, device: device, until: stoppedAt)
        var summary = PlayReport(
            startSampleTime: base, startJACKFrame: show.startJACKFrame ?? device.jackFrameTime(forSampleTime: base),
            frames: max(0, stoppedAt - base), sampleRate: Int(rate), discontinuities: engine.discontinuities.map(DiscontinuityRecord.init),
            layers: show.players.enumerated().map { index, player in
                let peak = player.queue.peakHold.max() ?? 0
                return PlayReport.Layer(file: player.path, peakDB: Double(Decibels.fromLinear(peak)),
                                        ports: command.portsPerFile ? player.queue.directOutputNames : nil,
                                        skippedFrames: show.lateStarts[index])
            },
            interrupted: interrupted, server: launcher.description.isEmpty ? nil : launcher.description,
            error: outcome.error?.message ?? outcome.recordError,
            recording: outcome.recording.map { PlayReport.Recording(file: $0.path, frames: $0.framesWritten,
                                                                    startSampleTime: $0.startSampleTime, lostFrames: $0.lostFrames) },
            playbackLatency: device.playbackLatency, outputDelays: command.jack.alignOutputs ? device.outputDelays : nil,
            outputs: finalOutputs, rateChanges: show.rateChanges.map(RateChangeRecord.init),
            callbackTime: PlayReport.CallbackTime(device.callbackTimes),
            renderHelper: device.hasRenderHelper
                ? PlayReport.RenderHelper(sharedCycles: engine.renderSharing.sharedCycles, helperChunks: engine.renderSharing.helperChunks)
                : nil)
        summary.discontinuityCounts = Dictionary(uniqueKeysWithValues: engine.discontinuityCounts.map { ($0.key.rawValue, $0.value) })
        guard !command.json else {
            print(JSONSchema.line(summary))
            return
        }
        let seconds = Double(summary.frames) / rate
        let peaks = summary.layers.map { layer in
            "\(URL(fileURLWithPath: layer.file).lastPathComponent) \(layer.peakDB.map { String(format: "%.1f dB", $0) } ?? "-inf dB")"
        }.joined(separator: ", ")
        print("played \(show.players.count) \(show.players.count == 1 ? "layer" : "layers") from sample \(base) for "
              + "\(summary.frames) frames (\(Terminal.time(seconds))) at \(Int(rate)) Hz through '\(device.name)'"
              + "; peaks: \(peaks); discontinuities: \(engine.discontinuityCount)"
              + (interrupted ? " (interrupted)" : ""))
        for line in outputLines { print(line) }
    }
}

extension PlayReport.CallbackTime {
    /// The report of a device's callback durations; nil before any cycle ran.
    init?(_ times: JACKDevice.CallbackTimes) {
        guard times.cycles > 0 else { return nil }
        self.init(cycles: times.cycles, medianSeconds: times.median, p99Seconds: times.p99, maxSeconds: times.longest,
                  overPeriodCycles: times.overPeriod)
    }
}
