import AudioQueueCompat
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

/// What Audio File Services report about one compressed file, read the way published players do.
struct CompressedFileFacts {
    var format = AudioStreamBasicDescription()
    var packetCount: UInt64 = 0
    var byteCount: UInt64 = 0
    var maximumPacketSize: UInt32 = 0
    var upperBound: UInt32 = 0
    var cookie: [UInt8] = []
    var table = AudioFilePacketTableInfo()
    var fileType: AudioFileTypeID = 0
    /// Every packet's bytes, read with AudioFileReadPacketData in chunks of `chunk` packets.
    var packets: [[UInt8]] = []
}

func readCompressed(_ path: String, chunk: UInt32 = 10) throws -> CompressedFileFacts {
    var file: AudioFileID?
    try #require(AudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, kAudioFileReadPermission, 0, &file) == noErr,
                 "\(AudioQueueCompatLastErrorMessage() ?? "")")
    defer { AudioFileClose(file!) }
    var facts = CompressedFileFacts()
    var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
    #expect(AudioFileGetProperty(file!, kAudioFilePropertyDataFormat, &size, &facts.format) == noErr)
    size = 8
    #expect(AudioFileGetProperty(file!, kAudioFilePropertyAudioDataPacketCount, &size, &facts.packetCount) == noErr)
    size = 8
    #expect(AudioFileGetProperty(file!, kAudioFilePropertyAudioDataByteCount, &size, &facts.byteCount) == noErr)
    size = 4
    #expect(AudioFileGetProperty(file!, kAudioFilePropertyMaximumPacketSize, &size, &facts.maximumPacketSize) == noErr)
    size = 4
    #expect(AudioFileGetProperty(file!, kAudioFilePropertyPacketSizeUpperBound, &size, &facts.upperBound) == noErr)
    size = 4
    #expect(AudioFileGetProperty(file!, kAudioFilePropertyFileFormat, &size, &facts.fileType) == noErr)
    size = UInt32(MemoryLayout<AudioFilePacketTableInfo>.size)
    #expect(AudioFileGetProperty(file!, kAudioFilePropertyPacketTableInfo, &size, &facts.table) == noErr)
    var cookieSize: UInt32 = 0
    #expect(AudioFileGetPropertyInfo(file!, kAudioFilePropertyMagicCookieData, &cookieSize, nil) == noErr)
    if cookieSize > 0 {
        facts.cookie = [UInt8](repeating: 0, count: Int(cookieSize))
        #expect(AudioFileGetProperty(file!, kAudioFilePropertyMagicCookieData, &cookieSize, &facts.cookie) == noErr)
    }
    // The player's loop: a buffer for `chunk` packets of the largest size, with descriptions.
    let capacity = Int(facts.maximumPacketSize) * Int(chunk)
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    defer { buffer.deallocate() }
    var descriptions = [AudioStreamPacketDescription](repeating: AudioStreamPacketDescription(), count: Int(chunk))
    var next: Int64 = 0
    while true {
        var bytes = UInt32(capacity)
        var packets = chunk
        try #require(AudioFileReadPacketData(file!, false, &bytes, &descriptions, next, &packets, buffer) == noErr)
        if packets == 0 { break }
        for d in descriptions[0..<Int(packets)] {
            facts.packets.append(Array(UnsafeRawBufferPointer(start: buffer + Int(d.mStartOffset), count: Int(d.mDataByteSize))))
        }
        next += Int64(packets)
    }
    return facts
}

extension AQCompatTests {
    /// Audio File Services on compressed files (FFmpeg's demuxers): real packets with
    /// descriptions, sizes, cookies, packet tables; decoding through ExtAudioFile; writing packets.
    @Suite("Compressed files", .serialized)
    struct CompressedFileTests {
        let fixtures = CompressedFixtures.shared
        let temp: TemporaryTestDirectory
        init() throws { temp = try TemporaryTestDirectory(prefix: "aqcompat-compressed-files") }

