@testable import Lockstep
import LockstepTestSupport
import Testing

@Suite("Render memory: huge-page chunks for buffers and render states")
struct RenderMemoryTests {
    @Test("size classes: whole cache lines up to 4 KiB, then steps of an eighth of a power of two")
    func sizeClasses() {
        #expect(RenderMemory.sizeClass(1) == 64)
        #expect(RenderMemory.sizeClass(64) == 64)
        #expect(RenderMemory.sizeClass(65) == 128)
        #expect(RenderMemory.sizeClass(4096) == 4096)
        #expect(RenderMemory.sizeClass(4097) == 4608)
        #expect(RenderMemory.sizeClass(49_344) == 53_248)
        for bytes in stride(from: 1, to: 1 << 24, by: 9973) {
            let size = RenderMemory.sizeClass(bytes)
            #expect(size >= bytes && size % 64 == 0 && Double(size) <= Double(max(bytes, 64)) * 1.125 + 64)
        }
    }

    @Test("blocks are 64-byte aligned and zeroed, also when a freed block is reused; large blocks get a mapping of their own")
    func blocks() {
        let memory = RenderMemory(chunkBytes: 2 << 20)
        #expect(memory.chunkBytes == 2 << 20)
        let a = memory.allocate(bytes: 1000)
        let b = memory.allocate(bytes: 1000)
        #expect(Int(bitPattern: a) % 64 == 0 && Int(bitPattern: b) % 64 == 0)
        #expect(b - a == 1024)
        let bytes = a.bindMemory(to: UInt8.self, capacity: 1000)
        #expect((0..<1000).allSatisfy { bytes[$0] == 0 })
        bytes.update(repeating: 0xAB, count: 1000)
        memory.free(a, bytes: 1000)
        let c = memory.allocate(bytes: 1000)
        #expect(c == a)
        #expect((0..<1024).allSatisfy { c.load(fromByteOffset: $0, as: UInt8.self) == 0 })
        // Half a chunk or more: its own mapping, on a huge-page boundary.
        let large = memory.allocate(bytes: 1 << 20)
        #expect(Int(bitPattern: large) % RenderMemory.hugePageBytes == 0)
        large.storeBytes(of: 7, toByteOffset: (1 << 20) - 1, as: UInt8.self)
        memory.free(large, bytes: 1 << 20)
        memory.free(b, bytes: 1000)
        memory.free(c, bytes: 1000)
    }

    @Test("queues made one after another have their render states side by side, the meter's sums in the line before each")
    func statesSideBySide() throws {
        let h = try OfflineHarness(channels: 2, period: 256)
        let format = StreamFormat(sampleRate: 48000, channelCount: 2)
        let queues = try (0..<8).map { _ in try h.engine.makeOutputQueue(format: format) { _, _ in } }
        let block = RenderMemory.sizeClass(QueueRenderState.blockBytes(channelCount: 2))
        for (first, second) in zip(queues, queues.dropFirst()) {
            #expect(UnsafeRawPointer(second.renderState) - UnsafeRawPointer(first.renderState) == block)
        }
        for queue in queues {
            let sums = UnsafeRawPointer(queue.renderState.pointee.meter.sumSquares)
            #expect(UnsafeRawPointer(queue.renderState) - sums > 0 && UnsafeRawPointer(queue.renderState) - sums <= 64)
        }
        // The lines prefetched every cycle hold every field up to the meter's clock.
        #expect(QueueRenderState.hotLines <= 4)
    }

    @Test("a buffer's data is zeroed and 64-byte aligned, its segment header in the same block just before its audio")
    func bufferBlocks() throws {
        let h = try OfflineHarness(channels: 2, period: 256)
        let queue = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 2)) { _, _ in }
        let buffer = try queue.allocateBuffer(frameCapacity: 6144)
        #expect(Int(bitPattern: buffer.data) % 64 == 0)
        #expect((0..<buffer.byteCapacity).allSatisfy { buffer.data.load(fromByteOffset: $0, as: UInt8.self) == 0 })
        let header = UnsafeRawPointer(buffer.segment)
        #expect(UnsafeRawPointer(buffer.data) > header && UnsafeRawPointer(buffer.data) - header <= 256)
    }
}
