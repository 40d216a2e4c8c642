import Dispatch
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

@Suite("A device rendering from its own thread (the live path without JACK)")
struct LiveThreadTests {
    @Test("buffers refilled on the callback thread play gaplessly; stop after queued fires the listener")
    func callbackThreadStreaming() throws {
        let device = ThreadedTestDevice(channels: 1, period: 256, speed: 8)
        let engine = try Engine(device: device)
        let total = 48000
        let chunk = 2400
        let position = Recorder<Int>()
        let listenerThreads = Recorder<String>()
        let ramp = Signals.ramp(frames: total, start: 1)
        let queue = try engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1)) { queue, buffer in
            let start = position.values.last ?? 0
            guard start < total else { return }
            let end = min(total, start + chunk)
            buffer.fill(from: Array(ramp[start..<end]))
            position.append(end)
            _ = try? queue.enqueue(buffer)
            if end == total { try? queue.stop(immediately: false) }
        }
        try queue.addPropertyListener(.isRunning) { q, _ in
            listenerThreads.append("\(q.isRunning)")
        }
        var next = 0
        for _ in 0..<3 {
            let buffer = try queue.allocateBuffer(frameCapacity: chunk)
            buffer.fill(from: Array(ramp[next..<(next + chunk)]))
            next += chunk
            try queue.enqueue(buffer)
        }
        position.append(next)
        let start = try engine.start([queue])
        #expect(ThreadedTestDevice.wait { listenerThreads.values.count == 2 })
        #expect(listenerThreads.values == ["true", "false"])
        device.stop()
        let out = device.output
        let from = Int(start.sampleTime)
        #expect(out.count >= from + total)
        #expect(Array(out[from..<(from + total)]) == ramp)
        #expect(engine.discontinuities.isEmpty)
        #expect(engine.droppedEventCount == 0)
    }

    @Test("waitForRenderThread sees what the render thread does while the callback thread is held up; waitForDeliveries does not")
    func waitForRenderThread() throws {
        let device = ThreadedTestDevice(channels: 1, period: 256)
        let engine = try Engine(device: device)
        defer { device.stop() }
        let queue = try engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1)) { _, _ in }
        let buffer = try queue.allocateBuffer(frameCapacity: 48000)
        buffer.fill(from: [Float](repeating: 0.25, count: 48000))
        try queue.enqueue(buffer)
        _ = try engine.start([queue])
        // The thread that delivers the render events (and wakes waitForDeliveries) is held up.
        let held = DispatchSemaphore(value: 0)
        engine.performOnCallbackThread { held.wait() }
        defer { held.signal() }
        usleep(20_000)
        // Two periods (11 ms) rendered: a wait on the deliveries sees it only at its timeout…
        let first = engine.renderedSampleTime + 2 * 256
        var started = ContinuousClock.now
        engine.waitForDeliveries(timeout: 0.3) { engine.renderedSampleTime >= first }
        #expect(ContinuousClock.now - started >= .milliseconds(300), "\(ContinuousClock.now - started)")
        // …a wait on the render thread long before its own.
        let second = engine.renderedSampleTime + 2 * 256
        started = ContinuousClock.now
        #expect(engine.waitForRenderThread(timeout: 5) { engine.renderedSampleTime >= second })
        #expect(ContinuousClock.now - started < .seconds(2), "\(ContinuousClock.now - started)")
    }

    @Test("a DispatchQueue executor receives callbacks asynchronously; events stream to async code")
    func dispatchQueueLive() async throws {
        let device = ThreadedTestDevice(channels: 2, period: 256, speed: 8)
        let engine = try Engine(device: device)
        let dq = DispatchQueue(label: "live.callbacks")
        let key = DispatchSpecificKey<Int>()
        dq.setSpecific(key: key, value: 1)
        let seen = Recorder<Bool>()
        let queue = try engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 2),
                                               callbackExecutor: .queue(dq)) { _, _ in
            seen.append(DispatchQueue.getSpecific(key: key) == 1)
        }
        let events = queue.events
        try queue.enqueueSamples(Signals.constant(0.25, frames: 1000, channels: 2))
        try queue.start()
        try queue.stop(immediately: false)
        var stoppedAt: Int64?
        for await event in events {
            if case .stopped(let t) = event { stoppedAt = t; break }
        }
        device.stop()
        #expect(stoppedAt != nil)
        #expect(ThreadedTestDevice.wait { seen.values == [true] })
        let discontinuities = engine.discontinuities
        #expect(discontinuities.isEmpty)
    }
}