        /// Checks the packets against ffprobe's and the packet table against the source's length.
        func checkPackets(_ facts: CompressedFileFacts, path: String, headerBytes: Int = 0) throws {
            let probed = try CompressedFixtures.probePacketSizes(path).map { $0 - headerBytes }
            #expect(facts.packets.map(\.count) == probed)
            #expect(facts.packetCount == UInt64(probed.count))
            #expect(facts.byteCount == UInt64(probed.reduce(0, +)))
            #expect(facts.maximumPacketSize == UInt32(probed.max() ?? 0))
            #expect(facts.upperBound >= facts.maximumPacketSize)
            let total = Int64(facts.packetCount) * Int64(facts.format.mFramesPerPacket)
            #expect(Int64(facts.table.mPrimingFrames) + facts.table.mNumberValidFrames + Int64(facts.table.mRemainderFrames) == total)
        }

        @Test("MP3: packets of 1152 frames, VBR description, LAME's priming and padding as the packet table")
        func mp3() throws {
            let path = try fixtures.mp3
            let facts = try readCompressed(path)
            #expect(facts.format.mFormatID == kAudioFormatMPEGLayer3 && facts.format.mFramesPerPacket == 1152)
            #expect(facts.format.mBytesPerPacket == 0 && facts.format.mSampleRate == 44100 && facts.format.mChannelsPerFrame == 2)
            #expect(facts.fileType == kAudioFileMP3Type && facts.cookie.isEmpty)
            try checkPackets(facts, path: path)
            #expect(facts.table.mNumberValidFrames == Int64(CompressedFixtures.frames))
            // Every packet starts with an MPEG audio sync word.
            #expect(facts.packets.allSatisfy { $0.count > 4 && $0[0] == 0xFF && $0[1] & 0xE0 == 0xE0 })
        }

        @Test("AAC in M4A: 1024-frame packets, an ES descriptor cookie, priming from the edit list")
        func aacM4A() throws {
            let path = try fixtures.m4a
            let facts = try readCompressed(path, chunk: 7)
            #expect(facts.format.mFormatID == kAudioFormatMPEG4AAC && facts.format.mFramesPerPacket == 1024)
            #expect(facts.format.mFormatFlags == kMPEG4Object_AAC_LC && facts.format.mBytesPerPacket == 0)
            #expect(facts.fileType == kAudioFileM4AType)
            #expect(facts.cookie.first == 0x03)
            try checkPackets(facts, path: path)
            #expect(facts.table.mNumberValidFrames == Int64(CompressedFixtures.frames))
            #expect(facts.table.mPrimingFrames > 0)
        }

        @Test("AAC in ADTS: raw AAC packets (headers stripped) and a cookie made from the header")
        func adts() throws {
            let path = try fixtures.adts
            let facts = try readCompressed(path)
            #expect(facts.format.mFormatID == kAudioFormatMPEG4AAC && facts.format.mFramesPerPacket == 1024)
            #expect(facts.fileType == kAudioFileAAC_ADTSType && facts.cookie.first == 0x03)
            try checkPackets(facts, path: path, headerBytes: 7)
        }

