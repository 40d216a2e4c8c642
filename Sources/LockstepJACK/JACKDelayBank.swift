import Synchronization

/// Delay lines, one per port, that align ports of different latency (latency compensation).
///
/// Allocated (and every page touched) off the realtime thread; the process thread only runs
/// ``apply(channel:from:to:frames:)``. The delay of each line is set from any thread
/// (``setDelay(_:channel:)``) and takes effect at the next cycle; a delay is at most
/// ``maximumDelay`` frames.
struct JACKDelayBank: ~Copyable {
    /// Frames each line holds: delays up to `capacity − 1` (about 1.4 s at 48 kHz).
    static let capacity = 1 << 16
    /// The largest delay a line can apply.
    static var maximumDelay: Int { capacity - 1 }

    let count: Int
    private let rings: UnsafeMutablePointer<Float>
    private let writes: UnsafeMutablePointer<Int>
    private let delays: UnsafeMutablePointer<Atomic<Int>>

    init(count: Int) {
        self.count = max(1, count)
        rings = .allocate(capacity: self.count * Self.capacity)
        rings.initialize(repeating: 0, count: self.count * Self.capacity)
        writes = .allocate(capacity: self.count)
        writes.initialize(repeating: 0, count: self.count)
        delays = .allocate(capacity: self.count)
        for i in 0..<self.count { (delays + i).initialize(to: Atomic(0)) }
    }

    func deallocate() {
        rings.deallocate()
        writes.deallocate()
        for i in 0..<count { (delays + i).deinitialize(count: 1) }
        delays.deallocate()
    }

    /// Sets line `channel`'s delay (clamped to 0…``maximumDelay``). Any thread.
    /// - Returns: whether the delay changed.
    @discardableResult
    func setDelay(_ frames: Int, channel: Int) -> Bool {
        guard channel >= 0 && channel < count else { return false }
        let value = min(max(0, frames), Self.maximumDelay)
        return delays[channel].exchange(value, ordering: .relaxed) != value
    }

    /// Line `channel`'s delay in frames. Any thread.
    func delay(channel: Int) -> Int {
        guard channel >= 0 && channel < count else { return 0 }
        return delays[channel].load(ordering: .relaxed)
    }

    /// Passes `frames` frames of `source` through line `channel` into `destination` (which may be
    /// `source`: in place). Process thread only; realtime-safe.
    @_noAllocation @_noLocks
    func apply(channel: Int, from source: UnsafePointer<Float>, to destination: UnsafeMutablePointer<Float>, frames: Int) {
        let mask = Self.capacity - 1
        let ring = rings + channel * Self.capacity
        let delay = delays[channel].load(ordering: .relaxed)
        var write = writes[channel]
        for i in 0..<frames {
            ring[write & mask] = source[i]
            destination[i] = ring[(write &- delay) & mask]
            write &+= 1
        }
        writes[channel] = write & mask
    }
}
