import AudioQueueCompat
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

/// G.711 µ-law to 16-bit linear, as the ITU table defines it (Sun's reference `ulaw2linear`).
func muLawToLinear(_ byte: UInt8) -> Int16 {
    let u = ~byte
    var t = (Int(u & 0x0F) << 3) + 0x84
    t <<= Int(u & 0x70) >> 4
    return Int16(u & 0x80 != 0 ? 0x84 - t : t - 0x84)
}

/// G.711 a-law to 16-bit linear (Sun's reference `alaw2linear`).
func aLawToLinear(_ byte: UInt8) -> Int16 {
    let a = byte ^ 0x55
    var t = Int(a & 0x0F)
    let segment = Int(a & 0x70) >> 4
    t = segment > 0 ? (t + t + 1 + 32) << (segment + 2) : (t + t + 1) << 3
    return Int16(a & 0x80 != 0 ? t : -t)
}

extension AQCompatTests {
    /// Playback queues of the compressed formats no example file covers — µ-law and a-law
    /// (constant-size packets, no descriptions), FLAC and Opus (packets with descriptions, the
    /// stream header as the cookie) — rendered offline and compared with an independent decode:
    /// G.711's tables, the source of a lossless encode, ffmpeg's decode of the same file.
    @Suite("Compressed playback queues: µ-law, a-law, FLAC, Opus", .serialized)
    struct CompressedPlaybackTests {
        let temp: TemporaryTestDirectory
        init() throws { temp = try TemporaryTestDirectory(prefix: "aqcompat-compressed-playback") }

        /// Plays `packets` through an offline queue of `format` (its cookie set first), in buffers
        /// of `perBuffer` packets — with descriptions for variable-size packets — trimming
        /// `trimStart` frames from the first and `trimEnd` from the last; renders float and
        /// returns every rendered frame up to the first silent render after the queue has run dry.
        func play(_ format: AudioStreamBasicDescription, cookie: [UInt8] = [], packets: [[UInt8]], perBuffer: Int,
                  trimStart: UInt32 = 0, trimEnd: UInt32 = 0) throws -> [Float] {
            let channels = format.mChannelsPerFrame
            let (queue, log) = try offlineOutputQueue(format, render: pcm(format.mSampleRate, channels: channels, bits: 32, float: true))
            defer { AudioQueueDispose(queue, true) }
            if !cookie.isEmpty {
                try #require(AudioQueueSetProperty(queue, kAudioQueueProperty_MagicCookie, cookie, UInt32(cookie.count)) == noErr,
                             "\(AudioQueueCompatLastErrorMessage() ?? "")")
            }
            let groups = stride(from: 0, to: packets.count, by: perBuffer).map { Array(packets[$0..<min($0 + perBuffer, packets.count)]) }
            for (index, group) in groups.enumerated() {
                let buffer = try filledBuffer(queue, group.flatMap { $0 })
                var descriptions: [AudioStreamPacketDescription] = []
                var offset: Int64 = 0
                for packet in group {
                    descriptions.append(AudioStreamPacketDescription(mStartOffset: offset, mVariableFramesInPacket: 0, mDataByteSize: UInt32(packet.count)))
                    offset += Int64(packet.count)
                }
                let described = format.mBytesPerPacket == 0
                let status = AudioQueueEnqueueBufferWithParameters(queue, buffer, described ? UInt32(group.count) : 0, described ? descriptions : nil,
                                                                   index == 0 ? trimStart : 0, index == groups.count - 1 ? trimEnd : 0,
                                                                   0, nil, nil, nil)
                try #require(status == noErr, "buffer \(index): \(status) \(AudioQueueCompatLastErrorMessage() ?? "")")
            }
            try #require(AudioQueueStart(queue, nil) == noErr)
            let chunk: UInt32 = 4096
            var capture: AudioQueueBufferRef?
            try #require(AudioQueueAllocateBuffer(queue, chunk * 4 * channels, &capture) == noErr)
            var time = 0.0
            var output: [Float] = []
            // Render until every buffer is back and a whole render is silent.
            while output.count < 10_000_000 {
                let (status, bytes) = render(queue, capture!, frames: chunk, at: &time)
                try #require(status == noErr, "\(AudioQueueCompatLastErrorMessage() ?? "")")
                let samples = floats(bytes)
                if log.buffers.count == groups.count && samples.allSatisfy({ $0 == 0 }) { break }
                output += samples
            }
            return output
        }