        @Test("ALAC in M4A and CAF: the ALACSpecificConfig cookie, 4096-frame packets, the remainder")
        func alac() throws {
            for path in [try fixtures.alacM4A, try fixtures.alacCAF] {
                let facts = try readCompressed(path)
                #expect(facts.format.mFormatID == kAudioFormatAppleLossless && facts.format.mFramesPerPacket == 4096)
                #expect(facts.format.mFormatFlags == kAppleLosslessFormatFlag_16BitSourceData)
                #expect(facts.cookie.count == 24 && facts.cookie[5] == 16)
                try checkPackets(facts, path: path)
                if path.hasSuffix(".m4a") { #expect(facts.table.mNumberValidFrames == Int64(CompressedFixtures.frames)) }
            }
        }

        @Test("IMA4 in CAF: constant 68-byte packets of 64 frames")
        func ima4() throws {
            let path = try fixtures.ima4CAF
            let facts = try readCompressed(path)
            #expect(facts.format.mFormatID == kAudioFormatAppleIMA4 && facts.format.mFramesPerPacket == 64 && facts.format.mBytesPerPacket == 68)
            try checkPackets(facts, path: path)
        }

        @Test("ExtAudioFile decodes every valid frame: ALAC exactly, MP3 and AAC aligned with the source")
        func decodeThroughExtAudioFile() throws {
            let source = fixtures.source
            for (path, lossless) in [(try fixtures.alacM4A, true), (try fixtures.alacCAF, true), (try fixtures.mp3, false), (try fixtures.m4a, false)] {
                let (status, bytes) = try extReadAll(path, client: floatClient44, chunk: 1000)
                #expect(status == noErr)
                let decoded = floats(bytes)
                if path.hasSuffix(".caf") {
                    // libavformat's CAF muxer records no remainder: the padding of the last packet is read too.
                    #expect(decoded.count / 2 >= CompressedFixtures.frames)
                    #expect(Array(decoded.prefix(source.count)) == source)
                    continue
                }
                expectMatchesSource(decoded, lossless: lossless, "\(path)")
            }
        }

        @Test("ExtAudioFile seeks in a compressed file: frames after a seek equal those of a straight read")
        func seekCompressed() throws {
            // MP3 and ALAC decode the same after a seek (preroll covers the bit reservoir and the
            // overlap); AAC's noise substitution draws new noise, so it is compared by its error.
            for path in [try fixtures.mp3, try fixtures.alacM4A, try fixtures.m4a] {
                let (_, all) = try extReadAll(path, client: floatClient44, chunk: 4096)
                let straight = floats(all)
                var file: ExtAudioFileRef?
                try #require(ExtAudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, &file) == noErr)
                defer { ExtAudioFileDispose(file!) }
                var client = floatClient44
                try #require(ExtAudioFileSetProperty(file!, kExtAudioFileProperty_ClientDataFormat, 40, &client) == noErr)
                for start in [50_000, 3000, 0, 87_000] {
                    #expect(ExtAudioFileSeek(file!, Int64(start)) == noErr)
                    var got = [Float](repeating: 0, count: 2 * 1000)
                    var frames: UInt32 = 1000
                    try got.withUnsafeMutableBytes { raw in
                        var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 2, mDataByteSize: 8000, mData: raw.baseAddress))
                        try #require(ExtAudioFileRead(file!, &frames, &list) == noErr)
                    }
                    #expect(frames == 1000)
                    var position: Int64 = -1
                    #expect(ExtAudioFileTell(file!, &position) == noErr && position == Int64(start + 1000))
                    let expected = Array(straight[(start * 2)..<(start * 2 + 2000)])
                    if path.hasSuffix("sine.m4a") {
                        #expect(signalToNoise(got, expected) > 20, "seek to \(start)")
                    } else {
                        #expect(got == expected, "\(path): seek to \(start)")
                    }
                }
            }
        }

