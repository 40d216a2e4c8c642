import Lockstep
import LockstepTestSupport
import Synchronization
import Testing

/// Collects what an input queue delivers.
final class Take: @unchecked Sendable {
    private let lock = Mutex<([Float], [(Int64, Int)])>(([], []))
    let channels: Int
    init(channels: Int) { self.channels = channels }

    func add(_ buffer: QueueBuffer, start: Int64, frames: Int) {
        let samples = buffer.withFloatSamples { Array($0.prefix(frames * channels)) }
        lock.withLock { state in
            state.0 += samples
            state.1.append((start, frames))
        }
    }

    var samples: [Float] { lock.withLock { $0.0 } }
    var deliveries: [(start: Int64, frames: Int)] { lock.withLock { $0.1.map { (start: $0.0, frames: $0.1) } } }
}

@Suite("Input queues (recording), offline")
struct InputQueueTests {
    /// An offline device whose input channel c at device time t holds (t + 1 + c × 1_000_000) × step.
    static func device(inputs: Int = 2, period: Int = 256) throws -> (OfflineDevice, Engine) {
        let device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 2),
                                       maximumFramesPerRender: period, inputChannelCount: inputs) { time, frames, channels in
            for c in 0..<inputs {
                for i in 0..<frames { channels[c][i] = Self.value(time + Int64(i), channel: c) }
            }
        }
        return (device, try Engine(device: device))
    }

    static func value(_ time: Int64, channel: Int) -> Float {
        Float((time + 1) % 8_000_000) / 8_388_608 * (channel == 0 ? 1 : -1)
    }

    static func render(_ device: OfflineDevice, frames: Int, period: Int = 256) throws {
        var left = frames
        while left > 0 {
            _ = try device.renderFloat(frames: min(period, left))
            left -= min(period, left)
        }
    }

    let stereo = StreamFormat(sampleRate: 48000, channelCount: 2)

    @Test("records every frame from its start sample, buffers contiguous, start times exact")
    func recordsEveryFrame() throws {
        let (device, engine) = try Self.device()
        let take = Take(channels: 2)
        let queue = try engine.makeInputQueue(format: stereo) { queue, buffer, start, frames in
            take.add(buffer, start: start, frames: frames)
            try? queue.enqueue(buffer)
        }
        for _ in 0..<3 { try queue.enqueue(try queue.allocateBuffer(frameCapacity: 1000)) }
        try queue.start(at: 1000)                      // inside the fourth period
        try Self.render(device, frames: 10_000)
        try queue.stop()
        try Self.render(device, frames: 256)
        #expect(!queue.isRunning)
        let samples = take.samples
        let recorded = samples.count / 2
        #expect(recorded == 9000)
        for i in 0..<recorded {
            #expect(samples[2 * i] == Self.value(1000 + Int64(i), channel: 0), "frame \(i)")
            #expect(samples[2 * i + 1] == Self.value(1000 + Int64(i), channel: 1), "frame \(i)")
        }
        var expectedStart: Int64 = 1000
        for delivery in take.deliveries {
            #expect(delivery.start == expectedStart)
            expectedStart += Int64(delivery.frames)
        }
        #expect(queue.lostFrames == 0)
        #expect(engine.discontinuities.isEmpty)
    }

    @Test("a late callback loses nothing while the ring holds; an overflow is reported and filled with exactly that much silence")
    func lateCallbackAndOverflow() throws {
        let (device, engine) = try Self.device()
        let take = Take(channels: 2)
        let withhold = Atomic<Bool>(true)
        let held = Mutex<[QueueBuffer]>([])
        let queue = try engine.makeInputQueue(format: stereo, ringSeconds: 0.1) { queue, buffer, start, frames in
            take.add(buffer, start: start, frames: frames)
            if withhold.load(ordering: .relaxed) { held.withLock { $0.append(buffer) } } else { try? queue.enqueue(buffer) }
        }
        for _ in 0..<2 { try queue.enqueue(try queue.allocateBuffer(frameCapacity: 512)) }
        try queue.start(at: 0)
        // Both buffers fill at once, then no buffer is free: the 4800-frame ring holds the rest.
        try Self.render(device, frames: 4096)
        #expect(queue.lostFrames == 0)
        try Self.render(device, frames: 10_000)        // 14096 captured, 1024 delivered, ring full at 5824
        #expect(queue.lostFrames == 14_096 - 1024 - 4800)
        withhold.store(false, ordering: .relaxed)
        for buffer in held.withLock({ $0 }) { try queue.enqueue(buffer) }
        try Self.render(device, frames: 20_000)
        try queue.stop()
        try Self.render(device, frames: 256)
        // The ring is still full during the next cycle (buffers are refilled after it): one more
        // period is lost before the loss ends.
        let lost = queue.lostFrames
        #expect(lost == 14_096 - 1024 - 4800 + 256)
        #expect(engine.discontinuities.filter { $0.kind == .overflow }.count == 1)
        let overflow = try #require(engine.discontinuities.first { $0.kind == .overflow })
        #expect(overflow.sampleTime == 1024 + 4800)
        #expect(overflow.length == lost)
        // Time stays true: frame i of the recording is device frame i, silence where frames were lost.
        let samples = take.samples
        #expect(samples.count / 2 == 14_096 + 20_000)
        for i in 0..<(samples.count / 2) {
            let lostFrame = i >= 5824 && Int64(i) < 5824 + lost
            #expect(samples[2 * i] == (lostFrame ? 0 : Self.value(Int64(i), channel: 0)), "frame \(i)")
        }
    }

    @Test("stop after the current buffer records exactly to its end; stop immediately delivers what was captured")
    func stopModes() throws {
        let (device, engine) = try Self.device()
        let take = Take(channels: 2)
        let running = Recorder<Bool>()
        let queue = try engine.makeInputQueue(format: stereo) { queue, buffer, start, frames in
            take.add(buffer, start: start, frames: frames)
            try? queue.enqueue(buffer)
        }
        try queue.addPropertyListener(.isRunning) { q, _ in running.append(q.isRunning) }
        for _ in 0..<2 { try queue.enqueue(try queue.allocateBuffer(frameCapacity: 3000)) }
        try queue.start(at: 0)
        try Self.render(device, frames: 1024)        // 1024 frames into the first buffer
        try queue.stop(immediately: false)
        try Self.render(device, frames: 8192)
        #expect(take.samples.count / 2 == 3000)
        #expect(running.values == [true, false])

        try queue.start()
        try Self.render(device, frames: 1000)
        try queue.stop(immediately: true)
        try Self.render(device, frames: 512)
        #expect(take.deliveries.last?.frames == 1000)
        #expect(take.deliveries.last?.start == 9216)
        #expect(running.values == [true, false, true, false])
    }

    @Test("pause and resume: a buffer never spans the gap; start times stay true")
    func pauseResume() throws {
        let (device, engine) = try Self.device()
        let take = Take(channels: 2)
        let queue = try engine.makeInputQueue(format: stereo) { queue, buffer, start, frames in
            take.add(buffer, start: start, frames: frames)
            try? queue.enqueue(buffer)
        }
        for _ in 0..<2 { try queue.enqueue(try queue.allocateBuffer(frameCapacity: 4096)) }
        try queue.start(at: 0)
        try Self.render(device, frames: 1024)
        try queue.pause()
        try Self.render(device, frames: 1024)
        try queue.resume()
        try Self.render(device, frames: 1024)
        try queue.stop()
        try Self.render(device, frames: 256)
        let deliveries = take.deliveries
        #expect(deliveries.map(\.start) == [0, 2048])
        #expect(deliveries.map(\.frames) == [1024, 1024])
        let samples = take.samples
        #expect(samples[2 * 1024] == Self.value(2048, channel: 0))
    }

    @Test("integer formats, a channel map, metering and the buffer-size helper")
    func formatsMapMeter() throws {
        let (device, engine) = try Self.device(inputs: 2)
        let collected = Mutex<[Int16]>([])
        let queue = try engine.makeInputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .int16),
                                              channelMap: [1]) { queue, buffer, _, frames in
            let values = (0..<frames).map { buffer.data.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self) }
            collected.withLock { $0 += values }
            try? queue.enqueue(buffer)
        }
        queue.isLevelMeteringEnabled = true
        for _ in 0..<2 { try queue.enqueue(try queue.allocateBuffer(frameCapacity: 256)) }
        try queue.start(at: 0)
        try Self.render(device, frames: 4096)
        let values = collected.withLock { $0 }
        #expect(values.count == 4096)
        #expect(values[100] == Int16((Double(Self.value(100, channel: 1)) * 32768).rounded()))
        let level = try #require(try queue.currentLevelMeter().first)
        #expect(level.peakPower > 0)
        #expect(InputQueue.bufferByteSize(seconds: 2, format: stereo) == 0x50000)
        #expect(InputQueue.bufferByteSize(seconds: 0.01, format: stereo) == 480 * 8)
        let error = #expect(throws: AudioQueueError.self) {
            try queue.enqueue(try queue.allocateBuffer(frameCapacity: 10), startTime: 0, parameters: [])
        }
        #expect(error?.code == .invalidQueueType)
        #expect(throws: AudioQueueError.self) {
            try engine.makeInputQueue(format: StreamFormat(sampleRate: 44100, channelCount: 1)) { _, _, _, _ in }
        }
    }

    @Test("recording and playback started on one sample share one timeline")
    func recordWhilePlaying() throws {
        let (device, engine) = try Self.device()
        let take = Take(channels: 2)
        let input = try engine.makeInputQueue(format: stereo) { queue, buffer, start, frames in
            take.add(buffer, start: start, frames: frames)
            try? queue.enqueue(buffer)
        }
        for _ in 0..<2 { try input.enqueue(try input.allocateBuffer(frameCapacity: 1024)) }
        let output = try engine.makeOutputQueue(format: stereo) { _, _ in }
        try output.enqueueSamples(Signals.constant(0.5, frames: 2048, channels: 2))
        try engine.start([output], at: 777)
        try input.start(at: 777)
        try Self.render(device, frames: 4096)
        #expect(take.deliveries.first?.start == 777)
        #expect(take.samples[0] == Self.value(777, channel: 0))
    }
}

