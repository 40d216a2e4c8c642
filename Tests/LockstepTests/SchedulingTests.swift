import Foundation
import Lockstep
import LockstepTestSupport
import Synchronization
import Testing

@Suite("Scheduling on the shared timeline")
struct SchedulingTests {
    let noop: @Sendable (OutputQueue, QueueBuffer) -> Void = { _, _ in }

    @Test("layers started at one device time land on the same sample, inside a period")
    func layersLandTogether() throws {
        let h = try OfflineHarness(channels: 2, period: 256)
        let mono = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .int16),
                                                 name: "a", callback: noop)
        let stereo = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32),
                                                   name: "b", callback: noop)
        // Different buffer sizes and formats; impulses at frame 0 of each layer.
        try mono.enqueueSamples(Signals.impulse(at: 0, frames: 300, value: 0.5))
        try stereo.enqueueSamples(Signals.impulse(at: 0, frames: 1000, value: 0.25, channels: 2))
        let start: Int64 = 1000  // inside the fourth 256-frame period
        try h.engine.start([mono, stereo], at: start)
        let out = try h.render(frames: 4096)
        let left = Signals.channel(0, of: out, channels: 2)
        let right = Signals.channel(1, of: out, channels: 2)
        #expect(Signals.firstNonSilent(left) == 1000)
        #expect(left[1000] == 0.75)
        #expect(right[1000] == 0.75)  // mono feeds both sides
        #expect(left.enumerated().allSatisfy { $0.offset == 1000 || $0.element == 0 })
    }

    @Test("explicit start times place buffers on exact samples; nil follows gaplessly")
    func startTimes() throws {
        let h = try OfflineHarness(channels: 1, period: 100)
        let q = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1), callback: noop)
        let (_, s1) = try q.enqueueSamples(Signals.constant(0.1, frames: 50), startTime: 10)
        let (_, s2) = try q.enqueueSamples(Signals.constant(0.2, frames: 30))
        let (_, s3) = try q.enqueueSamples(Signals.constant(0.3, frames: 20), startTime: 200)
        #expect(s1 == 10)
        #expect(s2 == 60)
        #expect(s3 == 200)
        try q.start(at: 5)
        let out = try h.render(frames: 400)
        for i in 0..<400 {
            let t = i - 5
            let expected: Float = (10..<60).contains(t) ? 0.1 : (60..<90).contains(t) ? 0.2 : (200..<220).contains(t) ? 0.3 : 0
            #expect(out[i] == expected, "frame \(i)")
        }
    }

    @Test("truncate cuts enqueued audio at a queue time: earlier audio plays, the buffer across it stops there, later buffers come back unplayed, new audio follows on the sample")
    func truncate() throws {
        let h = try OfflineHarness(channels: 1, period: 100)
        let returned = Mutex<[Float]>([])
        let q = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1)) { _, buffer in
            buffer.withFloatSamples { samples in returned.withLock { $0.append(samples[0]) } }
        }
        try q.enqueueSamples(Signals.constant(0.1, frames: 300))
        try q.enqueueSamples(Signals.constant(0.2, frames: 300))          // 300..<600: cut at 450
        try q.enqueueSamples(Signals.constant(0.3, frames: 300))          // 600..<900: back unplayed
        try q.enqueueSamples(Signals.constant(0.4, frames: 300), startTime: 1000)
        try q.start(at: 0)
        var out = try h.render(frames: 200)
        #expect(try q.prime() == 1200)          // (counted out as buffers come back)
        try q.truncate(at: 450)
        // New audio from the cut on; a start time at the cut is accepted, as is following it.
        let (_, at) = try q.enqueueSamples(Signals.constant(0.5, frames: 100), startTime: 450)
        #expect(at == 450)
        try q.enqueueSamples(Signals.constant(0.6, frames: 100))
        out += try h.render(frames: 1000)
        for i in 0..<1200 {
            let expected: Float = i < 300 ? 0.1 : i < 450 ? 0.2 : i < 550 ? 0.5 : i < 650 ? 0.6 : 0
            #expect(out[i] == expected, "frame \(i)")
        }
        // The cut buffers came back (0.3 and 0.4 unplayed, 0.2 shortened), and nothing is pending.
        #expect(Set(returned.withLock { $0 }) == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
        #expect(try q.prime() == 0)
        #expect(q.lateCutFrames == 0, "every cut so far was in time")
        // A cut the queue has passed cuts where it is (counted in lateCutFrames); a buffer
        // enqueued for the old time skips what is late and stays on the timeline.
        try q.enqueueSamples(Signals.constant(0.7, frames: 1000))           // 1200..<2200
        out = try h.render(frames: 200)                                     // plays 1200..<1400
        try q.truncate(at: 1300)
        try q.enqueueSamples(Signals.constant(0.8, frames: 400), startTime: 1300)
        out += try h.render(frames: 400)
        #expect(Array(out[0..<200]).allSatisfy { $0 == 0.7 })
        #expect(Array(out[200..<400]).allSatisfy { $0 == 0.8 }, "the late part (1300..<1400) is skipped: 1400..<1700 plays")
        #expect(q.lateCutFrames == 100, "the cut at 1300 came when the queue was at 1400")
        #expect(Array(out[500..<600]).allSatisfy { $0 == 0 })
        #expect(throws: AudioQueueError.self) { try q.truncate(at: -1) }
    }

    @Test("start times must ascend")
    func ascendingStartTimes() throws {
        let h = try OfflineHarness(channels: 1)
        let q = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1), callback: noop)
        try q.enqueueSamples(Signals.constant(0.1, frames: 100), startTime: 1000)
        let error = #expect(throws: AudioQueueError.self) {
            try q.enqueueSamples(Signals.constant(0.1, frames: 100), startTime: 1050)
        }
        #expect(error?.code == .invalidParameter)
        #expect(error?.message.contains("ascend") == true)
        #expect(throws: AudioQueueError.self) { try q.enqueueSamples(Signals.constant(0.1, frames: 10), startTime: -1) }
        // Exactly at the end is fine.
        try q.enqueueSamples(Signals.constant(0.1, frames: 100), startTime: 1100)
    }

    @Test("trims skip frames at both ends; the start time refers to the first kept frame")
    func trims() throws {
        let h = try OfflineHarness(channels: 1, period: 64)
        let q = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1), callback: noop)
        let ramp = Signals.ramp(frames: 100, start: 1, step: 1.0 / 1024)
        try q.enqueueSamples(ramp, startTime: 50, trimFramesAtStart: 10, trimFramesAtEnd: 20)
        try q.start(at: 0)
        let out = try h.render(frames: 256)
        #expect(Array(out[0..<50]).allSatisfy { $0 == 0 })
        for i in 0..<70 { #expect(out[50 + i] == ramp[10 + i]) }
        #expect(Array(out[120...]).allSatisfy { $0 == 0 })
        let error = #expect(throws: AudioQueueError.self) {
            try q.enqueueSamples(Signals.constant(0.1, frames: 10), trimFramesAtStart: 5, trimFramesAtEnd: 5)
        }
        #expect(error?.code == .invalidParameter)
    }

    @Test("integer formats decode exactly; 24-bit packed")
    func integerFormats() throws {
        let h = try OfflineHarness(channels: 1, period: 64)
        for format in [SampleFormat.int16, .int24, .int32, .float64] {
            let q = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: format), callback: noop)
            try q.enqueueSamples([0.5, -0.5, 0.25, -1.0], startTime: 0)
            try q.start()
            let out = try h.render(frames: 4)
            #expect(out == [0.5, -0.5, 0.25, -1.0], "\(format)")
            try q.dispose()
            _ = try h.render(frames: 4)
        }
    }

    @Test("offline render output equals the expected sum of the layers, with mixer gains")
    func offlineSum() throws {
        let h = try OfflineHarness(channels: 2, period: 128)
        let a = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 2), callback: noop)
        let b = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 2), callback: noop)
        let sa = Signals.sine(frequency: 440, sampleRate: 48000, frames: 2000, amplitude: 0.5, channels: 2)
        let sb = Signals.sine(frequency: 1000, sampleRate: 48000, frames: 1500, amplitude: 0.25, channels: 2)
        try a.enqueueSamples(sa)
        try b.enqueueSamples(sb)
        try b.setMixerGain(decibels: -6)
        let g = Float(Decibels.toLinear(-6))
        try h.engine.start([a, b], at: 0)
        let out = try h.render(frames: 2048)
        for i in 0..<(2048 * 2) {
            let expected = (i < sa.count ? sa[i] : 0) + (i < sb.count ? sb[i] * g : 0)
            #expect(abs(out[i] - expected) <= 1e-6, "sample \(i)")
        }
    }

    @Test("channel map: N to M by index, extra channels dropped, missing ones silent")
    func channelMap() throws {
        let h = try OfflineHarness(channels: 2, period: 64)
        let four = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 4), callback: noop)
        try four.enqueueSamples([0.1, 0.2, 0.3, 0.4])
        try four.start()
        #expect(try h.render(frames: 1) == [0.1, 0.2])
        let h3 = try OfflineHarness(channels: 3, period: 64)
        let stereo = try h3.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 2), callback: noop)
        try stereo.enqueueSamples([0.1, 0.2])
        try stereo.start()
        #expect(try h3.render(frames: 1) == [0.1, 0.2, 0])
    }
}

