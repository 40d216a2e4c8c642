import CJack
import Foundation
import Lockstep
import Synchronization

/// The MIDI output port of a ``JACKDevice`` (``JACKDevice/Options/midiOutputPortName``): events
/// scheduled on device sample times go out on exactly those samples — the process thread writes
/// each in the cycle holding its sample, at its frame offset.
///
/// ``schedule(_:)`` hands a batch to the process thread through a ring allocated when the device
/// opens (the process thread never allocates, locks or waits): events, and cancellations of what
/// was scheduled from a sample on. A batch is published whole, so the process thread never sees a
/// cancellation without the events that replace it. Each event has a key: an event whose key went
/// out in the last ``rememberedKeys`` events is not sent again (a batch may re-send what a cycle
/// already played). An event whose sample has passed when it reaches the process thread goes out
/// at the start of the next cycle and is counted late (``statistics``, ``takeLateEvents()``).
public final class JACKMIDIOutput: @unchecked Sendable {
    /// The longest message, in bytes.
    public static let maximumMessageBytes = JACKMIDIOutQueue.slotBytes
    /// The most events waiting for their cycle at once.
    public static let capacity = JACKMIDIOutQueue.pendingCapacity
    /// How many sent keys are remembered against sending an event twice.
    public static let rememberedKeys = JACKMIDIOutQueue.keyCount

    /// One entry of a batch.
    public enum Entry: Sendable, Hashable {
        /// Sends `bytes` on device sample `sampleTime`; `key` names the event (the same event
        /// scheduled again keeps its key).
        case event(key: Int64, sampleTime: Int64, bytes: [UInt8])
        /// Drops every event scheduled on or after device sample `sampleTime` and not sent yet.
        case cancel(from: Int64)
    }

    /// What the port has done.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Events written to the port.
        public var sent: Int
        /// Of those, events written after their sample (at the start of the next cycle).
        public var late: Int
        /// Events dropped: longer than ``JACKMIDIOutput/maximumMessageBytes``, or found the ring
        /// or the waiting list full.
        public var dropped: Int
        /// Events not sent because their key had just gone out.
        public var repeats: Int
    }

    /// An event sent after its sample.
    public struct LateEvent: Sendable, Hashable {
        /// Its key.
        public var key: Int64
        /// The sample it was scheduled on.
        public var sampleTime: Int64
        /// How many frames after it it went out.
        public var lateFrames: Int64
    }

    /// The port's full name (`client:midi_out`).
    public let portName: String
    let queue: UnsafeMutablePointer<JACKMIDIOutQueue>
    private let lock = NSLock()

    init(portName: String) {
        self.portName = portName
        queue = .allocate(capacity: 1)
        queue.initialize(to: JACKMIDIOutQueue())
    }

    deinit {
        queue.pointee.deallocate()
        queue.deinitialize(count: 1)
        queue.deallocate()
    }

    /// Hands `entries` to the process thread, in order, as one batch (any thread; batches from
    /// several threads are serialised).
    /// - Returns: false when the ring had no room for the whole batch (nothing of it was taken).
    @discardableResult
    public func schedule(_ entries: [Entry]) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return queue.pointee.push(entries)
    }

    /// What the port has done so far.
    public var statistics: Statistics {
        Statistics(sent: queue.pointee.sent.load(ordering: .relaxed), late: queue.pointee.late.load(ordering: .relaxed),
                   dropped: queue.pointee.dropped.load(ordering: .relaxed), repeats: queue.pointee.repeats.load(ordering: .relaxed))
    }

    /// The late events since the last call (at most the last ``JACKMIDIOutQueue/lateCapacity``).
    public func takeLateEvents() -> [LateEvent] {
        lock.lock()
        defer { lock.unlock() }
        return queue.pointee.takeLate()
    }
}

