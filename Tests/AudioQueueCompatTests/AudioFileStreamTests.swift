import AudioQueueCompat
import Foundation
import LockstepTestSupport
import Testing

/// What a stream's callbacks saw: properties in order, and every packet's bytes.
final class StreamLog: @unchecked Sendable {
    var properties: [AudioFileStreamPropertyID] = []
    var packets: [[UInt8]] = []
    var format = AudioStreamBasicDescription()
    var cookie: [UInt8] = []
    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    static func from(_ pointer: UnsafeMutableRawPointer) -> StreamLog { Unmanaged<StreamLog>.fromOpaque(pointer).takeUnretainedValue() }
}

/// A property listener in the idiom of streaming players: read the format and cookie when told.
func streamPropertyListener(_ client: UnsafeMutableRawPointer, _ stream: AudioFileStreamID, _ id: AudioFileStreamPropertyID,
                            _ flags: UnsafeMutablePointer<AudioFileStreamPropertyFlags>) {
    let log = StreamLog.from(client)
    log.properties.append(id)
    if id == kAudioFileStreamProperty_DataFormat {
        var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        AudioFileStreamGetProperty(stream, id, &size, &log.format)
    }
    if id == kAudioFileStreamProperty_MagicCookieData {
        var size: UInt32 = 0
        AudioFileStreamGetPropertyInfo(stream, id, &size, nil)
        log.cookie = [UInt8](repeating: 0, count: Int(size))
        AudioFileStreamGetProperty(stream, id, &size, &log.cookie)
    }
}

func streamPackets(_ client: UnsafeMutableRawPointer, _ bytes: UInt32, _ count: UInt32, _ data: UnsafeRawPointer,
                   _ descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?) {
    let log = StreamLog.from(client)
    for i in 0..<Int(count) {
        let d = descriptions![i]
        log.packets.append(Array(UnsafeRawBufferPointer(start: data + Int(d.mStartOffset), count: Int(d.mDataByteSize))))
    }
}

/// Feeds `bytes` to a new parser in pieces whose sizes `sizes` gives in turn; returns the log
/// and the stream, still open.
func feedStream(_ bytes: [UInt8], sizes: [Int], hint: AudioFileTypeID = 0) throws -> (StreamLog, AudioFileStreamID, OSStatus) {
    let log = StreamLog()
    var stream: AudioFileStreamID?
    try #require(AudioFileStreamOpen(log.pointer, streamPropertyListener, streamPackets, hint, &stream) == noErr)
    var at = 0, turn = 0
    var result = noErr
    while at < bytes.count && result == noErr {
        let n = min(max(1, sizes[turn % sizes.count]), bytes.count - at)
        result = bytes.withUnsafeBytes { AudioFileStreamParseBytes(stream!, UInt32(n), $0.baseAddress! + at, []) }
        at += n
        turn += 1
    }
    return (log, stream!, result)
}

extension AQCompatTests {
    /// Audio File Stream Services: MP3 and ADTS AAC parsed from bytes fed in any pieces give the
    /// packets Audio File Services read from the same files (FFmpeg's demuxers), and the same format.
    @Suite("Audio File Stream Services", .serialized)
    struct AudioFileStreamTests {
        let fixtures = CompressedFixtures.shared

