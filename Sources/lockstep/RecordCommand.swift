import ArgumentParser
import Foundation
import Lockstep
import LockstepFiles
import LockstepControl
import LockstepJACK
import LockstepSession

/// `lockstep record`: records JACK ports into a file without losing a frame.
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record JACK ports into an audio file, every frame, crash-safe.",
        discussion: """
            Records the given ports (one channel per port, in order; without --port, the physical \
            capture ports) until --duration or Ctrl-C. The file's header is kept valid while \
            recording, so even a killed process leaves a readable file: WAV, AIFF, CAF, W64, RF64, AU \
            and FLAC survive a kill (FLAC up to its last whole frame). Ogg Vorbis, Opus and MP3 \
            record too (encoded on the writer thread, never the realtime one), but a killed \
            recording loses what their encoder still held (up to about a second for Ogg) and its \
            length must be counted by decoding. If the writer falls seconds behind, lost frames are \
            reported and recorded as exactly that much silence.

            Examples:
              lockstep record -o take.wav --port system:capture_1 --port system:capture_2 --duration 60
              lockstep record -o take.flac --channels 1 --duration 10
              lockstep record -o take.wav --duration 60 --json-events
            """
    )

    @Option(name: .shortAndLong, help: "The file to write, any type render writes (.wav, .aiff, .caf, .w64, .rf64, .au, .raw, .flac survive a kill; .ogg, .opus, .mp3 lose their last moments; the other types are not promised to).")
    var output: String

    @Option(name: .customLong("port"), help: ArgumentHelp("A port to record (repeat: one channel per port, in order).", valueName: "port"),
            completion: Completions.ports)
    var ports: [String] = []

    @Option(help: "Channels to record (default: the number of --port values, else 2).")
    var channels: Int?

    @Option(help: ArgumentHelp("Stop after this long (\(TimeOption.forms); samples at the server's rate).", valueName: TimeOption.valueName),
            transform: TimeOption.parse)
    var duration: SessionTime?

    @OptionGroup(title: "Output format")
    var outputFormat: OutputFormatOptions

    @Option(help: "The JACK server (default: $JACK_DEFAULT_SERVER or JACK's default).")
    var server: String?

    @Option(name: .customLong("client-name"), help: "The JACK client name.")
    var clientName: String = "lockstep-record"

    @Option(name: .customLong("start-at"), help: "The JACK frame time (device sample time) of the first recorded frame.",
            transform: TimeOption.samples)
    var startAt: Int64?

    @Flag(help: "Replace OUT if it exists. Without it an existing file is never touched: record refuses and says so.")
    var force = false

    @OptionGroup(title: "Messages")
    var global: GlobalOptions

    @Flag(help: "Print one JSON object with the results on standard output.")
    var json = false

    @Flag(name: .customLong("json-events"), help: "Print live events as JSON Lines on standard output, one object a line as each happens (Docs/JSON.md).")
    var jsonEvents = false

    func run() throws {
        let count = channels ?? (ports.isEmpty ? 2 : ports.count)
        guard (1...64).contains(count) else {
            throw CLIError(message: "record: --channels \(count) is out of range; use 1…64", exitCode: 64)
        }
        guard ports.isEmpty || ports.count == count else {
            throw CLIError(message: "record: \(ports.count) --port values for \(count) channels; give one --port per channel", exitCode: 64)
        }
        do { try TimeOption.checkDuration(duration) } catch let error as ValidationError {
            throw CLIError(message: "record: \(error.message)", exitCode: 64)
        }
        if let startAt, startAt < 0 {
            throw CLIError(message: "record: --start-at \(startAt) is negative; give a JACK frame time (0 or more) still to come, or leave it out to start now", exitCode: 64)
        }
        let encoding = try outputFormat.encoding(path: output, command: "record")
        if let limit = encoding.type.maximumChannelCount, count > limit {
            throw CLIError(message: "record: \(output): \(encoding.type) holds at most \(limit) channels, not \(count); record fewer ports, or write WAV, W64 or CAF", exitCode: 64)
        }
        try refuseToReplace(output, force: force, command: "record")
        let interrupt = InterruptFlag(command: "record")
        let device: JACKDevice
        let engine: Engine
        do {
            device = try JACKDevice(options: .init(clientName: clientName, serverName: server, channelCount: 0,
                                                   inputChannelCount: count, connectToPhysicalOutputs: false))
            engine = try Engine(device: device)
        } catch {
            throw CLIError(message: "record: \(error.message)")
        }
        // Ports first: the file is created only once everything is validated and connected.
        do {
            try device.start()
            if ports.isEmpty {
                if device.connectToPhysicalInputs().isEmpty {
                    log.warning("the server has no physical capture ports; connect ports to \(device.inputPortNames.joined(separator: ", ")) or use --port")
                }
            } else {
                for (source, destination) in zip(ports, device.inputPortNames) { try device.connect(source, to: destination) }
            }
        } catch {
            throw CLIError(message: "record: \(error.message)")
        }
        if let startAt {
            // Checked before the file exists: a start in the past would record nothing.
            let now = engine.currentTime().sampleTime
            if startAt <= now {
                device.stop()
                throw CLIError(message: "record: --start-at \(startAt) is in the past (the server's frame time is \(now) now); give a later frame time, or leave it out to start now", exitCode: 64)
            }
        }
        let recorder: FileRecorder
        do {
            recorder = try FileRecorder(engine: engine, path: output, channels: count, encoding: encoding)
        } catch {
            throw CLIError(message: "record: \(error.description)")
        }
        recorder.queue.isLevelMeteringEnabled = true
        // Other clients' ports are skipped with the server in an xrun and go on unbroken after it:
        // record what they played. A driver's capture ports lose that audio: keep its place as silence.
        recorder.queue.fillsSkippedFrames = ports.isEmpty || ports.contains { device.isPhysicalPort($0) }
        let rate = engine.sampleRate
        // A little ahead, so the start is honoured exactly even on a busy machine.
        let start = startAt ?? engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime + Int64(rate * 0.2))
        do { try recorder.start(at: start) } catch {
            throw CLIError(message: "record: \(error.description)")
        }
        let end = duration.map { start + $0.samples(at: rate) }
        if let end {
            do { try recorder.stop(atSampleTime: end) } catch {
                throw CLIError(message: "record: \(error.description)")
            }
        }
        let meter = RecordDisplay(enabled: Terminal.display != .none && !json, queue: recorder.queue, rate: rate)
        var interrupted = false
        let events = JSONEvents(enabled: jsonEvents)
        var discontinuitiesSeen = 0
        var announced = false
        while true {
            events.discontinuities(of: engine, seen: &discontinuitiesSeen)
            if interrupt.received != 0 { interrupted = true; break }
            if recorder.error != nil || engine.deviceError != nil { break }
            let now = engine.currentTime().sampleTime
            if !announced && now >= start {
                events.emit(ControlUpdate(.recordStarted, file: output, sampleTime: start))
                announced = true
            }
            if end != nil && now > start && !recorder.queue.isRunning && recorder.framesWritten > 0 { break }
            if let end, now >= end + Int64(rate) { break }
            meter.update(frames: recorder.framesWritten)
            usleep(20_000)
        }
        meter.finish()
        let summary: FileRecorder.Summary
        var failure: String?
        do {
            summary = try recorder.stop()
        } catch {
            failure = error.description
            summary = FileRecorder.Summary(path: output, framesWritten: recorder.framesWritten, startSampleTime: start,
                                           sampleRate: rate, peaks: [], lostFrames: recorder.queue.lostFrames)
        }
        if let error = engine.deviceError { failure = failure ?? error.message }
        device.stop()
        events.discontinuities(of: engine, seen: &discontinuitiesSeen)
        events.emit(ControlUpdate(.recordEnded, file: output, sampleTime: summary.startSampleTime.map { $0 + summary.framesWritten },
                                  frames: summary.framesWritten))
        let gaps = engine.discontinuities.map(DiscontinuityRecord.init)
        if json {
            print(JSONSchema.line(RecordReport(
                file: output, frames: summary.framesWritten, startSampleTime: summary.startSampleTime, sampleRate: Int(rate),
                channelPeakDB: summary.peaks.map { Double(Decibels.fromLinear($0)) }, lostFrames: summary.lostFrames,
                skippedFrames: recorder.queue.skippedFrames, leftOutFrames: recorder.queue.leftOutFrames, discontinuities: gaps, interrupted: interrupted, error: failure,
                callbackTime: PlayReport.CallbackTime(device.callbackTimes))))
        } else {
            let peaks = summary.peaks.map { Terminal.decibels(Decibels.fromLinear($0)) }.joined(separator: ", ")
            print("recorded \(summary.framesWritten) frames (\(Terminal.time(summary.duration))) from sample "
                  + "\(summary.startSampleTime.map(String.init) ?? "-") into \(output); peaks: \(peaks); "
                  + "discontinuities: \(gaps.count)" + (summary.lostFrames > 0 ? "; \(summary.lostFrames) frames lost (recorded as silence)" : "")
                  + (recorder.queue.skippedFrames > 0 ? "; \(recorder.queue.skippedFrames) frames skipped by the server in xruns (recorded as silence)" : "")
                  + (recorder.queue.leftOutFrames > 0 ? "; the server skipped \(recorder.queue.leftOutFrames) frames in xruns (the sources' audio goes on unbroken; the take is that much shorter than its span)" : ""))
        }
        if let failure { throw CLIError(message: "record: \(failure)") }
        try interrupt.exitIfRaised()
    }
}

