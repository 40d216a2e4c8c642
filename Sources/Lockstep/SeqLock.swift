import Synchronization

/// A sequence lock: one writer publishes several values (each in an atomic of its own) that
/// readers on other threads see as one consistent set, without either side ever waiting for the
/// other — a reader that overlapped a write simply reads again.
///
/// Used for every value the render thread publishes together: a queue's clock, a meter's window,
/// a JACK cycle's clock and transport. Both sides are realtime-safe (no allocation, no lock); the
/// writer must be a single thread at a time.
package struct SeqLock: ~Copyable {
    private let sequence = Atomic<Int>(0)

    /// Creates a lock with nothing written.
    package init() {}

    /// Publishes what `body` stores (with relaxed atomic stores) as one update. Writer thread only.
    @inline(__always)
    package func write(_ body: () -> Void) {
        let token = beginWrite()
        body()
        endWrite(token)
    }

    /// Starts an update (for writers that cannot use a closure: a mutating method storing its
    /// own fields). Pair with ``endWrite(_:)``. Writer thread only.
    @inline(__always)
    package func beginWrite() -> Int {
        let current = sequence.load(ordering: .relaxed)
        sequence.store(current &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        return current
    }

    /// Ends the update begun by ``beginWrite()``, which returned `token`.
    @inline(__always)
    package func endWrite(_ token: Int) {
        sequence.store(token &+ 2, ordering: .releasing)
    }

    /// Returns what `body` reads (with relaxed atomic loads) from one complete update, retrying
    /// while a write overlaps. Any thread.
    @inline(__always)
    package func read<Value>(_ body: () -> Value) -> Value {
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before & 1 == 1 { continue }
            let value = body()
            atomicMemoryFence(ordering: .acquiring)
            if sequence.load(ordering: .relaxed) == before { return value }
        }
    }
}