/// A device whose cycles the test drives by hand, sample times included (to simulate a device
/// clock that jumps, as JACK's does in an xrun).
final class SteppingDevice: AudioDevice, @unchecked Sendable {
    let name = "stepping"
    let sampleRate = 48000.0
    let channelCount = 2
    let inputChannelCount = 1
    let maximumFramesPerCycle = 256
    var isOffline: Bool { true }
    var isRunning: Bool { renderer != nil }
    private(set) var renderer: DeviceRenderer?
    var now: Int64 = 0
    func attach(_ renderer: DeviceRenderer) throws(AudioQueueError) { self.renderer = renderer }
    func detach() { renderer = nil }
    func start() throws(AudioQueueError) {}
    func stop() {}
    func currentTime() -> DeviceTimeStamp { DeviceTimeStamp(sampleTime: now, hostTime: 0) }
    func nearestStartTime(atOrAfter sampleTime: Int64) -> Int64 { max(sampleTime, now) }
    func hostTime(forSampleTime sampleTime: Int64) -> UInt64 { 0 }
    func sampleTime(forHostTime hostTime: UInt64) -> Int64 { 0 }

    /// Renders one 256-frame cycle at `sampleTime` with input frame t holding `value(t)`; returns
    /// the cycle's output, channel by channel.
    @discardableResult
    func cycle(at sampleTime: Int64, value: (Int64) -> Float = { _ in 0 }) -> [[Float]] {
        let input = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer { input.deallocate(); out.deallocate() }
        for i in 0..<256 { input[i] = value(sampleTime + Int64(i)) }
        var inputs = [input]
        var outputs = [out, out + 256]
        inputs.withUnsafeMutableBufferPointer { ins in
            outputs.withUnsafeMutableBufferPointer { outs in
                renderer?.render(frames: 256, sampleTime: sampleTime, input: UnsafePointer(ins.baseAddress!),
                                 output: UnsafePointer(outs.baseAddress!))
            }
        }
        now = sampleTime + 256
        renderer?.deliverPendingEvents()
        return [Array(UnsafeBufferPointer(start: out, count: 256)), Array(UnsafeBufferPointer(start: out + 256, count: 256))]
    }
}

