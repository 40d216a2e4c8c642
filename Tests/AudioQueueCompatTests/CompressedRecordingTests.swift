import AudioQueueCompat
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

/// The state of a recorder in the idiom of Apple's recording guide (Listing 2-1) and its
/// SpeakHere sample, with what the test checks of each callback.
final class CompressedRecorderState: @unchecked Sendable {
    struct Callback {
        var packets: UInt32
        var bytes: UInt32
        var sampleTime: Double
        /// Whether the descriptions lie back to back from offset 0 and add up to the byte size.
        var descriptionsCover: Bool
        var hadDescriptions: Bool
    }

    var queue: AudioQueueRef?
    var file: AudioFileID?
    var format = AudioStreamBasicDescription()
    var currentPacket: Int64 = 0
    var isRunning = false
    var writeStatus: OSStatus = noErr
    var callbacks: [Callback] = []
    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
}

/// The `kAudioQueueProperty_ConverterError` values a listener read, in order.
typealias ConverterErrorLog = PropertyLog<OSStatus>

/// A `kAudioQueueProperty_ConverterError` listener: reads the property and logs it.
func logConverterError(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ id: AudioQueuePropertyID) {
    var status: OSStatus = 0
    var size = UInt32(MemoryLayout<OSStatus>.size)
    AudioQueueGetProperty(queue, kAudioQueueProperty_ConverterError, &status, &size)
    Unmanaged<ConverterErrorLog>.fromOpaque(userData!).takeUnretainedValue().add(status)
}

/// Listing 2-5: writes the buffer's packets to the file with their descriptions, and enqueues the
/// buffer again while recording.
func writeRecordedPackets(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ buffer: AudioQueueBufferRef,
                          _ startTime: UnsafePointer<AudioTimeStamp>, _ numberPackets: UInt32,
                          _ descriptions: UnsafePointer<AudioStreamPacketDescription>?) {
    let state = Unmanaged<CompressedRecorderState>.fromOpaque(userData!).takeUnretainedValue()
    var packets = numberPackets
    if packets == 0 && state.format.mBytesPerPacket != 0 {
        packets = buffer.pointee.mAudioDataByteSize / state.format.mBytesPerPacket
    }
    var covered = true
    if let descriptions {
        var offset: Int64 = 0
        for index in 0..<Int(packets) {
            covered = covered && descriptions[index].mStartOffset == offset && descriptions[index].mDataByteSize > 0
            offset += Int64(descriptions[index].mDataByteSize)
        }
        covered = covered && offset == Int64(buffer.pointee.mAudioDataByteSize)
    }
    state.callbacks.append(.init(packets: packets, bytes: buffer.pointee.mAudioDataByteSize, sampleTime: startTime.pointee.mSampleTime,
                                 descriptionsCover: covered, hadDescriptions: descriptions != nil))
    if packets > 0 {
        let status = AudioFileWritePackets(state.file!, false, buffer.pointee.mAudioDataByteSize, descriptions, state.currentPacket,
                                           &packets, buffer.pointee.mAudioData)
        if status == noErr { state.currentPacket += Int64(packets) } else { state.writeStatus = status }
    }
    if !state.isRunning { return }
    AudioQueueEnqueueBuffer(queue, buffer, 0, nil)
}

extension AQCompatTests {
    /// Input queues recording AAC, ALAC and µ-law as Apple's do, in the idiom of Apple's recording
    /// guide (AudioQueueNewInput → AudioFileCreateWithURL → the callback writes packets with
    /// AudioFileWritePackets → the cookie set on the file → stop), on an offline device so the
    /// counts are exact; the files are read back by Lockstep's reader and by ffmpeg.
    @Suite("Compressed recording", .serialized)
    struct CompressedRecordingTests {
        let temp: TemporaryTestDirectory
        init() throws { temp = try TemporaryTestDirectory(prefix: "aqcompat-compressed-recording") }

        /// The device's input, 16-bit exact: a 1 kHz sine on the left, 1.5 kHz on the right, at
        /// device sample time t at `rate`.
        static func input(rate: Double) -> OfflineDevice.InputProvider {
            { time, frames, channels in
                for i in 0..<frames {
                    let t = Double(time + Int64(i)) / rate
                    channels[0][i] = Float((sin(2 * .pi * 1000 * t) * 16000).rounded()) / 32768
                    channels[1][i] = Float((sin(2 * .pi * 1500 * t) * 12000).rounded()) / 32768
                }
            }
        }