        /// Checks `output` holds `expected` and nothing after it but silence.
        func expectPlayed(_ output: [Float], _ expected: [Float], _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(output.count >= expected.count, "\(name): \(output.count) samples rendered, \(expected.count) expected", sourceLocation: sourceLocation)
            let played = Array(output.prefix(expected.count))
            let differing = played.indices.filter { played[$0] != expected[$0] }
            #expect(differing.isEmpty, "\(name): \(differing.count) samples differ, first at \(differing.first ?? -1)", sourceLocation: sourceLocation)
            #expect(output.dropFirst(expected.count).allSatisfy { $0 == 0 }, "\(name): sound after the last frame", sourceLocation: sourceLocation)
        }

        @Test("µ-law and a-law: every byte value decodes to G.711's value exactly, 2-byte stereo packets without descriptions in buffers of 441")
        func g711() throws {
            // Every byte value, in an order that puts each one on both channels.
            let bytes = (0..<6000).map { UInt8(truncatingIfNeeded: $0 * 37 + $0 / 256) }
            for (id, decode, name) in [(kAudioFormatULaw, muLawToLinear, "µ-law"), (kAudioFormatALaw, aLawToLinear, "a-law")] {
                let format = AudioStreamBasicDescription(mSampleRate: 8000, mFormatID: id, mFormatFlags: 0, mBytesPerPacket: 2, mFramesPerPacket: 1,
                                                         mBytesPerFrame: 2, mChannelsPerFrame: 2, mBitsPerChannel: 8, mReserved: 0)
                let packets = stride(from: 0, to: bytes.count, by: 2).map { Array(bytes[$0..<($0 + 2)]) }
                let output = try play(format, packets: packets, perBuffer: 441)
                expectPlayed(output, bytes.map { Float(decode($0)) / 32768 }, name)
            }
        }

        /// Runs ffmpeg with `arguments` (input first), failing the test if it fails.
        func ffmpeg(_ arguments: [String]) throws {
            let result = try CLI.run(["-hide_banner", "-loglevel", "error", "-y"] + arguments, timeout: 60, executable: "/usr/bin/ffmpeg")
            try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        }

