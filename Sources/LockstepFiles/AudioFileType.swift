import CSndfile
import Lockstep

/// An audio file container Lockstep knows by name: the ones it writes and the common ones it reads.
///
/// ``AudioFileReader`` opens any file libsndfile can decode, whether or not it maps to a case here;
/// ``AudioFileWriter`` writes only the ``isWritable`` types (WAV, AIFF, FLAC, CAF, W64, RF64).
public enum AudioFileType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Microsoft RIFF WAVE (`.wav`, `.wave`); limited to 4 GiB of audio.
    case wav
    /// Apple/SGI AIFF or AIFF-C (`.aif`, `.aiff`, `.aifc`); limited to 2 GiB of audio.
    case aiff
    /// Free Lossless Audio Codec (`.flac`); 16- or 24-bit integer samples.
    case flac
    /// Apple Core Audio Format (`.caf`).
    case caf
    /// Sony/Sonic Foundry Wave64 (`.w64`), WAV without the 4 GiB limit.
    case w64
    /// EBU RF64 (`.rf64`), WAV without the 4 GiB limit.
    case rf64
    /// Ogg Vorbis (`.ogg`, `.oga`); read only.
    case oggVorbis = "ogg"
    /// Ogg Opus (`.opus`); read only.
    case opus
    /// MPEG-1/2 Layer III (`.mp3`); read only.
    case mp3

    /// Recognizes a file-name extension, without the dot and ignoring case.
    ///
    /// Accepts `wav`, `wave`, `aif`, `aiff`, `aifc`, `flac`, `caf`, `w64`, `rf64`, `ogg`, `oga`,
    /// `opus` and `mp3`; returns `nil` for anything else.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "wav", "wave": self = .wav
        case "aif", "aiff", "aifc": self = .aiff
        case "flac": self = .flac
        case "caf": self = .caf
        case "w64": self = .w64
        case "rf64": self = .rf64
        case "ogg", "oga": self = .oggVorbis
        case "opus": self = .opus
        case "mp3": self = .mp3
        default: return nil
        }
    }

    /// Recognizes the extension of the last component of `path`; `nil` if it has none or an unknown one.
    public init?(path: String) {
        self.init(pathExtension: FileSystem.pathExtension(of: path))
    }

    /// Recognizes a libsndfile format word (major type plus subtype), as found in `SF_INFO.format`.
    ///
    /// WAVE_FORMAT_EXTENSIBLE files (`SF_FORMAT_WAVEX`) map to ``wav``. Returns `nil` for
    /// containers not listed here (AU, raw, Ogg FLAC, …).
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
    public var fileExtension: String {
        switch self {
        case .wav: "wav"
        case .aiff: "aiff"
        case .flac: "flac"
        case .caf: "caf"
        case .w64: "w64"
        case .rf64: "rf64"
        case .oggVorbis: "ogg"
        case .opus: "opus"
        case .mp3: "mp3"
        }
    }

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
        }
    }

    /// Whether ``AudioFileWriter`` can write this type (WAV, AIFF, FLAC, CAF, W64 and RF64).
    public var isWritable: Bool {
        switch self {
        case .wav, .aiff, .flac, .caf, .w64, .rf64: true
        case .oggVorbis, .opus, .mp3: false
        }
    }

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
        }
    }

    /// The sample formats ``AudioFileWriter`` can store in this type (empty for read-only types).
    ///
    /// FLAC stores 16- and 24-bit integers; the other writable types also store 32-bit integers
    /// and 32- and 64-bit floats.
    public var writableSampleFormats: [SampleFormat] {
        switch self {
        case .flac: [.int16, .int24]
        case .wav, .aiff, .caf, .w64, .rf64: [.int16, .int24, .int32, .float32, .float64]
        case .oggVorbis, .opus, .mp3: []
        }
    }

    /// The sample format used when the caller does not choose one: 32-bit float, or 24-bit
    /// integer for FLAC (which cannot store floats).
    public var defaultSampleFormat: SampleFormat {
        self == .flac ? .int24 : .float32
    }

    /// The largest amount of audio data, in bytes, the container can hold (`nil` for no practical limit).
    public var maximumDataBytes: Int64? {
        switch self {
        case .wav: 0xFFFF_FFFF - 4096
        case .aiff: 0x7FFF_FFFF - 4096
        default: nil
        }
    }

    /// The libsndfile format word (major type | subtype) for writing `sampleFormat` in this container.
    ///
    /// - Parameter path: the output file, named in the error message (may be empty).
    /// - Throws: ``FileError`` of kind ``FileError/Kind/unsupportedOutputFormat`` when the type is
    ///   read-only or cannot store the sample format (FLAC with 32-bit integers or floats: use s24).
    public func libsndfileFormat(for sampleFormat: SampleFormat, path: String = "") throws(FileError) -> Int32 {
        guard isWritable else {
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "Lockstep cannot write \(self) files; write \(Self.writableTypesList) instead")
        }
        guard writableSampleFormats.contains(sampleFormat) else {
            let supported = writableSampleFormats.map(\.rawValue).joined(separator: " or ")
            let hint = self == .flac
                ? "use s24 (24-bit, lossless for any source up to 24 bits) or write WAV/CAF for float"
                : "use \(supported)"
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "\(self) cannot store \(sampleFormat.rawValue) (\(sampleFormat)) samples; \(hint)")
        }
        let subtype: Int32 = switch sampleFormat {
        case .int16: Int32(SF_FORMAT_PCM_16)
        case .int24: Int32(SF_FORMAT_PCM_24)
        case .int32: Int32(SF_FORMAT_PCM_32)
        case .float32: Int32(SF_FORMAT_FLOAT)
        case .float64: Int32(SF_FORMAT_DOUBLE)
        }
        return majorFormat | subtype
    }

    /// The writable type for an output path, chosen from its extension.
    ///
    /// - Throws: ``FileError`` of kind ``FileError/Kind/unsupportedOutputFormat`` naming the path
    ///   and listing the supported extensions when the extension is missing, unknown or read-only.
    public static func forOutput(path: String) throws(FileError) -> AudioFileType {
        let ext = FileSystem.pathExtension(of: path)
        let supported = writableExtensions.map { "." + $0 }.joined(separator: ", ")
        guard !ext.isEmpty else {
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "the output name has no extension, so the file type is unknown; end it with one of \(supported)")
        }
        guard let type = AudioFileType(pathExtension: ext) else {
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "unknown output file type .\(ext); end the name with one of \(supported)")
        }
        guard type.isWritable else {
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "Lockstep cannot write \(type) files; end the name with one of \(supported)")
        }
        return type
    }

    private static var writableTypesList: String {
        writableTypes.map(\.description).joined(separator: ", ")
    }
}
