import Foundation
@testable import Lockstep
import LockstepTestSupport
import Testing

// Under ``JACKTests`` although offline: a render and its helper keep both cores busy for seconds,
// which would make the live tests that run meanwhile xrun; nested there, they run one at a time.
extension JACKTests {
    @Suite("Render sharing: chunks of 128 queues, a helper thread, the same mix", .serialized)
    struct RenderSharingTests {
        /// Mono queues that keep three 512-frame buffers in flight, refilled from their completion
        /// callbacks with a known pattern, all started on frame 0; the order each queue's buffers came
        /// back in is recorded.
        final class Layers: @unchecked Sendable {
            let engine: Engine
            let device: OfflineDevice
            let count: Int
            static let bufferFrames = 512
            private let lock = NSLock()
            /// Per queue, the block index each completed buffer held, in completion order.
            private(set) var completions: [[Int]]
            private var nextBlock: [Int]
            private var blockOfBuffer: [ObjectIdentifier: Int] = [:]
            private(set) var queues: [OutputQueue] = []
            /// Set to stop refilling from the completion callbacks.
            var refills = true
            let value: @Sendable (Int, Int) -> Float

            init(count: Int, maximumQueues: Int, maximumBuffersPerQueue: Int = 256,
                 value: @escaping @Sendable (Int, Int) -> Float) throws {
                device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32),
                                           maximumFramesPerRender: 4096)
                engine = try Engine(device: device, maximumQueues: maximumQueues, maximumBuffersPerQueue: maximumBuffersPerQueue)
                self.count = count
                self.value = value
                completions = Array(repeating: [], count: count)
                nextBlock = Array(repeating: 0, count: count)
                let mono = StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float32)
                for i in 0..<count {
                    let queue = try engine.makeOutputQueue(format: mono) { [unowned self] _, buffer in
                        self.completed(i, buffer)
                    }
                    queues.append(queue)
                    for _ in 0..<3 { try fill(i, try queue.allocateBuffer(frameCapacity: Self.bufferFrames)) }
                }
                _ = try engine.start(queues, at: 0)
            }

            private func fill(_ i: Int, _ buffer: QueueBuffer) throws {
                let block = lock.withLock { () -> Int in
                    defer { nextBlock[i] += 1 }
                    blockOfBuffer[ObjectIdentifier(buffer)] = nextBlock[i]
                    return nextBlock[i]
                }
                let samples = (0..<Self.bufferFrames).map { value(i, block * Self.bufferFrames + $0) }
                _ = buffer.fill(from: samples)
                try queues[i].enqueue(buffer)
            }

            private func completed(_ i: Int, _ buffer: QueueBuffer) {
                let refill = lock.withLock { () -> Bool in
                    completions[i].append(blockOfBuffer[ObjectIdentifier(buffer)] ?? -1)
                    return refills
                }
                if refill { try? fill(i, buffer) }
            }

            /// What channel 0 must hold at frame `t`.
            func expected(_ t: Int) -> Float {
                var sum: Float = 0
                for i in 0..<count { sum += value(i, t) }
                return sum
            }

            /// Renders `cycles` cycles of 256 frames; returns channel 0.
            func render(cycles: Int) throws -> [Float] {
                var left: [Float] = []
                for _ in 0..<cycles { left += Signals.channel(0, of: try device.renderFloat(frames: 256), channels: 2) }
                return left
            }

            func completionsInOrder() -> Bool {
                lock.withLock { completions.allSatisfy { $0 == Array(0..<$0.count) } }
            }

            func stopRefilling() { lock.withLock { refills = false } }

            func completedBuffers() -> Int { lock.withLock { completions.reduce(0) { $0 + $1.count } } }
        }

        /// A thread running the engine's render helper (an offline device has none of its own).
        final class Helper: @unchecked Sendable {
            let renderer: DeviceRenderer
            let done = DispatchSemaphore(value: 0)
            init(_ engine: Engine) {
                renderer = DeviceRenderer(core: engine.core, pump: engine.pump)
                let thread = Thread { [renderer, done] in
                    renderer.runRenderHelper()
                    done.signal()
                }
                thread.start()
            }
            func waitUntilRunning() -> Bool {
                let deadline = Date().addingTimeInterval(5)
                while Date() < deadline {
                    if renderer.core.lanes?.pointee.helperRunning.load(ordering: .acquiring) == true { return true }
                    usleep(1000)
                }
                return false
            }
            func stop() -> Bool {
                renderer.stopRenderHelper()
                return done.wait(timeout: .now() + 5) == .success
            }
        }

        /// Values that any order of summation adds exactly (multiples of 2⁻¹⁰, small sums).
        static let exact: @Sendable (Int, Int) -> Float = { i, t in Float((i * 31 + t) % 17 - 8) / 1024 }
        /// Values whose sum depends on the order it is added in.
        static let inexact: @Sendable (Int, Int) -> Float = { i, t in Float(sin(Double(i) * 0.37 + Double(t) * 0.011)) * 0.003 }

        @Test("600 queues render in 5 chunks: with a helper taking chunks, every frame is the exact sum and every buffer comes back once, in order")
        func helperSharesExactly() throws {
            let layers = try Layers(count: 600, maximumQueues: 1024, value: Self.exact)
            #expect(layers.engine.core.lanes?.pointee.chunkCount == 8)
            let helper = Helper(layers.engine)
            #expect(helper.waitUntilRunning())
            var out: [Float] = []
            // Until the helper has rendered chunks (a thread of ordinary priority may be slow to come).
            while out.count < 16 * 256 || (layers.engine.renderSharing.helperChunks == 0 && out.count < 4000 * 256) {
                out += try layers.render(cycles: 8)
            }
            #expect(helper.stop())
            let sharing = layers.engine.renderSharing
            #expect(sharing.helperChunks > 0)
            #expect(sharing.sharedCycles == out.count / 256)
            let wrong = (0..<out.count).filter { out[$0] != layers.expected($0) }
            #expect(wrong.isEmpty, "\(wrong.count) of \(out.count) frames differ from the exact sum, first at \(wrong.prefix(5))")
            // Every buffer played to its end has come back (and was refilled).
            #expect(layers.completedBuffers() == 600 * (out.count / Layers.bufferFrames))
            #expect(layers.completionsInOrder())
            #expect(layers.engine.droppedEventCount == 0)
        }

        @Test("the mix is the same bits whichever thread renders which chunk (sums that depend on their order)")
        func deterministic() throws {
            let shared = try Layers(count: 520, maximumQueues: 1024, value: Self.inexact)
            let helper = Helper(shared.engine)
            #expect(helper.waitUntilRunning())
            var withHelper: [Float] = []
            while withHelper.count < 24 * 256
                    || (shared.engine.renderSharing.helperChunks == 0 && withHelper.count < 4000 * 256) {
                withHelper += try shared.render(cycles: 8)
            }
            #expect(helper.stop())
            #expect(shared.engine.renderSharing.helperChunks > 0)

            let alone = try Layers(count: 520, maximumQueues: 1024, value: Self.inexact)
            let single = try alone.render(cycles: withHelper.count / 256)
            #expect(alone.engine.renderSharing.helperChunks == 0)
            let differing = zip(single, withHelper).filter { $0 != $1 }.count
            #expect(single.count == withHelper.count && differing == 0, "\(differing) frames differ")
            // And the sum really does depend on its order: one sequential sum differs somewhere.
            let sequential = (0..<single.count).map { alone.expected($0) }
            #expect(zip(sequential, single).contains { $0 != $1 })
            #expect(zip(sequential, single).allSatisfy { abs($0 - $1) < 1e-5 })
        }

        @Test("up to 128 used slots render on the device's thread alone, as before; an engine of 256 queues has no chunks")
        func smallEngines() throws {
            let few = try Layers(count: 100, maximumQueues: 1024, value: Self.exact)
            let out = try few.render(cycles: 20)
            #expect(few.engine.renderSharing.sharedCycles == 0)
            #expect((0..<out.count).allSatisfy { out[$0] == few.expected($0) })
            let small = try Layers(count: 200, maximumQueues: 256, value: Self.exact)
            #expect(small.engine.core.lanes == nil)
            #expect(DeviceRenderer(core: small.engine.core, pump: small.engine.pump).canShareRendering == false)
            let smallOut = try small.render(cycles: 4)
            #expect(small.engine.renderSharing == (0, 0))
            #expect((0..<smallOut.count).allSatisfy { smallOut[$0] == small.expected($0) })
        }

        @Test("queues disposed of while chunks are shared leave the mix and come back as removed; the rest play on exactly")
        func disposalWhileShared() throws {
            let layers = try Layers(count: 400, maximumQueues: 512, value: { _, _ in 1.0 / 64 })
            let helper = Helper(layers.engine)
            #expect(helper.waitUntilRunning())
            _ = try layers.render(cycles: 8)
            // Dispose of every third queue (in every chunk) at once.
            let doomed = layers.engine.queues.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
            for queue in doomed { try queue.dispose(immediately: true) }
            _ = try layers.render(cycles: 2)
            let after = try layers.render(cycles: 16)
            #expect(helper.stop())
            let remaining = Float(400 - doomed.count) / 64
            #expect(after.allSatisfy { $0 == remaining })
            #expect(layers.engine.queues.count == 400 - doomed.count)
        }

        @Test("the helper claims a chunk only while its event ring has room for a chunk's worst case, so it never drops an event")
        func helperClaimsOnlyWithRoom() throws {
            // Four buffers per queue: a chunk's worst case is 128 × 12 events.
            let layers = try Layers(count: 600, maximumQueues: 1024, maximumBuffersPerQueue: 4, value: Self.exact)
            _ = try layers.render(cycles: 1)
            let lanes = try #require(layers.engine.core.lanes)
            let helper = try #require(layers.engine.core.helperLane())
            // A cycle of 5 chunks published as the render thread publishes it, none claimed yet.
            let chunks = 5
            lanes.pointee.generation &+= 1
            let generation = lanes.pointee.generation
            let t0 = layers.engine.core.shared.pointee.nextSampleTime.load(ordering: .acquiring)
            lanes.pointee.cycle.write {
                lanes.pointee.cycleGeneration.store(generation, ordering: .relaxed)
                lanes.pointee.cycleStart.store(t0, ordering: .relaxed)
                lanes.pointee.cycleFrames.store(256, ordering: .relaxed)
                lanes.pointee.cycleChunks.store(chunks, ordering: .relaxed)
            }
            lanes.pointee.helperFinished.store(0, ordering: .relaxed)
            lanes.pointee.claim.store(UInt64(generation) << 32, ordering: .releasing)
            func claimed() -> Int { Int(lanes.pointee.claim.load(ordering: .acquiring) & 0xFFFF_FFFF) }
            // One event more in the helper's ring than leaves room for a chunk's worst case: it
            // claims nothing (the render thread takes every chunk).
            let ring = lanes.pointee.helperEvents
            let room = ring.pointee.capacity - lanes.pointee.chunkEventBound
            var pushed = 0
            for _ in 0...room where ring.pointee.push(RingMessage()) { pushed += 1 }
            #expect(pushed == room + 1)
            helper.helpCurrentCycle()
            #expect(claimed() == 0 && layers.engine.renderSharing.helperChunks == 0)
            // Room for exactly one worst case: it renders one chunk, whose events (each of its
            // queues finishes its first 512-frame buffer in this cycle) leave too little room for another.
            _ = ring.pointee.pop()
            helper.helpCurrentCycle()
            #expect(claimed() == 1 && layers.engine.renderSharing.helperChunks == 1)
            #expect(lanes.pointee.helperFinished.load(ordering: .acquiring) == 1)
            let held = ring.pointee.count, capacity = ring.pointee.capacity
            #expect(held > room && held <= capacity, "\(held) events held, room \(room)")
            // Emptied, it takes the rest of the cycle.
            while ring.pointee.pop() != nil {}
            helper.helpCurrentCycle()
            #expect(claimed() > chunks && layers.engine.renderSharing.helperChunks == chunks)
            while ring.pointee.pop() != nil {}
        }

        @Test("every queue stopped at once while chunks are shared: every buffer comes back, once, in order, none dropped (a small event bound per chunk)")
        func massStopWhileShared() throws {
            // Four buffers per queue: each chunk's worst case is 128 × 12 events, so the helper's ring
            // is small and the helper takes a chunk only with room for it.
            let layers = try Layers(count: 600, maximumQueues: 1024, maximumBuffersPerQueue: 4, value: Self.exact)
            let lanes = try #require(layers.engine.core.lanes)
            let bound = lanes.pointee.chunkEventBound
            #expect(bound == 128 * 12)
            let helper = Helper(layers.engine)
            #expect(helper.waitUntilRunning())
            var cycles = 0
            while cycles < 16 || (layers.engine.renderSharing.helperChunks == 0 && cycles < 4000) {
                _ = try layers.render(cycles: 8)
                cycles += 8
            }
            layers.stopRefilling()
            for queue in layers.queues { try queue.stop(immediately: true) }
            _ = try layers.render(cycles: 4)
            #expect(helper.stop())
            // Every buffer ever enqueued has come back: three per queue beyond the blocks played.
            #expect(layers.completedBuffers() == 600 * (cycles * 256 / Layers.bufferFrames + 3))
            #expect(layers.completionsInOrder())
            #expect(layers.engine.droppedEventCount == 0)
        }
    }
}