        @Test("Packets copied with AudioFileWritePackets into a new M4A and CAF read back the same, with cookie and packet table")
        func copyPackets() throws {
            for (source, type, name) in [(try fixtures.m4a, kAudioFileM4AType, "copy.m4a"), (try fixtures.alacCAF, kAudioFileCAFType, "copy.caf"),
                                         (try fixtures.adts, kAudioFileAAC_ADTSType, "copy.aac")] {
                let original = try readCompressed(source)
                let path = temp.file(name)
                var format = original.format
                var file: AudioFileID?
                try #require(AudioFileCreateWithURL(URL(fileURLWithPath: path) as CFURL, type, &format, kAudioFileFlags_EraseFile, &file) == noErr,
                             "\(AudioQueueCompatLastErrorMessage() ?? "")")
                var cookie = original.cookie
                if !cookie.isEmpty { #expect(AudioFileSetProperty(file!, kAudioFilePropertyMagicCookieData, UInt32(cookie.count), &cookie) == noErr) }
                var table = original.table
                if type == kAudioFileM4AType && original.table.mRemainderFrames == 0 { table.mRemainderFrames = 100 }
                if type != kAudioFileAAC_ADTSType {
                    #expect(AudioFileSetProperty(file!, kAudioFilePropertyPacketTableInfo, UInt32(MemoryLayout<AudioFilePacketTableInfo>.size), &table) == noErr)
                }
                var next: Int64 = 0
                for chunk in stride(from: 0, to: original.packets.count, by: 9) {
                    let group = original.packets[chunk..<min(chunk + 9, original.packets.count)]
                    var data: [UInt8] = []
                    var descriptions: [AudioStreamPacketDescription] = []
                    for packet in group {
                        descriptions.append(AudioStreamPacketDescription(mStartOffset: Int64(data.count), mVariableFramesInPacket: 0, mDataByteSize: UInt32(packet.count)))
                        data += packet
                    }
                    var count = UInt32(group.count)
                    try #require(AudioFileWritePackets(file!, false, UInt32(data.count), descriptions, next, &count, data) == noErr,
                                 "\(AudioQueueCompatLastErrorMessage() ?? "")")
                    next += Int64(count)
                }
                #expect(AudioFileClose(file!) == noErr)
                let copy = try readCompressed(path)
                #expect(copy.packets == original.packets, "\(name)")
                #expect(copy.cookie == original.cookie || type == kAudioFileAAC_ADTSType)
                if type != kAudioFileAAC_ADTSType {
                    #expect(copy.table == table, "\(name)")
                }
            }
        }

        @Test("Wrong requests get Apple's codes: no descriptions for VBR, a buffer too small, a negative packet, AAC in WAVE")
        func errors() throws {
            var file: AudioFileID?
            try #require(AudioFileOpenURL(try fixtures.mp3, kAudioFileReadPermission, 0, &file) == noErr)
            defer { AudioFileClose(file!) }
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
            defer { buffer.deallocate() }
            var bytes: UInt32 = 4096, packets: UInt32 = 4
            #expect(AudioFileReadPacketData(file!, false, &bytes, nil, 0, &packets, buffer) == kAudio_ParamError)
            var descriptions = [AudioStreamPacketDescription](repeating: .init(), count: 4)
            bytes = 10
            packets = 4
            #expect(AudioFileReadPacketData(file!, false, &bytes, &descriptions, 0, &packets, buffer) == kAudio_ParamError)
            bytes = 4096
            #expect(AudioFileReadPacketData(file!, false, &bytes, &descriptions, -1, &packets, buffer) == kAudioFileInvalidPacketOffsetError)
            bytes = 4096
            packets = 4
            #expect(AudioFileReadPacketData(file!, false, &bytes, &descriptions, 1_000_000, &packets, buffer) == noErr)
            #expect(packets == 0 && bytes == 0)
            var aac = AudioStreamBasicDescription(mSampleRate: 44100, mFormatID: kAudioFormatMPEG4AAC, mFormatFlags: 0, mBytesPerPacket: 0,
                                                  mFramesPerPacket: 1024, mBytesPerFrame: 0, mChannelsPerFrame: 2, mBitsPerChannel: 0, mReserved: 0)
            var created: AudioFileID?
            #expect(AudioFileCreateWithURL(URL(fileURLWithPath: temp.file("x.wav")) as CFURL, kAudioFileWAVEType, &aac, kAudioFileFlags_EraseFile, &created) == kAudioFileUnsupportedDataFormatError)
            #expect(!FileManager.default.fileExists(atPath: temp.file("x.wav")))
        }

        @Test("Truncated and garbage compressed files give an error or fewer packets, never a crash")
        func hostileFiles() throws {
            var rng = SeededRandom(seed: 16)
            for source in [try fixtures.mp3, try fixtures.m4a, try fixtures.adts, try fixtures.alacCAF] {
                let data = try Data(contentsOf: URL(fileURLWithPath: source))
                let name = (source as NSString).lastPathComponent
                for cut in [data.count / 2, data.count - 3, 100, 5] {
                    let path = temp.file("cut-\(cut)-\(name)")
                    try data.prefix(cut).write(to: URL(fileURLWithPath: path))
                    var file: AudioFileID?
                    let status = AudioFileOpenURL(path, kAudioFileReadPermission, 0, &file)
                    if status == noErr {
                        // What opens reads to its end (at most the original's packets) or fails with a code.
                        _ = try? readCompressed(path)
                        let (read, _) = try extReadAll(path, client: floatClient44)
                        #expect(read == noErr || read == kAudioFileInvalidFileError)
                        AudioFileClose(file!)
                    }
                }
                var garbage = data
                for _ in 0..<200 { garbage[Int(rng.next() % UInt64(garbage.count - 64)) + 64] = UInt8(truncatingIfNeeded: rng.next()) }
                let path = temp.file("garbage-\(name)")
                try garbage.write(to: URL(fileURLWithPath: path))
                var file: AudioFileID?
                if AudioFileOpenURL(path, kAudioFileReadPermission, 0, &file) == noErr {
                    let (read, _) = try extReadAll(path, client: floatClient44)
                    #expect(read == noErr || read == kAudioFileInvalidFileError)
                    AudioFileClose(file!)
                }
            }
            let noise = temp.file("noise.m4a")
            try Data((0..<10_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }).write(to: URL(fileURLWithPath: noise))
            var file: AudioFileID?
            #expect(AudioFileOpenURL(noise, kAudioFileReadPermission, 0, &file) != noErr)
        }
    }
}
