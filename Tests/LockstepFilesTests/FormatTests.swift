import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// Every output type and sample format libsndfile 1.2 writes, written by Lockstep and read back by
/// libsndfile (``AudioFileReader``) and by sox; the encoding checks and their messages; what a
/// killed recording leaves in each type.
@Suite("Output formats")
struct FormatTests {
    /// The common types: the ones with a sox type of their own and a kill test.
    static let commonTypes: [AudioFileType] = [.wav, .aiff, .flac, .caf, .w64, .rf64, .oggVorbis, .opus, .mp3, .au]

    /// Every (type, PCM or companded sample format) pair the common types hold, read back through
    /// Lockstep's reader (every other container and the codecs inside containers:
    /// `AllFormatsRoundTripTests`).
    static let pcmCombinations: [(AudioFileType, FileSampleFormat)] = commonTypes.flatMap { type in
        type.fileSampleFormats.filter { !$0.isCompressed }.map { (type, $0) }
    }

    /// A stereo signal of multiples of 1/128 in −1 … 127/128: exact in every linear encoding, from
    /// u8 to f64.
    static func exactSignal(frames: Int) -> [Float] {
        (0..<(frames * 2)).map { (index: Int) -> Float in
            let step: Int = (index * 37 + (index / 2) * 11) % 256 - 128
            return Float(step) / 128
        }
    }

    /// A stereo music-like test signal for the lossy codecs: 440 Hz and 1234 Hz sines at −9 dBFS,
    /// different on each side.
    static func toneSignal(frames: Int, rate: Double = 48000) -> [Float] {
        var samples = [Float](repeating: 0, count: frames * 2)
        for frame in 0..<frames {
            let t = Double(frame) / rate
            samples[2 * frame] = Float(0.25 * sin(2 * .pi * 440 * t) + 0.1 * sin(2 * .pi * 1234 * t))
            samples[2 * frame + 1] = Float(0.2 * sin(2 * .pi * 660 * t + 1) + 0.1 * sin(2 * .pi * 1234 * t))
        }
        return samples
    }

