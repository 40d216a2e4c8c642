import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// Files cut short, judged the same way in every uncompressed container: a cut inside the last
/// frame plays the whole frames with a warning; a cut of a frame or more is truncation; a cut
/// before the audio data is a damaged file.
@Suite("AudioFileReader: truncated containers, consistently")
struct TruncationTests {
    static let frames = 999
    static let containers: [AudioFileType] = [.wav, .aiff, .caf, .w64, .rf64]
    /// 16-bit stereo (4 bytes a frame), 24-bit mono (3, an odd data size: WAV and AIFF pad it,
    /// W64 declares padding it does not write) and 32-bit float stereo (8).
    static let encodings: [(SampleFormat, Int)] = [(.int16, 2), (.int24, 1), (.float32, 2)]

    /// A fixture and where its audio data lies.
    struct Fixture {
        var path: String
        var bytes: [UInt8]
        var samples: [Float]
        var channels: Int
        var bytesPerFrame: Int
        var dataStart: Int
        var dataEnd: Int { dataStart + TruncationTests.frames * bytesPerFrame }
    }

    static func fixture(_ dir: TemporaryTestDirectory, _ type: AudioFileType, _ sampleFormat: SampleFormat, channels: Int) throws -> Fixture {
        let path = dir.file("cut-\(sampleFormat.rawValue)-\(channels).\(type.fileExtension)")
        let samples = Helpers.testSignal(frames: frames, channels: max(2, channels)).enumerated()
            .filter { channels == 2 || $0.offset % 2 == 0 }.map(\.element)
        try Helpers.write(samples, to: path, type: type,
                          format: StreamFormat(sampleRate: 48000, channelCount: channels, sampleFormat: sampleFormat))
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let start = FileMutations.dataStart(of: bytes)
        let bytesPerFrame = sampleFormat.bytesPerSample * channels
        #expect(start > 0 && start + frames * bytesPerFrame <= bytes.count, "\(type): cannot find the audio data")
        return Fixture(path: path, bytes: bytes, samples: samples, channels: channels, bytesPerFrame: bytesPerFrame, dataStart: start)
    }

    /// Writes the first `count` bytes of the fixture to its own path.
    /// Writes the first `count` bytes of the fixture to a file of their own, named after the cut.
    static func cut(_ fixture: Fixture, to count: Int) throws -> String {
        let path = (fixture.path as NSString).deletingPathExtension + "-\(count)." + (fixture.path as NSString).pathExtension
        try Data(fixture.bytes.prefix(count)).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a cut inside the last frame: the whole frames play, the partial frame's bytes are ignored with a warning naming the file",
          arguments: containers)
    func insideLastFrame(type: AudioFileType) throws {
        let dir = try TemporaryTestDirectory()
        for (sampleFormat, channels) in Self.encodings {
            let fixture = try Self.fixture(dir, type, sampleFormat, channels: channels)
            for back in 1..<fixture.bytesPerFrame {
                let path = try Self.cut(fixture, to: fixture.dataEnd - back)
                let warnings = FileWarnings()
                let reader = try AudioFileReader(path: path, truncation: .reject, warnings: warnings)
                let ignored = fixture.bytesPerFrame - back
                let label = "\(type) \(sampleFormat) ×\(channels) cut \(back)"
                #expect(reader.frameCount == Int64(Self.frames - 1), "\(label)")
                #expect(!reader.isTruncated, "\(label)")
                #expect(reader.partialFrameByteCount == ignored, "\(label)")
                let warning = warnings.warning(for: path, kind: .partialFrame)
                #expect(warning?.count == Int64(ignored), "\(label)")
                #expect(warning?.message == "\(path): ends inside a frame: \(ignored) \(ignored == 1 ? "byte" : "bytes") of a partial frame ignored, the \(Self.frames - 1) whole frames play; re-export or re-copy the file if it should be longer", "\(label)")
                let read = try Helpers.readAll(reader)
                let expected = try Helpers.readAll(try AudioFileReader(path: fixture.path, warnings: FileWarnings()))
                #expect(read == Array(expected.prefix((Self.frames - 1) * channels)), "\(label)")
            }
        }
    }