/// Refuses to go on when `path` exists and `force` is off: recordings are never replaced unasked.
func refuseToReplace(_ path: String, force: Bool, command: String) throws {
    var status = stat()
    guard !force, lstat(path, &status) == 0 else { return }
    throw CLIError(message: "\(command): \(path) exists; choose another name, or add --force to replace it")
}

/// The live meter of `lockstep record` on standard error: the time recorded and a meter per
/// channel, on one row fitted to the terminal's width (``StatusArea``); one plain line every
/// 2 seconds on a `dumb` terminal.
final class RecordDisplay {
    /// Whether anything is shown (a terminal, no `--json`, no `--no-progress`).
    let enabled: Bool
    /// The queue recorded, for its meters.
    let queue: InputQueue
    /// The sample rate, to turn frames into time.
    let rate: Double
    private var last = Date.distantPast

    /// A meter of `queue` at `rate`, drawn only when `enabled`.
    init(enabled: Bool, queue: InputQueue, rate: Double) {
        self.enabled = enabled
        self.queue = queue
        self.rate = rate
    }

    /// Shows the time for `frames` recorded and the channels' peaks.
    func update(frames: Int64) {
        guard enabled else { return }
        let plain = Terminal.display == .plain
        guard Date().timeIntervalSince(last) >= (plain ? 2 : 0.1) else { return }
        last = Date()
        let levels = (try? queue.currentLevelMeterDB()) ?? []
        let time = Terminal.time(Double(frames) / rate)
        if plain {
            let peaks = levels.map { String(format: "%.1f", max($0.peakPower, -99)) }.joined(separator: " ")
            StatusArea.shared.printAbove("record: \(time), peak dB \(peaks)\n")
            return
        }
        // Each channel: "N [bar] -xx.x", sharing the width left after the time.
        let each = (Terminal.columns - 1 - 2 - Terminal.width(of: time)) / max(1, levels.count) - 2
        let cells = max(4, min(24, each - 12))
        let meters = levels.enumerated().map { index, level in
            "\(index + 1) \(Terminal.meter(level.peakPower, cells: cells)) \(String(format: "%6.1f", max(level.peakPower, -99)))"
        }.joined(separator: "  ")
        StatusArea.shared.draw(["  \(time)  \(meters)"])
    }

    /// Erases the meter.
    func finish() {
        guard enabled else { return }
        StatusArea.shared.clear()
    }
}