        /// The packets of `path`'s audio stream as ffmpeg's demuxer cuts them: their payloads
        /// (copied out with `-f data`) split at the sizes and with the durations ffprobe reports.
        func demuxedPackets(_ path: String) throws -> (packets: [[UInt8]], durations: [Int]) {
            let probe = try CLI.run(["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=size,duration", "-of", "csv=p=0", path],
                                    timeout: 60, executable: "/usr/bin/ffprobe")
            try #require(probe.status == 0, "ffprobe: \(probe.stderr)")
            // "duration,size" a line (ffprobe's field order).
            let rows = probe.stdout.split(separator: "\n").map { $0.split(separator: ",").compactMap { Int($0) } }.filter { $0.count == 2 }
            try ffmpeg(["-i", path, "-map", "0:a:0", "-c", "copy", "-f", "data", path + ".bin"])
            let payload = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + ".bin")))
            var packets: [[UInt8]] = []
            var at = 0
            for row in rows {
                packets.append(Array(payload[at..<(at + row[1])]))
                at += row[1]
            }
            #expect(at == payload.count)
            return (packets, rows.map { $0[0] })
        }

        /// A 16-bit stereo WAV of two sines at `rate` and its samples as floats.
        func source(_ name: String, rate: Double, frames: Int) throws -> (String, [Float]) {
            let sine = FileFixtures.sine(frames: frames, channels: 2, sampleRate: rate, frequency: 997, amplitude: 0.4)
            let samples = sine.map { Float((Double($0) * 32768).rounded()) / 32768 }
            let path = temp.file(name)
            try FileFixtures.writeWAV(path: path, samples: samples, format: StreamFormat(sampleRate: rate, channelCount: 2, sampleFormat: .int16))
            return (path, samples)
        }

        @Test("IMA4: Apple's 34-byte channel blocks of 64 frames (68-byte stereo packets, no descriptions) play what ffmpeg decodes from the CAF ffmpeg wrote, sample for sample")
        func ima4() throws {
            let (wav, _) = try source("ima4-source.wav", rate: 44100, frames: 44_100)
            let path = temp.file("source.caf")
            try ffmpeg(["-i", wav, "-c:a", "adpcm_ima_qt", path])
            try ffmpeg(["-i", path, "-f", "f32le", "-ac", "2", path + ".f32"])
            let expected = floats([UInt8](try Data(contentsOf: URL(fileURLWithPath: path + ".f32"))))
            // The packets as a player reads them: AudioFileReadPacketData of the file.
            var file: AudioFileID?
            try #require(AudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, .readPermission, 0, &file) == noErr)
            defer { AudioFileClose(file!) }
            var format = AudioStreamBasicDescription()
            var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
            #expect(AudioFileGetProperty(file!, kAudioFilePropertyDataFormat, &size, &format) == noErr)
            #expect(format.mFormatID == kAudioFormatAppleIMA4 && format.mBytesPerPacket == 68 && format.mFramesPerPacket == 64)
            var packetCount: UInt64 = 0
            size = 8
            #expect(AudioFileGetProperty(file!, kAudioFilePropertyAudioDataPacketCount, &size, &packetCount) == noErr)
            var bytes = [UInt8](repeating: 0, count: Int(packetCount) * 68)
            var byteCount = UInt32(bytes.count)
            var packets = UInt32(packetCount)
            #expect(AudioFileReadPacketData(file!, false, &byteCount, nil, 0, &packets, &bytes) == noErr)
            #expect(packets == UInt32(packetCount) && byteCount == UInt32(bytes.count))
            let split = stride(from: 0, to: bytes.count, by: 68).map { Array(bytes[$0..<($0 + 68)]) }
            // Buffers of 7 packets (448 frames): many small buffers, as a player sizing in packets does.
            let output = try play(format, packets: split, perBuffer: 7)
            print("IMA4: \(split.count) packets; rendered \(output.count / 2) frames, ffmpeg decodes \(expected.count / 2)")
            expectPlayed(output, expected, "IMA4")
        }

        @Test("FLAC: ffmpeg's frames with the STREAMINFO cookie play the 16-bit source exactly, the short last frame included")
        func flac() throws {
            let (wav, samples) = try source("flac-source.wav", rate: 44100, frames: 30_001)
            let path = temp.file("source.flac")
            try ffmpeg(["-i", wav, "-c:a", "flac", path])
            let (packets, durations) = try demuxedPackets(path)
            // The cookie: the 34-byte STREAMINFO after "fLaC" and its block header.
            let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            try #require(file.count > 42 && file[0..<4] == [0x66, 0x4C, 0x61, 0x43])
            let format = AudioStreamBasicDescription(mSampleRate: 44100, mFormatID: kAudioFormatFLAC, mFormatFlags: 1, mBytesPerPacket: 0,
                                                     mFramesPerPacket: UInt32(durations.first ?? 0), mBytesPerFrame: 0, mChannelsPerFrame: 2,
                                                     mBitsPerChannel: 0, mReserved: 0)
            let output = try play(format, cookie: Array(file[8..<42]), packets: packets, perBuffer: 3)
            print("FLAC: \(packets.count) packets of \(durations.first ?? 0) frames; rendered \(output.count / 2) frames of \(samples.count / 2)")
            expectPlayed(output, samples, "FLAC")
        }

        @Test("Opus at 48 kHz: Ogg's packets with the OpusHead cookie, pre-skip and end trimmed, equal ffmpeg's decode of the file")
        func opus() throws {
            let (wav, _) = try source("opus-source.wav", rate: 48000, frames: 48_000)
            let path = temp.file("source.ogg")
            try ffmpeg(["-i", wav, "-c:a", "libopus", "-b:a", "128k", path])
            let (packets, durations) = try demuxedPackets(path)
            try ffmpeg(["-i", path, "-f", "f32le", "-ac", "2", path + ".f32"])
            let expected = floats([UInt8](try Data(contentsOf: URL(fileURLWithPath: path + ".f32"))))
            // The cookie: the 19-byte OpusHead identification header; its pre-skip (bytes 10–11) is
            // the priming to trim (the decoder drops none itself, as on Apple), and what follows
            // the decoded length is the end's padding.
            let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let head = try #require((0..<(file.count - 19)).first { Array(file[$0..<($0 + 8)]) == Array("OpusHead".utf8) })
            let cookie = Array(file[head..<(head + 19)])
            let preSkip = Int(cookie[10]) | Int(cookie[11]) << 8
            // ffprobe's durations leave the pre-skip and the end's padding out; the packets hold
            // libopus's 20 ms frames (960 at 48 kHz) each.
            #expect(durations.dropFirst().dropLast().allSatisfy { $0 == 960 })
            let total = packets.count * 960
            let format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: kAudioFormatOpus, mFormatFlags: 0, mBytesPerPacket: 0,
                                                     mFramesPerPacket: 960, mBytesPerFrame: 0, mChannelsPerFrame: 2, mBitsPerChannel: 0, mReserved: 0)
            let output = try play(format, cookie: cookie, packets: packets, perBuffer: 5, trimStart: UInt32(preSkip),
                                  trimEnd: UInt32(total - preSkip - expected.count / 2))
            print("Opus: \(packets.count) packets, \(total) frames, pre-skip \(preSkip); rendered \(output.count / 2) frames, ffmpeg decodes \(expected.count / 2)")
            #expect(expected.count / 2 == 48_000)
            expectPlayed(output, expected, "Opus")
        }
    }
}