@Suite("Group starts are atomic")
struct GroupStartTests {
    let noop: @Sendable (OutputQueue, QueueBuffer) -> Void = { _, _ in }

    @Test("a group whose last queue cannot take its start starts none of its queues")
    func allOrNothing() throws {
        let h = try OfflineHarness(channels: 1, period: 256)
        let format = StreamFormat(sampleRate: 48000, channelCount: 1)
        let a = try h.engine.makeOutputQueue(format: format, name: "a", callback: noop)
        let b = try h.engine.makeOutputQueue(format: format, name: "b", callback: noop)
        try a.enqueueSamples(Signals.constant(0.25, frames: 1000))
        try b.enqueueSamples(Signals.constant(0.25, frames: 1000))
        // Nothing renders, so b's command ring fills up: its start cannot be sent.
        var filled = 0
        while (try? b.pause()) != nil { filled += 1; if filled > 1_000_000 { break } }
        let error = #expect(throws: AudioQueueError.self) { try h.engine.start([a, b], at: 512) }
        #expect(error?.code == .invalidRunState)
        let out = try h.render(frames: 2048)
        #expect(out.allSatisfy { $0 == 0 }, "a started although the group failed")
        #expect(!a.isRunning && !b.isRunning)
    }

    @Test("a queue listed twice starts once, on the group's sample")
    func duplicates() throws {
        let h = try OfflineHarness(channels: 1, period: 256)
        let a = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1), name: "a", callback: noop)
        try a.enqueueSamples(Signals.constant(0.5, frames: 100))
        let start = try h.engine.start([a, a], at: 300)
        #expect(start.sampleTime == 300)
        let out = try h.render(frames: 1024)
        #expect(Signals.firstNonSilent(out) == 300)
        #expect(out.filter { $0 != 0 }.count == 100)
    }
}

