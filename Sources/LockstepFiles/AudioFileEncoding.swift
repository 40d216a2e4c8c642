import CSndfile
import Lockstep

/// Everything that decides how audio is stored in an output file: the container, the sample
/// format (for containers that take one), and the codec settings (quality, bitrate mode).
///
/// ``resolve(path:formatName:sampleFormat:quality:bitrateMode:)`` builds one from what a user
/// typed and refuses, with one message that lists what the container can do, any combination it
/// cannot hold. ``check(sampleRate:channelCount:path:)`` then checks the rate and channel count
/// (Opus and MP3 take only some rates, MP3 at most two channels, FLAC eight, IMA ADPCM two, GSM
/// one, …), asks libsndfile (`sf_format_check`), and for the containers with headers writes a
/// moment into memory and reads it back, so a rate the header cannot hold exactly is refused
/// before anything is written (see ``FormatProbe``).
public struct AudioFileEncoding: Sendable, Hashable, CustomStringConvertible {
    /// The container (and, for the lossy types, the codec).
    public var type: AudioFileType
    /// The sample format, nil for the lossy codecs (which choose their own).
    public var sampleFormat: FileSampleFormat?
    /// Quality 0…1 (1 best), for FLAC, Vorbis, Opus and MP3; nil for the encoder's default.
    ///
    /// libsndfile's compression level is `1 − quality`. For the lossy codecs a higher quality
    /// means better sound and a larger file; for FLAC (lossless either way) it means faster
    /// encoding and a larger file.
    public var quality: Double?
    /// The bitrate mode (MP3 only), nil for the encoder's default (variable).
    public var bitrateMode: BitrateMode?

    /// Creates an encoding without checking it; ``resolve(path:formatName:sampleFormat:quality:bitrateMode:)``
    /// checks. A nil `sampleFormat` means the type's default (f32, s24 for FLAC, none for codecs).
    public init(type: AudioFileType, sampleFormat: FileSampleFormat? = nil, quality: Double? = nil,
                bitrateMode: BitrateMode? = nil) {
        self.type = type
        self.sampleFormat = type.isLossy ? nil : (sampleFormat ?? type.defaultFileSampleFormat)
        self.quality = quality
        self.bitrateMode = bitrateMode
    }

    /// The encoding of a file written from a ``Lockstep/StreamFormat`` (its sample format; for a
    /// lossy type the sample format is ignored).
    public init(type: AudioFileType, format: StreamFormat) {
        self.init(type: type, sampleFormat: FileSampleFormat(format.sampleFormat))
    }

    /// Builds and checks the encoding of an output from the user's choices.
    ///
    /// - Parameters:
    ///   - path: the output file; its extension picks the type unless `formatName` is given
    ///     (`-`, standard output, is WAV unless `formatName` says otherwise).
    ///   - formatName: a `--format` name (`wav`, `flac`, `mp3`, `vorbis`, …), overriding the extension.
    ///   - sampleFormat: `--sample-format`, nil for the type's default.
    ///   - quality: `--quality` 0…1, nil for the encoder's default.
    ///   - bitrateMode: `--bitrate-mode`, nil for the encoder's default.
    /// - Throws: ``FileError`` of kind ``FileError/Kind/unsupportedOutputFormat`` naming the
    ///   path and what the type can hold: an unknown extension or format name, a sample format
    ///   the type cannot store, a quality for a type without one or outside 0…1, a bitrate mode
    ///   the type does not take.
    public static func resolve(path: String, formatName: String? = nil, sampleFormat: FileSampleFormat? = nil,
                               quality: Double? = nil, bitrateMode: BitrateMode? = nil) throws(FileError) -> AudioFileEncoding {
        let type: AudioFileType
        if let formatName {
            guard let named = AudioFileType(formatName: formatName) else {
                throw FileError(.unsupportedOutputFormat, path: path,
                    problem: "unknown --format '\(formatName)'; use one of \(AudioFileType.formatNames.joined(separator: ", "))")
            }
            type = named
        } else if StandardStreams.names(path) {
            // Standard output has no extension to go by: WAV, which every audio program reads.
            type = .wav
        } else {
            type = try AudioFileType.forOutput(path: path)
        }
        if let sampleFormat, !type.fileSampleFormats.contains(sampleFormat) {
            throw type.sampleFormatError(sampleFormat, path: path)
        }
        if let quality {
            guard type.acceptsQuality else {
                throw FileError(.unsupportedOutputFormat, path: path,
                    problem: "\(type) has no quality setting (it is uncompressed); leave --quality out, or write FLAC, Ogg Vorbis, Opus or MP3")
            }
            guard quality.isFinite, (0...1).contains(quality) else {
                throw FileError(.unsupportedOutputFormat, path: path,
                    problem: "--quality \(quality) is out of range; use 0 (smallest file) to 1 (best quality)")
            }
        }
        if let bitrateMode, !type.bitrateModes.contains(bitrateMode) {
            let which = type.bitrateModes.isEmpty
                ? "\(type) takes no bitrate mode (libsndfile sets it for MP3 only); leave --bitrate-mode out"
                : "\(type) takes --bitrate-mode \(type.bitrateModes.map(\.rawValue).joined(separator: ", "))"
            throw FileError(.unsupportedOutputFormat, path: path, problem: which)
        }
        return AudioFileEncoding(type: type, sampleFormat: sampleFormat, quality: quality, bitrateMode: bitrateMode)
    }

