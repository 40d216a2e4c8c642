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

    @Option(name: .customLong("ltc-out"), help: ArgumentHelp("Send SMPTE LTC following the play's time on the client's own output ltc_1, connected to this JACK port (repeat it for more ports), as session run --ltc-out does (Docs/Timecode.md).", valueName: "port"))
    var ltcPorts: [String] = []

    @Option(name: .customLong("mtc-out"), help: ArgumentHelp("Send MIDI time code following the play's time on the client's MIDI output mtc_out, connected to this JACK MIDI port (repeat it for more ports), as session run --mtc-out does.", valueName: "port"))
    var mtcPorts: [String] = []

    @OptionGroup(title: "Timecode")
    var timecode: TimecodeOptions

    func validate() throws {
        try timecode.checkUsed(by: "--ltc-out or --mtc-out", given: !ltcPorts.isEmpty || !mtcPorts.isEmpty)
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
        let sendsTimecode = !ltcPorts.isEmpty || !mtcPorts.isEmpty
        if surfaces.isRequested || sendsTimecode {
            // Under control (or sending timecode) the files play as a session, through the one
            // command path.
            let reason = sendsTimecode ? "--ltc-out or --mtc-out" : "--control, --osc, --osc-tcp or --midi"
            if portsPerFile || !recordPorts.isEmpty {
                let option = portsPerFile ? "--ports-per-file" : "--record-port"
                throw CLIError(message: "play: \(option) cannot be used with \(reason) yet; write a session whose layers name their 'ports' (Docs/SessionFormat.md) and use lockstep session run", exitCode: 64)
            }
            if recordPath != nil && transport {
                throw CLIError(message: "play: --record cannot follow --transport with \(reason); leave one out", exitCode: 64)
            }
            let session = try PlayControl.session(layers: layers, loop: loop)
            var settings = SessionRun.Settings(command: "play", file: layers.files.count == 1 ? layers.files[0] : "\(layers.files.count) files",
                                               jack: jack, surfaces: surfaces, transport: transport, duration: duration,
                                               json: json, jsonEvents: jsonEvents, recordPath: recordPath)
            settings.timecode = try timecode.setting(ports: ltcPorts, session: session.document)
            settings.timecodeConnections = ltcPorts
            settings.midiTimecode = try timecode.setting(ports: mtcPorts, session: session.document)
            settings.midiTimecodeConnections = mtcPorts
            try SessionRun(settings: settings, session: session).run()
            return
        }
        let session = PlaySession(command: self, layers: layers)
        try session.run()
    }
}