extension InputQueueTests {
    /// A mono input queue on a ``SteppingDevice`` whose buffers go to a ``Take`` and back (keep
    /// the engine: its queues go with it).
    static func steppingTake() throws -> (SteppingDevice, Engine, InputQueue, Take) {
        let device = SteppingDevice()
        let engine = try Engine(device: device)
        let take = Take(channels: 1)
        let queue = try engine.makeInputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1)) { queue, buffer, start, frames in
            take.add(buffer, start: start, frames: frames)
            try? queue.enqueue(buffer)
        }
        return (device, engine, queue, take)
    }

    @Test("frames the device skips (its clock jumps in an xrun) are recorded as silence: the timeline stays true")
    func skippedDeviceFrames() throws {
        let (device, engine, queue, take) = try Self.steppingTake()
        defer { withExtendedLifetime(engine) {} }
        for _ in 0..<3 { try queue.enqueue(try queue.allocateBuffer(frameCapacity: 1000)) }
        try queue.start(at: 0)
        let value: (Int64) -> Float = { Float($0 + 1) / 65536 }
        for t in stride(from: Int64(0), to: 1024, by: 256) { device.cycle(at: t, value: value) }
        // The clock jumps: 512 frames (two periods) never reach the input.
        for t in stride(from: Int64(1536), to: 3072, by: 256) { device.cycle(at: t, value: value) }
        try queue.stop()
        device.cycle(at: 3072, value: value)
        #expect(queue.skippedFrames == 512)
        #expect(queue.lostFrames == 0)
        let samples = take.samples
        #expect(samples.count == 3072)
        for i in 0..<3072 {
            let expected: Float = (1024..<1536).contains(i) ? 0 : value(Int64(i))
            if samples[i] != expected { Issue.record("frame \(i): \(samples[i]) instead of \(expected)"); break }
        }
        #expect(take.deliveries.first?.start == 0)
    }
}