    /// Checks that the encoding can hold audio at `sampleRate` with `channelCount` channels, and
    /// returns libsndfile's format word for it.
    ///
    /// - Throws: ``FileError`` of kind ``FileError/Kind/unsupportedOutputFormat`` naming the rates
    ///   or channel counts the type holds, or when libsndfile's `sf_format_check` refuses.
    @discardableResult
    public func check(sampleRate: Double, channelCount: Int, path: String) throws(FileError) -> Int32 {
        let format = libsndfileFormat
        guard sampleRate == sampleRate.rounded(), sampleRate >= 1, sampleRate <= Double(Int32.max) else {
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "audio files store whole-number sample rates, not \(sampleRate) Hz; render at a whole-number rate")
        }
        if let rates = type.sampleRates, !rates.contains(Int(sampleRate)) {
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "\(type) holds only \(rates.map(String.init).joined(separator: ", ")) Hz, not \(Int(sampleRate)); give --rate with one of those, or write another type")
        }
        if let limit = type.maximumChannelCount, channelCount > limit {
            let more = type == .mp3 ? "Ogg Vorbis, Opus, WAV or CAF" : "WAV, W64 or CAF"
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "\(type) holds at most \(limit) \(limit == 1 ? "channel" : "channels"), not \(channelCount); give --channels \(limit) (a downmix), or write \(more)")
        }
        let counts = FormatProbe.channelCounts(format)
        if !counts.contains(channelCount) {
            let wider = type.fileSampleFormats.filter { FormatProbe.channelCounts(type.majorFormat | $0.libsndfileSubtype).contains(channelCount) }
            let other = wider.isEmpty ? "write WAV, W64 or CAF" : "or choose a --sample-format \(type) holds them in (\(wider.map(\.rawValue).joined(separator: ", ")))"
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "\(self) holds \(Self.describe(counts: counts)), not \(channelCount); give --channels \(counts.last ?? 1) (a downmix), \(other)")
        }
        if type == .flac, sampleRate > 655_350 {
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "FLAC stores sample rates up to 655350 Hz, not \(Int(sampleRate)); write .wav or .caf instead")
        }
        guard FormatProbe.accepts(format, sampleRate: Int(sampleRate), channelCount: channelCount) else {
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "libsndfile cannot write \(self) at \(Int(sampleRate)) Hz with \(channelCount) channels; choose another file type or sample format")
        }
        if !type.isLossy {
            // The header must hold the rate exactly (XI holds 44100 Hz only, WVE 8000 Hz, HTK and
            // SDS a rounded sample period, 8SVX and MPC2K 16 bits): a short write into memory,
            // read back, says.
            guard let back = FormatProbe.roundTrip(format, sampleRate: Int(sampleRate), channelCount: channelCount) else {
                throw FileError(.unsupportedOutputFormat, path: path,
                    problem: "libsndfile cannot write \(self) at \(Int(sampleRate)) Hz with \(channelCount) channels; choose another file type or sample format")
            }
            if back.sampleRate != Int(sampleRate) {
                let rates = FormatProbe.exactRates(format, channelCount: channelCount)
                let list = rates.isEmpty ? "" : "; of the common rates it holds \(rates.map(String.init).joined(separator: ", ")) Hz"
                throw FileError(.unsupportedOutputFormat, path: path,
                    problem: "\(self) cannot store \(Int(sampleRate)) Hz exactly (its header would say \(back.sampleRate) Hz)\(list); give --rate with one of those, or write WAV, FLAC or CAF")
            }
        }
        return format
    }

    /// The channel counts of a list as words: `1 channel`, `1–2 channels`, `1–64 channels`.
    static func describe(counts: [Int]) -> String {
        guard let first = counts.first, let last = counts.last else { return "no channel count" }
        if first == last { return "\(first) \(first == 1 ? "channel" : "channels")" }
        if counts.count == last - first + 1 { return "\(first)–\(last) channels" }
        return counts.map(String.init).joined(separator: ", ") + " channels"
    }

    /// Whether the stored size depends on the audio (FLAC, the lossy codecs, and the compressed
    /// sample formats: ADPCM, GSM, DWVW, DPCM, ALAC).
    public var isCompressed: Bool { type.isCompressed || sampleFormat?.isCompressed == true }

    /// libsndfile's format word (major type | subtype).
    public var libsndfileFormat: Int32 {
        if let codec = type.codecSubtype { return type.majorFormat | codec }
        return type.majorFormat | (sampleFormat ?? type.defaultFileSampleFormat ?? .float32).libsndfileSubtype
    }

    /// Bytes per sample in the file, nil for the compressed types (FLAC and the lossy codecs).
    public var bytesPerSample: Int? {
        type.isCompressed ? nil : (sampleFormat ?? .float32).bytesPerSample
    }

    /// The queue sample format nearest to what the file stores (32-bit float for the lossy codecs).
    public var nearestSampleFormat: SampleFormat {
        sampleFormat?.nearestSampleFormat ?? .float32
    }

    /// libsndfile's compression level for ``quality`` (`1 − quality`), nil when unset.
    public var compressionLevel: Double? { quality.map { 1 - $0 } }

    /// For messages: `WAV s16`, `FLAC s24`, `MP3`, `Ogg Vorbis quality 0.8`, `MP3 constant bitrate`.
    public var description: String {
        var text = type.description
        if let sampleFormat { text += " \(sampleFormat.rawValue)" }
        if let quality { text += " quality \(quality)" }
        if let bitrateMode { text += " \(bitrateMode) bitrate" }
        return text
    }
}
