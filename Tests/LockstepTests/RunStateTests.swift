import Dispatch
import Lockstep
import LockstepTestSupport
import Testing

@Suite("Run state, buffers and callbacks")
struct RunStateTests {
    let mono = StreamFormat(sampleRate: 48000, channelCount: 1)

    @Test("buffers come back through the callback after they play, and can be re-enqueued")
    func callbackRecycling() throws {
        let h = try OfflineHarness(channels: 1, period: 100)
        let returned = Recorder<Int>()
        let counter = Recorder<Int>()
        let q = try h.engine.makeOutputQueue(format: mono) { queue, buffer in
            returned.append(buffer.frameCount)
            let n = counter.values.count
            counter.append(n)
            if n < 5 {
                buffer.fill(from: Signals.constant(Float(n + 2) / 10, frames: 50))
                _ = try? queue.enqueue(buffer)
            }
        }
        for k in 0..<2 {
            let b = try q.allocateBuffer(frameCapacity: 50)
            b.fill(from: Signals.constant(Float(k) / 10, frames: 50))
            try q.enqueue(b)
        }
        try q.start()
        let out = try h.render(frames: 500)
        // 2 initial + 5 refills = 7 buffers of 50 frames, values 0.0, 0.1, 0.2, ... 0.6, gapless.
        for i in 0..<350 { #expect(out[i] == Float(i / 50) / 10, "frame \(i)") }
        #expect(returned.values.count == 7)
    }

    @Test("freeing an enqueued buffer fails; a foreign buffer fails; an empty buffer fails")
    func bufferErrors() throws {
        let h = try OfflineHarness(channels: 1)
        let a = try h.engine.makeOutputQueue(format: mono) { _, _ in }
        let b = try h.engine.makeOutputQueue(format: mono) { _, _ in }
        let (buffer, _) = try a.enqueueSamples(Signals.constant(0.1, frames: 10))
        var error = #expect(throws: AudioQueueError.self) { try a.freeBuffer(buffer) }
        #expect(error?.code == .bufferInQueue)
        #expect(error?.osStatus == -66679)
        error = #expect(throws: AudioQueueError.self) { try b.enqueue(buffer) }
        #expect(error?.code == .invalidBuffer)
        error = #expect(throws: AudioQueueError.self) { try b.freeBuffer(buffer) }
        #expect(error?.code == .invalidBuffer)
        error = #expect(throws: AudioQueueError.self) { try a.enqueue(buffer) }
        #expect(error?.code == .bufferEnqueuedTwice)
        let empty = try a.allocateBuffer(frameCapacity: 10)
        error = #expect(throws: AudioQueueError.self) { try a.enqueue(empty) }
        #expect(error?.code == .bufferEmpty)
        try a.freeBuffer(empty)
        error = #expect(throws: AudioQueueError.self) { try a.enqueue(empty) }
        #expect(error?.code == .invalidBuffer)
        // After reset the buffer comes back and can be freed.
        try a.reset()
        _ = try h.render(frames: 10)
        try a.freeBuffer(buffer)
    }

    @Test("stop immediately cuts at once and returns buffers; stop after queued plays them out")
    func stopModes() throws {
        let h = try OfflineHarness(channels: 1, period: 100)
        let returned = Recorder<Int>()
        let q = try h.engine.makeOutputQueue(format: mono) { _, b in returned.append(b.frameCount) }
        try q.enqueueSamples(Signals.constant(0.5, frames: 300))
        try q.enqueueSamples(Signals.constant(0.25, frames: 300))
        try q.start()
        var out = try h.render(frames: 100)
        #expect(out.allSatisfy { $0 == 0.5 })
        try q.stop(immediately: true)
        out = try h.render(frames: 100)
        #expect(out.allSatisfy { $0 == 0 })
        #expect(returned.values == [300, 300])
        #expect(q.isRunning == false)
        #expect(h.engine.discontinuities.isEmpty)

        let h2 = try OfflineHarness(channels: 1, period: 100)
        let stopped = Recorder<Bool>()
        let q2 = try h2.engine.makeOutputQueue(format: mono) { _, _ in }
        try q2.addPropertyListener(.isRunning) { queue, _ in stopped.append(queue.isRunning) }
        try q2.enqueueSamples(Signals.constant(0.5, frames: 250))
        try q2.start()
        try q2.stop(immediately: false)
        out = try h2.render(frames: 400)
        #expect(Array(out[0..<250]).allSatisfy { $0 == 0.5 })
        #expect(Array(out[250...]).allSatisfy { $0 == 0 })
        #expect(stopped.values == [true, false])
        #expect(h2.engine.discontinuities.isEmpty)  // a drained stop is not an underrun
    }

    @Test("pause holds queue time; resume continues exactly where it paused")
    func pauseResume() throws {
        let h = try OfflineHarness(channels: 1, period: 100)
        let q = try h.engine.makeOutputQueue(format: mono) { _, _ in }
        let ramp = Signals.ramp(frames: 1000, start: 1)
        try q.enqueueSamples(ramp)
        try q.start()
        var out = try h.render(frames: 300)
        #expect(Array(out) == Array(ramp[0..<300]))
        try q.pause()
        out = try h.render(frames: 200)
        #expect(out.allSatisfy { $0 == 0 })
        #expect(try q.currentTime().sampleTime == 300)
        try q.resume()
        out = try h.render(frames: 300)
        #expect(Array(out) == Array(ramp[300..<600]))
        #expect(h.engine.discontinuities.isEmpty)
        #expect(q.isRunning)
    }

    @Test("reset hands every enqueued buffer back through the callback without stopping")
    func resetReturnsBuffers() throws {
        let h = try OfflineHarness(channels: 1, period: 100)
        let returned = Recorder<Int>()
        let q = try h.engine.makeOutputQueue(format: mono) { _, b in returned.append(b.frameCount) }
        try q.enqueueSamples(Signals.constant(0.5, frames: 1000))
        try q.enqueueSamples(Signals.constant(0.5, frames: 500))
        try q.enqueueSamples(Signals.constant(0.5, frames: 250))
        #expect(try q.prime() == 1750)
        try q.start()
        _ = try h.render(frames: 100)
        try q.reset()
        let out = try h.render(frames: 100)
        #expect(out.allSatisfy { $0 == 0 })
        #expect(returned.values == [1000, 500, 250])
        #expect(q.isRunning)
        #expect(try q.prime() == 0)
        // New buffers after a reset play as soon as they arrive, without an underrun report.
        try q.enqueueSamples(Signals.constant(0.125, frames: 50))
        let after = try h.render(frames: 100)
        #expect(Array(after[0..<50]).allSatisfy { $0 == 0.125 })
        #expect(Array(after[50...]).allSatisfy { $0 == 0 })
        // Running dry after that buffer is an underrun again, reported with its length when it ends.
        #expect(h.engine.discontinuities.isEmpty)
        try q.stop()
        _ = try h.render(frames: 100)
        #expect(h.engine.discontinuities.map(\.sampleTime) == [250])
        #expect(h.engine.discontinuities.map(\.length) == [50])
    }

    @Test("the is-running listener fires when the queue really starts and stops, not when asked")
    func isRunningListener() throws {
        let h = try OfflineHarness(channels: 1, period: 100)
        let events = Recorder<Bool>()
        let q = try h.engine.makeOutputQueue(format: mono) { _, _ in }
        let token = try q.addPropertyListener(.isRunning) { queue, property in
            #expect(property == .isRunning)
            events.append(queue.isRunning)
        }
        try q.enqueueSamples(Signals.constant(0.5, frames: 1000))
        try q.start(at: 250)
        #expect(events.values.isEmpty)
        _ = try h.render(frames: 200)       // 0..<200: not started yet
        #expect(events.values.isEmpty)
        #expect(!q.isRunning)
        _ = try h.render(frames: 100)       // 200..<300: starts at 250
        #expect(events.values == [true])
        try q.stop()
        #expect(events.values == [true])
        _ = try h.render(frames: 100)
        #expect(events.values == [true, false])
        try q.removePropertyListener(token)
        #expect(throws: AudioQueueError.self) { try q.removePropertyListener(token) }
        let error = #expect(throws: AudioQueueError.self) { try q.addPropertyListener(.currentLevelMeter) { _, _ in } }
        #expect(error?.code == .invalidProperty)
    }

    @Test("dispose immediately stops callbacks; operations afterwards report disposal pending")
    func disposeImmediately() throws {
        let h = try OfflineHarness(channels: 1, period: 100)
        let returned = Recorder<Int>()
        let q = try h.engine.makeOutputQueue(format: mono) { _, b in returned.append(b.frameCount) }
        try q.enqueueSamples(Signals.constant(0.5, frames: 1000))
        try q.start()
        _ = try h.render(frames: 100)
        try q.dispose()
        let out = try h.render(frames: 100)
        #expect(out.allSatisfy { $0 == 0 })
        #expect(returned.values.isEmpty)
        let error = #expect(throws: AudioQueueError.self) { try q.start() }
        #expect(error?.code == .disposalPending)
        #expect(h.engine.queues.isEmpty)
    }

    @Test("dispose after playing lets the enqueued audio finish first")
    func disposeAfterPlaying() throws {
        let h = try OfflineHarness(channels: 1, period: 100)
        let returned = Recorder<Int>()
        let q = try h.engine.makeOutputQueue(format: mono) { _, b in returned.append(b.frameCount) }
        try q.enqueueSamples(Signals.constant(0.5, frames: 150))
        try q.start()
        try q.dispose(immediately: false)
        let out = try h.render(frames: 300)
        #expect(Array(out[0..<150]).allSatisfy { $0 == 0.5 })
        #expect(Array(out[150...]).allSatisfy { $0 == 0 })
        #expect(returned.values == [150])
        #expect(h.engine.queues.isEmpty)
    }

    @Test("callbacks can run on a DispatchQueue, and events arrive as an AsyncSequence")
    func dispatchQueueAndEvents() async throws {
        let h = try OfflineHarness(channels: 1, period: 100)
        let dq = DispatchQueue(label: "test.callbacks")
        let onQueue = Recorder<Bool>()
        let key = DispatchSpecificKey<Int>()
        dq.setSpecific(key: key, value: 7)
        let q = try h.engine.makeOutputQueue(format: mono, callbackExecutor: .queue(dq)) { _, _ in
            onQueue.append(DispatchQueue.getSpecific(key: key) == 7)
        }
        let events = q.events
        try q.enqueueSamples(Signals.constant(0.5, frames: 50))
        try q.start()
        try q.stop(immediately: false)
        _ = try h.render(frames: 200)
        #expect(onQueue.values == [true])
        try q.dispose()
        _ = try h.render(frames: 100)
        var kinds: [String] = []
        for await event in events {
            switch event {
            case .started: kinds.append("started")
            case .bufferCompleted: kinds.append("buffer")
            case .stopped: kinds.append("stopped")
            case .disposed: kinds.append("disposed")
            default: kinds.append("other")
            }
        }
        #expect(kinds == ["started", "buffer", "stopped", "disposed"])
    }
}

@Suite("Lifetimes")
struct LifetimeTests {
    @Test("queues and buffers outlive their engine safely; the device refuses to render without it")
    func engineReleasedFirst() throws {
        let device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 2))
        var engine: Engine? = try Engine(device: device)
        let queue = try engine!.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1)) { _, _ in }
        let (buffer, _) = try queue.enqueueSamples(Signals.constant(0.5, frames: 100))
        try queue.start()
        _ = try device.renderFloat(frames: 64)
        engine = nil
        let error = #expect(throws: AudioQueueError.self) { try device.renderFloat(frames: 64) }
        #expect(error?.code == .invalidDevice)
        #expect(throws: AudioQueueError.self) { try queue.start() }
        #expect(throws: AudioQueueError.self) { try queue.enqueue(buffer) }
        queue.isLevelMeteringEnabled = true
        _ = queue.volume
        #expect(buffer.frameCount == 100)
    }

    @Test("a buffer whose queue is gone is refused by other queues, not a crash")
    func bufferOfDisposedQueue() throws {
        let h = try OfflineHarness(channels: 1)
        var first: OutputQueue? = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1)) { _, _ in }
        let buffer = try first!.allocateBuffer(frameCapacity: 10)
        buffer.frameCount = 10
        try first!.dispose()
        _ = try h.render(frames: 10)
        first = nil
        let second = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1)) { _, _ in }
        let error = #expect(throws: AudioQueueError.self) { try second.enqueue(buffer) }
        #expect(error?.code == .invalidBuffer)
    }
}
