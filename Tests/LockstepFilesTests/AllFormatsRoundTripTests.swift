import CSndfile
import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// Every container × sample format the installed libsndfile writes, written by Lockstep and read
/// back by libsndfile (directly, not through Lockstep's reader) and by sox wherever sox reads it:
/// exact for PCM and the lossless codecs, within a stated signal-to-noise ratio for µ-law, A-law
/// and the ADPCM family. Short signals (2048 frames), so the whole matrix runs in a second or two.
@Suite("every writable container × sample format round-trips")
struct AllFormatsRoundTripTests {
    let temp: TemporaryTestDirectory

    init() throws {
        temp = try TemporaryTestDirectory(prefix: "lockstep-allformats")
    }

    /// Every (type, sample format) pair Lockstep offers (the lossy codec types, which take no
    /// sample format, have their own round trips in `FormatTests`).
    static var pairs: [(AudioFileType, FileSampleFormat)] {
        AudioFileType.writableTypes.filter { !$0.isLossy }.flatMap { type in type.fileSampleFormats.map { (type, $0) } }
    }

    /// The least signal-to-noise ratio (dB) each lossy encoding must reach on the test signal (a
    /// 0.5-amplitude sine, quantized to 1/128); measured values are a few dB above each.
    static let minimumSNR: [FileSampleFormat: Double] = [
        .ulaw: 30, .alaw: 30, .imaADPCM: 20, .msADPCM: 30, .gsm610: 8, .g721: 20, .g723_24: 12,
        .g723_40: 20, .nmsADPCM16: 5, .nmsADPCM24: 12, .nmsADPCM32: 18, .voxADPCM: 20,
    ]

    /// sox's own G.72x decoders end up further from the signal than libsndfile's (measured
    /// 10.4–12.0 dB on the test signal): their least SNR through sox.
    static let minimumSoxSNR: [FileSampleFormat: Double] = [.g721: 10, .g723_24: 9, .g723_40: 10]

    /// Whether the encoding reproduces the test signal exactly (PCM of any width holds multiples
    /// of 1/128 exactly, and so do the lossless codecs).
    static func isExact(_ format: FileSampleFormat) -> Bool { minimumSNR[format] == nil }

    /// The pairs sox (14.4) cannot read, as found: AIFF-C compressions it does not know, ALAC in
    /// CAF, 16-bit 8SVX, MPC2K, G.721 and NMS ADPCM in WAV, A-law NIST, XI (its libsndfile backend
    /// fails to seek), DWVW and NMS in raw files; and floats in CAF, W64, MAT4 and MAT5, which its
    /// libsndfile backend misreads (libsndfile itself reads them exactly, above).
    static func soxReads(_ type: AudioFileType, _ format: FileSampleFormat) -> Bool {
        switch (type, format) {
        case (.caf, .float32), (.caf, .float64), (.w64, .float32), (.w64, .float64), (.mat4, .float32), (.mat4, .float64),
             (.mat5, .float32), (.mat5, .float64): false
        case (.aiff, .uint8), (.aiff, .ulaw), (.aiff, .alaw), (.aiff, .imaADPCM), (.aiff, .gsm610),
             (.aiff, .dwvw12), (.aiff, .dwvw16), (.aiff, .dwvw24): false
        case (.caf, .alac16), (.caf, .alac20), (.caf, .alac24), (.caf, .alac32): false
        case (.svx, .int16), (.mpc2k, _), (.xi, _), (.nist, .alaw): false
        case (.wav, .g721), (.wav, .nmsADPCM16), (.wav, .nmsADPCM24), (.wav, .nmsADPCM32): false
        case (.raw, .dwvw12), (.raw, .dwvw16), (.raw, .dwvw24), (.raw, .nmsADPCM16), (.raw, .nmsADPCM24),
             (.raw, .nmsADPCM32): false
        default: true
        }
    }

