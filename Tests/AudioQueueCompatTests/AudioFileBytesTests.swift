import AudioQueueCompat
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension AQCompatTests {
    /// AudioFileReadBytes and AudioFileWriteBytes: bytes of audio data in the file's data format,
    /// at any offset, in any pieces.
    @Suite("Audio File bytes", .serialized)
    struct AudioFileBytesTests {
        let temp: TemporaryTestDirectory
        init() throws { temp = try TemporaryTestDirectory(prefix: "aqcompat-bytes") }

        @Test("bytes written in pieces that split frames read back exactly, from any offset; the end is kAudioFileEndOfFileError",
              arguments: [(kAudioFileWAVEType, false, "bytes.wav"), (kAudioFileAIFFType, true, "bytes.aiff")])
        func roundTrip(type: AudioFileTypeID, bigEndian: Bool, name: String) throws {
            let path = temp.file(name)
            var format = pcm(44100, channels: 2, bits: 16, bigEndian: bigEndian)
            var file: AudioFileID?
            try #require(AudioFileCreateWithURL(URL(fileURLWithPath: path), type, &format, kAudioFileFlags_EraseFile, &file) == noErr)
            let data = (0..<4000).map { UInt8(truncatingIfNeeded: $0 * 31 + 7) }   // 1000 frames
            var offset = 0
            for piece in [3, 5, 1, 991, 1000, 2000] {
                var count = UInt32(piece)
                let status = data.withUnsafeBytes { AudioFileWriteBytes(file!, false, Int64(offset), &count, $0.baseAddress! + offset) }
                try #require(status == noErr)
                offset += piece
            }
            var count: UInt32 = 4
            #expect(AudioFileWriteBytes(file!, false, 10, &count, data) == kAudioFilePositionError)
            var scratch = [UInt8](repeating: 0, count: 4)
            #expect(AudioFileReadBytes(file!, false, 0, &count, &scratch) == kAudioFilePermissionsError)
            var channelLayout = AudioChannelLayout()
            var size = UInt32(MemoryLayout<AudioChannelLayout>.size)
            #expect(AudioFileGetProperty(file!, kAudioFilePropertyChannelLayout, &size, &channelLayout) == noErr)
            #expect(size == 12 && channelLayout.mChannelLayoutTag == kAudioChannelLayoutTag_Stereo)
            #expect(AudioFileClose(file!) == noErr)

            try #require(AudioFileOpenURL(path, kAudioFileReadPermission, 0, &file) == noErr)
            defer { AudioFileClose(file!) }
            var bytes = [UInt8](repeating: 0, count: 4000)
            count = 4000
            #expect(AudioFileReadBytes(file!, false, 0, &count, &bytes) == noErr && count == 4000)
            #expect(bytes == data)
            var middle = [UInt8](repeating: 0, count: 10)
            count = 10
            #expect(AudioFileReadBytes(file!, false, 3, &count, &middle) == noErr && middle == Array(data[3..<13]))
            var tail = [UInt8](repeating: 0, count: 10)
            count = 10
            #expect(AudioFileReadBytes(file!, false, 3994, &count, &tail) == kAudioFileEndOfFileError)
            #expect(count == 6 && Array(tail[0..<6]) == Array(data[3994...]))
            count = 4
            #expect(AudioFileReadBytes(file!, false, -1, &count, &tail) == kAudioFilePositionError)
        }

        @Test("a trailing partial frame is not written, and AudioFileClose says so")
        func partialFrame() throws {
            let path = temp.file("partial.wav")
            var format = pcm(48000, channels: 1, bits: 16)
            var file: AudioFileID?
            try #require(AudioFileCreateWithURL(URL(fileURLWithPath: path), kAudioFileWAVEType, &format, kAudioFileFlags_EraseFile, &file) == noErr)
            let data: [UInt8] = [1, 2, 3, 4, 5]
            var count: UInt32 = 5
            #expect(AudioFileWriteBytes(file!, false, 0, &count, data) == noErr)
            #expect(AudioFileClose(file!) == kAudioFileInvalidPacketOffsetError)
            let (_, samples) = try integerSamples(path)
            #expect(samples == [Int32(0x0201) << 16, Int32(0x0403) << 16])
        }
    }
}