/// The process thread's side of ``JACKMIDIOutput``: a single-producer ring of entries (the
/// producer serialised by the output's lock), the events waiting for their cycle, the keys sent
/// last and a ring of late events. All memory allocated and touched at creation.
struct JACKMIDIOutQueue: ~Copyable {
    static let capacity = 1024
    static let slotBytes = 256
    static let pendingCapacity = 512
    static let keyCount = 256
    static let lateCapacity = 64
    // The ring: per slot a kind (0 event, 1 cancel), a time, a key, a length and bytes.
    let kinds: UnsafeMutablePointer<UInt8>
    let times: UnsafeMutablePointer<Int64>
    let keys: UnsafeMutablePointer<Int64>
    let lengths: UnsafeMutablePointer<Int>
    let data: UnsafeMutablePointer<UInt8>
    let head = Atomic<Int>(0)
    let tail = Atomic<Int>(0)
    // Waiting events, by ring slot copied into a pending slot (process thread only).
    let pendingTimes: UnsafeMutablePointer<Int64>
    let pendingKeys: UnsafeMutablePointer<Int64>
    let pendingLengths: UnsafeMutablePointer<Int>
    let pendingData: UnsafeMutablePointer<UInt8>
    var pendingCount = 0
    // The keys sent last (a ring, process thread only).
    let sentKeys: UnsafeMutablePointer<Int64>
    var sentKeyNext = 0
    var sentKeyCount = 0
    // Late events: process thread produces, the reader takes.
    let lateKeys: UnsafeMutablePointer<Int64>
    let lateTimes: UnsafeMutablePointer<Int64>
    let lateFrames: UnsafeMutablePointer<Int64>
    let lateHead = Atomic<Int>(0)
    let lateTail = Atomic<Int>(0)
    let sent = Atomic<Int>(0)
    let late = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    let repeats = Atomic<Int>(0)
    /// Stored copies the process thread reads.
    let mask = JACKMIDIOutQueue.capacity - 1
    let slotSize = JACKMIDIOutQueue.slotBytes
    let pendingLimit = JACKMIDIOutQueue.pendingCapacity
    let keyLimit = JACKMIDIOutQueue.keyCount
    let lateMask = JACKMIDIOutQueue.lateCapacity - 1

    init() {
        func zeroed<T: FixedWidthInteger>(_ count: Int, _: T.Type) -> UnsafeMutablePointer<T> {
            let pointer = UnsafeMutablePointer<T>.allocate(capacity: count)
            pointer.initialize(repeating: 0, count: count)
            return pointer
        }
        kinds = zeroed(Self.capacity, UInt8.self)
        times = zeroed(Self.capacity, Int64.self)
        keys = zeroed(Self.capacity, Int64.self)
        lengths = zeroed(Self.capacity, Int.self)
        data = zeroed(Self.capacity * Self.slotBytes, UInt8.self)
        pendingTimes = zeroed(Self.pendingCapacity, Int64.self)
        pendingKeys = zeroed(Self.pendingCapacity, Int64.self)
        pendingLengths = zeroed(Self.pendingCapacity, Int.self)
        pendingData = zeroed(Self.pendingCapacity * Self.slotBytes, UInt8.self)
        sentKeys = zeroed(Self.keyCount, Int64.self)
        lateKeys = zeroed(Self.lateCapacity, Int64.self)
        lateTimes = zeroed(Self.lateCapacity, Int64.self)
        lateFrames = zeroed(Self.lateCapacity, Int64.self)
    }

    func deallocate() {
        kinds.deallocate(); times.deallocate(); keys.deallocate(); lengths.deallocate(); data.deallocate()
        pendingTimes.deallocate(); pendingKeys.deallocate(); pendingLengths.deallocate(); pendingData.deallocate()
        sentKeys.deallocate(); lateKeys.deallocate(); lateTimes.deallocate(); lateFrames.deallocate()
    }

    /// Writes `entries` into the ring and publishes them with one store. Producer only.
    func push(_ entries: [JACKMIDIOutput.Entry]) -> Bool {
        let h = head.load(ordering: .acquiring)
        var t = tail.load(ordering: .relaxed)
        guard entries.count <= Self.capacity - (t &- h) else { return false }
        for entry in entries {
            let slot = t & mask
            switch entry {
            case .cancel(let from):
                kinds[slot] = 1
                times[slot] = from
            case .event(let key, let sampleTime, let bytes):
                guard !bytes.isEmpty, bytes.count <= slotSize else {
                    dropped.add(1, ordering: .relaxed)
                    continue
                }
                kinds[slot] = 0
                times[slot] = sampleTime
                keys[slot] = key
                lengths[slot] = bytes.count
                bytes.withUnsafeBufferPointer { (data + slot * slotSize).update(from: $0.baseAddress!, count: bytes.count) }
            }
            t &+= 1
        }
        tail.store(t, ordering: .releasing)
        return true
    }

    /// Takes the late events recorded so far. Consumer of the late ring only.
    func takeLate() -> [JACKMIDIOutput.LateEvent] {
        var h = lateHead.load(ordering: .relaxed)
        let t = lateTail.load(ordering: .acquiring)
        var events: [JACKMIDIOutput.LateEvent] = []
        if t &- h > lateMask + 1 { h = t &- (lateMask + 1) }
        while h != t {
            let slot = h & lateMask
            events.append(.init(key: lateKeys[slot], sampleTime: lateTimes[slot], lateFrames: lateFrames[slot]))
            h &+= 1
        }
        lateHead.store(h, ordering: .releasing)
        return events
    }

