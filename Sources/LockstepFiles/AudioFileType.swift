import CSndfile
import Lockstep

/// An audio file container Lockstep knows by name: every one it writes, which are the common ones
/// libsndfile 1.2 writes.
///
/// ``AudioFileReader`` opens any file libsndfile can decode, whether or not it maps to a case here;
/// ``AudioFileWriter`` writes every case (``isWritable``). Uncompressed containers take a
/// ``FileSampleFormat`` (``fileSampleFormats`` lists which); FLAC takes an integer sample format
/// and a compression level; Ogg Vorbis, Opus and MP3 choose their own representation and take a
/// quality (and, for MP3, a ``BitrateMode``) instead — see ``AudioFileEncoding``.
public enum AudioFileType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Microsoft RIFF WAVE (`.wav`, `.wave`); limited to 4 GiB of audio.
    case wav
    /// Apple/SGI AIFF or AIFF-C (`.aif`, `.aiff`, `.aifc`); limited to 2 GiB of audio.
    case aiff
    /// Free Lossless Audio Codec (`.flac`); 8-, 16- or 24-bit integer samples.
    case flac
    /// Apple Core Audio Format (`.caf`).
    case caf
    /// Sony/Sonic Foundry Wave64 (`.w64`), WAV without the 4 GiB limit.
    case w64
    /// EBU RF64 (`.rf64`), WAV without the 4 GiB limit.
    case rf64
    /// Ogg Vorbis (`.ogg`, `.oga`), lossy.
    case oggVorbis = "ogg"
    /// Ogg Opus (`.opus`), lossy; 8, 12, 16, 24 or 48 kHz only.
    case opus
    /// MPEG-1/2 Layer III (`.mp3`), lossy; mono or stereo at 8…48 kHz.
    case mp3
    /// Sun/NeXT AU (`.au`, `.snd`); limited to 4 GiB of audio.
    case au

    /// Recognizes a file-name extension, without the dot and ignoring case.
    ///
    /// Accepts `wav`, `wave`, `aif`, `aiff`, `aifc`, `flac`, `caf`, `w64`, `rf64`, `ogg`, `oga`,
    /// `opus`, `mp3`, `au` and `snd`; returns `nil` for anything else.
    public init?(pathExtension: String) {
        let ext = pathExtension.lowercased()
        guard let type = Self.allCases.first(where: { $0.pathExtensions.contains(ext) }) else { return nil }
        self = type
    }

    /// Recognizes a `--format` name, ignoring case: any extension ``init(pathExtension:)`` takes,
    /// and `vorbis` for Ogg Vorbis.
    public init?(formatName: String) {
        if formatName.lowercased() == "vorbis" {
            self = .oggVorbis
        } else {
            self.init(pathExtension: formatName)
        }
    }

    /// Recognizes the extension of the last component of `path`; `nil` if it has none or an unknown one.
    public init?(path: String) {
        self.init(pathExtension: FileSystem.pathExtension(of: path))
    }

    /// Recognizes a libsndfile format word (major type plus subtype), as found in `SF_INFO.format`.
    ///
    /// WAVE_FORMAT_EXTENSIBLE files (`SF_FORMAT_WAVEX`) map to ``wav``. Returns `nil` for
    /// containers not listed here (raw, Ogg FLAC, VOC, …).
    public init?(libsndfileFormat format: Int32) {
        let major = format & Int32(SF_FORMAT_TYPEMASK)
        let subtype = format & Int32(SF_FORMAT_SUBMASK)
        switch major {
        case Int32(SF_FORMAT_WAV), Int32(SF_FORMAT_WAVEX): self = .wav
        case Int32(SF_FORMAT_AIFF): self = .aiff
        case Int32(SF_FORMAT_FLAC): self = .flac
        case Int32(SF_FORMAT_CAF): self = .caf
        case Int32(SF_FORMAT_W64): self = .w64
        case Int32(SF_FORMAT_RF64): self = .rf64
        case Int32(SF_FORMAT_MPEG): self = .mp3
        case Int32(SF_FORMAT_AU): self = .au
        case Int32(SF_FORMAT_OGG):
            switch subtype {
            case Int32(SF_FORMAT_VORBIS): self = .oggVorbis
            case Int32(SF_FORMAT_OPUS): self = .opus
            default: return nil
            }
        default: return nil
        }
    }

    /// The canonical file-name extension, such as `wav` or `aiff`.
    public var fileExtension: String { pathExtensions[0] }

    /// Every extension ``init(pathExtension:)`` maps to this type, canonical one first.
    public var pathExtensions: [String] {
        switch self {
        case .wav: ["wav", "wave"]
        case .aiff: ["aiff", "aif", "aifc"]
        case .flac: ["flac"]
        case .caf: ["caf"]
        case .w64: ["w64"]
        case .rf64: ["rf64"]
        case .oggVorbis: ["ogg", "oga"]
        case .opus: ["opus"]
        case .mp3: ["mp3"]
        case .au: ["au", "snd"]
        }
    }

    /// A short name for messages, such as `WAV` or `Ogg Vorbis`.
    public var description: String {
        switch self {
        case .wav: "WAV"
        case .aiff: "AIFF"
        case .flac: "FLAC"
        case .caf: "CAF"
        case .w64: "W64"
        case .rf64: "RF64"
        case .oggVorbis: "Ogg Vorbis"
        case .opus: "Opus"
        case .mp3: "MP3"
        case .au: "AU"
        }
    }

    /// Whether ``AudioFileWriter`` can write this type: every case can (kept for callers that
    /// ask; libsndfile 1.2 writes them all).
    public var isWritable: Bool { true }

    /// The writable types, in the order messages list them.
    public static var writableTypes: [AudioFileType] { allCases.filter(\.isWritable) }

    /// The extensions ``forOutput(path:)`` accepts, for messages and help text.
    public static var writableExtensions: [String] { writableTypes.flatMap(\.pathExtensions) }

    /// The libsndfile major format (`SF_FORMAT_WAV`, …), the part selected by `SF_FORMAT_TYPEMASK`.
    public var majorFormat: Int32 {
        switch self {
        case .wav: Int32(SF_FORMAT_WAV)
        case .aiff: Int32(SF_FORMAT_AIFF)
        case .flac: Int32(SF_FORMAT_FLAC)
        case .caf: Int32(SF_FORMAT_CAF)
        case .w64: Int32(SF_FORMAT_W64)
        case .rf64: Int32(SF_FORMAT_RF64)
        case .oggVorbis, .opus: Int32(SF_FORMAT_OGG)
        case .mp3: Int32(SF_FORMAT_MPEG)
        case .au: Int32(SF_FORMAT_AU)
        }
    }

    /// Whether the type is a lossy codec that chooses its own representation (Ogg Vorbis, Opus,
    /// MP3): it takes no ``FileSampleFormat``.
    public var isLossy: Bool {
        switch self {
        case .oggVorbis, .opus, .mp3: true
        default: false
        }
    }

    /// Whether the file's size cannot be known before it is written (FLAC and the lossy codecs).
    public var isCompressed: Bool { isLossy || self == .flac }

    /// The libsndfile subtype of a codec type (`SF_FORMAT_VORBIS`, `SF_FORMAT_OPUS`,
    /// `SF_FORMAT_MPEG_LAYER_III`); nil for types that take a ``FileSampleFormat``.
    public var codecSubtype: Int32? {
        switch self {
        case .oggVorbis: Int32(SF_FORMAT_VORBIS)
        case .opus: Int32(SF_FORMAT_OPUS)
        case .mp3: Int32(SF_FORMAT_MPEG_LAYER_III)
        default: nil
        }
    }

    /// The file sample formats this type stores, in the order messages list them (empty for the
    /// lossy codecs). Each was checked with libsndfile 1.2's `sf_format_check`.
    public var fileSampleFormats: [FileSampleFormat] {
        switch self {
        case .wav, .w64, .rf64: [.uint8, .int16, .int24, .int32, .float32, .float64, .ulaw, .alaw]
        case .aiff, .caf: [.int8, .int16, .int24, .int32, .float32, .float64, .ulaw, .alaw]
        case .au: [.int8, .int16, .int24, .int32, .float32, .float64, .ulaw, .alaw]
        case .flac: [.int8, .int16, .int24]
        case .oggVorbis, .opus, .mp3: []
        }
    }

    /// The queue sample formats (``Lockstep/SampleFormat``) this type stores unchanged: the
    /// 16-bit-and-wider part of ``fileSampleFormats`` (empty for the lossy codecs).
    public var writableSampleFormats: [SampleFormat] {
        SampleFormat.allCases.filter { fileSampleFormats.contains(FileSampleFormat($0)) }
    }

    /// The sample format used when the caller does not choose one: 32-bit float, or 24-bit
    /// integer for FLAC (which cannot store floats). Lossy codecs decode to 32-bit float.
    public var defaultSampleFormat: SampleFormat {
        self == .flac ? .int24 : .float32
    }

    /// The file sample format used when the caller does not choose one (f32; s24 for FLAC),
    /// nil for the lossy codecs.
    public var defaultFileSampleFormat: FileSampleFormat? {
        isLossy ? nil : FileSampleFormat(defaultSampleFormat)
    }

    /// Whether `--quality` (libsndfile's `SFC_SET_COMPRESSION_LEVEL`) applies: FLAC, Ogg
    /// Vorbis, Opus and MP3.
    public var acceptsQuality: Bool { isCompressed }

    /// The bitrate modes libsndfile 1.2 honours for this type: all three for MP3, none for the
    /// others (its Opus and Vorbis encoders accept the command and ignore it: measured, the
    /// files come out byte-identical).
    public var bitrateModes: [BitrateMode] {
        self == .mp3 ? BitrateMode.allCases : []
    }

    /// The only sample rates the type stores, or nil for any whole-number rate.
    public var sampleRates: [Int]? {
        switch self {
        case .opus: [8000, 12000, 16000, 24000, 48000]
        case .mp3: [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]
        case .flac: nil
        default: nil
        }
    }

    /// The most channels the type stores, or nil for Lockstep's own limit (64).
    public var maximumChannelCount: Int? {
        switch self {
        case .flac: 8
        case .mp3: 2
        default: nil
        }
    }

    /// Whether a recording survives the process being killed (`SIGKILL`): the file written so far
    /// opens and holds all but the last moments. WAV, AIFF, CAF, W64, RF64 and AU have their
    /// header rewritten after every buffer; FLAC is readable up to its last whole frame (its
    /// length field stays 0, which decoders accept). Ogg Vorbis and Opus are readable up to the
    /// last complete Ogg page, but libsndfile reports their length as unknown and Lockstep counts
    /// it by decoding; MP3 keeps every complete frame, with the length an estimate.
    public var survivesKill: Bool {
        switch self {
        case .oggVorbis, .opus, .mp3: false
        default: true
        }
    }

    /// The largest amount of audio data, in bytes, the container can hold (`nil` for no practical limit).
    public var maximumDataBytes: Int64? {
        switch self {
        case .wav, .au: 0xFFFF_FFFF - 4096
        case .aiff: 0x7FFF_FFFF - 4096
        default: nil
        }
    }

    /// The libsndfile format word (major type | subtype) for writing `sampleFormat` in this container.
    ///
    /// For the lossy codecs `sampleFormat` is ignored (they choose their own representation).
    /// - Parameter path: the output file, named in the error message (may be empty).
    /// - Throws: ``FileError`` of kind ``FileError/Kind/unsupportedOutputFormat`` when the type
    ///   cannot store the sample format (FLAC with 32-bit integers or floats: use s24).
    public func libsndfileFormat(for sampleFormat: SampleFormat, path: String = "") throws(FileError) -> Int32 {
        if let codecSubtype { return majorFormat | codecSubtype }
        return try libsndfileFormat(forFileSampleFormat: FileSampleFormat(sampleFormat), path: path)
    }

    /// The libsndfile format word (major type | subtype) for writing `sampleFormat` in this container.
    ///
    /// - Parameter path: the output file, named in the error message (may be empty).
    /// - Throws: ``FileError`` of kind ``FileError/Kind/unsupportedOutputFormat`` listing what
    ///   the type holds, when it cannot hold `sampleFormat` (or holds no sample format choice).
    public func libsndfileFormat(forFileSampleFormat sampleFormat: FileSampleFormat, path: String = "") throws(FileError) -> Int32 {
        guard fileSampleFormats.contains(sampleFormat) else {
            throw sampleFormatError(sampleFormat, path: path)
        }
        return majorFormat | sampleFormat.libsndfileSubtype
    }

    /// The error for a sample format this type cannot hold: it names what the type does hold.
    func sampleFormatError(_ sampleFormat: FileSampleFormat, path: String) -> FileError {
        if isLossy {
            return FileError(.unsupportedOutputFormat, path: path,
                problem: "\(self) holds no sample format choice (the codec chooses its own); leave --sample-format out")
        }
        let held = fileSampleFormats.map(\.rawValue).joined(separator: ", ")
        let hint = self == .flac
            ? "use s24 (lossless for any source up to 24 bits), or write WAV, CAF or W64 for float"
            : "choose one of those"
        return FileError(.unsupportedOutputFormat, path: path,
            problem: "\(self) cannot store \(sampleFormat.rawValue) (\(sampleFormat)) samples; \(self) holds \(held); \(hint)")
    }

    /// The writable type for an output path, chosen from its extension.
    ///
    /// - Throws: ``FileError`` of kind ``FileError/Kind/unsupportedOutputFormat`` naming the path
    ///   and listing the supported extensions when the extension is missing or unknown.
    public static func forOutput(path: String) throws(FileError) -> AudioFileType {
        let ext = FileSystem.pathExtension(of: path)
        let supported = writableExtensions.map { "." + $0 }.joined(separator: ", ")
        guard !ext.isEmpty else {
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "the output name has no extension, so the file type is unknown; end it with one of \(supported), or give --format")
        }
        guard let type = AudioFileType(pathExtension: ext) else {
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "unknown output file type .\(ext); end the name with one of \(supported), or give --format")
        }
        return type
    }

    /// The names `--format` accepts, for messages and help text.
    public static var formatNames: [String] { allCases.map(\.fileExtension) }
}
