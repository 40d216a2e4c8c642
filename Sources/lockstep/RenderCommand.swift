import ArgumentParser
import Foundation
import Lockstep
import LockstepFiles
import LockstepSchema
import LockstepSession

/// `lockstep render`: mixes files as sample-aligned layers into one file, offline.
struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Mix audio files as layers into one file, offline, sample-aligned.",
        discussion: """
            Every layer's first frame lands on output sample 0 (plus its --offset). Gains, offsets and channel maps apply to the files in order: the first --gain to the first file, and so on. The output is as long as the longest layer; its type follows OUT's extension or --format: every container libsndfile writes (wav, aiff, flac, caf, w64, rf64, au, ogg, opus, mp3, raw, paf, 8svx, nist, voc, sf, mat, pvf, xi, htk, sds, avr, wve, mpc2k; --format wavex for WAVE_FORMAT_EXTENSIBLE), in any --sample-format it holds (PCM, µ-law, A-law, IMA and MS ADPCM, GSM 6.10, G.721/G.723, NMS and VOX ADPCM, DWVW, DPCM, ALAC in CAF); an impossible combination is refused with what the type holds. Files at other sample rates are converted (libsoxr, at most 256 times apart); files with more channels than --channels are downmixed (ITU-R BS.775 for 5.1 and 7.1, equal-power otherwise) unless --channel-map routes them.

            '-' as a file reads standard input (once per command; a pipe is read as it arrives, so the render starts at once and ends when the stream does); -o - writes standard output (WAV unless --format says otherwise; on a pipe WAV, AU, raw, FLAC, Ogg Vorbis, Opus and MP3 work), and the summary then goes to standard error. On a terminal a progress line shows the share done, the speed (× realtime) and the time left; when standard error is not a terminal (a log, a pipe), a plain line of the same every 5 s (or every $LOCKSTEP_PROGRESS_INTERVAL seconds) and one at the end; none with --no-progress or --quiet.

            Examples:
              lockstep render drums.wav bass.flac -o mix.wav --gain -3 --offset 1.5
              lockstep render film-5.1.wav -o stereo.mp3 --quality 0.8
              lockstep render drums.wav bass.flac -o mix.flac --json
              lockstep render a.wav b.flac -o - --format flac | sox -t flac - -n stat
              sox in.mp3 -t wav - | lockstep render - -o out.flac --rate 44100
            """
    )

    @Argument(help: "The audio files to mix (any format libsndfile reads; - reads standard input).")
    var files: [String] = []

    @Option(name: .shortAndLong, help: ArgumentHelp("The output file: any type libsndfile writes, by extension (.wav, .aiff, .flac, .caf, .w64, .rf64, .au, .ogg, .opus, .mp3, .raw, .paf, .8svx, .nist, .voc, .sf, .mat, .pvf, .xi, .htk, .sds, .avr, .wve, .mpc2k); - writes standard output.", valueName: "out"))
    var output: String?

    @Option(help: "Output sample rate in Hz (1…768000).")
    var rate: Int = 48000

    @Option(help: "Output channels (1…64).")
    var channels: Int = 2

    @Option(name: .customLong("gain"), parsing: .unconditionalSingleValue, help: "Gain of the next file in dB (-inf…+12), e.g. -6 or -6dB; repeat per file.")
    var gains: [String] = []

    @Option(name: .customLong("offset"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Time from the start to the next file's first frame (\(TimeOption.forms); samples at --rate); repeat per file.",
                               valueName: TimeOption.valueName),
            transform: TimeOption.parse)
    var offsets: [SessionTime] = []

    @OptionGroup(title: "Output format")
    var outputFormat: OutputFormatOptions

    @Option(name: .customLong("channel-map"), parsing: .unconditionalSingleValue, help: ChannelMapOption.help)
    var channelMaps: [String] = []

    @OptionGroup(title: "Messages")
    var global: GlobalOptions

    @Flag(help: "Print one JSON object with the results instead of the summary line (Docs/JSON.md).")
    var json = false

    @Flag(name: .customLong("accept-truncated"), help: "Mix what a truncated file holds (a FLAC recording that was killed, say) instead of refusing it; a warning names each such file.")
    var acceptTruncated = false

    func run() throws {
        OfflineInterrupts.install(command: "render")
        guard !files.isEmpty else {
            throw CLIError(message: "render: no input files; give one or more audio files, e.g. lockstep render a.wav b.wav -o mix.wav", exitCode: 64)
        }
        guard let output, !output.isEmpty else {
            throw CLIError(message: "render: missing --output/-o; name the file to write, e.g. -o mix.wav", exitCode: 64)
        }
        guard (1...768_000).contains(rate) else {
            throw CLIError(message: "render: --rate \(rate) is out of range; use 1…768000 Hz", exitCode: 64)
        }
        guard (1...64).contains(channels) else {
            throw CLIError(message: "render: --channels \(channels) is out of range; use 1…64", exitCode: 64)
        }
        try InputFiles.checkStandardInput(files, command: "render")
        let arguments = try LayerArguments(command: "render", files: files, gains: gains, offsets: offsets)
        let maps = try ChannelMapOption.parse(channelMaps, files: files.count, command: "render")
        let encoding = try outputFormat.encoding(path: output, command: "render")
        try outputFormat.check(encoding, path: output, sampleRate: Double(rate), channels: channels, command: "render")
        try InputFiles.checkStandardOutput(output, encoding: encoding, json: json, command: "render")
        try InputFiles.checkRates(InputFiles.describe(files), outputRate: Double(rate), option: "--rate \(rate)", command: "render")
        log.info("writing \(StandardStreams.names(output) ? "standard output" : output): \(encodingSummary(encoding)), \(rate) Hz, \(channels) ch")
        let layers = files.indices.map { index in
            MixdownLayer(path: files[index], gainDB: arguments.gains[index], offset: arguments.offsets[index].seconds(at: Double(rate)),
                         channelMap: maps[index])
        }
        let summary: MixdownSummary
        let progress = ProgressDisplay(label: "rendering")
        do {
            let mixdown = try LayerMixdown(layers: layers, outputPath: output, encoding: encoding, sampleRate: Double(rate),
                                           channelCount: channels,
                                           truncation: acceptTruncated ? .tolerate : .reject)
            summary = try mixdown.run { progress.update($0) }
            progress.finish()
        } catch {
            // With --accept-truncated a truncated file is mixed as far as it goes (and reported
            // among the file warnings at the end).
            let hint = error.kind == .truncated && !acceptTruncated ? "; or give --accept-truncated to mix what it holds" : ""
            throw CLIError(message: "render: \(error.description)\(hint)")
        }
        if json {
            print(JSONSchema.line(RenderReport(file: summary.outputPath, inputs: files, frames: summary.frames,
                                               sampleRate: Int(summary.sampleRate), channels: summary.channelCount,
                                               sampleFormat: summary.sampleFormat.rawValue,
                                               fileType: summary.fileType.fileExtension,
                                               encoding: encodingSummary(summary.encoding),
                                               peakDB: Double(summary.peakDB), clipped: summary.peak > 1)))
            return
        }
        let layerWord = files.count == 1 ? "layer" : "layers"
        let line = "rendered \(files.count) \(layerWord) to \(summary.outputPath): \(summary.frames) frames, "
            + "\(Terminal.time(summary.duration)) (\(String(format: "%.3f", summary.duration)) s), "
            + "\(Int(summary.sampleRate)) Hz, \(summary.channelCount) ch, \(encodingSummary(summary.encoding)), "
            + "peak \(Terminal.decibels(summary.peakDB))"
            + (summary.peak > 1 ? " (clipped: lower the gains)" : "")
        // Standard output carries the audio with -o -: the summary goes to standard error.
        if StandardStreams.names(output) { log.notice("\(line)") } else { print(line) }
    }
}