extension InputQueueTests {
    @Test("with fillsSkippedFrames off (sources that are other clients), a skip is left out: the take holds every frame that arrived, back to back, and the buffer after it starts at the later time")
    func leftOutSkippedFrames() throws {
        let (device, engine, queue, take) = try Self.steppingTake()
        defer { withExtendedLifetime(engine) {} }
        queue.fillsSkippedFrames = false
        for _ in 0..<3 { try queue.enqueue(try queue.allocateBuffer(frameCapacity: 1000)) }
        try queue.start(at: 0)
        // A source counting frames as it produces them: it is skipped with the device, so its
        // count goes on where it stopped after the jump.
        var produced: Int64 = 0
        func cycle(at t: Int64) {
            let first = produced
            device.cycle(at: t) { Float(first + $0 - t + 1) / 65536 }
            produced += 256
        }
        for t in stride(from: Int64(0), to: 1024, by: 256) { cycle(at: t) }
        // The clock jumps 512 frames (two periods) ahead.
        for t in stride(from: Int64(1536), to: 3072, by: 256) { cycle(at: t) }
        try queue.stop()
        cycle(at: 3072)
        #expect(queue.leftOutFrames == 512)
        #expect(queue.skippedFrames == 0)
        #expect(queue.lostFrames == 0)
        let samples = take.samples
        #expect(samples.count == 2560)
        for i in 0..<samples.count where samples[i] != Float(i + 1) / 65536 {
            Issue.record("frame \(i): \(samples[i]) instead of \(Float(i + 1) / 65536)")
            break
        }
        // The buffer after the skip carries the later time.
        let starts = take.deliveries.map(\.start)
        #expect(starts.first == 0)
        #expect(starts.contains(1536), "\(starts)")
    }
}