@Suite("Large group starts")
struct LargeGroupStartTests {
    @Test("4096 queues start as one group from a secondary thread, all on one sample")
    func fourThousandQueues() throws {
        let device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 1), maximumFramesPerRender: 1024)
        let engine = try Engine(device: device, maximumQueues: 4096)
        var queues: [OutputQueue] = []
        for i in 0..<4096 {
            let q = try engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1), name: "q\(i)") { _, _ in }
            try q.enqueueSamples(Signals.impulse(at: 0, frames: 4, value: 1.0 / 4096))
            queues.append(q)
        }
        let group = UncheckedGroup(engine: engine, queues: queues)
        let result = Recorder<Int64>()
        // A thread with Foundation's default stack: the start locks every queue in turn.
        let thread = Thread {
            if let start = try? group.engine.start(group.queues, at: 300) { result.append(start.sampleTime) }
        }
        thread.start()
        #expect(ThreadedTestDevice.wait(timeout: 20) { result.values.count == 1 })
        #expect(result.values == [300])
        let out = try device.renderFloat(frames: 1024)
        #expect(Signals.firstNonSilent(out) == 300)
        #expect(abs(out[300] - 1) < 1e-3)
    }
}

/// Carries an engine and its queues into a thread closure.
struct UncheckedGroup: @unchecked Sendable {
    let engine: Engine
    let queues: [OutputQueue]
}
