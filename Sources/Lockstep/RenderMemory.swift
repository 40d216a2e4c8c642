#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Memory the render thread reads every cycle — the audio of enqueued buffers and the queues'
/// render states — carved from large chunks aligned to 2 MiB that the kernel may back with
/// transparent huge pages (`madvise(MADV_HUGEPAGE)`).
///
/// Why: at thousands of layers a cycle reads a few KiB from each of thousands of buffers.
/// Scattered over 4 KiB pages, nearly every one of those reads misses the TLB, and a page walk
/// under a hypervisor costs more than the read; prefetches that miss the TLB may be dropped. One
/// 2 MiB page holds the current audio of about twenty layers, or the render states of two
/// thousand queues laid side by side in the order the render loop walks them.
///
/// Blocks are 64-byte aligned and zeroed. A freed block goes to a free list of its size class
/// and is reused (zeroed again) by the next allocation of that class; blocks of half a chunk or
/// more get a mapping of their own, unmapped when freed. The chunks go back to the system when
/// the last holder lets go of the memory (its engine, queues and buffers).
///
/// Thread safety: any thread except a realtime one (allocation takes a lock).
final class RenderMemory: Sendable {
    /// The alignment and granularity of blocks.
    static let blockAlignment = 64
    /// The huge-page size the chunks are aligned to.
    static let hugePageBytes = 2 << 20

    /// Bytes per chunk (a multiple of ``hugePageBytes``).
    let chunkBytes: Int
    /// Whether the chunks ask for huge pages.
    let hugePages: Bool
    private let state = Mutex(State())

    private struct State: @unchecked Sendable {
        var chunks: [UnsafeMutableRawPointer] = []
        var next: UnsafeMutableRawPointer?
        var remaining = 0
        var free: [Int: [UnsafeMutableRawPointer]] = [:]
        /// Blocks with a mapping of their own, by address: their mapped length.
        var large: [UnsafeMutableRawPointer: Int] = [:]
    }

    /// Memory in chunks of `chunkBytes` (rounded up to whole huge pages), backed by huge pages
    /// when `hugePages` (the kernel zeroes a whole 2 MiB page at its first touch, so a small
    /// engine is quicker to start without them).
    init(chunkBytes: Int, hugePages: Bool = true) {
        let pages = max(1, (chunkBytes + Self.hugePageBytes - 1) / Self.hugePageBytes)
        self.chunkBytes = pages * Self.hugePageBytes
        self.hugePages = hugePages
    }

    deinit {
        state.withLock { state in
            for chunk in state.chunks { _ = munmap(chunk, chunkBytes) }
            for (block, length) in state.large { _ = munmap(block, length) }
            state.chunks.removeAll()
            state.large.removeAll()
        }
    }

    /// The size class of a block of `bytes`: whole cache lines up to 4 KiB, then steps of an
    /// eighth of a power of two (at most 12.5 % more than asked).
    static func sizeClass(_ bytes: Int) -> Int {
        let lines = (max(bytes, 1) + blockAlignment - 1) / blockAlignment * blockAlignment
        if lines <= 4096 { return lines }
        let step = (1 << (Int.bitWidth - 1 - lines.leadingZeroBitCount)) / 8
        return (lines + step - 1) / step * step
    }

    /// A zeroed, 64-byte aligned block of at least `bytes` bytes. Give the same `bytes` to
    /// ``free(_:bytes:)``.
    func allocate(bytes: Int) -> UnsafeMutableRawPointer {
        let size = Self.sizeClass(bytes)
        if size * 2 >= chunkBytes {
            let length = (size + Self.hugePageBytes - 1) / Self.hugePageBytes * Self.hugePageBytes
            let block = Self.map(length, hugePages: hugePages)
            state.withLock { $0.large[block] = length }
            return block
        }
        let (block, reused) = state.withLock { state -> (UnsafeMutableRawPointer, Bool) in
            if let block = state.free[size]?.popLast() { return (block, true) }
            if state.remaining < size {
                // The rest of the current chunk stays unused (it is at most half a chunk).
                let chunk = Self.map(chunkBytes, hugePages: hugePages)
                state.chunks.append(chunk)
                state.next = chunk
                state.remaining = chunkBytes
            }
            let block = state.next!
            state.next = block + size
            state.remaining -= size
            return (block, false)
        }
        // Fresh memory from the kernel is zero already (and untouched, so not yet resident).
        if reused { block.initializeMemory(as: UInt8.self, repeating: 0, count: size) }
        return block
    }

    /// Returns a block from ``allocate(bytes:)`` (with the same `bytes`).
    func free(_ block: UnsafeMutableRawPointer, bytes: Int) {
        let size = Self.sizeClass(bytes)
        state.withLock { state in
            if let length = state.large.removeValue(forKey: block) {
                _ = munmap(block, length)
            } else {
                state.free[size, default: []].append(block)
            }
        }
    }

    /// Maps `length` bytes (a multiple of the huge-page size) at a huge-page boundary and, with
    /// `hugePages`, asks for huge pages; the kernel may still give small ones (then it is
    /// ordinary memory).
    private static func map(_ length: Int, hugePages: Bool) -> UnsafeMutableRawPointer {
        let span = length + hugePageBytes
        guard let raw = mmap(nil, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              raw != MAP_FAILED else {
            fatalError("out of memory: cannot map \(length) bytes for audio buffers")
        }
        // Trim to a huge-page boundary: unmap the head and the tail outside it.
        let address = UInt(bitPattern: raw)
        let aligned = (address + UInt(hugePageBytes) - 1) & ~UInt(hugePageBytes - 1)
        let head = Int(aligned - address)
        if head > 0 { _ = munmap(raw, head) }
        let tail = span - head - length
        let block = raw + head
        if tail > 0 { _ = munmap(block + length, tail) }
        if hugePages { _ = madvise(block, length, MADV_HUGEPAGE) }
        return block
    }
}
