@preconcurrency import Glibc   // C's stdout: a global the stream behind never changes
import ArgumentParser
import Foundation
import Lockstep
import LockstepControl
import LockstepFiles
import LockstepSession
import LockstepTimecode
import LockstepWeb

/// `lockstep session`: checks, renders and runs session (playlist) files.
struct SessionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Check, render or run a session file: what plays on which layer, when, and how loud.",
        discussion: """
            The format is described in Docs/SessionFormat.md.

            Examples:
              lockstep session check show.yaml
              lockstep session render show.yaml -o show.wav --go bell@1:30
              lockstep session run show.yaml --control -
            """,
        subcommands: [SessionCheckCommand.self, SessionRenderCommand.self, SessionRunCommand.self]
    )
}

/// Loads a session, turning its problems into one CLI error listing every diagnostic.
/// Its MIDI triggers are checked too (each `do:` a command naming the session's cues and layers).
func loadSession(_ path: String, command: String, json: Bool = false) throws -> Session {
    do {
        let session = try Session.load(path: path)
        _ = try MIDITriggers(session: session)
        return session
    } catch {
        if json {
            print(JSONSchema.line(SessionCheckFailure(errors: error.diagnostics.map {
                SessionCheckFailure.Problem(file: $0.location.path, line: $0.location.line, column: $0.location.column,
                                            kind: $0.kind.rawValue, message: $0.message)
            })))
        }
        let count = error.diagnostics.count
        throw CLIError(message: "session \(command): \(count) \(count == 1 ? "problem" : "problems") in \(path):\n" + error.description)
    }
}

extension TimelineReport {
    /// The report of `timeline`, read from the session file at `path`.
    init(path: String, timeline: SessionTimeline) {
        let rate = timeline.rate
        self.init(file: path, sampleRate: Int(rate), channels: timeline.channelCount,
                  layers: timeline.layers.map { Layer(name: $0.name, gainDB: $0.gainDB, ports: $0.ports) },
                  cues: timeline.cues.map { cue in
                      var entry = Cue(name: cue.name, layer: timeline.layers[cue.layer].name, file: cue.path, manual: cue.isManual,
                                      start: cue.start, end: cue.end, frames: cue.length,
                                      gainDB: timeline.layers[cue.layer].gainDB + cue.gainDB, loop: cue.playCount,
                                      afterGoFrames: cue.isManual ? cue.offsetFromTrigger : nil, rate: rate)
                      entry.action = timeline.actionSummary(cue)
                      entry.group = cue.group.map { timeline.cues[$0].name }
                      return entry
                  },
                  automation: timeline.automation.enumerated().flatMap { layer, points in
                      points.map { Point(layer: timeline.layers[layer].name, start: $0.start, rampFrames: $0.ramp,
                                         gainDB: $0.gainDB, rate: rate) }
                  },
                  end: timeline.end)
    }
}

