import AudioQueueCompat
import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

extension AQCompatTests {
    /// Audio File Services on libsndfile: files written here read back exactly with libsndfile
    /// (and sox, when installed), files written elsewhere read exactly here.
    @Suite("Audio File Services", .serialized)
    struct AudioFileTests {
        let temp: TemporaryTestDirectory
        init() throws { temp = try TemporaryTestDirectory(prefix: "aqcompat-files") }

        /// `frames` frames × `channels` of distinct integers that fit `bits`.
        func values(frames: Int, channels: Int, bits: Int) -> [Int32] {
            let limit = Int32(1) << Int32(bits - 1)
            return (0..<(frames * channels)).map { Int32(truncatingIfNeeded: ($0 * 7919 + 13) % Int(limit)) - limit / 2 }
        }

        func bytes(_ values: [Int32], bits: Int, bigEndian: Bool) -> [UInt8] {
            let width = bits / 8
            return values.flatMap { value -> [UInt8] in
                let le = (0..<width).map { UInt8(truncatingIfNeeded: value >> Int32(8 * $0)) }
                return bigEndian ? le.reversed() : le
            }
        }

        func write(_ path: String, type: AudioFileTypeID, format: AudioStreamBasicDescription, data: [UInt8], chunk: Int) throws {
            var format = format
            var file: AudioFileID?
            try #require(AudioFileCreateWithURL(URL(fileURLWithPath: path), type, &format, kAudioFileFlags_EraseFile, &file) == noErr)
            let frameBytes = Int(format.mBytesPerFrame)
            var packet: Int64 = 0
            var offset = 0
            while offset < data.count {
                let n = min(chunk * frameBytes, data.count - offset)
                var packets = UInt32(n / frameBytes)
                let status = data.withUnsafeBytes { AudioFileWritePackets(file!, false, UInt32(n), nil, packet, &packets, $0.baseAddress! + offset) }
                try #require(status == noErr)
                packet += Int64(packets)
                offset += n
            }
            #expect(AudioFileClose(file!) == noErr)
        }

        func readAll(_ path: String) throws -> (AudioStreamBasicDescription, [UInt8]) {
            var file: AudioFileID?
            try #require(AudioFileOpenURL(path, kAudioFileReadPermission, 0, &file) == noErr)
            defer { AudioFileClose(file!) }
            var format = AudioStreamBasicDescription()
            var size = UInt32(40)
            #expect(AudioFileGetProperty(file!, kAudioFilePropertyDataFormat, &size, &format) == noErr)
            var count: UInt64 = 0
            size = 8
            #expect(AudioFileGetProperty(file!, kAudioFilePropertyAudioDataPacketCount, &size, &count) == noErr)
            var maximum: UInt32 = 0
            size = 4
            #expect(AudioFileGetProperty(file!, kAudioFilePropertyMaximumPacketSize, &size, &maximum) == noErr)
            #expect(maximum == format.mBytesPerPacket)
            var out = [UInt8](repeating: 0, count: Int(count) * Int(format.mBytesPerFrame))
            var packet: Int64 = 0
            while true {
                var bytes = UInt32(1000 * format.mBytesPerFrame)
                var packets: UInt32 = 100_000
                let status = out.withUnsafeMutableBytes {
                    AudioFileReadPacketData(file!, false, &bytes, nil, packet, &packets,
                                            $0.baseAddress! + Int(packet) * Int(format.mBytesPerFrame))
                }
                try #require(status == noErr)
                if packets == 0 { break }
                #expect(bytes == packets * format.mBytesPerFrame)
                packet += Int64(packets)
            }
            #expect(packet == Int64(count))
            return (format, out)
        }

