import AudioQueueCompat
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

/// An output callback that logs the buffer and overwrites its audio at once, as a player
/// refilling it would: audio already handed to the queue must not change.
func scribbleOutput(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ buffer: AudioQueueBufferRef) {
    let log = CallbackLog.from(userData)
    log.add(buffer)
    var stamp = AudioTimeStamp()
    if AudioQueueGetCurrentTime(queue, nil, &stamp, nil) == noErr { log.add(time: stamp.mSampleTime) }
    memset(buffer.pointee.mAudioData, 0x7F, Int(buffer.pointee.mAudioDataBytesCapacity))
}

extension AQCompatTests {
    /// Queues in offline mode and on an offline default device: the engine is driven by hand, so
    /// every result is checked to the sample.
    @Suite("Queues, offline", .serialized)
    struct QueueBehaviourTests {
        @Test("big-endian 16-bit playback renders sample-exactly, at its start time, trimmed")
        func playbackExact() throws {
            let format = pcm(48000, channels: 2, bits: 16, bigEndian: true)
            let (queue, log) = try offlineOutputQueue(format)
            defer { AudioQueueDispose(queue, true) }
            let source = (0..<2000).map { Int16(truncatingIfNeeded: $0 * 13 - 9000) }   // 1000 stereo frames
            let buffer = try filledBuffer(queue, bigEndian16(source))
            var start = AudioTimeStamp()
            start.mSampleTime = 100
            start.mFlags = .sampleTimeValid
            var actual = AudioTimeStamp()
            #expect(AudioQueueEnqueueBufferWithParameters(queue, buffer, 0, nil, 10, 5, 0, nil, &start, &actual) == noErr)
            #expect(actual.mSampleTime == 100 && actual.mFlags.contains(.sampleTimeValid))
            #expect(AudioQueueStart(queue, nil) == noErr)
            var capture: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue, 2048 * 4, &capture) == noErr)
            var time = 0.0
            let (status, bytes) = render(queue, capture!, frames: 2048, at: &time)
            #expect(status == noErr && bytes.count == 2048 * 4)
            let expected = [UInt8](repeating: 0, count: 100 * 4) + bigEndian16(Array(source[20..<(2000 - 10)]))
                + [UInt8](repeating: 0, count: (2048 - 100 - 985) * 4)
            #expect(bytes == expected)
            #expect(log.buffers == [buffer])
        }

        @Test("enqueued before the offline format is set, buffers carry over; 0 frames renders nothing")
        func enqueueBeforeOfflineFormat() throws {
            var format = pcm(44100, channels: 1, bits: 16)
            let log = CallbackLog()
            var queue: AudioQueueRef?
            #expect(AudioQueueNewOutput(&format, logOutput, log.pointer, CFRunLoopGetCurrent(), kCFRunLoopCommonModes, 0, &queue) == noErr)
            defer { AudioQueueDispose(queue!, true) }
            let samples: [Int16] = (0..<441).map { Int16($0 * 50) }
            let bytes = samples.flatMap { withUnsafeBytes(of: $0.littleEndian) { Array($0) } }
            let buffer = try filledBuffer(queue!, bytes)
            #expect(AudioQueueEnqueueBuffer(queue!, buffer, 0, nil) == noErr)
            var renderFormat = pcm(44100, channels: 1, bits: 32, float: true)
            #expect(AudioQueueSetOfflineRenderFormat(queue!, &renderFormat, nil) == noErr)
            #expect(AudioQueueStart(queue!, nil) == noErr)
            var capture: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue!, 441 * 4, &capture) == noErr)
            var time = 0.0
            let (zeroStatus, none) = render(queue!, capture!, frames: 0, at: &time)
            #expect(zeroStatus == noErr && none.isEmpty)
            let (status, out) = render(queue!, capture!, frames: 441, at: &time)
            #expect(status == noErr)
            let floats = out.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            #expect(floats == samples.map { Float($0) / 32768 })
        }

        @Test("an is-running listener hears the real start and the real stop")
        func isRunningListener() throws {
            let (queue, _) = try offlineOutputQueue(pcm(48000, channels: 1, bits: 32, float: true))
            defer { AudioQueueDispose(queue, true) }
            let listener = CallbackLog()
            #expect(AudioQueueAddPropertyListener(queue, kAudioQueueProperty_IsRunning, logRunning, listener.pointer) == noErr)
            let buffer = try filledBuffer(queue, [UInt8](repeating: 0, count: 480 * 4))
            #expect(AudioQueueEnqueueBuffer(queue, buffer, 0, nil) == noErr)
            #expect(AudioQueueStart(queue, nil) == noErr)
            #expect(listener.running.isEmpty)               // not before the device renders
            var capture: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue, 256 * 4, &capture) == noErr)
            var time = 0.0
            _ = render(queue, capture!, frames: 256, at: &time)
            #expect(listener.running == [1])
            #expect(AudioQueueStop(queue, false) == noErr)  // plays out what is enqueued first
            _ = render(queue, capture!, frames: 256, at: &time)
            _ = render(queue, capture!, frames: 256, at: &time)
            #expect(listener.running == [1, 0])
            #expect(AudioQueueRemovePropertyListener(queue, kAudioQueueProperty_IsRunning, logRunning, listener.pointer) == noErr)
        }

        @Test("level meters read peak and RMS per channel, linear and in dB")
        func metering() throws {
            let (queue, _) = try offlineOutputQueue(pcm(48000, channels: 2, bits: 32, float: true))
            defer { AudioQueueDispose(queue, true) }
            var on: UInt32 = 1
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_EnableLevelMetering, &on, 4) == noErr)
            let constant = [Float](repeating: 0.5, count: 9600 * 2)
            let bytes = constant.withUnsafeBytes { Array($0) }
            let buffer = try filledBuffer(queue, bytes)
            #expect(AudioQueueEnqueueBuffer(queue, buffer, 0, nil) == noErr)
            #expect(AudioQueueStart(queue, nil) == noErr)
            var capture: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue, 4800 * 8, &capture) == noErr)
            var time = 0.0
            _ = render(queue, capture!, frames: 4800, at: &time)
            var size: UInt32 = 0
            #expect(AudioQueueGetPropertySize(queue, kAudioQueueProperty_CurrentLevelMeter, &size) == noErr && size == 16)
            var levels = [AudioQueueLevelMeterState](repeating: AudioQueueLevelMeterState(), count: 2)
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_CurrentLevelMeter, &levels, &size) == noErr)
            #expect(levels.allSatisfy { abs($0.mPeakPower - 0.5) < 1e-6 && abs($0.mAveragePower - 0.5) < 1e-4 })
            var one = AudioQueueLevelMeterState()
            var oneSize = UInt32(8)
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_CurrentLevelMeterDB, &one, &oneSize) == noErr && oneSize == 8)
            #expect(abs(one.mPeakPower - -6.0206) < 0.01)
        }

        @Test("queue time, timelines and discontinuities from an underrun")
        func timeline() throws {
            let (queue, _) = try offlineOutputQueue(pcm(48000, channels: 1, bits: 32, float: true))
            defer { AudioQueueDispose(queue, true) }
            var timeline: AudioQueueTimelineRef?
            #expect(AudioQueueCreateTimeline(queue, &timeline) == noErr)
            let buffer = try filledBuffer(queue, [UInt8](repeating: 0, count: 500 * 4))
            #expect(AudioQueueEnqueueBuffer(queue, buffer, 0, nil) == noErr)
            #expect(AudioQueueStart(queue, nil) == noErr)
            var capture: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue, 1000 * 4, &capture) == noErr)
            var time = 0.0
            _ = render(queue, capture!, frames: 400, at: &time)
            var now = AudioTimeStamp()
            var discontinuity: DarwinBoolean = true
            #expect(AudioQueueGetCurrentTime(queue, timeline, &now, &discontinuity) == noErr)
            #expect(now.mSampleTime == 400 && !discontinuity.boolValue)
            _ = render(queue, capture!, frames: 400, at: &time)     // runs dry at 500: an underrun
            #expect(AudioQueueGetCurrentTime(queue, timeline, &now, &discontinuity) == noErr)
            #expect(now.mSampleTime == 800 && discontinuity.boolValue)
            #expect(AudioQueueGetCurrentTime(queue, timeline, &now, &discontinuity) == noErr)
            #expect(!discontinuity.boolValue)
            var device = AudioTimeStamp()
            #expect(AudioQueueDeviceGetCurrentTime(queue, &device) == noErr)
            #expect(device.mSampleTime == 800 && device.mFlags.contains(.sampleHostTimeValid))
            var request = AudioTimeStamp()
            request.mSampleTime = 900
            request.mFlags = .sampleTimeValid
            #expect(AudioQueueDeviceGetNearestStartTime(queue, &request, 0) == noErr && request.mSampleTime == 900)
            var translated = AudioTimeStamp()
            #expect(AudioQueueDeviceTranslateTime(queue, &request, &translated) == noErr)
            #expect(translated.mHostTime == UInt64((900.0 / 48000 * 1_000_000).rounded()))
            #expect(AudioQueueDisposeTimeline(queue, timeline!) == noErr)
        }

        @Test("properties: format, cookie, channel layout, device, volume")
        func properties() throws {
            let format = pcm(44100, channels: 2, bits: 24, bigEndian: true)
            let (queue, _) = try offlineOutputQueue(format, render: pcm(44100, channels: 2, bits: 32, float: true))
            defer { AudioQueueDispose(queue, true) }
            var described = AudioStreamBasicDescription()
            var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_StreamDescription, &described, &size) == noErr)
            #expect(described.mSampleRate == 44100 && described.mBitsPerChannel == 24 && described.mBytesPerFrame == 6
                    && described.mFormatFlags == format.mFormatFlags)
            #expect(AudioQueueGetPropertySize(queue, kAudioQueueProperty_MagicCookie, &size) == noErr && size == 0)
            var cookie: [UInt8] = [1, 2, 3]
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_MagicCookie, &cookie, 3) == noErr)
            var back = [UInt8](repeating: 0, count: 3)
            size = 3
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_MagicCookie, &back, &size) == noErr && back == cookie)
            var layout = AudioChannelLayout()
            size = 12
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_ChannelLayout, &layout, &size) == noErr)
            #expect(layout.mChannelLayoutTag == kAudioChannelLayoutTag_Stereo)
            var rate: Float64 = 0
            size = 8
            #expect(AudioQueueGetProperty(queue, kAudioQueueDeviceProperty_SampleRate, &rate, &size) == noErr && rate == 44100)
            var device: CFString? = nil
            size = UInt32(MemoryLayout<CFString?>.size)
            // A CFString? holds an object reference: pass its address typed, as Swift wants.
            let got = withUnsafeMutablePointer(to: &device) { AudioQueueGetProperty(queue, kAudioQueueProperty_CurrentDevice, $0, &size) }
            #expect(got == noErr)
            #expect(device?.string == "offline")
            let set = withUnsafePointer(to: &device) { AudioQueueSetProperty(queue, kAudioQueueProperty_CurrentDevice, $0, size) }
            #expect(set == noErr)
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Volume, 0.25) == noErr)
            var volume: Float32 = 0
            #expect(AudioQueueGetParameter(queue, kAudioQueueParam_Volume, &volume) == noErr && volume == 0.25)
        }

        @Test("an input queue records the device input exactly, big-endian 24-bit, with queue sample times")
        func inputExact() throws {
            let (device, queue, log) = try startedOfflineInputQueue(
                rate: 48000, channels: 2, maximumFrames: 240, format: pcm(48000, channels: 2, bits: 24, bigEndian: true),
                bufferFrames: 480) { start, frames, channels in
                for i in 0..<frames {
                    channels[0][i] = Float(start + Int64(i) + 1) / 8_388_608
                    channels[1][i] = -Float(start + Int64(i) + 1) / 8_388_608
                }
            }
            defer { AudioQueueSetDefaultDevice(.standard) }
            for _ in 0..<10 { _ = try device.renderFloat(frames: 240) }
            #expect(AudioQueueStop(queue, true) == noErr)
            _ = try device.renderFloat(frames: 240)
            #expect(AudioQueueDispose(queue, true) == noErr)
            let inputs = log.inputs
            #expect(inputs.count == 5)
            for (index, input) in inputs.enumerated() {
                #expect(input.packets == 480 && input.sampleTime == Double(index * 480))
                #expect(input.flags.contains(.sampleTimeValid))
                var expected: [UInt8] = []
                for frame in 0..<480 {
                    let value = Int32(index * 480 + frame + 1)
                    for sample in [value, -value] {
                        let bits = UInt32(bitPattern: sample)
                        expected += [UInt8(truncatingIfNeeded: bits >> 16), UInt8(truncatingIfNeeded: bits >> 8), UInt8(truncatingIfNeeded: bits)]
                    }
                }
                #expect(input.bytes == expected)
            }
        }

        @Test("an input queue at another rate than the device's records converted audio, every frame once")
        func inputConverted() throws {
            let (device, queue, log) = try startedOfflineInputQueue(
                rate: 48000, channels: 1, maximumFrames: 480, format: pcm(24000, channels: 1, bits: 16, bigEndian: true),
                bufferFrames: 480) { _, frames, channels in
                for i in 0..<frames { channels[0][i] = 0.25 }
            }
            defer { AudioQueueSetDefaultDevice(.standard) }
            for _ in 0..<20 { _ = try device.renderFloat(frames: 480) }     // 9600 device frames = 4800 queue frames
            #expect(AudioQueueStop(queue, true) == noErr)
            _ = try device.renderFloat(frames: 480)
            var running: UInt32 = 1
            var size = UInt32(4)
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_IsRunning, &running, &size) == noErr && running == 0)
            #expect(AudioQueueDispose(queue, true) == noErr)
            let inputs = log.inputs
            var time = 0.0
            for input in inputs {
                #expect(input.sampleTime == time)
                #expect(input.bytes.count == Int(input.packets) * 2)
                time += Double(input.packets)
            }
            #expect(inputs.dropLast().allSatisfy { $0.packets == 480 })
            #expect(abs(time - 4800) <= 2, "converted frames: \(time)")
            // Past the converter's settling, the constant reads back as 0.25 (8192), big-endian.
            let middle = inputs[4].bytes
            let values = stride(from: 0, to: middle.count, by: 2).map { Int16(bitPattern: UInt16(middle[$0]) << 8 | UInt16(middle[$0 + 1])) }
            #expect(values.allSatisfy { abs(Int($0) - 8192) <= 2 })
        }

        @Test("a disposed-of queue is unknown afterwards; an asynchronous dispose is pending while it plays")
        func disposal() throws {
            let (queue, log) = try offlineOutputQueue(pcm(48000, channels: 1, bits: 32, float: true))
            let buffer = try filledBuffer(queue, [UInt8](repeating: 0, count: 1000 * 4))
            #expect(AudioQueueEnqueueBuffer(queue, buffer, 0, nil) == noErr)
            #expect(AudioQueueStart(queue, nil) == noErr)
            var capture: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue, 256 * 4, &capture) == noErr)
            var time = 0.0
            _ = render(queue, capture!, frames: 256, at: &time)
            #expect(AudioQueueDispose(queue, false) == noErr)
            #expect(AudioQueueStart(queue, nil) == kAudioQueueErr_DisposalPending)
            #expect(AudioQueueDispose(queue, true) == kAudioQueueErr_DisposalPending)
            // The queue (and with it the capture buffer) goes away inside one of these calls.
            var stamp = AudioTimeStamp()
            var statuses: [OSStatus] = []
            for _ in 0..<5 { statuses.append(AudioQueueOfflineRender(queue, &stamp, capture!, 256)) }
            #expect(statuses.first == noErr && statuses.last == kAudio_ParamError)
            #expect(log.buffers == [buffer])                    // played out, with its callback
            #expect(AudioQueueStart(queue, nil) == kAudio_ParamError)
        }
    
        @Test("kAudioQueueProperty_DecodeBufferSizeFrames offline: a buffer comes back at the start of the render that plays its last frame, before that frame plays (the callback may overwrite it at once and the audio still plays as enqueued); 0 hands each back only once played")
        func decodeBufferHandsBackEarly() throws {
            let format = pcm(48000, channels: 1, bits: 16)
            // Eight 1000-frame buffers, buffer i holding the value i + 1 in every sample.
            func run(decodeFrames: UInt32) throws -> (times: [Double], output: [Int16]) {
                let log = CallbackLog()
                var queueFormat = format
                var made: AudioQueueRef?
                try #require(AudioQueueNewOutput(&queueFormat, scribbleOutput, log.pointer, nil, nil, 0, &made) == noErr)
                let queue = made!
                defer { AudioQueueDispose(queue, true) }
                var renderFormat = format
                try #require(AudioQueueSetOfflineRenderFormat(queue, &renderFormat, nil) == noErr)
                var frames = decodeFrames
                try #require(AudioQueueSetProperty(queue, kAudioQueueProperty_DecodeBufferSizeFrames, &frames, 4) == noErr)
                var read: UInt32 = 0
                var size: UInt32 = 4
                #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_DecodeBufferSizeFrames, &read, &size) == noErr && read == decodeFrames)
                for i in 0..<8 {
                    let value = Int16(i + 1)
                    let bytes = (0..<1000).flatMap { _ in withUnsafeBytes(of: value.littleEndian) { Array($0) } }
                    try #require(AudioQueueEnqueueBuffer(queue, try filledBuffer(queue, bytes), 0, nil) == noErr)
                }
                try #require(AudioQueueStart(queue, nil) == noErr)
                var capture: AudioQueueBufferRef?
                try #require(AudioQueueAllocateBuffer(queue, 200, &capture) == noErr)
                var time = 0.0
                var output = [Int16]()
                let (status, first) = render(queue, capture!, frames: 100, at: &time)
                try #require(status == noErr)
                output += first.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
                while output.count < 8000 {
                    let (status, bytes) = render(queue, capture!, frames: 100, at: &time)
                    try #require(status == noErr)
                    output += bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
                }
                #expect(log.buffers.count == 8)
                return (log.times, output)
            }
            let expected = (0..<8000).map { Int16($0 / 1000 + 1) }
            let ahead = try run(decodeFrames: 3000)
            let none = try run(decodeFrames: 0)
            // Buffer i ends at queue time 1000 (i + 1), in the render of 100 frames from 1000 i + 900.
            let ends = (1...8).map { Double($0 * 1000) }
            #expect(ahead.times == ends.map { $0 - 100 }, "\(ahead.times)")
            #expect(none.times.count == 8 && zip(none.times, ends).allSatisfy { $0 >= $1 }, "\(none.times)")
            // The callback overwrote each buffer as it came back: what plays is what was enqueued.
            #expect(ahead.output == expected)
            #expect(none.output == expected)
        }
}
}