@Suite("Live engine lifetime")
struct LiveLifetimeTests {
    @Test("waits wake on deliveries: waitUntilRendered returns once the frames are rendered, waitForDeliveries once a callback made its condition true, and both time out")
    func waitsOnDeliveries() throws {
        let device = ThreadedTestDevice(channels: 2, period: 256, speed: 4)
        let engine = try Engine(device: device)
        let handedBack = Recorder<Int>()
        let queue = try engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 2)) { _, _ in
            handedBack.append(1)
        }
        try queue.enqueueSamples(Signals.constant(0.1, frames: 1024, channels: 2))
        try queue.start()
        #expect(engine.waitUntilRendered(through: 4096, timeout: 5))
        #expect(engine.renderedSampleTime >= 4096)
        #expect(engine.waitForDeliveries(timeout: 5) { !handedBack.values.isEmpty })
        let start = Date()
        #expect(!engine.waitForDeliveries(timeout: 0.1) { false })
        #expect(Date().timeIntervalSince(start) >= 0.1)
        // ChangeSignal on its own: a change signalled from another thread ends the wait.
        let signal = ChangeSignal()
        let flag = Recorder<Bool>()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { flag.append(true); signal.signal() }
        #expect(signal.wait(until: Date().addingTimeInterval(5)) { !flag.values.isEmpty })
        #expect(!signal.wait(until: Date().addingTimeInterval(0.05)) { false })
        // An offline device does not wait: the caller's renders move its clock.
        let offline = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 2))
        let offlineEngine = try Engine(device: offline)
        #expect(!offlineEngine.waitUntilRendered(through: 1, timeout: 5))
        #expect(offline.callbackDelivery == .inline && device.callbackDelivery == .callbackThread)
    }

    @Test("an engine with a callback thread is freed when its owner lets go, and its device stops")
    func engineFreed() throws {
        weak var weakEngine: Engine?
        let device = ThreadedTestDevice(channels: 2, period: 256, speed: 8)
        do {
            let engine = try Engine(device: device)
            weakEngine = engine
            let queue = try engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 2)) { _, _ in }
            try queue.addPropertyListener(.isRunning) { _, _ in }
            _ = queue.events
            try queue.enqueueSamples(Signals.constant(0.1, frames: 512, channels: 2))
            try queue.start()
            #expect(ThreadedTestDevice.wait { queue.isRunning })
        }
        #expect(ThreadedTestDevice.wait { weakEngine == nil })
        #expect(!device.isRunning)
    }
}

extension LiveLifetimeTests {
    @Test("an engine whose queue events were awaited is freed too")
    func engineFreedAfterEvents() async throws {
        weak var weakEngine: Engine?
        do {
            let device = ThreadedTestDevice(channels: 2, period: 256, speed: 8)
            let engine = try Engine(device: device)
            weakEngine = engine
            let dq = DispatchQueue(label: "live.callbacks.2")
            let queue = try engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 2),
                                                   callbackExecutor: .queue(dq)) { _, _ in }
            let events = queue.events
            try queue.enqueueSamples(Signals.constant(0.25, frames: 1000, channels: 2))
            try queue.start()
            try queue.stop(immediately: false)
            for await event in events {
                if case .stopped = event { break }
            }
            device.stop()
        }
        #expect(ThreadedTestDevice.wait { weakEngine == nil })
    }
}

@Suite("Group starts, per-queue outputs and device loss")
struct LiveFeatureTests {
    let stereo = StreamFormat(sampleRate: 48000, channelCount: 2)

