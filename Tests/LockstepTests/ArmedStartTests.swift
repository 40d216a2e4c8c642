import Lockstep
import LockstepTestSupport
import Testing

@Suite("Armed starts: a segment per possible start, the render thread fires the one for its next cycle")
struct ArmedStartTests {
    /// A mono queue on `h` playing 1.0 from queue time 0 (the bed), with `returned` noting
    /// the buffers handed back.
    func bedQueue(_ h: OfflineHarness, returned: Recorder<Int>) throws -> OutputQueue {
        let queue = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1)) { _, buffer in
            returned.append(buffer.frameCount)
        }
        try queue.enqueueSamples(Signals.constant(1, frames: 4096), startTime: 0)
        try queue.start(at: 0)
        return queue
    }

    /// Arms a 300-frame piece of `value` for each queue time of `times`.
    func arm(_ queue: OutputQueue, _ times: [Int64], value: Float = 0.5) throws {
        for time in times {
            let buffer = try queue.allocateBuffer(frameCapacity: 300)
            _ = buffer.fill(from: Signals.constant(value, frames: 300))
            try queue.arm(buffer, startTime: time)
        }
    }

    @Test("fired in the cycle after the request: the piece for that cycle's first frame replaces the audio from there; the others come back")
    func firesOnTheNextCycle() throws {
        let h = try OfflineHarness(channels: 1, period: 256)
        let returned = Recorder<Int>()
        let queue = try bedQueue(h, returned: returned)
        try arm(queue, [256, 512, 768, 1000])
        var out = try h.render(frames: 256)                     // 0..<256: the bed
        let request = queue.fireArmed()
        #expect(queue.fireOutcome(of: request) == nil)
        out += try h.render(frames: 512)                        // fired at 256; the piece, then silence
        #expect(queue.fireOutcome(of: request) == .fired(queueTime: 256))
        #expect(Array(out[0..<256]) == Signals.constant(1, frames: 256))
        #expect(Array(out[256..<556]) == Signals.constant(0.5, frames: 300))
        #expect(Array(out[556..<768]).allSatisfy { $0 == 0 })
        // Everything comes back, nothing fires twice: the bed (cut at 256), the pieces for 512,
        // 768 and 1000 (the queue passed them) and the fired one (played).
        out += try h.render(frames: 512)
        #expect(Array(out[768...]).allSatisfy { $0 == 0 })
        #expect(returned.values.count == 5, "\(returned.values)")
    }

    @Test("a request in a cycle with nothing armed for it misses and changes nothing; pieces the queue passes come back unfired; disarm hands back the rest")
    func missesAndExpiry() throws {
        let h = try OfflineHarness(channels: 1, period: 256)
        let returned = Recorder<Int>()
        let queue = try bedQueue(h, returned: returned)
        try arm(queue, [100, 512, 2048])                        // 100 is no cycle's first frame
        let request = queue.fireArmed()
        var out = try h.render(frames: 256)                     // the request is seen at 0: missed
        #expect(queue.fireOutcome(of: request) == .missed)
        out += try h.render(frames: 512)                        // 256..<768: the queue passes 512
        #expect(out == Signals.constant(1, frames: 768))
        #expect(returned.values.count == 2, "100 and 512 passed: \(returned.values)")
        try queue.disarm()
        out += try h.render(frames: 256)
        #expect(returned.values.count == 3)
        let late = queue.fireArmed()
        out += try h.render(frames: 256)
        #expect(queue.fireOutcome(of: late) == .missed)
        #expect(out == Signals.constant(1, frames: 1280))
        #expect(throws: AudioQueueError.self) { try arm(queue, [-1]) }
    }

    @Test("a request not before a queue time waits for the first cycle that starts there or later; with nothing armed it misses at once")
    func notBefore() throws {
        let h = try OfflineHarness(channels: 1, period: 256)
        let returned = Recorder<Int>()
        let queue = try bedQueue(h, returned: returned)
        try arm(queue, [256, 512, 768])
        var out = try h.render(frames: 256)
        // An event at 300, seen in the cycle from 256: not fired there, but at 512.
        let request = queue.fireArmed(notBefore: 300)
        out += try h.render(frames: 256)
        #expect(queue.fireOutcome(of: request) == nil)
        out += try h.render(frames: 256)
        #expect(queue.fireOutcome(of: request) == .fired(queueTime: 512))
        #expect(Array(out[0..<512]) == Signals.constant(1, frames: 512))
        #expect(Array(out[512..<768]) == Signals.constant(0.5, frames: 256))
        // On a cycle's first frame it fires in that cycle.
        try queue.disarm()
        try arm(queue, [1024, 1280])
        out += try h.render(frames: 256)                        // 768..<1024
        let onTime = queue.fireArmed(notBefore: 1024)
        out += try h.render(frames: 256)
        #expect(queue.fireOutcome(of: onTime) == .fired(queueTime: 1024))
        // Nothing armed: missed at once, never left waiting.
        try queue.disarm()
        out += try h.render(frames: 256)
        let unarmed = queue.fireArmed(notBefore: 100_000)
        out += try h.render(frames: 256)
        #expect(queue.fireOutcome(of: unarmed) == .missed)
    }
}
