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
        let from = Int(start)
        #expect(out.count >= from + total)
        #expect(Array(out[from..<(from + total)]) == ramp)
        #expect(engine.discontinuities.isEmpty)
        #expect(engine.droppedEventCount == 0)
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