    /// Takes the new entries of the ring into the waiting list: cancellations drop what waits from
    /// their sample on; an event whose key went out lately is counted as a repeat. Process thread.
    @_noAllocation @_noLocks
    mutating func takeEntries() {
        var h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .acquiring)
        while h != t {
            let slot = h & mask
            h &+= 1
            let time = times[slot]
            if kinds[slot] == 1 {
                var kept = 0
                for i in 0..<pendingCount where pendingTimes[i] < time {
                    if kept != i { movePending(from: i, to: kept) }
                    kept += 1
                }
                pendingCount = kept
                continue
            }
            let key = keys[slot]
            var repeated = false
            for i in 0..<sentKeyCount where sentKeys[i] == key { repeated = true }
            for i in 0..<pendingCount where pendingKeys[i] == key { repeated = true }
            if repeated {
                repeats.add(1, ordering: .relaxed)
                continue
            }
            guard pendingCount < pendingLimit else {
                dropped.add(1, ordering: .relaxed)
                continue
            }
            let length = lengths[slot]
            pendingTimes[pendingCount] = time
            pendingKeys[pendingCount] = key
            pendingLengths[pendingCount] = length
            let source = data + slot * slotSize, destination = pendingData + pendingCount * slotSize
            for i in 0..<length { destination[i] = source[i] }
            pendingCount += 1
        }
        head.store(h, ordering: .releasing)
    }

    @inline(__always)
    func movePending(from: Int, to: Int) {
        pendingTimes[to] = pendingTimes[from]
        pendingKeys[to] = pendingKeys[from]
        pendingLengths[to] = pendingLengths[from]
        let source = pendingData + from * slotSize, destination = pendingData + to * slotSize
        for i in 0..<pendingLengths[from] { destination[i] = source[i] }
    }

    /// The waiting event due earliest before `end`, or -1. Process thread.
    @_noAllocation @_noLocks
    func nextDue(before end: Int64) -> Int {
        var earliest = -1
        for i in 0..<pendingCount where pendingTimes[i] < end && (earliest < 0 || pendingTimes[i] < pendingTimes[earliest]) {
            earliest = i
        }
        return earliest
    }

    /// Takes waiting event `index`, written in the cycle starting at `cycleStart`, off the list:
    /// counts it (late when its sample has passed) and remembers its key. Process thread.
    @_noAllocation @_noLocks
    mutating func markSent(_ index: Int, cycleStart: Int64) {
        sent.add(1, ordering: .relaxed)
        let time = pendingTimes[index]
        if time < cycleStart {
            late.add(1, ordering: .relaxed)
            let t = lateTail.load(ordering: .relaxed)
            let slot = t & lateMask
            lateKeys[slot] = pendingKeys[index]
            lateTimes[slot] = time
            lateFrames[slot] = cycleStart - time
            lateTail.store(t &+ 1, ordering: .releasing)
        }
        sentKeys[sentKeyNext] = pendingKeys[index]
        sentKeyNext = sentKeyNext + 1 == keyLimit ? 0 : sentKeyNext + 1
        sentKeyCount = min(sentKeyCount + 1, keyLimit)
        pendingCount -= 1
        if index != pendingCount { movePending(from: pendingCount, to: index) }
    }
}

/// This cycle of the MIDI output port: takes what was scheduled, clears the port's buffer and
/// writes the events due in the cycle. Process thread only.
@inline(__always)
func playMIDI(_ queue: UnsafeMutablePointer<JACKMIDIOutQueue>, port: OpaquePointer, cycleStart: Int64, frames: Int) {
    guard let buffer = jack_port_get_buffer(port, jack_nframes_t(frames)) else { return }
    jack_midi_clear_buffer(buffer)
    queue.pointee.takeEntries()
    // Due events in time order, each at its frame offset (a past one at 0); few wait, so a scan
    // per event is cheap. A full port buffer leaves the rest for the next cycle (late).
    let end = cycleStart + Int64(frames)
    while true {
        let index = queue.pointee.nextDue(before: end)
        guard index >= 0 else { return }
        let offset = max(0, queue.pointee.pendingTimes[index] - cycleStart)
        let bytes = queue.pointee.pendingData + index * queue.pointee.slotSize
        guard jack_midi_event_write(buffer, jack_nframes_t(offset), bytes, queue.pointee.pendingLengths[index]) == 0 else { return }
        queue.pointee.markSent(index, cycleStart: cycleStart)
    }
}
