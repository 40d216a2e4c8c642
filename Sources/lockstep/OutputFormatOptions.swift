import ArgumentParser
import Lockstep
import LockstepFiles

/// `--sample-format`: the sample formats a file can be written in (`u8`, `s8`, `s16`, `s24`,
/// `s32`, `f32`, `f64`, `ulaw`, `alaw`, `ima-adpcm`, `ms-adpcm`, `gsm610`, `g721`, `g723-24`,
/// `g723-40`, `nms-adpcm-16/24/32`, `vox-adpcm`, `dwvw-12/16/24`, `dpcm-8/16`, `alac-16/20/24/32`);
/// which ones a file type holds is checked later, with a message that lists them.
struct SampleFormatArgument: ExpressibleByArgument {
    /// The sample format.
    var format: FileSampleFormat

    init?(argument: String) {
        guard let parsed = FileSampleFormat(name: argument) else { return nil }
        format = parsed
    }

    static var allValueStrings: [String] { FileSampleFormat.allCases.map(\.rawValue) }
}

/// `--bitrate-mode constant|average|variable`.
extension BitrateMode: ExpressibleByArgument {}

/// The output-encoding options `render`, `session render` and `record` share (`@OptionGroup`):
/// the file type, the sample format and the codec settings.
struct OutputFormatOptions: ParsableArguments {
    @Option(name: .customLong("format"),
            help: ArgumentHelp("The output file type, overriding OUT's extension.", valueName: AudioFileType.formatNames.joined(separator: "|")))
    var formatName: String?

    @Option(name: .customLong("sample-format"),
            help: ArgumentHelp("Sample format, as the type holds: PCM, companding laws and the codecs libsndfile writes inside containers (default f32; s24 for FLAC; none for Ogg Vorbis, Opus and MP3). A combination the type cannot hold is refused with the list of what it holds.",
                               valueName: FileSampleFormat.allCases.map(\.rawValue).joined(separator: "|")))
    var sampleFormat: SampleFormatArgument?

    @Option(help: ArgumentHelp("Codec quality 0…1 for FLAC, Ogg Vorbis, Opus and MP3 (1 best; libsndfile's compression level is 1 - Q; for FLAC, higher is faster and larger).", valueName: "0…1"))
    var quality: Double?

    @Option(name: .customLong("bitrate-mode"),
            help: ArgumentHelp("MP3 bitrate mode (default variable).", valueName: BitrateMode.allCases.map(\.rawValue).joined(separator: "|")))
    var bitrateMode: BitrateMode?

    /// The checked encoding for `path`, or a usage error (exit 64) naming what the type holds.
    func encoding(path: String, command: String) throws -> AudioFileEncoding {
        do {
            return try AudioFileEncoding.resolve(path: path, formatName: formatName, sampleFormat: sampleFormat?.format,
                                                 quality: quality, bitrateMode: bitrateMode)
        } catch {
            throw CLIError(message: "\(command): \(error.description)", exitCode: 64)
        }
    }

    /// Checks the rate and channel count against the encoding (Opus and MP3 take only some
    /// rates, MP3 at most two channels, …) as a usage error (exit 64).
    func check(_ encoding: AudioFileEncoding, path: String, sampleRate: Double, channels: Int, command: String) throws {
        do {
            try encoding.check(sampleRate: sampleRate, channelCount: channels, path: path)
        } catch {
            throw CLIError(message: "\(command): \(error.description)", exitCode: 64)
        }
    }
}

/// `--channel-map`: explicit routing of a file's channels (see ``ChannelMap``).
enum ChannelMapOption {
    /// The help text shared by `render` and `play`.
    static let help = ArgumentHelp(
        "Route the next file's channels (repeat per file): a list with one file channel per output, e.g. 2,1 (swap) or 1,- (silence), or routes IN:OUT[@dB], e.g. 1:1,2:2,3:1@-3,3:2@-3. Channels count from 1. Default: a file with more channels than the output is downmixed (ITU-R BS.775 for 5.1 and 7.1, equal-power otherwise).",
        valueName: "map")

    /// Parses `text`, or a usage error naming the entry at fault.
    static func parse(_ text: String, command: String) throws -> ChannelMap {
        do { return try ChannelMap(parsing: text) } catch {
            throw CLIError(message: "\(command): --channel-map '\(text)': \(error.problem)", exitCode: 64)
        }
    }

    /// Parses one map per file (at most as many as files), or a usage error.
    static func parse(_ texts: [String], files: Int, command: String) throws -> [ChannelMap?] {
        guard texts.count <= files else {
            throw CLIError(message: "\(command): \(texts.count) --channel-map values for \(files) files; give at most one per file (the first to the first file)", exitCode: 64)
        }
        let maps = try texts.map { try parse($0, command: command) }
        return (0..<files).map { $0 < maps.count ? maps[$0] : nil }
    }
}