    @Test("a cut of a whole frame or more is truncation: the same error for every container, naming the file",
          arguments: containers)
    func wholeFramesMissing(type: AudioFileType) throws {
        let dir = try TemporaryTestDirectory()
        for (sampleFormat, channels) in Self.encodings {
            let fixture = try Self.fixture(dir, type, sampleFormat, channels: channels)
            let bpf = fixture.bytesPerFrame
            for back in [bpf, bpf + 1, 2 * bpf - 1, 2 * bpf, 5 * bpf + 1] {
                let path = try Self.cut(fixture, to: fixture.dataEnd - back)
                let present = Self.frames - (back + bpf - 1) / bpf
                let label = "\(type) \(sampleFormat) ×\(channels) cut \(back)"
                let error = #expect(throws: FileError.self, "\(label)") {
                    try AudioFileReader(path: path, truncation: .reject, warnings: FileWarnings())
                }
                #expect(error?.kind == .truncated, "\(label)")
                #expect(error?.message == "\(path): the file is truncated: its header declares \(Self.frames) frames but only \(present) are present; re-export or re-copy it from the original", "\(label)")
                // Tolerated: the frames present play, and the problem is recorded as a warning.
                let warnings = FileWarnings()
                let reader = try AudioFileReader(path: path, truncation: .tolerate, warnings: warnings)
                #expect(reader.isTruncated && reader.declaredFrameCount == Int64(Self.frames), "\(label)")
                #expect(reader.frameCount == Int64(present), "\(label)")
                #expect(try Helpers.readAll(reader).count == present * channels, "\(label)")
                #expect(warnings.warning(for: path, kind: .truncated)?.message.hasSuffix("; using the \(present) frames it holds") == true, "\(label)")
            }
        }
    }

    @Test("a file cut in half is truncated in every container, and every whole frame present plays (a CAF too, which libsndfile alone cuts 8 bytes shorter)",
          arguments: containers)
    func half(type: AudioFileType) throws {
        let dir = try TemporaryTestDirectory()
        let fixture = try Self.fixture(dir, type, .int16, channels: 2)
        let path = try Self.cut(fixture, to: fixture.dataStart + (fixture.dataEnd - fixture.dataStart) / 2 + 1)
        let present = Self.frames / 2
        let error = #expect(throws: FileError.self) { try AudioFileReader(path: path, truncation: .reject, warnings: FileWarnings()) }
        #expect(error?.kind == .truncated)
        #expect(error?.message == "\(path): the file is truncated: its header declares \(Self.frames) frames but only \(present) are present; re-export or re-copy it from the original")
        let reader = try AudioFileReader(path: path, warnings: FileWarnings())
        #expect(reader.frameCount == Int64(present))
        let expected = try Helpers.readAll(try AudioFileReader(path: fixture.path, warnings: FileWarnings()))
        #expect(try Helpers.readAll(reader) == Array(expected.prefix(present * 2)))
        // Seeking within what is there works through the repaired view as well.
        try reader.seek(toFrame: 100)
        var frame = [Float](repeating: 0, count: 2)
        #expect(try reader.read(into: &frame, frames: 1) == 1)
        #expect(frame == Array(expected[200..<202]))
    }

    @Test("cuts at the header's boundaries: before the audio data a damaged file, at its first byte truncation with 0 frames",
          arguments: containers)
    func headerBoundaries(type: AudioFileType) throws {
        let dir = try TemporaryTestDirectory()
        let fixture = try Self.fixture(dir, type, .int16, channels: 2)
        let marks = FileMutations.headerBoundaries(of: fixture.bytes)
        #expect(marks.last == fixture.dataStart)
        for mark in marks.filter({ $0 < fixture.dataStart }) + [1, 2, 3] {
            let path = try Self.cut(fixture, to: mark)
            let error = #expect(throws: FileError.self, "\(type) cut at \(mark)") {
                try AudioFileReader(path: path, truncation: .tolerate, warnings: FileWarnings())
            }
            #expect(error?.message.hasPrefix(path + ": ") == true, "\(type) cut at \(mark): \(error?.message ?? "")")
            #expect(error?.kind == .corrupt || error?.kind == .unsupportedFormat, "\(type) cut at \(mark): \(error?.message ?? "")")
        }
        let headerOnly = try Self.cut(fixture, to: fixture.dataStart)
        let reader = try AudioFileReader(path: headerOnly, truncation: .tolerate, warnings: FileWarnings())
        #expect(reader.frameCount == 0 && reader.declaredFrameCount == Int64(Self.frames))
        let error = #expect(throws: FileError.self) { try AudioFileReader(path: headerOnly, truncation: .reject, warnings: FileWarnings()) }
        #expect(error?.message == "\(headerOnly): the file is truncated: its header declares \(Self.frames) frames but only 0 are present; re-export or re-copy it from the original")
    }

    @Test("an intact file with an odd data size (a pad byte, or W64's undeclared padding) is complete")
    func oddSizesAreWhole() throws {
        let dir = try TemporaryTestDirectory()
        for type in Self.containers {
            let fixture = try Self.fixture(dir, type, .int24, channels: 1)
            let warnings = FileWarnings()
            let reader = try AudioFileReader(path: fixture.path, truncation: .reject, warnings: warnings)
            #expect(reader.frameCount == Int64(Self.frames), "\(type)")
            #expect(reader.partialFrameByteCount == 0, "\(type)")
            #expect(warnings.all.isEmpty, "\(type): \(warnings.all)")
        }
    }

    @Test("a header that declares a partial frame (a data size that is not a whole number of frames) is warned about too")
    func declaredPartialFrame() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("odd.wav")
        var data = FileFixtures.wavData(samples: [Float](repeating: 0.5, count: 200),
                                        format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .int16))
        data.append(contentsOf: [0x11, 0x22, 0x33])                  // 3 bytes of a 101st frame
        data.replaceSubrange(40..<44, with: [UInt8(403 & 0xFF), UInt8(403 >> 8), 0, 0])
        data.replaceSubrange(4..<8, with: [UInt8((36 + 403) & 0xFF), UInt8((36 + 403) >> 8), 0, 0])
        try data.write(to: URL(fileURLWithPath: path))
        let warnings = FileWarnings()
        let reader = try AudioFileReader(path: path, truncation: .reject, warnings: warnings)
        #expect(reader.frameCount == 100)
        #expect(reader.partialFrameByteCount == 3)
        #expect(warnings.warning(for: path, kind: .partialFrame)?.count == 3)
    }

    @Test("a cut FLAC is truncation when decoding stops; tolerated, a mixdown keeps the frames before the cut")
    func flac() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("long.flac")
        let samples = FileFixtures.sine(frames: 48000, channels: 2, sampleRate: 48000, frequency: 1000, amplitude: 0.5)
        try Helpers.write(samples, to: path, type: .flac, format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .int16))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        for back in [1, 2, 3, bytes.count / 2] {
            let cut = dir.file("cut-\(back).flac")
            try bytes.prefix(bytes.count - back).write(to: URL(fileURLWithPath: cut))
            let strict = try AudioFileReader(path: cut, truncation: .reject, warnings: FileWarnings())
            let error = #expect(throws: FileError.self) { _ = try Helpers.readAll(strict) }
            #expect(error?.kind == .truncated)
            #expect(error?.message.hasPrefix("\(cut): the audio stops at frame ") == true)
            let warnings = FileWarnings()
            let tolerant = try AudioFileReader(path: cut, warnings: warnings)
            let present = try Helpers.readAll(tolerant).count / 2
            #expect(present > 0 && present < 48000)
            #expect(warnings.warning(for: cut, kind: .truncated)?.count == Int64(present))
            let out = dir.file("mix-\(back).wav")
            let summary = try LayerMixdown(layers: [MixdownLayer(path: cut)], outputPath: out, truncation: .tolerate).run()
            #expect(summary.frames == Int64(present))
            #expect(throws: FileError.self) { try LayerMixdown(layers: [MixdownLayer(path: cut)], outputPath: out + ".strict.wav").run() }
            #expect(!FileManager.default.fileExists(atPath: out + ".strict.wav"))
        }
    }
}