        @Test("integer PCM round-trips exactly through AIFF, WAV, CAF and FLAC, and libsndfile agrees",
              arguments: [(kAudioFileAIFFType, "aiff", 16, true), (kAudioFileAIFFType, "aiff", 24, true),
                          (kAudioFileWAVEType, "wav", 16, false), (kAudioFileWAVEType, "wav", 32, false),
                          (kAudioFileCAFType, "caf", 24, true), (kAudioFileCAFType, "caf", 16, false),
                          (kAudioFileFLACType, "flac", 24, false), (kAudioFileFLACType, "flac", 16, false)])
        func integerRoundTrip(type: AudioFileTypeID, ext: String, bits: Int, bigEndian: Bool) throws {
            let format = pcm(44100, channels: 2, bits: UInt32(bits), bigEndian: bigEndian)
            let original = values(frames: 3000, channels: 2, bits: bits)
            let path = temp.file("round-\(bits)-\(bigEndian).\(ext)")
            try write(path, type: type, format: format, data: bytes(original, bits: bits, bigEndian: bigEndian), chunk: 777)
            let (read, data) = try readAll(path)
            #expect(read.mSampleRate == 44100 && read.mChannelsPerFrame == 2 && read.mBitsPerChannel == UInt32(bits))
            let readBigEndian = read.mFormatFlags & kAudioFormatFlagIsBigEndian != 0
            #expect(data == bytes(original, bits: bits, bigEndian: readBigEndian))
            // libsndfile (float path) agrees, sample for sample.
            let reader = try AudioFileReader(path: path)
            var floats = [Float](repeating: 0, count: original.count)
            #expect(try floats.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: 3000) } == 3000)
            if bits <= 24 { #expect(floats == original.map { Float($0) / Float(Int32(1) << Int32(bits - 1)) }) }
            if let sox = ["/usr/bin/sox", "/usr/local/bin/sox"].first(where: FileManager.default.isExecutableFile(atPath:)) {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: sox)
                process.arguments = [path, "-t", "raw", "-e", "signed", "-b", "\(bits)", "-L", temp.file("sox-\(bits).raw")]
                try process.run()
                process.waitUntilExit()
                #expect(process.terminationStatus == 0)
                let raw = try [UInt8](Data(contentsOf: URL(fileURLWithPath: temp.file("sox-\(bits).raw"))))
                #expect(raw == bytes(original, bits: bits, bigEndian: false))
            }
        }