        /// What a recording produced: the file, the callbacks, the priming and remainder the queue
        /// reported, the buffers' capacity and the largest packet it reported.
        struct Take {
            var path: String
            var callbacks: [CompressedRecorderState.Callback]
            var packets: Int64
            var prime: AudioConverterPrimeInfo
            var bufferBytes: UInt32
            var maximumPacketSize: UInt32
        }

        /// Records `deviceFrames` frames of a `deviceRate` offline device (renders of 480) into a
        /// new `fileType` file through an input queue of `format`, in the recording guide's order.
        /// `inputProvider` replaces the sine; `prepare` runs on the new queue before it records, and
        /// `engine` receives the engine the queue ran on.
        func record(_ format: AudioStreamBasicDescription, deviceRate: Double, deviceFrames: Int, fileType: AudioFileTypeID,
                    name: String, seconds: Double = 0.5, inputProvider: OfflineDevice.InputProvider? = nil,
                    prepare: (AudioQueueRef) -> Void = { _ in }, engine: (Engine) -> Void = { _ in }) throws -> Take {
            let device = try OfflineDevice(format: StreamFormat(sampleRate: deviceRate, channelCount: 2), maximumFramesPerRender: 480,
                                           inputChannelCount: 2, inputProvider: inputProvider ?? Self.input(rate: deviceRate))
            let running = try Engine(device: device)
            engine(running)
            AudioQueueSetDefaultDevice(.engine(running))
            defer { AudioQueueSetDefaultDevice(.standard) }
            let state = CompressedRecorderState()
            state.format = format
            try #require(AudioQueueNewInput(&state.format, writeRecordedPackets, state.pointer, nil, nil, 0, &state.queue) == noErr,
                         "\(AudioQueueCompatLastErrorMessage() ?? "")")
            let queue = state.queue!
            prepare(queue)
            var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_StreamDescription, &state.format, &size) == noErr)
            let path = temp.file(name)
            try #require(AudioFileCreateWithURL(URL(fileURLWithPath: path) as CFURL, fileType, &state.format, kAudioFileFlags_EraseFile,
                                                &state.file) == noErr, "\(AudioQueueCompatLastErrorMessage() ?? "")")
            // SpeakHere's ComputeRecordBufferSize: packets for `seconds` at the largest packet.
            var maximumPacketSize = state.format.mBytesPerPacket
            if maximumPacketSize == 0 {
                size = 4
                #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_MaximumOutputPacketSize, &maximumPacketSize, &size) == noErr)
            }
            let frames = Int((seconds * state.format.mSampleRate).rounded(.up))
            let packetsPerBuffer = state.format.mFramesPerPacket > 0 ? frames / Int(state.format.mFramesPerPacket) : frames
            let bufferBytes = UInt32(max(packetsPerBuffer, 1)) * maximumPacketSize
            for _ in 0..<3 {
                var buffer: AudioQueueBufferRef?
                try #require(AudioQueueAllocateBuffer(queue, bufferBytes, &buffer) == noErr)
                try #require(AudioQueueEnqueueBuffer(queue, buffer!, 0, nil) == noErr)
            }
            // Listing 2-7 before recording; the priming goes into the packet table now (an MPEG-4
            // file's time stamps carry it from the first packet).
            try setCookie(queue, state.file!)
            var prime = AudioConverterPrimeInfo()
            size = UInt32(MemoryLayout<AudioConverterPrimeInfo>.size)
            #expect(AudioQueueGetProperty(queue, kAudioConverterPrimeInfo, &prime, &size) == noErr)
            var table = AudioFilePacketTableInfo(mNumberValidFrames: 0, mPrimingFrames: Int32(prime.leadingFrames), mRemainderFrames: 0)
            if fileType != kAudioFileAAC_ADTSType {
                #expect(AudioFileSetProperty(state.file!, kAudioFilePropertyPacketTableInfo, UInt32(MemoryLayout<AudioFilePacketTableInfo>.size), &table) == noErr)
            }
            state.isRunning = true
            try #require(AudioQueueStart(queue, nil) == noErr)
            for _ in 0..<(deviceFrames / 480) { _ = try device.renderFloat(frames: 480) }
            if deviceFrames % 480 > 0 { _ = try device.renderFloat(frames: deviceFrames % 480) }
            #expect(AudioQueueStop(queue, true) == noErr)
            _ = try device.renderFloat(frames: 480)       // the offline device delivers the stop's callbacks
            state.isRunning = false
            // Listing 2-15: the cookie again, and the packet table with the queue's priming and remainder.
            try setCookie(queue, state.file!)
            size = UInt32(MemoryLayout<AudioConverterPrimeInfo>.size)
            #expect(AudioQueueGetProperty(queue, kAudioConverterPrimeInfo, &prime, &size) == noErr)
            let framesPerPacket = Int64(state.format.mFramesPerPacket)
            table = AudioFilePacketTableInfo(mNumberValidFrames: state.currentPacket * framesPerPacket - Int64(prime.leadingFrames) - Int64(prime.trailingFrames),
                                             mPrimingFrames: Int32(prime.leadingFrames), mRemainderFrames: Int32(prime.trailingFrames))
            if fileType != kAudioFileAAC_ADTSType {
                #expect(AudioFileSetProperty(state.file!, kAudioFilePropertyPacketTableInfo, UInt32(MemoryLayout<AudioFilePacketTableInfo>.size), &table) == noErr,
                        "\(AudioQueueCompatLastErrorMessage() ?? "")")
            }
            #expect(AudioQueueDispose(queue, true) == noErr)
            #expect(AudioFileClose(state.file!) == noErr)
            #expect(state.writeStatus == noErr, "AudioFileWritePackets: \(state.writeStatus) \(AudioQueueCompatLastErrorMessage() ?? "")")
            return Take(path: path, callbacks: state.callbacks, packets: state.currentPacket, prime: prime, bufferBytes: bufferBytes,
                        maximumPacketSize: maximumPacketSize)
        }

        /// Listing 2-7: the queue's magic cookie onto the file.
        func setCookie(_ queue: AudioQueueRef, _ file: AudioFileID) throws {
            var cookieSize: UInt32 = 0
            guard AudioQueueGetPropertySize(queue, kAudioQueueProperty_MagicCookie, &cookieSize) == noErr, cookieSize > 0 else { return }
            var cookie = [UInt8](repeating: 0, count: Int(cookieSize))
            try #require(AudioQueueGetProperty(queue, kAudioQueueProperty_MagicCookie, &cookie, &cookieSize) == noErr)
            #expect(AudioFileSetProperty(file, kAudioFilePropertyMagicCookieData, cookieSize, cookie) == noErr,
                    "\(AudioQueueCompatLastErrorMessage() ?? "")")
        }

        /// The frames ffmpeg decodes from `path` (an independent reader), interleaved float.
        func ffmpegDecode(_ path: String, channels: Int) throws -> [Float] {
            let raw = path + ".f32"
            let result = try CLI.run(["-hide_banner", "-loglevel", "error", "-y", "-i", path, "-f", "f32le", "-ac", String(channels), raw],
                                     timeout: 60, executable: "/usr/bin/ffmpeg")
            try #require(result.status == 0, "ffmpeg: \(result.stderr)")
            return floats(Array(try Data(contentsOf: URL(fileURLWithPath: raw))))
        }

        /// Decodes `path` with ExtAudioFile (valid frames only) as float stereo at `rate`.
        func extDecode(_ path: String, rate: Double) throws -> [Float] {
            var client = floatClient44
            client.mSampleRate = rate
            let (status, bytes) = try extReadAll(path, client: client, chunk: 1000)
            #expect(status == noErr)
            return floats(bytes)
        }

        /// Checks the callbacks of a VBR recording: whole packets with descriptions, every buffer
        /// but the last ones of the stop holding what its capacity takes at the largest packet.
        func checkVBRCallbacks(_ take: Take, framesPerPacket: Int) {
            let callbacks = take.callbacks
            #expect(!callbacks.isEmpty)
            #expect(callbacks.allSatisfy { $0.hadDescriptions && $0.descriptionsCover })
            #expect(callbacks.allSatisfy { $0.bytes <= take.bufferBytes })
            let perBuffer = UInt32(take.bufferBytes / take.maximumPacketSize)
            #expect(callbacks.dropLast(3).allSatisfy { $0.packets == perBuffer }, "\(callbacks.map(\.packets)) of \(perBuffer)")
            #expect(Int64(callbacks.reduce(0) { $0 + Int($1.packets) }) == take.packets)
            // Sample times follow the packets' frames.
            var time = 0.0
            for callback in callbacks {
                #expect(callback.sampleTime == time)
                time += Double(callback.packets) * Double(framesPerPacket)
            }
        }

        @Test("AAC into M4A: whole packets with descriptions, cookie, packet table; every frame recorded read back by Lockstep, ffprobe (the edit list) and ffmpeg, on the sine",
              arguments: [(44100.0, 96000, 88200),      // from a 48 kHz device: 96 000 device frames are 88 200
                          (48000.0, 96333, 96333)])     // at the device's rate, a length of no whole millisecond
        func recordAAC(rate: Double, deviceFrames: Int, captured: Int) throws {
            let format = Self.compressed(kAudioFormatMPEG4AAC, rate: rate)
            let take = try record(format, deviceRate: 48000, deviceFrames: deviceFrames, fileType: kAudioFileM4AType, name: "take-\(Int(rate)).m4a")
            #expect(take.maximumPacketSize > 0)
            checkVBRCallbacks(take, framesPerPacket: 1024)
            #expect(take.prime.leadingFrames > 0)
            #expect(take.packets * 1024 == Int64(take.prime.leadingFrames) + Int64(captured) + Int64(take.prime.trailingFrames),
                    "\(take.packets) packets, priming \(take.prime.leadingFrames), remainder \(take.prime.trailingFrames)")
            let facts = try readCompressed(take.path)
            #expect(facts.format.mFormatID == kAudioFormatMPEG4AAC && facts.packetCount == UInt64(take.packets))
            #expect(facts.table.mNumberValidFrames == Int64(captured), "\(facts.table)")
            #expect(facts.table.mPrimingFrames == Int32(take.prime.leadingFrames))
            let ours = try extDecode(take.path, rate: rate)
            let theirs = try ffmpegDecode(take.path, channels: 2)
            print("AAC recording at \(rate) Hz: \(take.callbacks.count) callbacks, \(take.packets) packets, priming \(take.prime.leadingFrames), remainder \(take.prime.trailingFrames); read back \(ours.count / 2) frames (ffmpeg \(theirs.count / 2)) of \(captured)")
            #expect(ours.count == captured * 2)
            // ffmpeg decodes every packet (it cuts the edit list's priming, not its end), and
            // ffprobe reads the edit list's length: the frames recorded.
            #expect(theirs.count >= captured * 2 && Array(theirs.prefix(captured * 2)) == ours)
            #expect(try CompressedFixtures.probeDuration(take.path) == captured)
            // The recording is the device's sine at the queue's rate, in place: no lag, within AAC's noise.
            var expected = [Float](repeating: 0, count: captured * 2)
            for frame in 0..<captured {
                let t = Double(frame) / rate
                expected[frame * 2] = Float(sin(2 * .pi * 1000 * t) * 16000 / 32768)
                expected[frame * 2 + 1] = Float(sin(2 * .pi * 1500 * t) * 12000 / 32768)
            }
            #expect(bestLag(ours, expected, channels: 2) == 0)
            #expect(bestLag(theirs, expected, channels: 2) == 0)
            let snr = signalToNoise(ours, expected)
            print("AAC recording at \(rate) Hz: SNR \(snr) dB against the sine")
            #expect(snr > 20)
        }
    
        @Test("an encoder failure is never silent: AAC refusing absurd input (1e30) sets ConverterError, calls its listeners, reports the lost frames as an overflow discontinuity with their count, and the recording goes on")
        func encoderFailureReported() throws {
            // 480 device frames of 1e30 a quarter of the way in: FFmpeg's AAC encoder refuses
            // input that large ("(near) NaN/+-Inf"); what is encoded before and after stays.
            let sine = Self.input(rate: 48000)
            let bad = 24000..<24480
            let input: OfflineDevice.InputProvider = { time, frames, channels in
                sine(time, frames, channels)
                for i in 0..<frames where bad.contains(Int(time) + i) { channels[0][i] = 1e30; channels[1][i] = -1e30 }
            }
            let log = ConverterErrorLog()
            var engine: Engine?
            var status: OSStatus = 0
            let take = try record(Self.compressed(kAudioFormatMPEG4AAC, rate: 48000), deviceRate: 48000, deviceFrames: 96000,
                                  fileType: kAudioFileM4AType, name: "nan.m4a", inputProvider: input,
                                  prepare: { queue in
                                      #expect(AudioQueueAddPropertyListener(queue, kAudioQueueProperty_ConverterError, logConverterError, log.pointer) == noErr)
                                  },
                                  engine: { engine = $0 })
            let reported = log.seen
            status = reported.first ?? 0
            let overflows = engine.map { $0.discontinuities.filter { $0.kind == .overflow } } ?? []
            let lost = overflows.reduce(0) { $0 + $1.length }
            print("AAC encoder failure: ConverterError \(reported) (\(fourCharCodeString(UInt32(bitPattern: status)))), \(overflows.count) overflow discontinuities, \(lost) frames lost at \(overflows.map(\.sampleTime)); \(take.packets) packets recorded")
            #expect(!reported.isEmpty && reported.allSatisfy { $0 != noErr }, "the listener saw \(reported)")
            #expect(!overflows.isEmpty && lost > 0 && lost <= 96000, "\(overflows)")
            #expect(overflows.allSatisfy { $0.sampleTime >= Int64(bad.lowerBound) - 4096 && $0.sampleTime <= Int64(bad.upperBound) + 4096 }, "\(overflows)")
            // What was encoded before and after is in the file: every packet but the refused ones,
            // and the file reads back with the packet table's frames.
            #expect(lost % 1024 == 0 && take.packets * 1024 >= Int64(96000 - Int(lost)), "\(take.packets) packets for \(96000 - Int(lost)) frames")
            let facts = try readCompressed(take.path)
            #expect(facts.packetCount == UInt64(take.packets))
            let back = try extDecode(take.path, rate: 48000)
            #expect(Int64(back.count / 2) == facts.table.mNumberValidFrames && back.count / 2 >= 96000 - Int(lost), "\(back.count / 2) frames read back, table \(facts.table)")
        }

        @Test("NaN and infinite input record as silence in AAC and ALAC (no trap, no refused packet, no ConverterError); the rest is the sine",
              arguments: [kAudioFormatMPEG4AAC, kAudioFormatAppleLossless])
        func nonFiniteInput(codec: AudioFormatID) throws {
            let sine = Self.input(rate: 48000)
            let bad = 24000..<24480
            let input: OfflineDevice.InputProvider = { time, frames, channels in
                sine(time, frames, channels)
                for i in 0..<frames where bad.contains(Int(time) + i) { channels[0][i] = .nan; channels[1][i] = i % 2 == 0 ? .infinity : -.infinity }
            }
            let log = ConverterErrorLog()
            var engine: Engine?
            let format = Self.compressed(codec, rate: 48000, flags: codec == kAudioFormatAppleLossless ? kAppleLosslessFormatFlag_16BitSourceData : 0)
            let aac = codec == kAudioFormatMPEG4AAC
            let take = try record(format, deviceRate: 48000, deviceFrames: 48000, fileType: aac ? kAudioFileM4AType : kAudioFileCAFType,
                                  name: "nonfinite-\(fourCharCodeString(codec)).\(aac ? "m4a" : "caf")", inputProvider: input,
                                  prepare: { queue in
                                      #expect(AudioQueueAddPropertyListener(queue, kAudioQueueProperty_ConverterError, logConverterError, log.pointer) == noErr)
                                  },
                                  engine: { engine = $0 })
            #expect(log.seen.isEmpty)
            let overflows = engine.map { $0.discontinuities.filter { $0.kind == .overflow } } ?? []
            #expect(overflows.isEmpty)
            let back = try extDecode(take.path, rate: 48000)
            #expect(back.count == 48000 * 2, "\(back.count / 2) frames")
            guard back.count == 48000 * 2 else { return }
            if codec == kAudioFormatAppleLossless {
                let expected = Self.expectedInput(frames: 48000, rate: 48000)
                for frame in 0..<48000 {
                    let want: (Float, Float) = bad.contains(frame) ? (0, 0) : (expected[frame * 2], expected[frame * 2 + 1])
                    if back[frame * 2] != want.0 || back[frame * 2 + 1] != want.1 {
                        Issue.record("frame \(frame): \(back[frame * 2]), \(back[frame * 2 + 1]) instead of \(want)")
                        break
                    }
                }
            } else {
                #expect(back.allSatisfy { $0.isFinite })
            }
        }

        /// A stereo description of a compressed format, as a recorder fills it in (the queue
        /// completes it: `kAudioQueueProperty_StreamDescription`).
        static func compressed(_ id: AudioFormatID, rate: Double, flags: AudioFormatFlags = 0) -> AudioStreamBasicDescription {
            var format = AudioStreamBasicDescription()
            format.mFormatID = id
            format.mFormatFlags = flags
            format.mSampleRate = rate
            format.mChannelsPerFrame = 2
            return format
        }

        /// The device's input for frames `0..<frames` at `rate`, interleaved.
        static func expectedInput(frames: Int, rate: Double) -> [Float] {
            let left = UnsafeMutablePointer<Float>.allocate(capacity: frames)
            let right = UnsafeMutablePointer<Float>.allocate(capacity: frames)
            defer { left.deallocate(); right.deallocate() }
            var channels = [left, right]
            channels.withUnsafeMutableBufferPointer { input(rate: rate)(0, frames, $0.baseAddress!) }
            return (0..<frames).flatMap { [left[$0], right[$0]] }
        }

        @Test("ALAC at 44.1 kHz from a 44.1 kHz device into CAF: every captured frame read back sample-exactly by Lockstep and ffmpeg")
        func recordALAC() throws {
            let format = Self.compressed(kAudioFormatAppleLossless, rate: 44100, flags: kAppleLosslessFormatFlag_16BitSourceData)
            let captured = 92 * 480                                  // 44 160 frames, not whole packets
            let take = try record(format, deviceRate: 44100, deviceFrames: captured, fileType: kAudioFileCAFType, name: "take.caf")
            checkVBRCallbacks(take, framesPerPacket: 4096)
            #expect(take.prime.leadingFrames == 0)
            #expect(take.packets == Int64((captured + 4095) / 4096))
            #expect(Int(take.prime.trailingFrames) == Int(take.packets) * 4096 - captured)
            let facts = try readCompressed(take.path)
            #expect(facts.table.mNumberValidFrames == Int64(captured), "\(facts.table)")
            let expected = Self.expectedInput(frames: captured, rate: 44100)
            let ours = try extDecode(take.path, rate: 44100)
            let theirs = try ffmpegDecode(take.path, channels: 2)
            print("ALAC recording: \(take.callbacks.count) callbacks, \(take.packets) packets, remainder \(take.prime.trailingFrames); read back \(ours.count / 2) frames (ffmpeg \(theirs.count / 2)) of \(captured)")
            #expect(ours == expected)
            #expect(theirs == expected)
        }

        @Test("µ-law and a-law from a 44.1 kHz device into CAF: constant-size packets without descriptions, every frame as the codec rounds it",
              arguments: [kAudioFormatULaw, kAudioFormatALaw])
        func recordG711(codec: AudioFormatID) throws {
            let format = Self.compressed(codec, rate: 44100)
            let captured = 20 * 480
            let take = try record(format, deviceRate: 44100, deviceFrames: captured, fileType: kAudioFileCAFType,
                                  name: "take-\(fourCharCodeString(codec)).caf", seconds: 0.05)
            #expect(take.callbacks.allSatisfy { !$0.hadDescriptions && $0.bytes == $0.packets * 2 })
            #expect(take.callbacks.dropLast().allSatisfy { $0.bytes == take.bufferBytes })
            #expect(take.packets == Int64(captured))
            let expected = Self.expectedInput(frames: captured, rate: 44100)
            let ours = try extDecode(take.path, rate: 44100)
            let theirs = try ffmpegDecode(take.path, channels: 2)
            #expect(ours.count == expected.count && theirs == ours)
            // G.711 keeps 8 bits of 13–14: each sample within its step (at most 1/32 of full scale here).
            let worst = zip(ours, expected).map { abs($0 - $1) }.max() ?? 1
            #expect(worst < 1.0 / 32, "largest error \(worst)")
        }

        @Test("IMA4 from a 44.1 kHz device into CAF: 68-byte stereo packets of 64 frames without descriptions, the last one padded (its remainder in the packet table); read back by Lockstep and ffmpeg alike, on the sine")
        func recordIMA4() throws {
            let format = Self.compressed(kAudioFormatAppleIMA4, rate: 44100)
            let captured = 20 * 480                                   // 9 600 frames: 150 packets exactly
            let take = try record(format, deviceRate: 44100, deviceFrames: captured + 100, fileType: kAudioFileCAFType,
                                  name: "take-ima4.caf", seconds: 0.05)
            let total = captured + 100                                 // 9 700: the last packet carries 36 frames
            #expect(take.callbacks.allSatisfy { !$0.hadDescriptions && $0.bytes == $0.packets * 68 })
            #expect(take.packets == Int64((total + 63) / 64))
            #expect(Int(take.prime.trailingFrames) == Int(take.packets) * 64 - total && take.prime.leadingFrames == 0)
            let facts = try readCompressed(take.path)
            #expect(facts.format.mFormatID == kAudioFormatAppleIMA4 && facts.format.mBytesPerPacket == 68 && facts.format.mFramesPerPacket == 64)
            #expect(facts.table.mNumberValidFrames == Int64(total), "\(facts.table)")
            let ours = try extDecode(take.path, rate: 44100)
            let theirs = try ffmpegDecode(take.path, channels: 2)
            #expect(ours.count == total * 2)
            // ffmpeg decodes every packet (CAF's packet table does not cut its end).
            #expect(theirs.count >= ours.count && Array(theirs.prefix(ours.count)) == ours)
            let expected = Self.expectedInput(frames: total, rate: 44100)
            #expect(bestLag(ours, expected, channels: 2) == 0)
            let snr = signalToNoise(ours, expected)
            print("IMA4 recording: \(take.callbacks.count) callbacks, \(take.packets) packets, remainder \(take.prime.trailingFrames); SNR \(snr) dB against the sine")
            #expect(snr > 20)
        }

        @Test("recording refuses what Apple's queues refuse: MP3, FLAC and Opus ('fmt?'), buffers smaller than a packet, a cookie set on the queue")
        func refusals() throws {
            let device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 2), maximumFramesPerRender: 480,
                                           inputChannelCount: 2, inputProvider: Self.input(rate: 48000))
            AudioQueueSetDefaultDevice(.engine(try Engine(device: device)))
            defer { AudioQueueSetDefaultDevice(.standard) }
            let log = CallbackLog()
            for id in [kAudioFormatMPEGLayer3, kAudioFormatFLAC, kAudioFormatOpus] {
                var format = Self.compressed(id, rate: 48000)
                var queue: AudioQueueRef?
                #expect(AudioQueueNewInput(&format, logInput, log.pointer, nil, nil, 0, &queue) == kAudioFormatUnsupportedDataFormatError)
            }
            var format = Self.compressed(kAudioFormatMPEG4AAC, rate: 48000)
            var queue: AudioQueueRef?
            try #require(AudioQueueNewInput(&format, logInput, log.pointer, nil, nil, 0, &queue) == noErr)
            var maximum: UInt32 = 0
            var size: UInt32 = 4
            #expect(AudioQueueGetProperty(queue!, kAudioQueueProperty_MaximumOutputPacketSize, &maximum, &size) == noErr)
            var converterMaximum: UInt32 = 0
            #expect(AudioQueueGetProperty(queue!, kAudioConverterPropertyMaximumOutputPacketSize, &converterMaximum, &size) == noErr)
            #expect(maximum > 0 && converterMaximum == maximum)
            var small: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue!, maximum - 1, &small) == noErr)
            #expect(AudioQueueEnqueueBuffer(queue!, small!, 0, nil) == kAudioQueueErr_InvalidBuffer)
            var cookieSize: UInt32 = 0
            #expect(AudioQueueGetPropertySize(queue!, kAudioQueueProperty_MagicCookie, &cookieSize) == noErr && cookieSize > 0)
            var cookie = [UInt8](repeating: 0, count: Int(cookieSize))
            #expect(AudioQueueGetProperty(queue!, kAudioQueueProperty_MagicCookie, &cookie, &cookieSize) == noErr)
            #expect(cookie.first == 0x03)                           // an ES descriptor, as Apple's AAC cookie
            #expect(AudioQueueSetProperty(queue!, kAudioQueueProperty_MagicCookie, cookie, cookieSize) == kAudioQueueErr_InvalidPropertyValue)
            #expect(AudioQueueDispose(queue!, true) == noErr)
            // A PCM queue has no encoder to ask.
            var pcmFormat = pcm(48000)
            var pcmQueue: AudioQueueRef?
            try #require(AudioQueueNewInput(&pcmFormat, logInput, log.pointer, nil, nil, 0, &pcmQueue) == noErr)
            var prime = AudioConverterPrimeInfo()
            size = UInt32(MemoryLayout<AudioConverterPrimeInfo>.size)
            #expect(AudioQueueGetProperty(pcmQueue!, kAudioConverterPrimeInfo, &prime, &size) == kAudioQueueErr_InvalidProperty)
            #expect(AudioQueueDispose(pcmQueue!, true) == noErr)
        }
    }
}
