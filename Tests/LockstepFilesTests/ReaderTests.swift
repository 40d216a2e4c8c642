import Foundation
import Synchronization
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

@Suite("AudioFileReader")
struct ReaderTests {
    // MARK: Decoding

    @Test("16-bit WAV samples read as s / 32768 exactly")
    func integerScaling() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("fixture.wav")
        let values: [Float] = [0, 1.0 / 32768, -1, 32767.0 / 32768, 0.5, -0.25]
        try FileFixtures.writeWAV(path: path, samples: values,
                                  format: StreamFormat(sampleRate: 8000, channelCount: 2, sampleFormat: .int16))
        let reader = try AudioFileReader(path: path)
        #expect(reader.format == StreamFormat(sampleRate: 8000, channelCount: 2, sampleFormat: .int16))
        #expect(reader.frameCount == 3)
        #expect(reader.fileType == .wav)
        #expect(reader.containerName == "WAV (Microsoft)")
        #expect(try Helpers.readAll(reader) == values)
    }

    @Test("float WAV samples outside ±1 are not clipped or rescaled")
    func floatBeyondUnity() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("hot.wav")
        let values: [Float] = [2.5, -4, 0.125, 1e-6]
        try FileFixtures.writeWAV(path: path, samples: values,
                                  format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float32))
        let reader = try AudioFileReader(path: path)
        #expect(reader.format.sampleFormat == .float32)
        #expect(try Helpers.readAll(reader) == values)
        #expect(try reader.scanPeak().peak == 4)
    }

    @Test("24-bit WAV fixtures report int24 and decode exactly")
    func int24() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("s24.wav")
        let values: [Float] = [0.5, -1, 8_388_607.0 / 8_388_608, 1.0 / 8_388_608]
        try FileFixtures.writeWAV(path: path, samples: values,
                                  format: StreamFormat(sampleRate: 44100, channelCount: 1, sampleFormat: .int24))
        let reader = try AudioFileReader(path: path)
        #expect(reader.format.sampleFormat == .int24)
        #expect(try Helpers.readAll(reader) == values)
    }

    @Test("lossy files open as float32 with their rate, channels and length",
          arguments: [("ogg", Helpers.oggVorbis, AudioFileType.oggVorbis),
                      ("opus", Helpers.oggOpus, .opus), ("mp3", Helpers.mp3, .mp3)])
    func lossyFormats(ext: String, sfFormat: Int32, type: AudioFileType) throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("lossy.\(ext)")
        let signal = FileFixtures.sine(frames: 48000, channels: 2, sampleRate: 48000, frequency: 440, amplitude: 0.5)
        try Helpers.encodeWithLibsndfile(signal, path: path, format: sfFormat, channels: 2, sampleRate: 48000)
        let reader = try AudioFileReader(path: path)
        #expect(reader.fileType == type)
        #expect(reader.format == StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32))
        #expect(reader.frameCount == 48000)
        let scan = try reader.scanPeak()
        #expect(scan.frames == 48000)
        #expect(abs(scan.peak - 0.5) < 0.1)  // lossy coding moves peaks a little
        #expect(!reader.isTruncated)
    }

    // MARK: Position, peak scan

    @Test("seek moves the read position; scanPeak restores it")
    func seekAndScan() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("seek.caf")
        var samples = Helpers.testSignal(frames: 10_000, channels: 2).map { $0 * 0.5 }
        samples[2 * 7777 + 1] = -0.875
        try Helpers.write(samples, to: path, type: .caf,
                          format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32))
        let reader = try AudioFileReader(path: path)
        try reader.seek(toFrame: 5000)
        #expect(reader.position == 5000)
        let scan = try reader.scanPeak()
        #expect(scan.peak == 0.875)
        #expect(scan.frames == 10_000)
        #expect(reader.position == 5000)
        var frame = [Float](repeating: 0, count: 2)
        #expect(try reader.read(into: &frame, frames: 1) == 1)
        #expect(frame == Array(samples[10_000..<10_002]))
        #expect(reader.position == 5001)

        try reader.seek(toFrame: 10_000)
        #expect(try reader.read(into: &frame, frames: 1) == 0)
        let error = #expect(throws: FileError.self) { try reader.seek(toFrame: 10_001) }
        #expect(error?.kind == .ioError)

        let (peak, frames) = try AudioFileReader.scanPeak(path: path)
        #expect(peak == 0.875 && frames == 10_000)
    }

    @Test("reads after close throw; close is idempotent")
    func closed() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("c.wav")
        try FileFixtures.writeWAV(path: path, samples: [0, 0], format: StreamFormat(sampleRate: 48000, channelCount: 1))
        let reader = try AudioFileReader(path: path)
        reader.close()
        reader.close()
        #expect(reader.isClosed)
        var sample: Float = 0
        let error = #expect(throws: FileError.self) { try reader.read(into: &sample, frames: 1) }
        #expect(error?.kind == .ioError)
    }

    // MARK: Open errors

    @Test("a missing file is reported as not found, naming the path")
    func missing() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("nope.wav")
        let error = #expect(throws: FileError.self) { try AudioFileReader(path: path) }
        #expect(error?.kind == .notFound)
        #expect(error?.libsndfileCode == nil)                 // found before libsndfile saw it
        #expect(error?.path == path)
        #expect(error?.description.hasPrefix(path + ": no such file") == true)
        let inMissingFolder = #expect(throws: FileError.self) { try AudioFileReader(path: dir.file("x/y.wav")) }
        #expect(inMissingFolder?.kind == .notFound)
    }

    @Test("an empty file is reported as empty")
    func empty() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("empty.wav")
        try FileFixtures.writeText(path: path, "")
        let error = #expect(throws: FileError.self) { try AudioFileReader(path: path) }
        #expect(error?.kind == .emptyFile)
        #expect(error?.message.contains("empty (0 bytes)") == true)
    }

    @Test("opens on many threads at once: every text file is still 'not audio' with libsndfile's code (its open error is process-wide; Lockstep reads it under one lock)")
    func concurrentOpenErrors() throws {
        let dir = try TemporaryTestDirectory()
        let text = dir.file("notes.wav")
        try FileFixtures.writeText(path: text, "These are my notes, not a sound file.\n")
        let audio = dir.file("tone.wav")
        try FileFixtures.writeWAV(path: audio, samples: FileFixtures.sine(frames: 480, channels: 1, sampleRate: 48000, frequency: 440, amplitude: 0.5),
                                  format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .int16))
        let wrong = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for _ in 0..<150 {
                if worker % 2 == 0 {
                    do throws(FileError) {
                        _ = try AudioFileReader(path: text)
                        wrong.withLock { $0.append("the text file opened") }
                    } catch {
                        if error.kind != .unsupportedFormat || error.libsndfileCode != 1 {
                            wrong.withLock { $0.append("\(error.kind) \(error.libsndfileCode.map(String.init) ?? "-"): \(error.message)") }
                        }
                    }
                } else if (try? AudioFileReader(path: audio)) == nil {
                    wrong.withLock { $0.append("the WAV file did not open") }
                }
            }
        }
        let seen = wrong.withLock { $0 }
        #expect(seen.isEmpty, "\(seen.count) wrong of 600 text opens, first: \(seen.first ?? "")")
    }

    @Test("a text file named .wav is not audio and the message says what to do")
    func textFile() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("notes.wav")
        try FileFixtures.writeText(path: path, "These are my notes, not a sound file.\n")
        let error = #expect(throws: FileError.self) { try AudioFileReader(path: path) }
        #expect(error?.kind == .unsupportedFormat)
        #expect(error?.message.hasPrefix("\(path): not an audio file libsndfile can read (") == true)
        #expect(error?.message.hasSuffix("convert it to WAV or FLAC") == true)
        #expect(error?.libsndfileCode == 1)                   // SF_ERR_UNRECOGNISED_FORMAT, kept
    }

    @Test("a WAV cut inside its header is corrupt")
    func brokenHeader() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("stub.wav")
        try FileFixtures.writeWAV(path: path, samples: [Float](repeating: 0.1, count: 100),
                                  format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .int16))
        try FileFixtures.truncate(path: path, toByteCount: 30)
        let error = #expect(throws: FileError.self) { try AudioFileReader(path: path) }
        #expect(error?.kind == .corrupt)
        #expect(error?.message.contains("re-export or re-copy") == true)
    }

    @Test("a directory is not an audio file")
    func directory() throws {
        let dir = try TemporaryTestDirectory()
        let error = #expect(throws: FileError.self) { try AudioFileReader(path: dir.path) }
        #expect(error?.kind == .notAFile)
        #expect(error?.message.contains("is a directory") == true)
    }

    @Test("an unreadable file is reported as permission denied", .enabled(if: !Helpers.isRoot))
    func permission() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("locked.wav")
        try FileFixtures.writeWAV(path: path, samples: [0], format: StreamFormat(sampleRate: 48000, channelCount: 1))
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: path)
        let error = #expect(throws: FileError.self) { try AudioFileReader(path: path) }
        #expect(error?.kind == .permissionDenied)
    }

    // MARK: Truncation

    /// Writes a valid 48000-frame file, chops it in half and returns its path.
    static func halfFile(_ dir: TemporaryTestDirectory, type: AudioFileType, sampleFormat: SampleFormat) throws -> String {
        let path = dir.file("half.\(type.fileExtension)")
        let samples = FileFixtures.sine(frames: 48000, channels: 2, sampleRate: 48000, frequency: 1000, amplitude: 0.5)
        try Helpers.write(samples, to: path, type: type,
                          format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: sampleFormat))
        try FileFixtures.truncate(path: path, toByteCount: try FileFixtures.byteCount(path: path) / 2)
        return path
    }

    @Test("a WAV chopped in half is flagged at open with the header's frame count",
          arguments: [(AudioFileType.wav, SampleFormat.int16), (.wav, .float32), (.aiff, .int24),
                      (.w64, .int24), (.rf64, .int16)])
    func truncatedUncompressed(type: AudioFileType, sampleFormat: SampleFormat) throws {
        let dir = try TemporaryTestDirectory()
        let path = try Self.halfFile(dir, type: type, sampleFormat: sampleFormat)
        let reader = try AudioFileReader(path: path)
        #expect(reader.isTruncated)
        #expect(reader.declaredFrameCount == 48000)
        #expect(reader.frameCount > 23_000 && reader.frameCount < 24_100)
        #expect(reader.truncationError?.kind == .truncated)
        #expect(reader.truncationError?.message.hasPrefix(
            "\(path): the file is truncated: its header declares 48000 frames but only \(reader.frameCount) are present") == true)
        // What is present still reads.
        #expect(try Helpers.readAll(reader).count == Int(reader.frameCount) * 2)

        let error = #expect(throws: FileError.self) { try AudioFileReader(path: path, truncation: .reject) }
        #expect(error?.kind == .truncated)
    }

    @Test("a WAV whose data stops at the header is truncated, not empty")
    func headerOnly() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("header.wav")
        try FileFixtures.writeWAV(path: path, samples: [Float](repeating: 0.25, count: 2000),
                                  format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .int16))
        try FileFixtures.truncate(path: path, toByteCount: 44)
        let reader = try AudioFileReader(path: path)
        #expect(reader.frameCount == 0)
        #expect(reader.declaredFrameCount == 1000)
        #expect(reader.isTruncated)
    }

    @Test("streaming placeholders in a WAV header are not truncation")
    func streamingPlaceholder() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("stream.wav")
        var data = FileFixtures.wavData(samples: [Float](repeating: 0.25, count: 200),
                                        format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .int16))
        data.replaceSubrange(40..<44, with: [0xFF, 0xFF, 0xFF, 0xFF])
        try data.write(to: URL(fileURLWithPath: path))
        let reader = try AudioFileReader(path: path)
        #expect(reader.frameCount == 100)
        #expect(!reader.isTruncated)
    }

    @Test("an intact file is not flagged")
    func intact() throws {
        let dir = try TemporaryTestDirectory()
        for type in FormatTests.commonTypes {
            let path = dir.file("whole.\(type.fileExtension)")
            try Helpers.write(Helpers.testSignal(frames: 48000, channels: 2), to: path, type: type,
                              format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: type.defaultSampleFormat))
            let reader = try AudioFileReader(path: path, truncation: .reject)
            #expect(!reader.isTruncated, "\(type)")
            #expect(try reader.scanPeak().frames == 48000, "\(type)")
            #expect(!reader.isTruncated, "\(type)")
        }
    }

    @Test("a FLAC chopped in half is flagged when decoding stops early")
    func truncatedFLAC() throws {
        let dir = try TemporaryTestDirectory()
        let path = try Self.halfFile(dir, type: .flac, sampleFormat: .int24)
        let reader = try AudioFileReader(path: path)
        #expect(reader.frameCount == 48000)
        #expect(!reader.isTruncated)
        let scan = try reader.scanPeak()
        #expect(scan.frames < 48000)
        #expect(reader.isTruncated)
        #expect(reader.truncationError?.kind == .truncated)
        #expect(reader.truncationError?.message.contains("the audio stops at frame \(scan.frames) of 48000") == true)

        let strict = try AudioFileReader(path: path, truncation: .reject)
        let error = #expect(throws: FileError.self) { _ = try Helpers.readAll(strict) }
        #expect(error?.kind == .truncated)
    }

    @Test("an MP3 chopped in half is flagged when decoding stops early")
    func truncatedMP3() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("half.mp3")
        let signal = FileFixtures.sine(frames: 96000, channels: 2, sampleRate: 48000, frequency: 440, amplitude: 0.5)
        try Helpers.encodeWithLibsndfile(signal, path: path, format: Helpers.mp3, channels: 2, sampleRate: 48000)
        try FileFixtures.truncate(path: path, toByteCount: try FileFixtures.byteCount(path: path) / 2)
        let reader = try AudioFileReader(path: path)
        // The Xing header claims 96000 frames; the decoded count is what is there.
        #expect(reader.estimatedFrameCount == 96000)
        #expect(reader.frameCount < 60000)
        #expect(reader.isTruncated)
        #expect(reader.truncationError?.kind == .truncated)
        let scan = try reader.scanPeak()
        #expect(scan.frames == reader.frameCount)
        #expect(throws: FileError.self) { _ = try AudioFileReader(path: path, truncation: .reject) }
    }

    @Test("an MP3 whose stored length is only an estimate plays to its real end")
    func estimatedMP3Length() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("whole.mp3")
        let signal = FileFixtures.sine(frames: 96000, channels: 2, sampleRate: 48000, frequency: 440, amplitude: 0.5)
        try Helpers.encodeWithLibsndfile(signal, path: path, format: Helpers.mp3, channels: 2, sampleRate: 48000)
        // Make the Xing header claim two MPEG frames more than the stream holds, as an encoder's
        // padding or a tag editor can: libsndfile's length is then an over-estimate.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let xing = try #require((0..<(bytes.count - 12)).first { bytes[$0..<($0 + 4)].elementsEqual("Xing".utf8) })
        #expect(bytes[xing + 7] & 1 == 1)                   // the frame count field is present
        var claimed = (0..<4).reduce(0) { $0 << 8 | Int(bytes[xing + 8 + $1]) }
        claimed += 2
        for i in 0..<4 { bytes[xing + 8 + i] = UInt8((claimed >> (8 * (3 - i))) & 0xFF) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let reader = try AudioFileReader(path: path, truncation: .reject)
        #expect(!reader.isTruncated)
        let estimate = try #require(reader.estimatedFrameCount)
        #expect(estimate > reader.frameCount)
        let all = try Helpers.readAll(reader)
        #expect(Int64(all.count / 2) == reader.frameCount)   // every frame the reader announced, no early end
    }

    @Test("an Opus file missing its end is flagged at open and its real length counted")
    func truncatedOpus() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("cut.opus")
        let signal = FileFixtures.sine(frames: 96000, channels: 2, sampleRate: 48000, frequency: 440, amplitude: 0.5)
        try Helpers.encodeWithLibsndfile(signal, path: path, format: Helpers.oggOpus, channels: 2, sampleRate: 48000)
        try FileFixtures.truncate(path: path, toByteCount: try FileFixtures.byteCount(path: path) * 3 / 4)
        let reader = try AudioFileReader(path: path)
        #expect(reader.isTruncated)
        #expect(reader.declaredFrameCount == nil)
        #expect(reader.frameCount > 40000 && reader.frameCount < 96000)
        #expect(reader.truncationError?.message.contains("end of the audio stream is missing") == true)
        #expect(reader.position == 0)
        #expect(try Helpers.readAll(reader).count == Int(reader.frameCount) * 2)
        #expect(throws: FileError.self) { try AudioFileReader(path: path, truncation: .reject) }
    }

    @Test("an Ogg Vorbis file chopped in half is rejected as damaged")
    func truncatedVorbis() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("half.ogg")
        let signal = FileFixtures.sine(frames: 48000, channels: 2, sampleRate: 48000, frequency: 440, amplitude: 0.5)
        try Helpers.encodeWithLibsndfile(signal, path: path, format: Helpers.oggVorbis, channels: 2, sampleRate: 48000)
        try FileFixtures.truncate(path: path, toByteCount: try FileFixtures.byteCount(path: path) / 2)
        do {
            let reader = try AudioFileReader(path: path)
            _ = try reader.scanPeak()
            #expect(reader.isTruncated)
        } catch {
            #expect(error.kind == .corrupt)
        }
    }
}