        @Test("files written by sox read exactly", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sox")))
        func soxFiles() throws {
            for (name, bits) in [("sox.aiff", 16), ("sox.wav", 24), ("sox.caf", 16), ("sox.flac", 24)] {
                let path = temp.file(name)
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
                process.arguments = ["-n", "-r", "44100", "-c", "2", "-b", "\(bits)", path, "synth", "0.2", "sine", "300", "sine", "500", "vol", "0.6"]
                try process.run()
                process.waitUntilExit()
                try #require(process.terminationStatus == 0)
                let (format, data) = try readAll(path)
                #expect(format.mBitsPerChannel == UInt32(bits) && format.mChannelsPerFrame == 2 && format.mSampleRate == 44100)
                // The same samples as libsndfile's exact integer read, in the reported byte order.
                let reader = try AudioFileReader(path: path)
                var expected = [Int32](repeating: 0, count: Int(reader.frameCount) * 2)
                _ = try expected.withUnsafeMutableBufferPointer { try reader.read(int32Samples: $0.baseAddress!, frames: Int(reader.frameCount)) }
                let shifted = expected.map { $0 >> Int32(32 - bits) }
                #expect(data == bytes(shifted, bits: bits, bigEndian: format.mFormatFlags & kAudioFormatFlagIsBigEndian != 0), "\(name)")
            }
        }

        @Test("float files and files written by LockstepFiles read exactly")
        func floatsAndForeignFiles() throws {
            let samples = Signals.sine(frequency: 997, sampleRate: 48000, frames: 2000, amplitude: 0.7)
            for (name, type) in [("f.wav", AudioFileType.wav), ("f.caf", .caf)] {
                let writer = try AudioFileWriter(path: temp.file(name), type: type,
                                                 format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float32))
                try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 2000) }
                try writer.close()
                let (format, data) = try readAll(temp.file(name))
                #expect(format.mFormatFlags & kAudioFormatFlagIsFloat != 0 && format.mBitsPerChannel == 32)
                var floats = data
                if format.mFormatFlags & kAudioFormatFlagIsBigEndian != 0 {
                    floats = stride(from: 0, to: data.count, by: 4).flatMap { data[$0..<$0 + 4].reversed() }
                }
                #expect(floats.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) } == samples)
            }
        }

        @Test("documented errors of Audio File Services")
        func errors() throws {
            var file: AudioFileID?
            #expect(AudioFileOpenURL(temp.file("missing.wav"), kAudioFileReadPermission, 0, &file) == kAudioFileFileNotFoundError)
            try "not audio".write(toFile: temp.file("text.wav"), atomically: true, encoding: .utf8)
            #expect(AudioFileOpenURL(temp.file("text.wav"), kAudioFileReadPermission, 0, &file) == kAudioFileUnsupportedFileTypeError)
            var format = pcm(44100, channels: 1, bits: 16)
            let url = URL(fileURLWithPath: temp.file("a.aiff"))
            #expect(AudioFileCreateWithURL(url, kAudioFileMP3Type, &format, kAudioFileFlags_EraseFile, &file) == kAudioFileUnsupportedFileTypeError)
            #expect(AudioFileCreateWithURL(url, kAudioFileAIFFType, &format, kAudioFileFlags_EraseFile, &file) == kAudioFileUnsupportedDataFormatError)
            var bigEndian = pcm(44100, channels: 1, bits: 16, bigEndian: true)
            #expect(AudioFileCreateWithURL(URL(fileURLWithPath: temp.file("b.wav")), kAudioFileWAVEType, &bigEndian,
                                           kAudioFileFlags_EraseFile, &file) == kAudioFileUnsupportedDataFormatError)
            var float64 = pcm(44100, channels: 1, bits: 32, float: true)
            #expect(AudioFileCreateWithURL(URL(fileURLWithPath: temp.file("c.flac")), kAudioFileFLACType, &float64,
                                           kAudioFileFlags_EraseFile, &file) == kAudioFileUnsupportedDataFormatError)
            var aac = format
            aac.mFormatID = kAudioFormatMPEG4AAC
            #expect(AudioFileCreateWithURL(URL(fileURLWithPath: temp.file("d.caf")), kAudioFileCAFType, &aac,
                                           kAudioFileFlags_EraseFile, &file) == kAudioFileUnsupportedDataFormatError)
            #expect(AudioFileCreateWithURL(url, kAudioFileAIFFType, &bigEndian, kAudioFileFlags_EraseFile, &file) == noErr)
            let created = file!
            var other: AudioFileID?
            #expect(AudioFileCreateWithURL(url, kAudioFileAIFFType, &bigEndian, [], &other) == kAudioFilePermissionsError)
            var data: [UInt8] = [0, 1, 0, 2]
            var packets: UInt32 = 2
            #expect(AudioFileWritePackets(created, false, 4, nil, 5, &packets, &data) == kAudioFileInvalidPacketOffsetError)
            #expect(AudioFileWritePackets(created, false, 2, nil, 0, &packets, &data) == kAudio_ParamError)
            #expect(AudioFileWritePackets(created, false, 4, nil, 0, &packets, &data) == noErr)
            var bytes: UInt32 = 4
            #expect(AudioFileReadPacketData(created, false, &bytes, nil, 0, &packets, &data) == kAudioFilePermissionsError)
            var cookie: UInt8 = 1
            #expect(AudioFileSetProperty(created, kAudioFilePropertyMagicCookieData, 1, &cookie) == kAudioFileUnsupportedPropertyError)
            #expect(AudioFileSetProperty(created, kAudioFilePropertyMagicCookieData, 0, &cookie) == noErr)
            var cookieSize: UInt32 = 99
            var writable: UInt32 = 0
            #expect(AudioFileGetPropertyInfo(created, kAudioFilePropertyMagicCookieData, &cookieSize, &writable) == noErr)
            #expect(cookieSize == 0)
            #expect(AudioFileClose(created) == noErr)
            #expect(AudioFileClose(created) == kAudioFileNotOpenError)

            #expect(AudioFileOpenURL(url, kAudioFileReadWritePermission, 0, &file) == kAudioFilePermissionsError)
            #expect(AudioFileOpenURL(url, kAudioFileReadPermission, 0, &file) == noErr)
            let opened = file!
            packets = 2
            #expect(AudioFileWritePackets(opened, false, 4, nil, 2, &packets, &data) == kAudioFilePermissionsError)
            var small: UInt32 = 0
            var size: UInt32 = 2
            #expect(AudioFileGetProperty(opened, kAudioFilePropertyDataFormat, &size, &small) == kAudioFileBadPropertySizeError)
            size = 4
            #expect(AudioFileGetProperty(opened, fourCharCode("zzzz"), &size, &small) == kAudioFileUnsupportedPropertyError)
            packets = 1
            #expect(AudioFileReadPackets(opened, false, &bytes, nil, -1, &packets, &data) == kAudioFileInvalidPacketOffsetError)
            packets = 10
            #expect(AudioFileReadPackets(opened, false, &bytes, nil, 0, &packets, &data) == noErr)
            #expect(packets == 2 && bytes == 4 && data == [0, 1, 0, 2])
            packets = 10
            #expect(AudioFileReadPackets(opened, false, &bytes, nil, 2, &packets, &data) == noErr && packets == 0)
            #expect(AudioFileClose(opened) == noErr)
        }
    }
}