/// `lockstep session check FILE…`: validates sessions and prints each one's resolved timeline.
struct SessionCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate session files and print each one's resolved timeline.",
        discussion: """
            Reports every problem as FILE:LINE:COLUMN: error: what is wrong; what would fix it. \
            Exits 0 when every session is valid, 1 otherwise. '-' reads a session from standard input; \
            its audio paths then resolve against the current folder. With several files each is \
            checked in turn (every one, whatever the others hold), its table under a 'FILE:' line, \
            or with --json one object per line in the order given.

            Examples:
              lockstep session check show.yaml
              lockstep session check shows/*.yaml
              lockstep session check show.yaml --rate 44100 --json
              lockstep session check show.yaml --svg timeline.svg --png timeline.png
              generate-show | lockstep session check -
              lockstep session check show.yaml --jack --server main

            With --jack it also reads the running JACK server's graph and prints, per output (master \
            out_N to the physical playback ports or --connect, each layer's ports), the playback latency \
            of where it goes (netjack2 slaves' to_slave_N included) and the delay session run \
            --align-outputs gives it.
            """
    )

    @Argument(help: "The session files (YAML; - reads standard input).")
    var files: [String]

    @Flag(help: "Also show, per output, the playback latency of its destination on the running JACK server and the compensation --align-outputs applies.")
    var jack = false

    @Option(help: "The JACK server for --jack (default: $JACK_DEFAULT_SERVER or JACK's default).")
    var server: String?

    @Option(name: .customLong("connect"),
            help: ArgumentHelp("For --jack: where session run would connect the master outputs (as its --connect).", valueName: "port"))
    var connections: [String] = []

    @Option(help: "Resolve sample times at this rate (default: the session's rate).")
    var rate: Int?

    @OptionGroup(title: "Messages")
    var global: GlobalOptions

    @Option(help: ArgumentHelp("Also draw the timeline as SVG into this file (lanes per layer, cues at their samples, fades, manual cues marked): the picture the web page shows.", valueName: "file"))
    var svg: String?

    @Option(help: ArgumentHelp("Also draw the same picture as PNG into this file (rendered from the SVG by librsvg).", valueName: "file"))
    var png: String?

    @Flag(help: "Print the timeline (or the errors) as one JSON object.")
    var json = false

    func validate() throws {
        try Limits.checkSessionRate(rate)
        guard !files.isEmpty else { throw ValidationError("give the session file to check") }
        if files.count > 1, svg != nil || png != nil {
            throw ValidationError("--svg and --png draw one session; give one file with them (\(files.count) given)")
        }
        if files.filter({ $0 == "-" }).count > 1 { throw ValidationError("standard input ('-') can be read once; give it once") }
    }

    func run() throws {
        guard files.count > 1 else { return try check(files[0]) }
        // Every file is checked whatever the others hold; each failure is reported as the one
        // file's would be, and the exit status says whether any failed.
        var failed = 0
        for (index, file) in files.enumerated() {
            if !json {
                if index > 0 { print() }
                print("\(file):")
            }
            do { try check(file) } catch {
                failed += 1
                fflush(stdout)
                log.critical("\(userMessage(error))")
            }
        }
        if failed > 0 {
            throw CLIError(message: "session check: \(failed) of \(files.count) sessions have problems (listed above)")
        }
    }

    /// Checks one session file and prints its timeline (and the JACK alignment when asked).
    func check(_ file: String) throws {
        let session = try loadSession(file, command: "check", json: json)
        countNonFiniteSamples(in: session)
        let rate = Double(self.rate ?? Int(session.document.rate))
        let timeline: SessionTimeline
        do { timeline = try session.timeline(rate: rate) } catch {
            throw CLIError(message: "session check: \(file) at \(Int(rate)) Hz:\n\(error.description)")
        }
        if let svg {
            do { try TimelinePicture(timeline: timeline).svg.write(toFile: svg, atomically: true, encoding: .utf8) } catch {
                throw CLIError(message: "session check: cannot write --svg \(svg): \(error.localizedDescription)")
            }
        }
        if let png {
            do { try TimelinePicture(timeline: timeline).writePNG(to: png) } catch {
                throw CLIError(message: "session check: cannot write --png \(error.description)")
            }
        }
        let alignment = jack || server != nil
            ? try OutputAlignmentReport.measure(timeline: timeline, channels: session.document.channelCount,
                                                server: server, connections: connections) : nil
        if json {
            var report = TimelineReport(path: file, timeline: timeline)
            report.outputs = alignment
            print(JSONSchema.line(report))
            return
        }
        print(SessionTable.render(timeline))
        if let alignment { print(alignment.text) }
    }
}

extension SessionCheckCommand {
    /// Decodes every float audio file of the session once, so NaN or infinite samples (which
    /// play as silence) are counted and reported with the file warnings when the check ends.
    /// Integer and compressed files cannot hold them and are not decoded.
    func countNonFiniteSamples(in session: Session) {
        var seen = Set<String>()
        for (cue, info) in zip(session.document.cues, session.files) where !cue.file.isEmpty && seen.insert(info.path).inserted {
            guard let reader = try? AudioFileReader(path: info.path), reader.storesFloatingPointSamples else { continue }
            _ = try? reader.scanPeak()
            reader.close()
        }
    }
}

