import Synchronization

/// The one trivial record every render ring carries; ``QueueCommand``, ``EngineCommand`` and
/// ``RenderEvent`` are typed views of it. (The ring is deliberately not generic: unspecialised
/// generic calls would put metadata look-ups on the render path.)
struct RingMessage: BitwiseCopyable {
    var kind: UInt8 = 0
    var slot: Int32 = 0
    var segment: UnsafeMutablePointer<Segment>? = nil
    var state: UnsafeMutablePointer<QueueRenderState>? = nil
    var time: Int64 = 0
    var value: Int64 = 0
    var detail: Int64 = 0
    var length: Int64 = 0
}

/// A fixed-capacity single-producer single-consumer ring of ``RingMessage``s.
///
/// Realtime-safe on both ends: `push` and `pop` never allocate, lock or wait. Exactly one thread
/// may push and exactly one may pop at any time (callers that share an end serialise it themselves).
/// The storage is allocated once at creation and freed by ``deallocate()``.
struct SPSCRing: ~Copyable {
    typealias Element = RingMessage
    private let head = Atomic<Int>(0)   // next slot to read (consumer-owned)
    private let tail = Atomic<Int>(0)   // next slot to write (producer-owned)
    private let storage: UnsafeMutablePointer<Element>
    private let mask: Int

    /// Creates a ring holding at least `minimumCapacity` elements (rounded up to a power of two).
    init(minimumCapacity: Int) {
        var capacity = 2
        while capacity < minimumCapacity { capacity <<= 1 }
        storage = .allocate(capacity: capacity)
        // Touch every page now, so the render thread never takes a first-touch page fault.
        storage.initialize(repeating: Element(), count: capacity)
        mask = capacity - 1
    }

    /// The number of elements the ring can hold.
    var capacity: Int { mask + 1 }

    /// Appends `element`; returns false, changing nothing, when the ring is full. Producer only.
    @inline(__always)
    func push(_ element: Element) -> Bool {
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        if t &- h > mask { return false }
        (storage + (t & mask)).initialize(to: element)
        tail.store(t &+ 1, ordering: .releasing)
        return true
    }

    /// Removes and returns the oldest element, or nil when the ring is empty. Consumer only.
    @inline(__always)
    func pop() -> Element? {
        let h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .acquiring)
        if h == t { return nil }
        let element = storage[h & mask]
        head.store(h &+ 1, ordering: .releasing)
        return element
    }

    /// The number of elements currently held (a snapshot; exact only for the calling end).
    var count: Int { tail.load(ordering: .acquiring) &- head.load(ordering: .acquiring) }

    /// Frees the storage. Call once, when neither end is in use any more.
    func deallocate() { storage.deallocate() }
}