        @Test("MP3 fed byte by byte and in random pieces: the file's packets, format, packet table; properties in Apple's order")
        func mp3() throws {
            let path = try fixtures.mp3
            let file = try readCompressed(path)
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            var rng = SeededRandom(seed: 3)
            for sizes in [[1], (0..<50).map { _ in Int(rng.next() % 3000) }, [bytes.count]] {
                let (log, stream, status) = try feedStream(bytes, sizes: sizes)
                defer { AudioFileStreamClose(stream) }
                #expect(status == noErr)
                #expect(log.packets == file.packets)
                #expect(log.format.mFormatID == kAudioFormatMPEGLayer3 && log.format.mFramesPerPacket == 1152 && log.format.mSampleRate == 44100)
                #expect(log.properties == [kAudioFileStreamProperty_FileFormat, kAudioFileStreamProperty_DataFormat,
                                           kAudioFileStreamProperty_DataOffset, kAudioFileStreamProperty_ReadyToProducePackets])
                var table = AudioFilePacketTableInfo()
                var size = UInt32(MemoryLayout<AudioFilePacketTableInfo>.size)
                #expect(AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_PacketTableInfo, &size, &table) == noErr)
                #expect(table == file.table)
                var count: UInt64 = 0
                size = 8
                #expect(AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_AudioDataPacketCount, &size, &count) == noErr)
                #expect(count == file.packetCount)
                var ready: UInt32 = 0
                size = 4
                #expect(AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_ReadyToProducePackets, &size, &ready) == noErr && ready == 1)
            }
        }

        @Test("ADTS AAC fed byte by byte: raw packets equal the file's, the cookie an ES descriptor of the stream's config")
        func adts() throws {
            let path = try fixtures.adts
            let file = try readCompressed(path)
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            for sizes in [[1], [7, 1000, 13]] {
                let (log, stream, status) = try feedStream(bytes, sizes: sizes, hint: kAudioFileAAC_ADTSType)
                defer { AudioFileStreamClose(stream) }
                #expect(status == noErr)
                #expect(log.packets == file.packets)
                #expect(log.cookie == file.cookie)
                #expect(log.format.mFormatID == kAudioFormatMPEG4AAC && log.format.mFramesPerPacket == 1024 && log.format.mChannelsPerFrame == 2)
                var count: UInt64 = 0
                var size = UInt32(8)
                #expect(AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_AudioDataPacketCount, &size, &count) == kAudioFileStreamError_ValueUnknown)
            }
        }

        @Test("Seek: exact offsets for parsed packets, estimated beyond; parsing from there resumes on that packet")
        func seek() throws {
            let path = try fixtures.mp3
            let file = try readCompressed(path)
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            let half = bytes.count / 2
            let (log, stream, status) = try feedStream(Array(bytes[0..<half]), sizes: [4096])
            defer { AudioFileStreamClose(stream) }
            #expect(status == noErr)
            var dataOffset: Int64 = 0
            var size = UInt32(8)
            #expect(AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_DataOffset, &size, &dataOffset) == noErr)
            var offset: Int64 = 0
            var flags: AudioFileStreamSeekFlags = []
            #expect(AudioFileStreamSeek(stream, 10, &offset, &flags) == noErr)
            #expect(flags.isEmpty)
            let parsed = log.packets.count
            log.packets.removeAll()
            let from = Int(dataOffset + offset)
            #expect(bytes[from..<bytes.count].withUnsafeBytes { AudioFileStreamParseBytes(stream, UInt32($0.count), $0.baseAddress!, .discontinuity) } == noErr)
            #expect(log.packets == Array(file.packets[10...]))
            // Beyond what was parsed (a new stream, given half): an estimate, flagged.
            let (fresh, second, _) = try feedStream(Array(bytes[0..<(bytes.count / 4)]), sizes: [999])
            defer { AudioFileStreamClose(second) }
            #expect(AudioFileStreamSeek(second, Int64(file.packets.count - 5), &offset, &flags) == noErr)
            #expect(flags.contains(.offsetIsEstimated))
            fresh.packets.removeAll()
            let estimate = Int(dataOffset + offset)
            #expect(abs(estimate - (Int(dataOffset) + file.packets[..<(file.packets.count - 5)].reduce(0) { $0 + $1.count })) < 2 * Int(file.maximumPacketSize))
            #expect(bytes[estimate...].withUnsafeBytes { AudioFileStreamParseBytes(second, UInt32($0.count), $0.baseAddress!, .discontinuity) } == noErr)
            // The parser finds the next whole frames after an estimated offset.
            #expect(!fresh.packets.isEmpty && fresh.packets.allSatisfy { file.packets.contains($0) })
            #expect(parsed > 10)
        }

        @Test("Damaged bytes in the middle: the packets before and after come through unchanged; frames whose header survived pass on damaged")
        func damage() throws {
            let path = try fixtures.mp3
            let file = try readCompressed(path)
            var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            for i in (bytes.count / 2)..<(bytes.count / 2 + 600) { bytes[i] = UInt8(truncatingIfNeeded: i &* 37) }
            let (log, stream, status) = try feedStream(bytes, sizes: [333])
            defer { AudioFileStreamClose(stream) }
            #expect(status == noErr)
            #expect(log.packets.count <= file.packets.count && log.packets.count > file.packets.count - 6)
            #expect(log.packets.filter { !file.packets.contains($0) }.count <= 3)
            let intact = file.packets.count / 2 - 5
            #expect(Array(log.packets.prefix(intact)) == Array(file.packets.prefix(intact)))
            #expect(Array(log.packets.suffix(intact - 5)) == Array(file.packets.suffix(intact - 5)))
        }

        @Test("Garbage and truncated streams: an error or nothing, no crash or hang; closed streams and wrong hints get Apple's codes")
        func hostile() throws {
            var rng = SeededRandom(seed: 99)
            let noise = (0..<(1 << 20) + 100_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let (log, stream, status) = try feedStream(noise, sizes: [65536])
            #expect(status == kAudioFileStreamError_UnsupportedFileType || (status == noErr && log.packets.isEmpty) || !log.packets.isEmpty)
            AudioFileStreamClose(stream)
            #expect(AudioFileStreamClose(stream) == kAudio_ParamError)
            var size = UInt32(4)
            var value: UInt32 = 0
            #expect(AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_ReadyToProducePackets, &size, &value) == kAudio_ParamError)
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: try fixtures.adts)))
            for cut in [3, 8, 500, bytes.count - 1] {
                let (cutLog, cutStream, cutStatus) = try feedStream(Array(bytes[0..<cut]), sizes: [1])
                #expect(cutStatus == noErr)
                #expect(cutLog.packets.count <= (try readCompressed(try fixtures.adts)).packets.count)
                var format = AudioStreamBasicDescription()
                size = 40
                let got = AudioFileStreamGetProperty(cutStream, kAudioFileStreamProperty_DataFormat, &size, &format)
                #expect(got == noErr || got == kAudioFileStreamError_DataUnavailable)
                AudioFileStreamClose(cutStream)
            }
            var other: AudioFileStreamID?
            let client = StreamLog()
            #expect(AudioFileStreamOpen(client.pointer, streamPropertyListener, streamPackets, kAudioFileWAVEType, &other) == kAudioFileStreamError_UnsupportedFileType)
        }
    }
}
