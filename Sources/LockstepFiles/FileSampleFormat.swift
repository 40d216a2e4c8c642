import CSndfile
import Lockstep

/// The encoding of samples in an audio file, as `--sample-format` names it: PCM, the telephone
/// companding laws, and the ADPCM-style and lossless codecs libsndfile writes inside containers
/// (IMA and MS ADPCM, GSM 6.10, G.721/G.723, NMS and VOX ADPCM, DWVW, DPCM, ALAC).
///
/// A superset of ``Lockstep/SampleFormat`` (the encodings queues take). Which container holds
/// which is libsndfile's decision (``AudioFileType/fileSampleFormats``). Codecs that are file
/// types of their own (MP3, Vorbis, Opus) have no file sample format; see ``AudioFileEncoding``.
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
    /// IMA (DVI) ADPCM, 4 bits a sample; WAV, W64, AIFF; at most 2 channels.
    case imaADPCM = "ima-adpcm"
    /// Microsoft ADPCM, 4 bits a sample; WAV, W64; at most 2 channels.
    case msADPCM = "ms-adpcm"
    /// GSM 6.10 full rate (13 kb/s at 8 kHz); mono.
    case gsm610 = "gsm610"
    /// G.721 ADPCM, 4 bits a sample (32 kb/s at 8 kHz); mono.
    case g721 = "g721"
    /// G.723 ADPCM, 3 bits a sample (24 kb/s at 8 kHz); AU; mono.
    case g723_24 = "g723-24"
    /// G.723 ADPCM, 5 bits a sample (40 kb/s at 8 kHz); AU; mono.
    case g723_40 = "g723-40"
    /// NMS ADPCM, 2 bits a sample (16 kb/s at 8 kHz); mono.
    case nmsADPCM16 = "nms-adpcm-16"
    /// NMS ADPCM, 3 bits a sample (24 kb/s at 8 kHz); mono.
    case nmsADPCM24 = "nms-adpcm-24"
    /// NMS ADPCM, 4 bits a sample (32 kb/s at 8 kHz); mono.
    case nmsADPCM32 = "nms-adpcm-32"
    /// Dialogic VOX ADPCM, 4 bits a sample; raw files; mono.
    case voxADPCM = "vox-adpcm"
    /// Delta Width Variable Word, 12-bit; mono.
    case dwvw12 = "dwvw-12"
    /// Delta Width Variable Word, 16-bit (lossless); mono.
    case dwvw16 = "dwvw-16"
    /// Delta Width Variable Word, 24-bit (lossless); mono.
    case dwvw24 = "dwvw-24"
    /// 8-bit differential PCM (XI).
    case dpcm8 = "dpcm-8"
    /// 16-bit differential PCM (XI; lossless).
    case dpcm16 = "dpcm-16"
    /// Apple Lossless, 16-bit (CAF).
    case alac16 = "alac-16"
    /// Apple Lossless, 20-bit (CAF).
    case alac20 = "alac-20"
    /// Apple Lossless, 24-bit (CAF).
    case alac24 = "alac-24"
    /// Apple Lossless, 32-bit (CAF).
    case alac32 = "alac-32"

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

    /// Recognizes a `--sample-format` word, ignoring case: any raw value (`u8`, `s16`, `f64`,
    /// `ulaw`, `ima-adpcm`, `alac-24`, …) and the spellings `mulaw`/`µlaw`/`u-law`/`µ-law`,
    /// `a-law`, `gsm`, `g723`, `vox`, `alac` (16-bit) and underscores for hyphens; nil for anything else.
    public init?(name: String) {
        let word = String(name.lowercased().map { $0 == "_" ? "-" : $0 })
        switch word {
        case "mulaw", "µlaw", "u-law", "µ-law": self = .ulaw
        case "a-law": self = .alaw
        case "gsm", "gsm-610", "gsm6.10": self = .gsm610
        case "g723": self = .g723_24
        case "vox", "dialogic": self = .voxADPCM
        case "ima", "adpcm": self = .imaADPCM
        case "alac": self = .alac16
        default:
            guard let format = FileSampleFormat(rawValue: word) else { return nil }
            self = format
        }
    }

    /// Bytes one sample occupies in the file; nil for the compressed encodings (ADPCM, GSM,
    /// DWVW, DPCM, ALAC), whose size depends on the audio or comes in blocks.
    public var bytesPerSample: Int? {
        switch self {
        case .uint8, .int8, .ulaw, .alaw: 1
        case .int16: 2
        case .int24: 3
        case .int32, .float32: 4
        case .float64: 8
        default: nil
        }
    }

    /// Whether this is a compressed encoding (ADPCM, GSM, DWVW, DPCM, ALAC) rather than PCM or a
    /// companding law.
    public var isCompressed: Bool { bytesPerSample == nil }

    /// Whether the encoding reproduces what it is given exactly, at its own bit depth: PCM,
    /// floats, ALAC, DWVW 16/24 and 16-bit DPCM. (u8, s8 and the companding laws are exact only
    /// for values they can hold; the ADPCM family and GSM are lossy.)
    public var isLossless: Bool {
        switch self {
        case .uint8, .int8, .int16, .int24, .int32, .float32, .float64,
             .alac16, .alac20, .alac24, .alac32, .dwvw16, .dwvw24, .dpcm16: true
        default: false
        }
    }

    /// Whether samples are IEEE floating point (stored unclipped).
    public var isFloat: Bool { self == .float32 || self == .float64 }

    /// The queue sample format nearest to this one: the same for 16-bit and wider PCM, 16-bit
    /// integer for the 8-bit, companded and speech codecs, the codec's depth for ALAC and DWVW.
    public var nearestSampleFormat: SampleFormat {
        switch self {
        case .int24, .dwvw24, .alac20, .alac24: .int24
        case .int32, .alac32: .int32
        case .float32: .float32
        case .float64: .float64
        default: .int16
        }
    }

    /// libsndfile's subtype (`SF_FORMAT_PCM_16`, `SF_FORMAT_ULAW`, `SF_FORMAT_IMA_ADPCM`, …).
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
        case .imaADPCM: Int32(SF_FORMAT_IMA_ADPCM)
        case .msADPCM: Int32(SF_FORMAT_MS_ADPCM)
        case .gsm610: Int32(SF_FORMAT_GSM610)
        case .g721: Int32(SF_FORMAT_G721_32)
        case .g723_24: Int32(SF_FORMAT_G723_24)
        case .g723_40: Int32(SF_FORMAT_G723_40)
        case .nmsADPCM16: Int32(SF_FORMAT_NMS_ADPCM_16)
        case .nmsADPCM24: Int32(SF_FORMAT_NMS_ADPCM_24)
        case .nmsADPCM32: Int32(SF_FORMAT_NMS_ADPCM_32)
        case .voxADPCM: Int32(SF_FORMAT_VOX_ADPCM)
        case .dwvw12: Int32(SF_FORMAT_DWVW_12)
        case .dwvw16: Int32(SF_FORMAT_DWVW_16)
        case .dwvw24: Int32(SF_FORMAT_DWVW_24)
        case .dpcm8: Int32(SF_FORMAT_DPCM_8)
        case .dpcm16: Int32(SF_FORMAT_DPCM_16)
        case .alac16: Int32(SF_FORMAT_ALAC_16)
        case .alac20: Int32(SF_FORMAT_ALAC_20)
        case .alac24: Int32(SF_FORMAT_ALAC_24)
        case .alac32: Int32(SF_FORMAT_ALAC_32)
        }
    }

    /// The file sample format of a libsndfile subtype, nil for subtypes that are not one (Vorbis,
    /// Opus, MPEG).
    public init?(libsndfileSubtype subtype: Int32) {
        guard let format = Self.allCases.first(where: { $0.libsndfileSubtype == subtype }) else { return nil }
        self = format
    }

    /// Bits a sample takes in the stream for the fixed-rate codecs (G.721 4, G.723 3 or 5, NMS
    /// 2–4, VOX 4; GSM 6.10 1.625), from which an exact bitrate follows; nil for PCM (see
    /// ``bytesPerSample``), for the variable-rate ones (DWVW, DPCM, ALAC) and for IMA and MS
    /// ADPCM (4 bits a sample plus a header per block, whose size the file chooses).
    public var codecBitsPerSample: Double? {
        switch self {
        case .g721, .nmsADPCM32, .voxADPCM: 4
        case .g723_24, .nmsADPCM24: 3
        case .g723_40: 5
        case .nmsADPCM16: 2
        case .gsm610: 1.625
        default: nil
        }
    }

    /// A short human-readable name, such as `16-bit integer`, `µ-law` or `IMA ADPCM`.
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
        case .imaADPCM: "IMA ADPCM"
        case .msADPCM: "MS ADPCM"
        case .gsm610: "GSM 6.10"
        case .g721: "G.721 ADPCM"
        case .g723_24: "G.723 ADPCM 24 kb/s"
        case .g723_40: "G.723 ADPCM 40 kb/s"
        case .nmsADPCM16: "NMS ADPCM 16 kb/s"
        case .nmsADPCM24: "NMS ADPCM 24 kb/s"
        case .nmsADPCM32: "NMS ADPCM 32 kb/s"
        case .voxADPCM: "VOX ADPCM"
        case .dwvw12: "12-bit DWVW"
        case .dwvw16: "16-bit DWVW"
        case .dwvw24: "24-bit DWVW"
        case .dpcm8: "8-bit DPCM"
        case .dpcm16: "16-bit DPCM"
        case .alac16: "16-bit ALAC"
        case .alac20: "20-bit ALAC"
        case .alac24: "24-bit ALAC"
        case .alac32: "32-bit ALAC"
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
