import CSndfile
import Lockstep

/// An audio file container Lockstep knows by name: every one the installed libsndfile (1.2)
/// writes.
///
/// The list is libsndfile's own (`SFC_GET_FORMAT_MAJOR_COUNT` / `SFC_GET_FORMAT_MAJOR`), less
/// Sound Designer II, whose resource fork libsndfile writes into a second file (`._name`) on Linux
/// — one output would become two, and an atomic write would leave the second behind — and plus
/// Ogg Opus as a type of its own (libsndfile's Ogg container with the Opus codec). MPEG Layer I
/// and II (`SF_FORMAT_MPEG_LAYER_I/II`) pass `sf_format_check` but libsndfile 1.2 cannot encode
/// them, so MP3 is the MPEG type.
///
/// ``AudioFileReader`` opens any file libsndfile can decode, whether or not it maps to a case here;
/// ``AudioFileWriter`` writes every case. Uncompressed and ADPCM-style containers take a
/// ``FileSampleFormat`` (``fileSampleFormats`` lists which, as libsndfile writes them); FLAC takes
/// an integer sample format and a compression level; Ogg Vorbis, Opus and MP3 choose their own
/// representation and take a quality (and, for MP3, a ``BitrateMode``) instead — see
/// ``AudioFileEncoding``.
public enum AudioFileType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Microsoft RIFF WAVE (`.wav`, `.wave`); limited to 4 GiB of audio.
    case wav
    /// Apple/SGI AIFF or AIFF-C (`.aif`, `.aiff`, `.aifc`); limited to 2 GiB of audio.
    case aiff
    /// Free Lossless Audio Codec (`.flac`); 8-, 16- or 24-bit integer samples.
    case flac
    /// Apple Core Audio Format (`.caf`); also ALAC.
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
    /// WAVE_FORMAT_EXTENSIBLE (`--format wavex`; written as `.wav`): WAV with a channel mask.
    case wavex
    /// Headerless samples (`.raw`, `.pcm`): the reader must be told the rate, channels and encoding.
    case raw
    /// Ensoniq PARIS (`.paf`).
    case paf
    /// Amiga IFF 8SVX/16SV (`.8svx`, `.iff`, `.svx`); mono, at most 65535 Hz.
    case svx = "8svx"
    /// NIST SPHERE (`.nist`, `.sph`).
    case nist
    /// Creative Labs VOC (`.voc`); mono or stereo.
    case voc
    /// Berkeley/IRCAM/CARL (`.sf`, `.ircam`).
    case ircam
    /// GNU Octave 2.0 / Matlab 4.2 (`.mat4`).
    case mat4
    /// GNU Octave 2.1 / Matlab 5.0 (`.mat`, `.mat5`).
    case mat5
    /// Portable Voice Format (`.pvf`).
    case pvf
    /// FastTracker 2 instrument (`.xi`); mono, 44100 Hz only, DPCM.
    case xi
    /// HMM Tool Kit (`.htk`); mono 16-bit, the rate stored as a period of whole 100 ns units.
    case htk
    /// MIDI Sample Dump Standard (`.sds`); mono, the rate stored as a period of whole nanoseconds.
    case sds
    /// Audio Visual Research (`.avr`); mono or stereo.
    case avr
    /// Psion Series 3 (`.wve`); mono A-law at 8000 Hz only.
    case wve
    /// Akai MPC 2000 (`.mpc2k`, `.mpc`); mono or stereo 16-bit, at most 65535 Hz.
    case mpc2k

    /// Recognizes a file-name extension, without the dot and ignoring case: any of
    /// ``pathExtensions`` (`wav`, `aiff`, `flac`, `caf`, `w64`, `rf64`, `ogg`, `opus`, `mp3`, `au`,
    /// `raw`, `paf`, `8svx`, `nist`, `sph`, `voc`, `sf`, `mat`, `pvf`, `xi`, `htk`, `sds`, `avr`,
    /// `wve`, `mpc2k`, …); nil for anything else.
    public init?(pathExtension: String) {
        let ext = pathExtension.lowercased()
        guard let type = Self.allCases.first(where: { $0.pathExtensions.contains(ext) }) else { return nil }
        self = type
    }

    /// Recognizes a `--format` name, ignoring case: any extension ``init(pathExtension:)`` takes,
    /// a type's own name (``formatNames``: `wavex`, `mat4`, `ircam`, …) and `vorbis` for Ogg Vorbis.
    public init?(formatName: String) {
        let name = formatName.lowercased()
        if name == "vorbis" {
            self = .oggVorbis
        } else if let type = AudioFileType(rawValue: name) {
            self = type
        } else {
            self.init(pathExtension: name)
        }
    }

    /// Recognizes the extension of the last component of `path`; `nil` if it has none or an unknown one.
    public init?(path: String) {
        self.init(pathExtension: FileSystem.pathExtension(of: path))
    }

    /// Recognizes a libsndfile format word (major type plus subtype), as found in `SF_INFO.format`.
    ///
    /// WAVE_FORMAT_EXTENSIBLE files (`SF_FORMAT_WAVEX`) map to ``wav`` (they read as WAV; write
    /// ``wavex`` to ask for the extensible header). Returns `nil` for containers not listed here
    /// (Sound Designer II, Ogg FLAC, MPEG Layer I/II, …).
    public init?(libsndfileFormat format: Int32) {
        let major = format & Int32(SF_FORMAT_TYPEMASK)
        let subtype = format & Int32(SF_FORMAT_SUBMASK)
        if major == Int32(SF_FORMAT_WAVEX) {
            self = .wav
            return
        }
        if major == Int32(SF_FORMAT_OGG) {
            switch subtype {
            case Int32(SF_FORMAT_VORBIS): self = .oggVorbis
            case Int32(SF_FORMAT_OPUS): self = .opus
            default: return nil
            }
            return
        }
        if major == Int32(SF_FORMAT_MPEG) {
            guard subtype == Int32(SF_FORMAT_MPEG_LAYER_III) else { return nil }
            self = .mp3
            return
        }
        guard let type = Self.allCases.first(where: { $0.majorFormat == major && $0.codecSubtype == nil }) else { return nil }
        self = type
    }

    /// The canonical file-name extension, such as `wav` or `aiff`.
    public var fileExtension: String { pathExtensions[0] }

    /// Every extension ``init(pathExtension:)`` maps to this type, canonical one first (WAVEX has
    /// WAV's, which maps to ``wav``: it is chosen by `--format wavex`).
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
        case .wavex: ["wav"]
        case .raw: ["raw", "pcm"]
        case .paf: ["paf"]
        case .svx: ["8svx", "iff", "svx"]
        case .nist: ["nist", "sph"]
        case .voc: ["voc"]
        case .ircam: ["sf", "ircam"]
        case .mat4: ["mat4"]
        case .mat5: ["mat", "mat5"]
        case .pvf: ["pvf"]
        case .xi: ["xi"]
        case .htk: ["htk"]
        case .sds: ["sds"]
        case .avr: ["avr"]
        case .wve: ["wve"]
        case .mpc2k: ["mpc2k", "mpc"]
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
        case .wavex: "WAVEX"
        case .raw: "raw"
        case .paf: "PAF"
        case .svx: "8SVX"
        case .nist: "NIST SPHERE"
        case .voc: "VOC"
        case .ircam: "IRCAM"
        case .mat4: "MAT4"
        case .mat5: "MAT5"
        case .pvf: "PVF"
        case .xi: "XI"
        case .htk: "HTK"
        case .sds: "SDS"
        case .avr: "AVR"
        case .wve: "WVE"
        case .mpc2k: "MPC2K"
        }
    }

    /// Whether ``AudioFileWriter`` can write this type with the installed libsndfile: it holds at
    /// least one sample format (or is a codec type), as probed.
    public var isWritable: Bool { isLossy || FormatProbe.holdsAnySampleFormat(self) }

    /// The writable types, in the order messages list them.
    public static var writableTypes: [AudioFileType] { allCases.filter(\.isWritable) }

    /// The extensions ``forOutput(path:)`` accepts, for messages and help text.
    public static var writableExtensions: [String] {
        var seen = Set<String>()
        return writableTypes.flatMap(\.pathExtensions).filter { seen.insert($0).inserted }
    }

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
        case .wavex: Int32(SF_FORMAT_WAVEX)
        case .raw: Int32(SF_FORMAT_RAW)
        case .paf: Int32(SF_FORMAT_PAF)
        case .svx: Int32(SF_FORMAT_SVX)
        case .nist: Int32(SF_FORMAT_NIST)
        case .voc: Int32(SF_FORMAT_VOC)
        case .ircam: Int32(SF_FORMAT_IRCAM)
        case .mat4: Int32(SF_FORMAT_MAT4)
        case .mat5: Int32(SF_FORMAT_MAT5)
        case .pvf: Int32(SF_FORMAT_PVF)
        case .xi: Int32(SF_FORMAT_XI)
        case .htk: Int32(SF_FORMAT_HTK)
        case .sds: Int32(SF_FORMAT_SDS)
        case .avr: Int32(SF_FORMAT_AVR)
        case .wve: Int32(SF_FORMAT_WVE)
        case .mpc2k: Int32(SF_FORMAT_MPC2K)
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

    /// Whether the file's size cannot be known before it is written, whatever the sample format
    /// (FLAC and the lossy codecs; see ``AudioFileEncoding/isCompressed`` for ADPCM and ALAC).
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

    /// The file sample formats this type stores, in ``FileSampleFormat``'s order (empty for the
    /// lossy codecs): those libsndfile accepts for it (`sf_format_check`) and really writes and
    /// reads back (probed once per process in memory, see ``FormatProbe``). With libsndfile 1.2:
    /// WAV holds u8, s16…f64, µ-law, A-law, IMA/MS ADPCM, GSM 6.10, G.721 and NMS ADPCM; AIFF adds
    /// s8 and DWVW 16/24 (DWVW 12 fails to write); PAF s24 reads back wrong and is left out (see
    /// ``FormatProbe/knownBroken``); CAF holds ALAC 16/20/24/32; AU holds G.721 and
    /// G.723; raw holds VOX ADPCM; XI holds DPCM.
    public var fileSampleFormats: [FileSampleFormat] {
        isLossy ? [] : FormatProbe.sampleFormats(of: self)
    }

    /// The queue sample formats (``Lockstep/SampleFormat``) this type stores unchanged: the
    /// 16-bit-and-wider PCM part of ``fileSampleFormats`` (empty for the lossy codecs).
    public var writableSampleFormats: [SampleFormat] {
        SampleFormat.allCases.filter { fileSampleFormats.contains(FileSampleFormat($0)) }
    }

    /// The sample format used when the caller does not choose one, as a queue format: the
    /// nearest to ``defaultFileSampleFormat``; 32-bit float for the lossy codecs (they decode to it).
    public var defaultSampleFormat: SampleFormat {
        defaultFileSampleFormat?.nearestSampleFormat ?? .float32
    }

    /// The file sample format used when the caller does not choose one: f32 where the type holds
    /// it, else s24, else s16, else the first it holds (A-law for WVE, 16-bit DPCM for XI); nil
    /// for the lossy codecs.
    public var defaultFileSampleFormat: FileSampleFormat? {
        if isLossy { return nil }
        let held = fileSampleFormats
        if self == .xi, held.contains(.dpcm16) { return .dpcm16 }
        return [FileSampleFormat.float32, .int24, .int16].first(where: held.contains) ?? held.first
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

    /// The only sample rates the type stores, or nil when ``FormatProbe`` decides (any rate whose
    /// header round trip is exact: see ``AudioFileEncoding/check(sampleRate:channelCount:path:)``).
    public var sampleRates: [Int]? {
        switch self {
        case .opus: [8000, 12000, 16000, 24000, 48000]
        case .mp3: [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]
        default: nil
        }
    }

    /// The most channels the type stores, or nil for Lockstep's own limit (64). (The sample
    /// format may hold fewer: IMA and MS ADPCM two, GSM, G.72x, NMS and DWVW one; see
    /// ``AudioFileEncoding/channelCounts``.)
    public var maximumChannelCount: Int? {
        switch self {
        case .flac: 8
        case .mp3, .voc, .avr, .mpc2k: 2
        case .svx, .xi, .htk, .sds, .wve: 1
        default: nil
        }
    }

    /// Whether a recording survives the process being killed (`SIGKILL`): the file written so far
    /// opens and holds all but the last moments. WAV, AIFF, CAF, W64, RF64 and AU have their
    /// header rewritten after every buffer, and raw has none; FLAC is readable up to its last whole frame (its
    /// length field stays 0, which decoders accept). Ogg Vorbis and Opus are readable up to the
    /// last complete Ogg page, but libsndfile reports their length as unknown and Lockstep counts
    /// it by decoding; MP3 keeps every complete frame, with the length an estimate. The other
    /// containers are not promised to.
    public var survivesKill: Bool {
        switch self {
        case .wav, .aiff, .flac, .caf, .w64, .rf64, .au, .wavex, .raw: true
        default: false
        }
    }

    /// The most frames the container can count, or nil for no practical limit: SDS stores its
    /// length in 21 bits (2097151 words; a longer file reads back as its length modulo 2²¹), less
    /// the writer's padding to a whole 120-frame packet: 2097040.
    public var maximumFrameCount: Int64? {
        self == .sds ? 2_097_040 : nil
    }

    /// The largest amount of audio data, in bytes, the container can hold (`nil` for no practical limit).
    public var maximumDataBytes: Int64? {
        switch self {
        case .wav, .wavex, .au: 0xFFFF_FFFF - 4096
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
        var seen = Set<String>()
        let others = Self.writableTypes.filter { $0.fileSampleFormats.contains(sampleFormat) }.map(\.fileExtension)
            .filter { seen.insert($0).inserted }
        let hint = self == .flac && !sampleFormat.isCompressed
            ? "use s24 (lossless for any source up to 24 bits), or write WAV, CAF or W64 for float"
            : others.isEmpty ? "choose one of those" : "choose one of those, or write a type that holds \(sampleFormat.rawValue) (\(others.map { "." + $0 }.joined(separator: ", ")))"
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
        guard let type = AudioFileType(pathExtension: ext), type.isWritable else {
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "unknown output file type .\(ext); end the name with one of \(supported), or give --format")
        }
        return type
    }

    /// The names `--format` accepts, for messages and help text: each type's own name (`wav`,
    /// `aiff`, …, `ogg`, `opus`, `mp3`, `au`, `wavex`, `raw`, …, `mpc2k`).
    public static var formatNames: [String] { writableTypes.map(\.rawValue) }
}