    @Test("a group start at a passed time: start late, skip ahead (stays on the timeline), or fail")
    func latePolicies() throws {
        let h = try OfflineHarness(channels: 1, period: 100)
        let ramp = Signals.ramp(frames: 1000, start: 1)
        _ = try h.render(frames: 500)                       // the device is now at 500
        let a = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1)) { _, _ in }
        try a.enqueueSamples(ramp)
        let error = #expect(throws: AudioQueueError.self) { try h.engine.start([a], at: 300, ifLate: .fail) }
        #expect(error?.code == .cannotStart)
        let skipped = try h.engine.start([a], at: 300, ifLate: .skipAhead)
        #expect(skipped.sampleTime == 500 && skipped.framesLate == 200 && skipped.queueTimeAtStart == 200)
        var out = try h.render(frames: 100)
        #expect(out == Array(ramp[200..<300]))               // as if it had started at 300
        #expect(h.engine.discontinuities.isEmpty)
        try a.stop()
        _ = try h.render(frames: 100)
        try a.enqueueSamples(ramp)
        let late = try h.engine.start([a], at: 0, ifLate: .startLate)
        #expect(late.sampleTime == 700 && late.framesLate == 700 && late.queueTimeAtStart == 0)
        out = try h.render(frames: 100)
        #expect(out == Array(ramp[0..<100]))
    }

    @Test("per-queue outputs carry each queue's own post-gain audio besides the master mix")
    func directOutputs() throws {
        let device = ThreadedTestDevice(channels: 2, period: 256, speed: 8)
        let engine = try Engine(device: device)
        let a = try engine.makeOutputQueue(format: stereo, name: "drums") { _, _ in }
        let b = try engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1), name: "bass") { _, _ in }
        #expect(try a.enableDirectOutputs() == ["drums_1", "drums_2"])
        #expect(try b.enableDirectOutputs() == ["bass_1"])
        try a.enqueueSamples(Signals.constant(0.25, frames: 2048, channels: 2))
        try b.enqueueSamples(Signals.constant(0.5, frames: 2048))
        try b.setMixerGain(decibels: -6.0206)
        try a.stop(immediately: false)
        try b.stop(immediately: false)
        let start = try engine.start([a, b])
        #expect(ThreadedTestDevice.wait { !a.isRunning && !b.isRunning && device.output.count > Int(start.sampleTime + 2048) * 2 })
        device.stop()
        let from = Int(start.sampleTime)
        let drums = device.directOutput("drums_1")
        let bass = device.directOutput("bass_1")
        #expect(Array(drums[from..<(from + 2048)]).allSatisfy { $0 == 0.25 })
        #expect(Array(bass[from..<(from + 2048)]).allSatisfy { abs($0 - 0.25) < 1e-4 })
        #expect(drums[from - 1] == 0 && drums[from + 2048] == 0)
        let master = Signals.channel(0, of: device.output, channels: 2)
        #expect(abs(master[from + 100] - 0.5) < 1e-4)
        let h = try OfflineHarness()
        let offline = try h.engine.makeOutputQueue(format: stereo) { _, _ in }
        #expect(throws: AudioQueueError.self) { try offline.enableDirectOutputs() }
    }

    @Test("when the device dies, queues stop, listeners fire, buffers come back, and starts fail with its error")
    func deviceLoss() throws {
        let device = ThreadedTestDevice(channels: 2, period: 256, speed: 4)
        let engine = try Engine(device: device)
        let running = Recorder<Bool>()
        let returned = Recorder<Int>()
        let q = try engine.makeOutputQueue(format: stereo) { _, buffer in returned.append(buffer.frameCount) }
        try q.addPropertyListener(.isRunning) { queue, _ in running.append(queue.isRunning) }
        try q.enqueueSamples(Signals.constant(0.1, frames: 48000, channels: 2))
        try engine.start([q])
        #expect(ThreadedTestDevice.wait { running.values == [true] })
        device.simulateShutdown()
        #expect(ThreadedTestDevice.wait { running.values == [true, false] })
        #expect(ThreadedTestDevice.wait { returned.values == [48000] })
        #expect(engine.deviceError?.message.contains("shut down") == true)
        #expect(engine.discontinuities.last?.kind == .shutdown)
        let error = #expect(throws: AudioQueueError.self) { try q.start() }
        #expect(error?.code == .cannotStart)
    }
}