/// The timeline as a text table.
enum SessionTable {
    static func render(_ timeline: SessionTimeline) -> String {
        let rate = timeline.rate
        func time(_ sample: Int64?) -> String { sample.map { Terminal.time(Double($0) / rate) } ?? "-" }
        var rows: [[String]] = [["cue", "layer", "start", "start (samples)", "end", "end (samples)", "gain"]]
        for cue in timeline.cues {
            // (A session of action cues alone has no layer.)
            let hasLayer = timeline.layers.indices.contains(cue.layer)
            var gain = SessionGain.format((hasLayer ? timeline.layers[cue.layer].gainDB : 0) + cue.gainDB)
            var layer = hasLayer ? timeline.layers[cue.layer].name : "-"
            let name = String(repeating: "  ", count: timeline.depth(of: cue.index)) + cue.name
            // An action cue: what it does where the layer goes, a fade's level where the gain goes.
            if let summary = timeline.actionSummary(cue) {
                layer = "(\(summary))"
                if case .fade(_, let level, _, _) = cue.action { gain = "→ " + SessionGain.format(level) } else { gain = "" }
            }
            if cue.start == nil {
                let after = cue.offsetFromTrigger == 0 ? "" : " +\(Terminal.time(Double(cue.offsetFromTrigger) / rate))"
                let trigger = timeline.cues[cue.trigger!].name
                let label = cue.trigger == cue.index ? "manual" + after : "go \(trigger)" + after
                let length = cue.length.map { "+" + Terminal.time(Double($0) / rate) } ?? "loops"
                rows.append([name, layer, label, "-", length, cue.length.map { "+\($0)" } ?? "-", gain])
            } else {
                rows.append([name, layer, time(cue.start), "\(cue.start!)",
                             cue.length == nil ? "loops" : time(cue.end), cue.end.map(String.init) ?? "-", gain])
            }
        }
        var widths = Array(repeating: 0, count: rows[0].count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        var lines = rows.map { row in
            row.enumerated().map { i, cell in
                i >= 2 && i <= 5 ? String(repeating: " ", count: widths[i] - cell.count) + cell
                    : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        lines.insert(String(repeating: "-", count: lines[0].count), at: 1)
        for (layer, points) in timeline.automation.enumerated() {
            for point in points {
                lines.append("automation: \(timeline.layers[layer].name) to \(SessionGain.format(point.gainDB)) at \(time(point.start)) (\(point.start)) over \(Terminal.time(Double(point.ramp) / rate))")
            }
        }
        let end = timeline.end.map { "\(time($0)) (\($0) samples)" } ?? "never (a cue loops forever)"
        let waiting = timeline.waitingCues.count
        lines.append("\(timeline.cues.count) cues on \(timeline.layers.count) layers at \(Int(rate)) Hz, \(timeline.channelCount) ch; ends \(end)"
                     + (waiting > 0 ? "; \(waiting) manual \(waiting == 1 ? "cue waits" : "cues wait") for go" : ""))
        return lines.joined(separator: "\n")
    }
}

/// `lockstep session render FILE -o OUT`: renders a session offline.
struct SessionRenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a session offline to an audio file.",
        discussion: """
            Output sample N is session sample N. Manual cues are left out unless --go places them (a cue given twice plays twice: fired again, as a live GO fires it), or a MIDI file's events fire them through the session's triggers (--midi-file): each event's commands land --midi-latency samples after the event, as in session run --midi --midi-latency, so the render equals a live run that received the same MIDI with the same latency. -o - writes standard output (WAV unless --format says otherwise), as render does; the summary then goes to standard error. On a terminal a progress line shows the share done, the speed (× realtime) and the time left; when standard error is not a terminal (a log, a pipe), a plain line of the same every 5 s (or every $LOCKSTEP_PROGRESS_INTERVAL seconds) and one at the end; none with --no-progress or --quiet.

            Examples:
              lockstep session render show.yaml -o show.wav --go bell@1:30
              lockstep session render show.yaml -o show.wav --midi-file cues.mid
              lockstep session render show.yaml -o - --format flac | sox -t flac - show.mp3
            """
    )

    @Argument(help: "The session file (YAML; - reads standard input).")
    var file: String

    @Option(name: .shortAndLong, help: ArgumentHelp("The output file: any type libsndfile writes, by extension (.wav, .aiff, .flac, .caf, .w64, .rf64, .au, .ogg, .opus, .mp3, .raw, .paf, .8svx, .nist, .voc, .sf, .mat, .pvf, .xi, .htk, .sds, .avr, .wve, .mpc2k); - writes standard output.", valueName: "out"))
    var output: String?

    @Option(help: "Render rate in Hz (default: the session's rate).")
    var rate: Int?

    @OptionGroup(title: "Output format")
    var outputFormat: OutputFormatOptions

    @Option(name: .customLong("go"), help: ArgumentHelp("Place a manual cue: CUE@TIME, TIME a session time (\(TimeOption.forms)), e.g. bell@1:30 or bell@90. Repeat per cue.",
                                                      valueName: "cue@time"),
            completion: Completions.cues)
    var goes: [String] = []

    @Option(help: ArgumentHelp("Render this long (\(TimeOption.forms)); needed when a cue loops forever.", valueName: TimeOption.valueName),
            transform: TimeOption.parse)
    var duration: SessionTime?

    @Option(name: .customLong("midi-file"), help: ArgumentHelp(
        "Send a Standard MIDI File's events through the session's triggers (time 0 = session sample 0).",
        valueName: "file.mid"))
    var midiFile: String?

    @Option(name: .customLong("midi-latency"), help: ArgumentHelp(
        "Samples from each MIDI event to the sample its commands land on (default 512; as session run --midi --midi-latency places them).",
        valueName: "samples"), transform: { Int(try TimeOption.samples($0)) })
    var midiLatency: Int = MIDIDefaults.latency

    @Option(name: .customLong("midi-out"), help: ArgumentHelp(
        "Write what the MIDI cues send into this Standard MIDI File (format 0, one tick a sample: each message on the sample session run sends it on).",
        valueName: "file.mid"))
    var midiOut: String?

    @OptionGroup(title: "Control")
    var doubleGo: DoubleGoOption

    @Option(name: .customLong("ltc-channel"), help: ArgumentHelp(
        "Write SMPTE LTC following session time into this channel of the file (1 = the first): one of the session's channels (the LTC replaces what plays there) or the one after them (the file gets a channel more). Each frame's first bit starts on its timecode's exact sample (Docs/Timecode.md).",
        valueName: "channel"))
    var ltcChannel: Int?

    @OptionGroup(title: "Timecode")
    var timecode: TimecodeOptions

    @OptionGroup(title: "Messages")
    var global: GlobalOptions

    @Flag(help: "Print one JSON object with the results.")
    var json = false

    func validate() throws {
        try timecode.checkUsed(by: "--ltc-channel", given: ltcChannel != nil)
    }

    func run() throws {
        OfflineInterrupts.install(command: "session render")
        guard let output, !output.isEmpty else {
            throw CLIError(message: "session render: missing --output/-o; name the file to write, e.g. -o show.wav", exitCode: 64)
        }
        do { try Limits.checkSessionRate(rate) } catch let error as ValidationError {
            throw CLIError(message: "session render: \(error.message)", exitCode: 64)
        }
        let encoding = try outputFormat.encoding(path: output, command: "session render")
        var manual: [(cue: String, at: SessionTime)] = []
        for go in goes {
            guard let at = go.lastIndex(of: "@"), at != go.startIndex else {
                throw CLIError(message: "session render: --go '\(go)' is not CUE@TIME; write e.g. --go bell@1:30 or --go bell@90", exitCode: 64)
            }
            do {
                manual.append((String(go[..<at]), try SessionTime.parse(String(go[go.index(after: at)...]), as: "--go \(go): time")))
            } catch {
                throw CLIError(message: "session render: \(error.description)", exitCode: 64)
            }
        }
        if let duration, duration.samples(at: Double(rate ?? 48000)) <= 0 {
            throw CLIError(message: "session render: --duration \(duration) is shorter than one sample; give a length above 0 (e.g. --duration 90), or leave it out to render until every placed cue has ended", exitCode: 64)
        }
        guard (0...MIDIDefaults.maximumLatency).contains(midiLatency) else {
            throw CLIError(message: "session render: --midi-latency \(midiLatency) is out of range; give 0 to \(MIDIDefaults.maximumLatency) samples", exitCode: 64)
        }
        let midiEvents: [StandardMIDIFile.Event]?
        if let midiFile {
            do { midiEvents = try StandardMIDIFile(path: midiFile).events } catch {
                throw CLIError(message: "session render: --midi-file \(error.description)")
            }
        } else {
            midiEvents = nil
        }
        let session = try loadSession(file, command: "render")
        let renderRate = Double(rate ?? Int(session.document.rate))
        let ltc = try timecode.channel(ltcChannel, session: session.document)
        try outputFormat.check(encoding, path: output, sampleRate: renderRate,
                               channels: ltc.map { max(session.document.channelCount, $0.channel + 1) } ?? session.document.channelCount,
                               command: "session render")
        try InputFiles.checkStandardOutput(output, encoding: encoding, json: json, command: "session render")
        let fileRates = session.files.filter { $0.frameCount > 0 }.map { (path: $0.path, rate: $0.sampleRate) }
        for file in session.files where file.frameCount > 0 {
            log.info("\(file.path): \(Int(file.sampleRate)) Hz, \(file.channelCount) ch, \(file.frameCount) frames")
        }
        try InputFiles.checkRates(fileRates, outputRate: renderRate,
                                  option: rate.map { "--rate \($0)" } ?? "the session's rate \(Int(renderRate))", command: "session render")
        log.info("writing \(StandardStreams.names(output) ? "standard output" : output): \(encodingSummary(encoding)), \(Int(renderRate)) Hz, \(session.document.channelCount) ch")
        var renderer = SessionRenderer(session: session, outputPath: output, rate: rate.map(Double.init),
                                       encoding: encoding, manualCues: manual, duration: duration)
        renderer.doubleGoSeconds = doubleGo.seconds
        renderer.timecode = ltc
        if let ltc {
            log.info("LTC at \(ltc.rate) fps from \(ltc.start) in channel \(ltc.channel + 1)")
        }
        var midi: MIDIRenderControl?
        if let midiEvents, let midiFile {
            let triggers = try MIDITriggers(session: session)
            if triggers.entries.isEmpty {
                log.warning("\(file) has no 'triggers:', so the events of \(midiFile) fire nothing; add triggers (Docs/ShowControl.md)")
            }
            let events = midiEvents.map { MIDIEvent(sampleTime: Int64(($0.seconds * renderRate).rounded()), bytes: $0.bytes) }
            let control = MIDIRenderControl(events: events, triggers: triggers, latency: Int64(midiLatency))
            renderer.control = control.renderControl
            midi = control
        }
        let messages = try RenderMessages(midiOut: midiOut, rate: renderRate, output: output,
                                          inputs: [file] + (midiFile.map { [$0] } ?? []) + session.files.map(\.path))
        let summary: SessionRenderer.Summary
        let progress = ProgressDisplay(label: "rendering")
        defer { progress.finish() }
        do {
            summary = try renderer.run { progress.update($0) }
            progress.finish()
        } catch let error as SessionError {
            throw CLIError(message: "session render: \(error.description)")
        } catch let error as PlayerError {
            throw CLIError(message: "session render: \(file): \(error.message)")
        } catch let error as FileError {
            throw CLIError(message: "session render: \(error.description)")
        } catch let error as AudioQueueError {
            throw CLIError(message: "session render: \(error.message)")
        } catch let error as ControlError {
            throw CLIError(message: "session render: --midi-file \(midiFile ?? ""): \(error.message)")
        } catch let error as TimecodeError {
            throw CLIError(message: "session render: --ltc-channel: \(error.message)")
        }
        // (A render that failed drops the MIDI file unnamed, as its audio.)
        try messages.finish(summary.messages)
        if let midi {
            for reply in midi.replies where !reply.isOK {
                log.warning("MIDI \(reply.address.dropFirst(5)): \(reply.summary)")
            }
        }
        let seconds = Double(summary.frames) / summary.rate
        let peakDB = Decibels.fromLinear(summary.peak)
        if json {
            let render = RenderReport(file: summary.outputPath, inputs: [file], frames: summary.frames,
                                      sampleRate: Int(summary.rate), channels: summary.channelCount,
                                      sampleFormat: summary.sampleFormat.rawValue, fileType: summary.encoding.type.fileExtension,
                                      encoding: encodingSummary(summary.encoding), peakDB: Double(peakDB), clipped: summary.peak > 1)
            print(JSONSchema.line(SessionRenderReport(render: render, timeline: TimelineReport(path: file, timeline: summary.timeline),
                                                      messages: RenderMessages.reports(summary.messages, session: session))))
        } else {
            let placed = summary.timeline.cues.filter { $0.start != nil }.count
            let line = "rendered \(placed) of \(summary.timeline.cues.count) cues to \(summary.outputPath): \(summary.frames) frames, "
                + "\(Terminal.time(seconds)), \(Int(summary.rate)) Hz, \(summary.channelCount) ch, \(encodingSummary(summary.encoding)), "
                + "peak \(Terminal.decibels(peakDB))" + (summary.peak > 1 ? " (clipped: lower the gains)" : "")
            // Standard output carries the audio with -o -: the summary goes to standard error.
            for line in [line] + messages.lines(summary.messages) {
                if StandardStreams.names(output) { log.notice("\(line)") } else { print(line) }
            }
        }
    }
}
