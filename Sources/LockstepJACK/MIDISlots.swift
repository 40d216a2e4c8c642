/// The fixed slots of a MIDI ring (``JACKMIDIRing``, ``JACKMIDIOutputRing``): per slot a device
/// sample time, a length and `slotBytes` bytes, every page touched when allocated so the process
/// thread never takes a first-touch page fault.
struct MIDISlots {
    let times: UnsafeMutablePointer<Int64>
    let lengths: UnsafeMutablePointer<Int>
    let data: UnsafeMutablePointer<UInt8>

    init(capacity: Int, slotBytes: Int) {
        times = .allocate(capacity: capacity)
        times.initialize(repeating: 0, count: capacity)
        lengths = .allocate(capacity: capacity)
        lengths.initialize(repeating: 0, count: capacity)
        data = .allocate(capacity: capacity * slotBytes)
        data.initialize(repeating: 0, count: capacity * slotBytes)
    }

    func deallocate() {
        times.deallocate()
        lengths.deallocate()
        data.deallocate()
    }
}

/// A ring the process thread holds by pointer, with memory of its own to free.
protocol RealtimeRing: ~Copyable {
    /// Frees what the ring allocated.
    func deallocate()
}

/// `ring` moved into memory of its own, for the process thread to hold by pointer.
func allocateRing<Ring: RealtimeRing & ~Copyable>(_ ring: consuming Ring) -> UnsafeMutablePointer<Ring> {
    let pointer = UnsafeMutablePointer<Ring>.allocate(capacity: 1)
    pointer.initialize(to: ring)
    return pointer
}

/// Frees a ring made by ``allocateRing(_:)`` and what it allocated.
func releaseRing<Ring: RealtimeRing & ~Copyable>(_ pointer: UnsafeMutablePointer<Ring>) {
    pointer.pointee.deallocate()
    pointer.deinitialize(count: 1)
    pointer.deallocate()
}