    /// How sox is told what a headerless file holds.
    static func soxRawArguments(_ format: FileSampleFormat, rate: Int, channels: Int) -> [String] {
        let shape = ["-r", "\(rate)", "-c", "\(channels)"]
        switch format {
        case .uint8: return ["-t", "raw", "-e", "unsigned-integer", "-b", "8"] + shape
        case .int8: return ["-t", "raw", "-e", "signed-integer", "-b", "8"] + shape
        case .int16: return ["-t", "raw", "-e", "signed-integer", "-b", "16"] + shape
        case .int24: return ["-t", "raw", "-e", "signed-integer", "-b", "24"] + shape
        case .int32: return ["-t", "raw", "-e", "signed-integer", "-b", "32"] + shape
        case .float32: return ["-t", "raw", "-e", "floating-point", "-b", "32"] + shape
        case .float64: return ["-t", "raw", "-e", "floating-point", "-b", "64"] + shape
        case .ulaw: return ["-t", "raw", "-e", "u-law", "-b", "8"] + shape
        case .alaw: return ["-t", "raw", "-e", "a-law", "-b", "8"] + shape
        case .gsm610: return ["-t", "gsm"] + shape
        case .voxADPCM: return ["-t", "vox"] + shape
        default: return []
        }
    }

    /// The rate and channels each pair is written at: 16 kHz where the header holds it (else the
    /// first rate it does: XI 44100, WVE 8000), two channels where the encoding holds two.
    static func shape(_ type: AudioFileType, _ format: FileSampleFormat) -> (rate: Int, channels: Int) {
        let word = type.majorFormat | format.libsndfileSubtype
        let channels = FormatProbe.channelCounts(word).contains(2) && (type.maximumChannelCount ?? 2) >= 2 ? 2 : 1
        let rates = FormatProbe.exactRates(word, channelCount: channels)
        return (rates.contains(16000) ? 16000 : rates.first ?? 16000, channels)
    }

    static func signal(frames: Int, channels: Int) -> [Float] {
        (0..<(frames * channels)).map { index in
            let frame = index / channels, channel = index % channels
            return (64 * sin(Float(frame) * (0.05 + 0.02 * Float(channel)))).rounded() / 128
        }
    }

    /// Signal-to-noise ratio of `decoded` against `original` over their common length, in dB.
    static func snr(_ original: [Float], _ decoded: [Float]) -> Double {
        var signal = 0.0, noise = 0.0
        for (x, y) in zip(original, decoded) {
            signal += Double(x) * Double(x)
            noise += Double(y - x) * Double(y - x)
        }
        return noise == 0 ? .infinity : 10 * log10(signal / noise)
    }

    /// Reads a file with libsndfile's own `sf_open` (raw files described, as a reader must).
    static func readWithLibsndfile(_ path: String, raw: SF_INFO?) throws -> (info: SF_INFO, samples: [Float]) {
        var info = raw ?? SF_INFO()
        let opened = LibsndfileOpenLock.open { sf_open(path, Int32(SFM_READ), &info) }
        guard let handle = opened.handle else { throw FixtureError(text: "libsndfile cannot open \(path): \(opened.message)") }
        defer { sf_close(handle) }
        var samples = [Float](repeating: 0, count: Int(info.frames) * Int(info.channels))
        let got = samples.withUnsafeMutableBufferPointer { sf_readf_float(handle, $0.baseAddress!, info.frames) }
        return (info, Array(samples[..<(Int(got) * Int(info.channels))]))
    }

