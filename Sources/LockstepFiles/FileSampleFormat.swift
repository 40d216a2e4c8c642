import CSndfile
import Lockstep

/// The encoding of one sample in an uncompressed (or companded) audio file, as
/// `--sample-format` names it.
///
/// A superset of ``Lockstep/SampleFormat`` (the encodings queues take): files may also hold 8-bit
/// integers and the telephone companding laws. Codecs that choose their own representation
/// (MP3, Vorbis, Opus) have no file sample format; see ``AudioFileEncoding``.
public enum FileSampleFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// 8-bit unsigned integer (offset binary; WAV's 8-bit encoding).
    case uint8 = "u8"
    /// 8-bit signed integer (AIFF's 8-bit encoding).
    case int8 = "s8"
    /// 16-bit signed integer.
    case int16 = "s16"
    /// 24-bit signed integer.
    case int24 = "s24"
    /// 32-bit signed integer.
    case int32 = "s32"
    /// 32-bit IEEE float.
    case float32 = "f32"
    /// 64-bit IEEE float.
    case float64 = "f64"
    /// G.711 µ-law, 8 bits companded (about 14 bits of range).
    case ulaw
    /// G.711 A-law, 8 bits companded (about 13 bits of range).
    case alaw

    /// The file sample format that stores a queue ``Lockstep/SampleFormat`` unchanged.
    public init(_ format: SampleFormat) {
        switch format {
        case .int16: self = .int16
        case .int24: self = .int24
        case .int32: self = .int32
        case .float32: self = .float32
        case .float64: self = .float64
        }
    }

    /// Recognizes a `--sample-format` word, ignoring case (`u8`, `s8`, `s16`, `s24`, `s32`,
    /// `f32`, `f64`, `ulaw`/`mulaw`/`µlaw`, `alaw`); nil for anything else.
    public init?(name: String) {
        switch name.lowercased() {
        case "mulaw", "µlaw", "u-law", "µ-law": self = .ulaw
        case "a-law": self = .alaw
        default:
            guard let format = FileSampleFormat(rawValue: name.lowercased()) else { return nil }
            self = format
        }
    }

    /// Bytes one sample occupies in the file.
    public var bytesPerSample: Int {
        switch self {
        case .uint8, .int8, .ulaw, .alaw: 1
        case .int16: 2
        case .int24: 3
        case .int32, .float32: 4
        case .float64: 8
        }
    }

    /// Whether samples are IEEE floating point (stored unclipped).
    public var isFloat: Bool { self == .float32 || self == .float64 }

    /// The queue sample format nearest to this one: the same for 16-bit and wider, 16-bit
    /// integer for the 8-bit and companded encodings.
    public var nearestSampleFormat: SampleFormat {
        switch self {
        case .uint8, .int8, .ulaw, .alaw, .int16: .int16
        case .int24: .int24
        case .int32: .int32
        case .float32: .float32
        case .float64: .float64
        }
    }

    /// libsndfile's subtype (`SF_FORMAT_PCM_16`, `SF_FORMAT_ULAW`, …).
    public var libsndfileSubtype: Int32 {
        switch self {
        case .uint8: Int32(SF_FORMAT_PCM_U8)
        case .int8: Int32(SF_FORMAT_PCM_S8)
        case .int16: Int32(SF_FORMAT_PCM_16)
        case .int24: Int32(SF_FORMAT_PCM_24)
        case .int32: Int32(SF_FORMAT_PCM_32)
        case .float32: Int32(SF_FORMAT_FLOAT)
        case .float64: Int32(SF_FORMAT_DOUBLE)
        case .ulaw: Int32(SF_FORMAT_ULAW)
        case .alaw: Int32(SF_FORMAT_ALAW)
        }
    }

    /// A short human-readable name, such as `16-bit integer` or `µ-law`.
    public var description: String {
        switch self {
        case .uint8: "8-bit unsigned integer"
        case .int8: "8-bit integer"
        case .int16: "16-bit integer"
        case .int24: "24-bit integer"
        case .int32: "32-bit integer"
        case .float32: "32-bit float"
        case .float64: "64-bit float"
        case .ulaw: "µ-law"
        case .alaw: "A-law"
        }
    }
}

/// How a variable-rate codec spends its bits (libsndfile's `SFC_SET_BITRATE_MODE`).
public enum BitrateMode: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Every frame at the same bitrate (CBR).
    case constant
    /// A target average bitrate (ABR).
    case average
    /// Quality-driven variable bitrate (VBR).
    case variable

    /// libsndfile's value (`SF_BITRATE_MODE_CONSTANT`, …).
    public var libsndfileValue: Int32 {
        switch self {
        case .constant: Int32(SF_BITRATE_MODE_CONSTANT)
        case .average: Int32(SF_BITRATE_MODE_AVERAGE)
        case .variable: Int32(SF_BITRATE_MODE_VARIABLE)
        }
    }

    /// The mode for a value libsndfile reports (`SFC_GET_BITRATE_MODE`), nil for others.
    public init?(libsndfileValue: Int32) {
        guard let mode = Self.allCases.first(where: { $0.libsndfileValue == libsndfileValue }) else { return nil }
        self = mode
    }

    /// The option word (`constant`, `average`, `variable`).
    public var description: String { rawValue }
}
