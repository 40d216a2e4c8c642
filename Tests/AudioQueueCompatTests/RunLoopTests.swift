import AudioQueueCompat
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

private func threadLogOutput(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ buffer: AudioQueueBufferRef) {
    CallbackLog.from(userData).addThread()
}

private func threadLogInput(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ buffer: AudioQueueBufferRef,
                            _ start: UnsafePointer<AudioTimeStamp>, _ packets: UInt32,
                            _ descriptions: UnsafePointer<AudioStreamPacketDescription>?) {
    if CallbackLog.from(userData).addThread() < 6 { AudioQueueEnqueueBuffer(queue, buffer, 0, nil) }
}

/// Counts frames 1, 2, 3 … into each buffer (mono float) until `rampTotal` frames; then it stops
/// enqueueing.
private func rampOutput(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ buffer: AudioQueueBufferRef) {
    let ramp = userData!.assumingMemoryBound(to: RampState.self)
    let frames = min(100, ramp.pointee.total - ramp.pointee.next)
    guard frames > 0 else { return }
    let samples = buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self)
    for index in 0..<frames { samples[index] = Float(ramp.pointee.next + index + 1) }
    ramp.pointee.next += frames
    buffer.pointee.mAudioDataByteSize = UInt32(frames * 4)
    AudioQueueEnqueueBuffer(queue, buffer, 0, nil)
}

private struct RampState {
    var next = 0
    let total: Int
}

/// Apple's AQPlayer shape, on the calling thread: a mono float output queue whose callbacks run
/// on this thread's run loop, three 100-frame buffers primed from `ramp` (not started).
private func primedRampQueue(_ ramp: UnsafeMutablePointer<RampState>) throws -> AudioQueueRef {
    var format = pcm(48000, channels: 1, bits: 32, float: true)
    var queue: AudioQueueRef?
    try #require(AudioQueueNewOutput(&format, rampOutput, ramp, CFRunLoopGetCurrent(), kCFRunLoopCommonModes, 0, &queue) == noErr)
    for _ in 0..<3 {
        var buffer: AudioQueueBufferRef?
        try #require(AudioQueueAllocateBuffer(queue!, 400, &buffer) == noErr)
        rampOutput(ramp, queue!, buffer!)
    }
    return queue!
}

extension AQCompatTests {
    /// Swift's `AudioQueueNewOutput`/`AudioQueueNewInput` honour their run loop, as the C API does
    /// (one implementation): a live (threaded) device, callbacks on the run loop's thread only
    /// while it runs the loop; with nil, on the queue's callback thread.
    @Suite("Run loops from Swift", .serialized)
    struct RunLoopTests {
        /// Creates a queue (`output` or not) on the default device with `runLoop`, enqueues three
        /// buffers of 256 frames and starts it; three calls are expected (six for input, which
        /// enqueues again).
        func startQueue(output: Bool, _ log: CallbackLog, runLoop: CFRunLoop?) throws -> AudioQueueRef {
            var format = pcm(48000, channels: 2, bits: 16)
            var queue: AudioQueueRef?
            let status = output
                ? AudioQueueNewOutput(&format, threadLogOutput, log.pointer, runLoop, kCFRunLoopCommonModes, 0, &queue)
                : AudioQueueNewInput(&format, threadLogInput, log.pointer, runLoop, kCFRunLoopCommonModes, 0, &queue)
            try #require(status == noErr, "\(AudioQueueCompatLastErrorMessage() ?? "")")
            for _ in 0..<3 {
                let buffer = try filledBuffer(queue!, [UInt8](repeating: 0, count: 256 * 4))
                if !output { buffer.pointee.mAudioDataByteSize = 0 }
                try #require(AudioQueueEnqueueBuffer(queue!, buffer, 0, nil) == noErr)
            }
            try #require(AudioQueueStart(queue!, nil) == noErr)
            return queue!
        }

