import Foundation
@testable import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepTestSupport
import Synchronization
import Testing

extension JACKTests {
    /// The process thread wakes the engine's callback thread only after a cycle that left it
    /// something (a system call and, on a virtual machine, the other core's wake-up: a quarter of
    /// `play`'s process thread among eight stems), and after every cycle while a thread waits on
    /// deliveries or an input queue records.
    @Suite("callback thread wakes (live, period 256)", .serialized)
    struct CallbackWakeTests {
        @Test("a queue of 2048-frame buffers wakes the callback thread once a buffer; a waiter or an input queue every cycle")
        func wakesWhenThereIsSomething() throws { try retryingOnXruns("CallbackWakeTests", run) }

        func run(_ xrun: XrunFlag) throws {
            let server = try JACKServer()
            let device = try JACKDevice(options: .init(clientName: "lockstep-wakes", serverName: server.name,
                                                       connectToPhysicalOutputs: false))
            let engine = try Engine(device: device)
            try device.start()
            defer { device.stop() }
            let format = StreamFormat(sampleRate: device.sampleRate, channelCount: 2, sampleFormat: .float32)
            let played = Atomic<Int>(0)
            let queue = try engine.makeOutputQueue(format: format, name: "loop") { queue, buffer in
                played.add(1, ordering: .relaxed)
                try? queue.enqueue(buffer)
            }
            for _ in 0..<3 {
                let buffer = try queue.allocateBuffer(frameCapacity: 2048)
                buffer.byteSize = 2048 * format.bytesPerFrame
                try queue.enqueue(buffer)
            }
            try queue.start()
            usleep(300_000)

            /// Cycles rendered, buffers played and posted wakes over `seconds`.
            func window(_ seconds: Double, while body: (() -> Void)? = nil) -> (cycles: Int, played: Int, wakes: Int) {
                let cycles = engine.core.shared.pointee.renderedCycles.load(ordering: .relaxed)
                let buffers = played.load(ordering: .relaxed)
                let wakes = engine.pump.postedWakes
                if let body { body() } else { usleep(UInt32(seconds * 1_000_000)) }
                return (engine.core.shared.pointee.renderedCycles.load(ordering: .relaxed) - cycles,
                        played.load(ordering: .relaxed) - buffers, engine.pump.postedWakes - wakes)
            }
            let idle = window(1)
            // A thread waiting on deliveries (for a condition that never holds) is woken each cycle.
            let waited = window(0.5) { engine.waitForDeliveries(timeout: 0.5) { false } }
            // So is the thread while an input queue (here of the mix) has audio to take each cycle.
            let input = try engine.makeInputQueue(format: format, source: .mix) { queue, buffer, _, _ in
                try? queue.enqueue(buffer)
            }
            for _ in 0..<4 { try input.enqueue(try input.allocateBuffer(frameCapacity: 4800)) }
            try input.start()
            usleep(100_000)
            let recording = window(0.5)
            try input.stop()
            xrun.set(engine.discontinuities.contains { $0.kind == .xrun })
            let underruns = engine.discontinuities.filter { $0.kind == .underrun }
            try queue.stop()
            print("callback thread: idle \(idle); while a thread waits \(waited); while an input queue records \(recording)")

            // A buffer is 8 periods: the cycles that finish one (and the callback that refills it)
            // wake the thread; the 7 between leave nothing.
            #expect(idle.cycles > 100, "\(idle)")
            #expect(idle.played >= idle.cycles / 8 - 2, "buffers came back late: \(idle)")
            #expect(idle.wakes <= idle.cycles / 4, "woken \(idle.wakes) times in \(idle.cycles) cycles: \(idle)")
            #expect(idle.wakes >= idle.played / 2, "\(idle)")
            #expect(waited.wakes >= waited.cycles / 2, "a waiter was woken \(waited.wakes) times in \(waited.cycles) cycles")
            #expect(recording.wakes >= recording.cycles / 2, "an input queue's thread was woken \(recording.wakes) times in \(recording.cycles) cycles")
            #expect(underruns.isEmpty, "\(underruns)")
        }
    }
}
