import CRealtime
import CJack
import Foundation
import Lockstep
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The MIDI input port of a ``JACKDevice`` (``JACKDevice/Options/midiInputPortName``): the
/// process thread copies every event of each cycle, with its device sample time (the cycle's
/// sample time plus the event's frame offset), into a ring allocated when the device opens —
/// no allocation, no lock, no wait — and wakes the reader; ``read(timeout:)`` hands them over on
/// the reader's thread, in order.
///
/// A message longer than ``maximumMessageBytes`` (a big SysEx dump) and events that find the ring
/// full are dropped and counted (``statistics``), never blocking the process thread.
///
/// ```swift
/// let device = try JACKDevice(options: .init(midiInputPortName: "midi_in"))
/// while running {
///     for event in device.midiInput!.read(timeout: 0.1) { handle(event) }
/// }
/// ```
public final class JACKMIDIInput: @unchecked Sendable {
    /// The longest message kept, in bytes (MIDI Show Control messages are far shorter).
    public static let maximumMessageBytes = JACKMIDIRing.slotBytes
    /// Events the ring holds before the reader takes them.
    public static let capacity = JACKMIDIRing.capacity

    /// What the port has seen.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Events read from the port (kept or not).
        public var received: Int
        /// Events dropped because the reader had not taken the earlier ones (the ring was full).
        public var droppedRingFull: Int
        /// Events dropped because they were longer than ``JACKMIDIInput/maximumMessageBytes``.
        public var droppedOversized: Int
    }

    /// The port's full name (`client:midi_in`).
    public let portName: String
    let ring: UnsafeMutablePointer<JACKMIDIRing>

    init(portName: String) {
        self.portName = portName
        ring = allocateRing(JACKMIDIRing())
    }

    deinit { releaseRing(ring) }

    /// What the port has seen so far.
    public var statistics: Statistics {
        Statistics(received: ring.pointee.received.load(ordering: .relaxed),
                   droppedRingFull: ring.pointee.droppedFull.load(ordering: .relaxed),
                   droppedOversized: ring.pointee.droppedOversized.load(ordering: .relaxed))
    }

    /// The events that arrived since the last read, oldest first; waits up to `timeout` seconds
    /// for one when there are none. Call it from one thread at a time.
    public func read(timeout: Double) -> [MIDIEvent] {
        var events = ring.pointee.drain()
        if events.isEmpty && timeout > 0 {
            ring.pointee.wait(timeout: timeout)
            events = ring.pointee.drain()
        }
        return events
    }

    /// Wakes a ``read(timeout:)`` that waits (to stop the thread that reads).
    ///
    /// (A reader that must act within a period — MIDI control does — should run at realtime
    /// priority: ``JACKDevice/promoteCurrentThread(below:)``.)
    public func interruptRead() { sem_post(ring.pointee.semaphore) }
}

/// The process thread's MIDI ring: fixed slots of ``slotBytes``, one producer (the process
/// thread), one consumer (``JACKMIDIInput/read(timeout:)``).
struct JACKMIDIRing: RealtimeRing, ~Copyable {
    static let capacity = 1024
    static let slotBytes = 256
    let slots = MIDISlots(capacity: JACKMIDIRing.capacity, slotBytes: JACKMIDIRing.slotBytes)
    var times: UnsafeMutablePointer<Int64> { slots.times }
    var lengths: UnsafeMutablePointer<Int> { slots.lengths }
    var data: UnsafeMutablePointer<UInt8> { slots.data }
    let head = Atomic<Int>(0)
    let tail = Atomic<Int>(0)
    let received = Atomic<Int>(0)
    let droppedFull = Atomic<Int>(0)
    let droppedOversized = Atomic<Int>(0)
    let semaphore: UnsafeMutablePointer<sem_t>
    /// ``capacity`` − 1 and ``slotBytes``, as stored values the process thread reads.
    let mask = JACKMIDIRing.capacity - 1
    let slotSize = JACKMIDIRing.slotBytes

    init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    func deallocate() {
        slots.deallocate()
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Copies one event of `size` bytes at `bytes`, on device sample time `sampleTime`, into
    /// the ring (or counts it dropped). Process thread only.
    @_noAllocation @_noLocks
    func push(sampleTime: Int64, bytes: UnsafePointer<UInt8>, size: Int) -> Bool {
        received.wrappingAdd(1, ordering: .relaxed)
        guard size > 0, size <= slotSize else {
            if size > slotSize { droppedOversized.wrappingAdd(1, ordering: .relaxed) }
            return false
        }
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        if t &- h > mask {
            droppedFull.wrappingAdd(1, ordering: .relaxed)
            return false
        }
        let slot = t & mask
        times[slot] = sampleTime
        lengths[slot] = size
        let destination = data + slot * slotSize
        var i = 0
        while i < size {
            destination[i] = bytes[i]
            i += 1
        }
        tail.store(t &+ 1, ordering: .releasing)
        return true
    }

    /// Wakes the reader, unless a wake is pending already. Realtime-safe (one `sem_post`).
    func wake() {
        lockstep_try_post(semaphore)
    }

    /// Takes every event in the ring. Consumer only.
    func drain() -> [MIDIEvent] {
        var events: [MIDIEvent] = []
        var h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .acquiring)
        while h != t {
            let slot = h & mask
            let start = data + slot * slotSize
            events.append(MIDIEvent(sampleTime: times[slot], bytes: Array(UnsafeBufferPointer(start: start, count: lengths[slot]))))
            h &+= 1
        }
        head.store(h, ordering: .releasing)
        return events
    }

    /// Waits up to `timeout` seconds for a wake.
    func wait(timeout: Double) {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(timeout * 1_000_000_000)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        while sem_timedwait(semaphore, &deadline) != 0 && errno == EINTR {}
    }
}

/// Copies this cycle's events of the MIDI port into its ring, each on its device sample time
/// (`cycleStart` plus its frame offset), and wakes the reader. Process thread only: libjack's
/// MIDI calls read the port buffer in place.
@inline(__always)
func captureMIDI(_ ring: UnsafeMutablePointer<JACKMIDIRing>, buffer: UnsafeMutableRawPointer, cycleStart: Int64) {
    let count = jack_midi_get_event_count(buffer)
    guard count > 0 else { return }
    var event = jack_midi_event_t()
    var kept = false
    for index in 0..<count {
        guard jack_midi_event_get(&event, buffer, index) == 0, let bytes = event.buffer else { continue }
        if ring.pointee.push(sampleTime: cycleStart + Int64(event.time), bytes: bytes, size: Int(event.size)) { kept = true }
    }
    if kept { ring.pointee.wake() }
}