    @Test("the matrix is libsndfile's: every container it writes but SD2, and the codecs inside them")
    func matrix() {
        let types = Set(AudioFileType.writableTypes)
        #expect(types == Set(AudioFileType.allCases), "not writable: \(Set(AudioFileType.allCases).subtracting(types))")
        #expect(AudioFileType.wav.fileSampleFormats.contains(.imaADPCM) && AudioFileType.wav.fileSampleFormats.contains(.msADPCM)
                && AudioFileType.wav.fileSampleFormats.contains(.gsm610) && AudioFileType.wav.fileSampleFormats.contains(.g721))
        #expect(AudioFileType.caf.fileSampleFormats.filter { $0.rawValue.hasPrefix("alac") } == [.alac16, .alac20, .alac24, .alac32])
        #expect(AudioFileType.au.fileSampleFormats.contains(.g723_24) && AudioFileType.au.fileSampleFormats.contains(.g723_40))
        #expect(AudioFileType.raw.fileSampleFormats.contains(.voxADPCM))
        #expect(AudioFileType.aiff.fileSampleFormats.contains(.dwvw16) && !AudioFileType.aiff.fileSampleFormats.contains(.dwvw12),
                "libsndfile 1.2 fails to write 12-bit DWVW in AIFF, so it is not offered")
        #expect(AudioFileType.xi.fileSampleFormats == [.dpcm8, .dpcm16])
        #expect(AudioFileType.flac.fileSampleFormats == [.int8, .int16, .int24])
        #expect(Self.pairs.count > 120, "\(Self.pairs.count) pairs")
    }

    @Test("written by Lockstep, read back by libsndfile and sox; info's codec, bitrate and length for each")
    func roundTrips() throws {
        var soxChecked = 0
        for (type, format) in Self.pairs {
            let (rate, channels) = Self.shape(type, format)
            let frames = 2048
            let input = Self.signal(frames: frames, channels: channels)
            let name = "\(type.rawValue)-\(format.rawValue).\(type.fileExtension)"
            let path = temp.file(name)
            let encoding = AudioFileEncoding(type: type, sampleFormat: format)
            let writer = try AudioFileWriter(path: path, encoding: encoding, sampleRate: Double(rate), channelCount: channels)
            try input.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: frames) }
            try writer.close()

            var raw: SF_INFO?
            if type == .raw {
                var info = SF_INFO()
                info.samplerate = Int32(rate)
                info.channels = Int32(channels)
                info.format = encoding.libsndfileFormat
                raw = info
            }
            let (info, decoded) = try Self.readWithLibsndfile(path, raw: raw)
            #expect(Int(info.samplerate) == rate && Int(info.channels) == channels, "\(name): \(info.samplerate) Hz \(info.channels) ch")
            #expect(Sndfile_subtype(info.format) == format.libsndfileSubtype, "\(name): subtype 0x\(String(info.format, radix: 16))")
            // Block codecs pad their last block; exact ones hold exactly what was written.
            #expect(decoded.count >= input.count, "\(name): \(decoded.count / channels) frames of \(frames)")
            print("\(name): \(rate) Hz, \(channels) ch, \(decoded.count / channels) frames, SNR \(Self.snr(input, decoded)) dB")
            if Self.isExact(format) {
                let same = Array(decoded.prefix(input.count)) == input
                #expect(same, "\(name): libsndfile read back other samples (SNR \(Self.snr(input, decoded)) dB)")
            } else {
                let ratio = Self.snr(input, decoded)
                #expect(ratio >= Self.minimumSNR[format]!, "\(name): SNR \(ratio) dB through libsndfile")
            }

            // What `info` shows of it: a codec name, a bitrate (exact for PCM and the fixed-rate
            // codecs, an average otherwise) and an exact length. (Raw files have no header to
            // describe them.)
            if type != .raw {
                let reader = try AudioFileReader(path: path, warnings: FileWarnings())
                let exact = type != .flac && (format.bytesPerSample != nil || format.codecBitsPerSample != nil)
                #expect(!reader.codecName.hasPrefix("format 0x") && reader.codecName.count > 2, "\(name): codec \(reader.codecName)")
                #expect(reader.bitrate != nil && reader.bitrateIsExact == exact && reader.lengthIsExact,
                        "\(name): bitrate \(reader.bitrate.map(String.init) ?? "none") exact \(reader.bitrateIsExact), length exact \(reader.lengthIsExact)")
                if let bits = format.codecBitsPerSample {
                    #expect(reader.bitrate == Int((Double(rate * channels) * bits).rounded()), "\(name): \(reader.bitrate ?? 0) b/s")
                }
                #expect(reader.frameCount == Int64(decoded.count / channels), "\(name): \(reader.frameCount) frames")
                reader.close()
            }

            guard Self.soxReads(type, format) else { continue }
            let out = temp.file(name + ".f32")
            let input0 = type == .raw ? Self.soxRawArguments(format, rate: rate, channels: channels) : []
            let sox = try CLI.run(input0 + [path, "-t", "raw", "-e", "floating-point", "-b", "32", "-L", out], executable: "/usr/bin/sox")
            #expect(sox.status == 0, "\(name): sox: \(sox.stderr)")
            guard sox.status == 0, let data = FileManager.default.contents(atPath: out) else { continue }
            let soxSamples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            #expect(soxSamples.count >= input.count, "\(name): sox read \(soxSamples.count / channels) frames")
            if Self.isExact(format) {
                let same = Array(soxSamples.prefix(input.count)) == input
                #expect(same, "\(name): sox read back other samples (SNR \(Self.snr(input, soxSamples)) dB)")
            } else {
                let ratio = Self.snr(input, soxSamples)
                #expect(ratio >= (Self.minimumSoxSNR[format] ?? Self.minimumSNR[format]!), "\(name): SNR \(ratio) dB through sox")
            }
            soxChecked += 1
        }
        #expect(soxChecked > 90, "sox read \(soxChecked) of \(Self.pairs.count)")
    }

    @Test("impossible combinations get one error listing what the container holds")
    func impossibleCombinations() throws {
        // A sample format the container does not hold.
        let held = #expect(throws: FileError.self) {
            try AudioFileEncoding.resolve(path: "x.flac", sampleFormat: .imaADPCM)
        }
        #expect(held?.message.contains("FLAC cannot store ima-adpcm") == true, "\(held?.message ?? "")")
        #expect(held?.message.contains("holds s8, s16, s24") == true && held?.message.contains(".wav") == true, "\(held?.message ?? "")")
        // Channels the encoding cannot hold: IMA ADPCM two, GSM one.
        let ima = try AudioFileEncoding.resolve(path: "x.wav", sampleFormat: .imaADPCM)
        let channels = #expect(throws: FileError.self) { try ima.check(sampleRate: 48000, channelCount: 6, path: "x.wav") }
        #expect(channels?.message == "x.wav: WAV ima-adpcm holds 1–2 channels, not 6; give --channels 2 (a downmix), or choose a --sample-format WAV holds them in (u8, s16, s24, s32, f32, f64, ulaw, alaw)", "\(channels?.message ?? "")")
        // A rate the header cannot hold.
        let xi = try AudioFileEncoding.resolve(path: "x.xi", sampleFormat: nil)
        let rate = #expect(throws: FileError.self) { try xi.check(sampleRate: 48000, channelCount: 1, path: "x.xi") }
        #expect(rate?.message.contains("XI dpcm-16 cannot store 48000 Hz exactly (its header would say 44100 Hz)") == true, "\(rate?.message ?? "")")
        #expect(rate?.message.contains("it holds 44100 Hz") == true, "\(rate?.message ?? "")")
        let htk = try AudioFileEncoding.resolve(path: "x.htk")
        #expect(throws: FileError.self) { try htk.check(sampleRate: 44100, channelCount: 1, path: "x.htk") }
        #expect((try? htk.check(sampleRate: 16000, channelCount: 1, path: "x.htk")) != nil)
        // Nothing is written when the check fails.
        #expect(throws: FileError.self) {
            try AudioFileWriter(path: temp.file("x.wve"), encoding: AudioFileEncoding(type: .wve), sampleRate: 48000, channelCount: 1)
        }
        #expect(try temp.contents().isEmpty)
    }
}

/// The subtype part of a libsndfile format word.
private func Sndfile_subtype(_ format: Int32) -> Int32 { format & Int32(SF_FORMAT_SUBMASK) }
