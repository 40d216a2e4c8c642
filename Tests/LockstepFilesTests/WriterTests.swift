import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

@Suite("AudioFileWriter and AtomicFileOutput")
struct WriterTests {
    static let stereo = StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .int16)

    // MARK: Errors

    @Test("a missing output folder is named in the error", arguments: [true, false])
    func missingFolder(atomic: Bool) throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("no/such/folder/out.wav")
        let error = #expect(throws: FileError.self) {
            try AudioFileWriter(path: path, type: .wav, format: Self.stereo, atomic: atomic)
        }
        #expect(error?.kind == .unwritableOutput)
        #expect(error?.path == path)
        #expect(error?.message == "\(path): the output folder \(dir.file("no/such/folder")) does not exist; create it first or choose another folder")
        #expect(try dir.contents().isEmpty)
    }

    @Test("FLAC with f32 is refused before anything is created, suggesting s24")
    func flacFloat() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("mix.flac")
        let error = #expect(throws: FileError.self) {
            try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32))
        }
        #expect(error?.kind == .unsupportedOutputFormat)
        #expect(error?.message.contains("FLAC cannot store f32") == true)
        #expect(error?.message.contains("s24") == true)
        #expect(try dir.contents().isEmpty)
    }

    @Test("other impossible formats are refused with a reason", arguments: [
        (AudioFileType.flac, StreamFormat(sampleRate: 48000, channelCount: 10, sampleFormat: .int16), "at most 8 channels"),
        (.wav, StreamFormat(sampleRate: 44100.5, channelCount: 2, sampleFormat: .int16), "whole-number sample rates"),
        (.wav, StreamFormat(sampleRate: 48000, channelCount: 0, sampleFormat: .int16), "channel count 0"),
        (.mp3, StreamFormat(sampleRate: 96000, channelCount: 2, sampleFormat: .float32), "MP3 holds only 8000, 11025"),
        (.mp3, StreamFormat(sampleRate: 48000, channelCount: 6, sampleFormat: .float32), "MP3 holds at most 2 channels"),
        (.opus, StreamFormat(sampleRate: 44100, channelCount: 2, sampleFormat: .float32), "Opus holds only 8000, 12000, 16000, 24000, 48000 Hz"),
    ])
    func impossibleFormats(type: AudioFileType, format: StreamFormat, reason: String) throws {
        let dir = try TemporaryTestDirectory()
        let error = #expect(throws: FileError.self) {
            try AudioFileWriter(path: dir.file("x.\(type.fileExtension)"), type: type, format: format)
        }
        #expect(error?.kind == .unsupportedOutputFormat)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
        #expect(try dir.contents().isEmpty)
    }

    @Test("an unknown output extension is refused")
    func unknownExtension() throws {
        let dir = try TemporaryTestDirectory()
        let error = #expect(throws: FileError.self) {
            try AudioFileWriter(path: dir.file("out.xyz"), format: Self.stereo)
        }
        #expect(error?.kind == .unsupportedOutputFormat)
        #expect(error?.message.contains(".wav, .wave, .aiff") == true)
    }

    @Test("a directory at the output path is refused")
    func directoryDestination() throws {
        let dir = try TemporaryTestDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("taken.wav"), withIntermediateDirectories: false)
        let error = #expect(throws: FileError.self) {
            try AudioFileWriter(path: dir.file("taken.wav"), format: Self.stereo)
        }
        #expect(error?.kind == .unwritableOutput)
        #expect(error?.message.contains("a directory with this name exists") == true)
    }

    @Test("a read-only output folder is reported", .enabled(if: !Helpers.isRoot))
    func readOnlyFolder() throws {
        let dir = try TemporaryTestDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir.path)
        let error = #expect(throws: FileError.self) {
            try AudioFileWriter(path: dir.file("out.wav"), format: Self.stereo)
        }
        #expect(error?.kind == .permissionDenied)
    }

    @Test("writing after close throws; close is idempotent")
    func writeAfterClose() throws {
        let dir = try TemporaryTestDirectory()
        let writer = try AudioFileWriter(path: dir.file("a.wav"), format: Self.stereo)
        let frame: [Float] = [0.1, 0.2]
        try writer.write(frame, frames: 1)
        #expect(writer.framesWritten == 1)
        try writer.close()
        try writer.close()
        #expect(writer.isClosed)
        let error = #expect(throws: FileError.self) { try writer.write(frame, frames: 1) }
        #expect(error?.kind == .ioError)
        #expect(try AudioFileReader(path: dir.file("a.wav")).frameCount == 1)
    }

    @Test("a WAV larger than 4 GiB is refused before it is written")
    func sizeLimit() throws {
        let dir = try TemporaryTestDirectory()
        let format = StreamFormat(sampleRate: 48000, channelCount: 64, sampleFormat: .float64)
        let writer = try AudioFileWriter(path: dir.file("huge.wav"), format: format)
        defer { writer.abort() }
        // 8.4 M frames × 512 bytes exceeds 4 GiB; the check happens before libsndfile reads the buffer.
        let sample: [Float] = [0]
        let error = #expect(throws: FileError.self) {
            try sample.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 8_400_000) }
        }
        #expect(error?.kind == .unsupportedOutputFormat)
        #expect(error?.message.contains("write .w64, .rf64 or .caf instead") == true)
        #expect(writer.framesWritten == 0)
    }

    // MARK: Atomic output

    @Test("an aborted atomic writer leaves no file and no temporary file")
    func atomicAbort() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("render.wav")
        let writer = try AudioFileWriter(path: path, format: Self.stereo)
        try writer.write(Helpers.testSignal(frames: 1000, channels: 2), frames: 1000)
        // The file being written has no name (O_TMPFILE): nothing shows in the folder.
        #expect(try dir.contents().isEmpty)
        writer.abort()
        #expect(try dir.contents().isEmpty)
        let error = #expect(throws: FileError.self) { try writer.close() }
        #expect(error?.kind == .ioError)
        #expect(try dir.contents().isEmpty)
    }

    @Test("an atomic writer dropped without close leaves nothing")
    func atomicDropped() throws {
        let dir = try TemporaryTestDirectory()
        do {
            let writer = try AudioFileWriter(path: dir.file("dropped.flac"),
                                             format: StreamFormat(sampleRate: 44100, channelCount: 1, sampleFormat: .int24))
            try writer.write([0.5, 0.25], frames: 2)
        }
        #expect(try dir.contents().isEmpty)
    }

    @Test("commit leaves only the finished file and replaces an old one only then")
    func atomicCommit() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("mix.wav")
        try FileFixtures.writeText(path: path, "old contents")
        let writer = try AudioFileWriter(path: path, format: Self.stereo)
        try writer.write(Helpers.testSignal(frames: 100, channels: 2), frames: 100)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old contents")
        try writer.close()
        #expect(try dir.contents() == ["mix.wav"])
        #expect(try AudioFileReader(path: path).frameCount == 100)
    }

    @Test("AtomicFileOutput can stand alone")
    func standaloneOutput() throws {
        let dir = try TemporaryTestDirectory()
        let output = try AtomicFileOutput(destinationPath: dir.file("notes.txt"))
        #expect(output.state == .open)
        #expect(output.temporaryPath == nil)
        #expect(try dir.contents().isEmpty)
        let text = Array("done".utf8)
        #expect(write(output.descriptor, text, text.count) == text.count)
        try output.commit()
        try output.commit()
        #expect(output.state == .committed)
        #expect(try String(contentsOfFile: dir.file("notes.txt"), encoding: .utf8) == "done")
        #expect(try dir.contents() == ["notes.txt"])

        let second = try AtomicFileOutput(destinationPath: dir.file("notes.txt"))
        second.abort()
        #expect(second.state == .aborted)
        #expect(throws: FileError.self) { try second.commit() }
        #expect(try String(contentsOfFile: dir.file("notes.txt"), encoding: .utf8) == "done")
        #expect(try dir.contents() == ["notes.txt"])
    }

    @Test("a direct writer's abort deletes the partial file")
    func directAbort() throws {
        let dir = try TemporaryTestDirectory()
        let writer = try AudioFileWriter(path: dir.file("d.caf"), format: Self.stereo, atomic: false)
        try writer.write([0, 0], frames: 1)
        #expect(try dir.contents() == ["d.caf"])
        writer.abort()
        #expect(try dir.contents().isEmpty)
    }
}
