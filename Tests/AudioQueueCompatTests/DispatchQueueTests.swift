import AudioQueueCompat
import Dispatch
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension AQCompatTests {
    /// The block variants of Apple's Swift overlay.
    @Suite("Dispatch-queue callbacks", .serialized)
    struct DispatchQueueTests {
        @Test("an output queue's block runs on its dispatch queue; offline, before the render returns")
        func outputBlock() throws {
            let dispatch = DispatchQueue(label: "aqcompat.test.callbacks")
            let key = DispatchSpecificKey<Int>()
            dispatch.setSpecific(key: key, value: 7)
            let log = CallbackLog()
            var format = pcm(48000, channels: 1, bits: 16)
            var queue: AudioQueueRef?
            let onQueue = CallbackLog()
            let status = AudioQueueNewOutputWithDispatchQueue(&queue, &format, 0, dispatch) { _, buffer in
                if DispatchQueue.getSpecific(key: key) == 7 { onQueue.add(buffer) }
                log.add(buffer)
            }
            #expect(status == noErr)
            defer { AudioQueueDispose(queue!, true) }
            #expect(AudioQueueSetOfflineRenderFormat(queue!, &format, nil) == noErr)
            let buffer = try filledBuffer(queue!, [UInt8](repeating: 0, count: 200))
            #expect(AudioQueueEnqueueBuffer(queue!, buffer, 0, nil) == noErr)
            #expect(AudioQueueStart(queue!, nil) == noErr)
            var capture: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue!, 512, &capture) == noErr)
            var time = 0.0
            _ = render(queue!, capture!, frames: 256, at: &time)
            #expect(log.buffers == [buffer] && onQueue.buffers == [buffer])
        }

        @Test("a block handed to its dispatch queue before AudioQueueDispose(queue, true) does not run after it (live device)")
        func noBlockAfterDispose() throws {
            let device = ThreadedTestDevice(sampleRate: 48000, channels: 2, period: 256, speed: 8)
            AudioQueueSetDefaultDevice(.engine(try Engine(device: device)))
            defer {
                AudioQueueSetDefaultDevice(.standard)
                device.stop()
            }
            let dispatch = DispatchQueue(label: "aqcompat.test.suspended")
            dispatch.suspend()
            let log = CallbackLog()
            var format = pcm(48000, channels: 2, bits: 16)
            var queue: AudioQueueRef?
            #expect(AudioQueueNewOutputWithDispatchQueue(&queue, &format, 0, dispatch) { _, buffer in log.add(buffer) } == noErr)
            for _ in 0..<3 { #expect(AudioQueueEnqueueBuffer(queue!, try filledBuffer(queue!, [UInt8](repeating: 0, count: 1024)), 0, nil) == noErr) }
            #expect(AudioQueueStart(queue!, nil) == noErr)
            // The buffers play (and go back) while the dispatch queue holds their blocks.
            #expect(ThreadedTestDevice.wait { device.output.count >= 4 * 256 * 2 })
            Thread.sleep(forTimeInterval: 0.1)
            #expect(AudioQueueDispose(queue!, true) == noErr)
            dispatch.resume()
            dispatch.sync {}
            #expect(log.buffers.isEmpty, "\(log.buffers.count) blocks ran after the queue was disposed of")
        }

        @Test("an input queue's block gets each filled buffer with its packet count")
        func inputBlock() throws {
            let device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 1), maximumFramesPerRender: 256,
                                           inputChannelCount: 1) { _, frames, channels in
                for i in 0..<frames { channels[0][i] = 0.5 }
            }
            AudioQueueSetDefaultDevice(.engine(try Engine(device: device)))
            defer { AudioQueueSetDefaultDevice(.standard) }
            let log = CallbackLog()
            var format = pcm(48000, channels: 1, bits: 16)
            var queue: AudioQueueRef?
            let status = AudioQueueNewInputWithDispatchQueue(&queue, &format, 0, DispatchQueue(label: "aqcompat.test.input")) { aq, buffer, start, packets, _ in
                let bytes = Array(UnsafeRawBufferPointer(start: buffer.pointee.mAudioData, count: Int(buffer.pointee.mAudioDataByteSize)))
                log.add(CallbackLog.Input(bytes: bytes, sampleTime: start.pointee.mSampleTime, packets: packets, flags: start.pointee.mFlags))
                AudioQueueEnqueueBuffer(aq, buffer, 0, nil)
            }
            #expect(status == noErr)
            defer { AudioQueueDispose(queue!, true) }
            for _ in 0..<2 {
                var buffer: AudioQueueBufferRef?
                #expect(AudioQueueAllocateBuffer(queue!, 256 * 2, &buffer) == noErr)
                #expect(AudioQueueEnqueueBuffer(queue!, buffer!, 0, nil) == noErr)
            }
            #expect(AudioQueueStart(queue!, nil) == noErr)
            for _ in 0..<4 { _ = try device.renderFloat(frames: 256) }
            let inputs = log.inputs
            #expect(inputs.map(\.packets) == [256, 256, 256, 256])
            #expect(inputs.map(\.sampleTime) == [0, 256, 512, 768])
            #expect(inputs.allSatisfy { $0.bytes == [UInt8](repeating: 0, count: 256 * 2).enumerated().map { $0.offset % 2 == 0 ? 0x00 : 0x40 } })
        }
    }
}
