import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// NaN and infinite samples in float files: silence at decode, counted once, warned about.
@Suite("AudioFileReader: non-finite samples")
struct NonFiniteSampleTests {
    /// A stereo float signal of `frames` frames at 0.25 with NaN, +inf and −inf at known samples.
    static func poisoned(frames: Int) -> (samples: [Float], bad: [Int]) {
        var samples = [Float](repeating: 0.25, count: frames * 2)
        for index in stride(from: 1, to: samples.count, by: 2) { samples[index] = -0.5 }
        let bad = [3, 1000, 1001, 2 * frames - 1, 4097 * 2]
        let values: [Float] = [.nan, .infinity, -.infinity, .nan, -.nan]
        for (index, value) in zip(bad, values) where index < samples.count { samples[index] = value }
        return (samples, bad.filter { $0 < samples.count })
    }

    @Test("float and double files: non-finite samples read as 0, everything else unchanged, each counted once",
          arguments: [(AudioFileType.wav, SampleFormat.float32), (.wav, .float64), (.caf, .float32), (.w64, .float64),
                      (.aiff, .float32), (.rf64, .float32)])
    func replacedAndCounted(type: AudioFileType, sampleFormat: SampleFormat) throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("poison.\(type.fileExtension)")
        let (samples, bad) = Self.poisoned(frames: 5000)
        try Helpers.write(samples, to: path, type: type,
                          format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: sampleFormat))
        let warnings = FileWarnings()
        let reader = try AudioFileReader(path: path, warnings: warnings)
        #expect(reader.storesFloatingPointSamples)
        let read = try Helpers.readAll(reader)
        var expected = samples
        for index in bad { expected[index] = 0 }
        #expect(read == expected)
        #expect(read.allSatisfy { $0.isFinite })
        #expect(reader.nonFiniteSampleCount == Int64(bad.count))
        // Read again (a loop): cleaned again, not counted again.
        try reader.seek(toFrame: 0)
        #expect(try Helpers.readAll(reader) == expected)
        #expect(reader.nonFiniteSampleCount == Int64(bad.count))
        let warning = try #require(warnings.warning(for: path, kind: .nonFiniteSamples))
        #expect(warning.count == Int64(bad.count))
        #expect(warning.message == "\(path): \(bad.count) non-finite samples (NaN or infinity) replaced by silence; re-export the file, or check the plug-in or converter that wrote it")
        #expect(warnings.all.count == 1)
    }

    @Test("double reads clean the same samples")
    func doubleReads() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("poison64.wav")
        let (samples, bad) = Self.poisoned(frames: 3000)
        try Helpers.write(samples, to: path, type: .wav, format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float64))
        let reader = try AudioFileReader(path: path, warnings: FileWarnings())
        var buffer = [Double](repeating: 0, count: 6000)
        let got = try buffer.withUnsafeMutableBufferPointer { try reader.read(doubleSamples: $0.baseAddress!, frames: 3000) }
        #expect(got == 3000)
        #expect(buffer.allSatisfy { $0.isFinite })
        for index in bad { #expect(buffer[index] == 0) }
        #expect(buffer[0] == 0.25 && buffer[1] == -0.5)
        #expect(reader.nonFiniteSampleCount == Int64(bad.count))
    }

    @Test("reads that jump about count every sample of the file once")
    func seeksCountOnce() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("jumps.wav")
        var samples = [Float](repeating: 0.1, count: 10_000)
        for index in stride(from: 0, to: samples.count, by: 100) { samples[index] = .nan }     // 100 of them, one per 100 frames
        try FileFixtures.writeWAV(path: path, samples: samples, format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float32))
        let reader = try AudioFileReader(path: path, warnings: FileWarnings())
        var buffer = [Float](repeating: 0, count: 3000)
        func read(from frame: Int64, _ frames: Int) throws {
            try reader.seek(toFrame: frame)
            _ = try buffer.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: frames) }
        }
        try read(from: 5000, 2000)          // 5000..<7000: 20
        #expect(reader.nonFiniteSampleCount == 20)
        try read(from: 0, 1000)             // 0..<1000: 10
        try read(from: 6000, 3000)          // 6000..<9000: 7000..<9000 is new, 20
        #expect(reader.nonFiniteSampleCount == 50)
        try read(from: 0, 3000)             // 1000..<3000 new: 20
        try read(from: 0, 3000)
        #expect(reader.nonFiniteSampleCount == 70)
        let scan = try reader.scanPeak()    // the rest: 3000..<5000 and 9000..<10000
        #expect(reader.nonFiniteSampleCount == 100)
        #expect(scan.peak == Float(0.1))
    }

    @Test("a file of nothing but NaN has a peak of 0 and every sample counted")
    func allNaN() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("nan.wav")
        try FileFixtures.writeWAV(path: path, samples: [Float](repeating: .nan, count: 4800),
                                  format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float32))
        let warnings = FileWarnings()
        let scan = try AudioFileReader(path: path, warnings: warnings).scanPeak()
        #expect(scan.peak == 0 && scan.frames == 4800)
        #expect(warnings.warning(for: path, kind: .nonFiniteSamples)?.count == 4800)
    }

    @Test("doubles beyond the range of a float read as 0 through the float read, not as infinity")
    func doublesBeyondFloat() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("huge.wav")
        var data = FileFixtures.wavData(samples: [0, 0, 0, 0], format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float64))
        let values: [Double] = [1e300, 0.5, -1e300, -0.25]
        data.replaceSubrange(44..<76, with: values.flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian, Array.init) })
        try data.write(to: URL(fileURLWithPath: path))
        let reader = try AudioFileReader(path: path, warnings: FileWarnings())
        #expect(try Helpers.readAll(reader) == [0, 0.5, 0, -0.25])
        #expect(reader.nonFiniteSampleCount == 2)
    }

    @Test("integer files are not scanned")
    func integerFiles() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("int.wav")
        try FileFixtures.writeWAV(path: path, samples: [0.5, -1, 0.25], format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .int16))
        let reader = try AudioFileReader(path: path, warnings: FileWarnings())
        #expect(!reader.storesFloatingPointSamples)
        #expect(try Helpers.readAll(reader) == [0.5, -1, 0.25])
        #expect(reader.nonFiniteSampleCount == 0)
    }

    @Test("a mixdown of a poisoned layer is finite and the layer's count is recorded once")
    func mixdown() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("poison.wav")
        let (samples, bad) = Self.poisoned(frames: 20_000)
        try FileFixtures.writeWAV(path: path, samples: samples, format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32))
        let out = dir.file("mix.wav")
        let summary = try LayerMixdown(layers: [MixdownLayer(path: path), MixdownLayer(path: path, gainDB: -6)], outputPath: out).run()
        #expect(summary.peak.isFinite)
        let mixed = try Helpers.readAll(try AudioFileReader(path: out, warnings: FileWarnings()))
        #expect(mixed.count == samples.count)
        #expect(mixed.allSatisfy { $0.isFinite })
        #expect(mixed[bad[0]] == 0)
        #expect(FileWarnings.shared.warning(for: path, kind: .nonFiniteSamples)?.count == Int64(bad.count))
    }
}