        @Test("with CFRunLoopGetCurrent(), callbacks run on that thread and only while it runs the loop; with nil, on the queue's callback thread",
              arguments: [true, false], [true, false])
        func callbackThread(output: Bool, withRunLoop: Bool) throws {
            let device = ThreadedTestDevice(sampleRate: 48000, channels: 2, period: 256, speed: 8, inputs: 2)
            AudioQueueSetDefaultDevice(.engine(try Engine(device: device)))
            defer {
                AudioQueueSetDefaultDevice(.standard)
                device.stop()
            }
            let log = CallbackLog()
            let expected = output ? 3 : 6
            guard withRunLoop else {
                let queue = try startQueue(output: output, log, runLoop: nil)
                defer { AudioQueueDispose(queue, true) }
                #expect(ThreadedTestDevice.wait { log.threads.count >= expected }, "\(log.threads.count) callbacks")
                // Linux keeps 15 characters of a thread's name.
                #expect(log.threads.allSatisfy { $0.name == "lockstep.callbacks".prefix(15) && pthread_equal($0.thread, pthread_self()) == 0 },
                        "\(log.threads.map(\.name))")
                return
            }
            // A thread of its own runs the loop: it creates and starts the queue, waits without
            // running the loop, then runs it until the callbacks have come.
            nonisolated(unsafe) var runner = pthread_self()
            nonisolated(unsafe) var beforeRunning = -1
            nonisolated(unsafe) var failure: (any Error)?
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                defer { done.signal() }
                do {
                    runner = pthread_self()
                    let queue = try startQueue(output: output, log, runLoop: CFRunLoopGetCurrent())
                    defer { AudioQueueDispose(queue, true) }
                    Thread.sleep(forTimeInterval: 0.3)
                    beforeRunning = log.threads.count
                    let deadline = Date().addingTimeInterval(10)
                    while log.threads.count < expected && Date() < deadline {
                        CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.05, false)
                    }
                } catch {
                    failure = error
                }
            }
            thread.start()
            done.wait()
            if let failure { throw failure }
            #expect(beforeRunning == 0, "callbacks ran while the thread did not run its loop")
            #expect(log.threads.count >= expected, "\(log.threads.count) callbacks")
            #expect(log.threads.allSatisfy { pthread_equal($0.thread, runner) != 0 }, "\(log.threads.map(\.name))")
        }

        /// A stop asked for while the start waits for the run loop's callbacks: an asynchronous
        /// one lets the deferred start happen and stops once the enqueued audio has played; an
        /// immediate one drops the start, and nothing plays.
        @Test("a stop while a start waits for its run loop: asynchronous, what was enqueued plays, then it stops; immediate, nothing plays",
              arguments: [false, true])
        func stopBeforeDeferredStart(immediately: Bool) throws {
            let device = ThreadedTestDevice(sampleRate: 48000, channels: 1, period: 1024, speed: 1)
            AudioQueueSetDefaultDevice(.engine(try Engine(device: device)))
            defer {
                AudioQueueSetDefaultDevice(.standard)
                device.stop()
            }
            // 300 frames in all: the three primed buffers; the callbacks enqueue nothing more.
            nonisolated(unsafe) let ramp = UnsafeMutablePointer<RampState>.allocate(capacity: 1)
            ramp.initialize(to: RampState(total: 300))
            defer { ramp.deallocate() }
            nonisolated(unsafe) var failure: (any Error)?
            nonisolated(unsafe) var runningAtEnd: UInt32 = 1
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                defer { done.signal() }
                do {
                    let queue: AudioQueueRef? = try primedRampQueue(ramp)
                    defer { AudioQueueDispose(queue!, true) }
                    try #require(AudioQueueStart(queue!, nil) == noErr)
                    try #require(AudioQueueStop(queue!, immediately) == noErr)
                    let deadline = Date().addingTimeInterval(0.6)
                    while Date() < deadline { CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.01, false) }
                    var size = UInt32(4)
                    try #require(AudioQueueGetProperty(queue!, kAudioQueueProperty_IsRunning, &runningAtEnd, &size) == noErr)
                } catch {
                    failure = error
                }
            }
            thread.start()
            done.wait()
            if let failure { throw failure }
            let heard = device.output.filter { $0 != 0 }
            #expect(runningAtEnd == 0, "the queue still runs")
            if immediately {
                #expect(heard.isEmpty, "\(heard.count) frames played after an immediate stop")
            } else {
                #expect(heard == (1...300).map(Float.init), "\(heard.count) frames heard of 300")
            }
        }

        /// Apple's AQPlayer shape: three 100-frame buffers primed, the queue started from the
        /// thread whose run loop runs its callbacks, then that loop run. The callbacks can only
        /// refill once AudioQueueStart has returned, so the queue starts when they have put two
        /// periods ahead (or after 100 ms), not at once with 300 frames and a gap after them.
        @Test("a queue started from the thread of its run loop, with 100-frame buffers at period 1024, plays every frame without a gap")
        func startFromRunLoopThread() throws {
            let device = ThreadedTestDevice(sampleRate: 48000, channels: 1, period: 1024, speed: 1)
            AudioQueueSetDefaultDevice(.engine(try Engine(device: device)))
            defer {
                AudioQueueSetDefaultDevice(.standard)
                device.stop()
            }
            let total = 9600
            nonisolated(unsafe) let ramp = UnsafeMutablePointer<RampState>.allocate(capacity: 1)
            ramp.initialize(to: RampState(total: total))
            defer { ramp.deallocate() }
            nonisolated(unsafe) var failure: (any Error)?
            nonisolated(unsafe) var runningAfterStart = true
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                defer { done.signal() }
                do {
                    let queue: AudioQueueRef? = try primedRampQueue(ramp)
                    defer { AudioQueueDispose(queue!, true) }
                    try #require(AudioQueueStart(queue!, nil) == noErr)
                    var running: UInt32 = 0
                    var size = UInt32(4)
                    try #require(AudioQueueGetProperty(queue!, kAudioQueueProperty_IsRunning, &running, &size) == noErr)
                    runningAfterStart = running != 0
                    let deadline = Date().addingTimeInterval(5)
                    while device.output.filter({ $0 == Float(total) }).isEmpty && Date() < deadline {
                        CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.01, false)
                    }
                } catch {
                    failure = error
                }
            }
            thread.start()
            done.wait()
            if let failure { throw failure }
            let output = device.output
            let first = try #require(output.firstIndex { $0 != 0 }, "nothing played")
            let heard = Array(output[first...].prefix(total))
            let misplaced = heard.indices.filter { heard[$0] != Float($0 + 1) }
            #expect(misplaced.count == 0, "\(misplaced.count) of \(total) frames out of place, the first at \(misplaced.first ?? 0): \(heard[misplaced.first ?? 0])")
            #expect(!runningAfterStart, "the queue ran before its callbacks could decode ahead")
        }
    }
}