    static func write(_ samples: [Float], path: String, encoding: AudioFileEncoding, rate: Double = 48000,
                      channels: Int = 2) throws {
        let writer = try AudioFileWriter(path: path, encoding: encoding, sampleRate: rate, channelCount: channels)
        try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: samples.count / channels) }
        try writer.close()
    }

    /// The file decoded by sox to raw 32-bit float (by opus-tools' `opusdec` for Opus, which sox
    /// 14.4.2 does not read), or nil when neither can read the type here.
    static func readWithSox(_ path: String, type: AudioFileType) throws -> [Float]? {
        if type == .opus && !soxFormats.contains("opus") {
            return try run(["opusdec", "--quiet", "--float", "--rate", "48000", path, "-"])
        }
        let soxType: String? = switch type {
        case .wav, .rf64: "wav"
        case .aiff: "aiff"
        case .flac: "flac"
        case .caf: "caf"
        case .w64: "w64"
        case .au: "au"
        case .oggVorbis: "vorbis"
        case .opus: "opus"
        case .mp3: "mp3"
        default: nil
        }
        guard let soxType, soxFormats.contains(soxType) else { return nil }
        return try run(["sox", "-t", soxType, path, "-t", "raw", "-e", "floating-point", "-b", "32", "-L", "-"])
    }

    /// Runs a decoder that writes raw 32-bit float on standard output; nil when it fails.
    static func run(_ arguments: [String]) throws -> [Float]? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// The file types this sox reads (from `sox -h`).
    static let soxFormats: Set<String> = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sox", "-h"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return [] }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("AUDIO FILE FORMATS:") }) else { return [] }
        return Set(line.dropFirst("AUDIO FILE FORMATS:".count).split(separator: " ").map(String.init))
    }()

    /// The largest error a companding law makes on full-scale input: µ-law's largest code is
    /// 32124/32768 (so −1 reads as −0.9803, an error of 0.0197), A-law's coarsest step is 1/32 of
    /// full scale (half a step: 1/64).
    static func tolerance(_ format: FileSampleFormat) -> Float {
        switch format {
        case .ulaw: 0.0197
        case .alaw: 1.0 / 64
        default: 0
        }
    }

    /// Whether sox's own reading of a type and sample format is known to be inexact: its CAF and
    /// W64 support goes through libsndfile as 16-bit integers (f32 comes back to within 2⁻¹⁵,
    /// f64 comes back wrong: sox 14.4.2), so those are compared to 2⁻¹⁵ or skipped.
    static func soxTolerance(_ type: AudioFileType, _ format: FileSampleFormat) -> Float? {
        guard type == .caf || type == .w64 else { return tolerance(format) }
        switch format {
        case .float64: return nil
        case .float32, .int24, .int32: return 1.0 / 32768
        default: return tolerance(format)
        }
    }

    @Test("every type × sample format: exact through libsndfile and sox (companding within half a step)",
          arguments: pcmCombinations)
    func pcmRoundTrip(type: AudioFileType, sampleFormat: FileSampleFormat) throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("out.\(type.fileExtension)")
        let samples = Self.exactSignal(frames: 4800)
        try Self.write(samples, path: path, encoding: AudioFileEncoding(type: type, sampleFormat: sampleFormat))
        let reader = try AudioFileReader(path: path)
        #expect(reader.fileType == type)
        #expect(reader.frameCount == 4800)
        #expect(reader.lengthIsExact)
        let back = try Helpers.readAll(reader)
        #expect(back.count == samples.count)
        let limit = Self.tolerance(sampleFormat)
        let worst = zip(samples, back).map { abs($0 - $1) }.max() ?? 1
        #expect(worst <= limit, "\(type) \(sampleFormat): libsndfile read back with error \(worst)")
        if let soxLimit = Self.soxTolerance(type, sampleFormat), let sox = try Self.readWithSox(path, type: type) {
            #expect(sox.count == samples.count, "\(type) \(sampleFormat): sox read \(sox.count) samples")
            let soxWorst = zip(samples, sox).map { abs($0 - $1) }.max() ?? 1
            #expect(soxWorst <= soxLimit, "\(type) \(sampleFormat): sox read back with error \(soxWorst)")
        }
    }

    /// The correlation and signal-to-noise ratio (dB) of `decoded` against `original` at the lag
    /// (0 … `maximumLag` frames of delay in `decoded`) that correlates best.
    static func similarity(_ original: [Float], _ decoded: [Float], maximumLag: Int = 3000) -> (correlation: Double, snr: Double, lag: Int) {
        let frames = min(original.count, decoded.count) / 2
        let window = frames - maximumLag - 1
        func measure(lag: Int, upTo end: Int) -> (correlation: Double, snr: Double) {
            var dot = 0.0, a2 = 0.0, b2 = 0.0, noise = 0.0
            for i in (2 * 2000)..<(2 * end) {
                let a = Double(original[i]), b = Double(decoded[i + 2 * lag])
                dot += a * b; a2 += a * a; b2 += b * b; noise += (a - b) * (a - b)
            }
            return (dot / max(1e-30, (a2 * b2).squareRoot()), 10 * log10(a2 / max(1e-30, noise)))
        }
        // The codec's delay from 6000 frames (the test tone repeats every 24 000), then the
        // figures over the whole window at that lag and its neighbours.
        let scores = (0...maximumLag).map { measure(lag: $0, upTo: min(window, 8000)).correlation }
        let coarse = scores.indices.max { scores[$0] < scores[$1] }!
        var best = (correlation: -2.0, snr: 0.0, lag: 0)
        for lag in max(0, coarse - 2)...min(maximumLag, coarse + 2) {
            let measured = measure(lag: lag, upTo: window)
            if measured.correlation > best.correlation { best = (measured.correlation, measured.snr, lag) }
        }
        return best
    }

    @Test("lossy codecs: decoded by libsndfile and sox, correlation ≥ 0.99 and SNR ≥ 15 dB at the default quality",
          arguments: [AudioFileType.oggVorbis, .opus, .mp3])
    func lossyRoundTrip(type: AudioFileType) throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("out.\(type.fileExtension)")
        let samples = Self.toneSignal(frames: 48000)
        try Self.write(samples, path: path, encoding: AudioFileEncoding(type: type))
        let reader = try AudioFileReader(path: path)
        #expect(reader.fileType == type)
        #expect(reader.isLossy)
        let back = try Helpers.readAll(reader)
        let measured = Self.similarity(samples, back)
        print("\(type) via libsndfile: \(back.count / 2) frames, correlation \(measured.correlation), SNR \(measured.snr) dB, lag \(measured.lag)")
        #expect(measured.correlation >= 0.99)
        #expect(measured.snr >= 15)
        if let sox = try Self.readWithSox(path, type: type) {
            let bySox = Self.similarity(samples, sox)
            print("\(type) via sox: \(sox.count / 2) frames, correlation \(bySox.correlation), SNR \(bySox.snr) dB, lag \(bySox.lag)")
            #expect(bySox.correlation >= 0.99)
        } else {
            Issue.record("\(type): neither sox nor opusdec could decode it; run Scripts/setup.sh (sox, libsox-fmt-all, opus-tools)")
        }
    }

    @Test("quality changes the lossy file size, higher quality larger", arguments: [AudioFileType.oggVorbis, .opus, .mp3])
    func qualityMatters(type: AudioFileType) throws {
        let dir = try TemporaryTestDirectory()
        let samples = Self.toneSignal(frames: 48000)
        var sizes: [Int] = []
        for quality in [0.0, 1.0] {
            let path = dir.file("q\(quality).\(type.fileExtension)")
            try Self.write(samples, path: path, encoding: AudioFileEncoding(type: type, quality: quality))
            sizes.append(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int)
        }
        #expect(sizes[1] > sizes[0], "\(type): sizes at quality 0 and 1: \(sizes)")
    }

    @Test("MP3 bitrate modes are written and read back")
    func mp3BitrateModes() throws {
        let dir = try TemporaryTestDirectory()
        for mode in BitrateMode.allCases {
            let path = dir.file("\(mode).mp3")
            try Self.write(Self.toneSignal(frames: 48000), path: path, encoding: AudioFileEncoding(type: .mp3, bitrateMode: mode))
            let reader = try AudioFileReader(path: path)
            #expect(reader.bitrateMode == mode)
            #expect(reader.codecName == "MP3")
            #expect(reader.bitrate != nil)
        }
    }

    @Test("impossible combinations get one message listing what the type holds", arguments: [
        ("x.mp3", nil, FileSampleFormat.int16, nil, nil, "x.mp3: MP3 holds no sample format choice (the codec chooses its own); leave --sample-format out"),
        ("x.flac", nil, .float32, nil, nil, "x.flac: FLAC cannot store f32 (32-bit float) samples; FLAC holds s8, s16, s24; use s24"),
        ("x.wav", nil, .int8, nil, nil, "x.wav: WAV cannot store s8 (8-bit integer) samples; WAV holds u8, s16, s24, s32, f32, f64, ulaw, alaw"),
        ("x.aiff", nil, .msADPCM, nil, nil, "AIFF holds u8, s8, s16, s24, s32, f32, f64, ulaw, alaw, ima-adpcm, gsm610, dwvw-16, dwvw-24"),
        ("x.wav", nil, nil, 0.5, nil, "x.wav: WAV has no quality setting (it is uncompressed)"),
        ("x.flac", nil, nil, 1.5, nil, "--quality 1.5 is out of range; use 0 (smallest file) to 1 (best quality)"),
        ("x.opus", nil, nil, nil, BitrateMode.constant, "Opus takes no bitrate mode (libsndfile sets it for MP3 only)"),
        ("x.txt", "mp4", nil, nil, nil, "unknown --format 'mp4'; use one of wav, aiff, flac, caf, w64, rf64, ogg, opus, mp3, au"),
        ("x.bin", nil, nil, nil, nil, "unknown output file type .bin"),
    ] as [(String, String?, FileSampleFormat?, Double?, BitrateMode?, String)])
    func impossibleCombinations(path: String, formatName: String?, sampleFormat: FileSampleFormat?, quality: Double?,
                                bitrateMode: BitrateMode?, message: String) {
        let error = #expect(throws: FileError.self) {
            try AudioFileEncoding.resolve(path: path, formatName: formatName, sampleFormat: sampleFormat, quality: quality,
                                          bitrateMode: bitrateMode)
        }
        #expect(error?.kind == .unsupportedOutputFormat)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
    }

    @Test("--format overrides the extension")
    func formatOverrides() throws {
        let encoding = try AudioFileEncoding.resolve(path: "take.dat", formatName: "vorbis", quality: 0.3)
        #expect(encoding.type == .oggVorbis && encoding.sampleFormat == nil)
        #expect(encoding.compressionLevel == 0.7)
        #expect(try AudioFileEncoding.resolve(path: "x.wav", formatName: "AU", sampleFormat: .ulaw).libsndfileFormat == 0x030010)
    }

    @Test("rates and channel counts the codecs cannot hold are refused before a file exists", arguments: [
        (AudioFileType.opus, 44100.0, 2, "Opus holds only 8000, 12000, 16000, 24000, 48000 Hz, not 44100"),
        (.mp3, 96000, 2, "MP3 holds only 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000 Hz, not 96000"),
        (.mp3, 48000, 6, "MP3 holds at most 2 channels, not 6"),
        (.flac, 48000, 9, "FLAC holds at most 8 channels, not 9"),
    ])
    func ratesAndChannels(type: AudioFileType, rate: Double, channels: Int, message: String) throws {
        let dir = try TemporaryTestDirectory()
        let error = #expect(throws: FileError.self) {
            _ = try AudioFileWriter(path: dir.file("x.\(type.fileExtension)"), encoding: AudioFileEncoding(type: type),
                                    sampleRate: rate, channelCount: channels)
        }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
        #expect(try dir.contents().isEmpty)
    }

    @Test("a compressed output abandoned half-way leaves nothing under its name", arguments: [AudioFileType.oggVorbis, .opus, .mp3, .flac])
    func abandonedCompressedOutput(type: AudioFileType) throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("out.\(type.fileExtension)")
        let writer = try AudioFileWriter(path: path, encoding: AudioFileEncoding(type: type), sampleRate: 48000, channelCount: 2)
        let samples = Self.toneSignal(frames: 24000)
        try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 24000) }
        #expect(try dir.contents().isEmpty)
        writer.abort()
        #expect(try dir.contents().isEmpty)
    }

    @Test("what a killed recording leaves: every type that survives a kill reads back all but its last block",
          arguments: commonTypes)
    func killedRecording(type: AudioFileType) throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("take.\(type.fileExtension)")
        let snapshot = dir.file("killed.\(type.fileExtension)")
        // Written the way FileRecorder writes: directly, a quarter second at a time, the header
        // rewritten after each; the file as it stands on disk is what SIGKILL would leave.
        let writer = try AudioFileWriter(path: path, encoding: AudioFileEncoding(type: type), sampleRate: 48000,
                                         channelCount: 2, atomic: false)
        let samples = Self.toneSignal(frames: 96000)
        for block in 0..<8 {
            try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress! + block * 24000, frames: 12000) }
            try writer.updateHeader()
        }
        try FileManager.default.copyItem(atPath: path, toPath: snapshot)
        writer.abort()
        let reader = try? AudioFileReader(path: snapshot, truncation: .tolerate, warnings: FileWarnings())
        let frames = try reader.map { try Helpers.readAll($0).count / 2 } ?? -1
        print("\(type) killed after 96000 frames: \(reader == nil ? "unreadable" : "\(frames) frames readable, length \(reader!.lengthIsExact ? "exact" : "estimated/unknown")")")
        if type.survivesKill {
            #expect(frames >= 96000 - 4608, "\(type): \(frames) frames readable")
        }
        if type == .mp3 {            // constant bitrate: its length counted from its bytes
            #expect(frames >= 96000 - 4800, "\(type): \(frames) frames readable")
        }
    }
}
