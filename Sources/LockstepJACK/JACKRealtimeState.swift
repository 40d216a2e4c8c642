import CJack
import Lockstep
import Synchronization

/// Everything JACK's process callback touches, in memory allocated when the device opens.
/// Plain fields are owned by the process thread; atomics are shared.
struct JACKRealtimeState: ~Copyable {
    static let maximumDirectSets = 1024
    static let xrunRingSize = 64

    let client: OpaquePointer
    let channelCount: Int
    let inputCount: Int
    let maximumFrames: Int
    let ports: UnsafeMutablePointer<OpaquePointer?>
    let channelPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let inputPorts: UnsafeMutablePointer<OpaquePointer?>
    let inputPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    var renderer: DeviceRenderer?

    // Clock: JACK's 32-bit frame time extended to 64 bits (sequence lock over atomics).
    var lastFrame32: UInt32 = 0
    var high: Int64 = 0
    var started = false
    let clockSequence = Atomic<Int>(0)
    let cycleStart = Atomic<Int64>(-1)
    let cycleHostTime = Atomic<UInt64>(0)
    let periodFrames = Atomic<Int>(0)
    let cycles = Atomic<Int>(0)
    /// JACK transport at the cycle start (published under the clock's sequence lock).
    let transportState = Atomic<UInt32>(0)
    let transportFrame = Atomic<UInt32>(0)
    /// When set, the engine renders only while transport rolls (silence, and no queue time
    /// passing, while it is stopped).
    let transportGate = Atomic<Bool>(false)

    // Shutdown hand-shake: the process callback marks itself busy; after a shutdown, whoever
    // takes over waits until it is not.
    let isShutDown = Atomic<Bool>(false)
    let inRender = Atomic<Bool>(false)

    // Notifications recorded by JACK's threads, reported by the device's monitor thread.
    let xrunWrite = Atomic<Int>(0)
    let xrunFrames: UnsafeMutablePointer<Atomic<UInt32>>
    let xrunDelays: UnsafeMutablePointer<Atomic<UInt32>>
    let xrunReady: UnsafeMutablePointer<Atomic<Int>>
    let bufferSize = Atomic<Int>(0)
    let sampleRate = Atomic<Int>(0)
    let freewheel = Atomic<Int>(0)
    let shutdownReason: UnsafeMutablePointer<CChar>
    let shutdownReasonLength = 256

    // Per-queue outputs: a fixed table of records the process thread refreshes.
    let directSets: UnsafeMutablePointer<Atomic<UInt>>

    init(client: OpaquePointer, channelCount: Int, inputCount: Int, maximumFrames: Int) {
        self.client = client
        self.channelCount = channelCount
        self.inputCount = inputCount
        self.maximumFrames = maximumFrames
        ports = .allocate(capacity: channelCount)
        ports.initialize(repeating: nil, count: channelCount)
        channelPointers = .allocate(capacity: channelCount)
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        channelPointers.initialize(repeating: scratch, count: channelCount)
        inputPorts = .allocate(capacity: max(1, inputCount))
        inputPorts.initialize(repeating: nil, count: max(1, inputCount))
        inputPointers = .allocate(capacity: max(1, inputCount))
        inputPointers.initialize(repeating: scratch, count: max(1, inputCount))
        scratch.deallocate()
        xrunFrames = .allocate(capacity: Self.xrunRingSize)
        xrunDelays = .allocate(capacity: Self.xrunRingSize)
        xrunReady = .allocate(capacity: Self.xrunRingSize)
        for i in 0..<Self.xrunRingSize {
            (xrunFrames + i).initialize(to: Atomic(0))
            (xrunDelays + i).initialize(to: Atomic(0))
            (xrunReady + i).initialize(to: Atomic(-1))
        }
        shutdownReason = .allocate(capacity: 256)
        shutdownReason.initialize(repeating: 0, count: 256)
        directSets = .allocate(capacity: Self.maximumDirectSets)
        for i in 0..<Self.maximumDirectSets { (directSets + i).initialize(to: Atomic(0)) }
    }

    func deallocate() {
        ports.deallocate()
        channelPointers.deallocate()
        inputPorts.deallocate()
        inputPointers.deallocate()
        for i in 0..<Self.xrunRingSize {
            (xrunFrames + i).deinitialize(count: 1)
            (xrunDelays + i).deinitialize(count: 1)
            (xrunReady + i).deinitialize(count: 1)
        }
        xrunFrames.deallocate()
        xrunDelays.deallocate()
        xrunReady.deallocate()
        shutdownReason.deallocate()
        for i in 0..<Self.maximumDirectSets { (directSets + i).deinitialize(count: 1) }
        directSets.deallocate()
    }

    /// Extends a 32-bit frame time near the last published cycle start to 64 bits.
    func extend(_ frame: UInt32) -> Int64 {
        let base = cycleStart.load(ordering: .acquiring)
        if base < 0 { return Int64(frame) }
        let delta = Int32(bitPattern: frame &- UInt32(truncatingIfNeeded: base))
        return base + Int64(delta)
    }
}

/// A per-queue output set as the process thread sees it.
struct JACKDirectRecord {
    let ports: UnsafeMutablePointer<OpaquePointer?>
    let buffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    let channelCount: Int
}

/// JACK's process callback: extends the clock, fetches port buffers, renders. Realtime-safe.
let jackProcessCallback: JackProcessCallback = { nframes, argument in
    guard let argument else { return 0 }
    let state = argument.assumingMemoryBound(to: JACKRealtimeState.self)
    return jackProcess(state, frames: Int(nframes))
}

@inline(__always)
func jackProcess(_ state: UnsafeMutablePointer<JACKRealtimeState>, frames: Int) -> Int32 {
    if state.pointee.isShutDown.load(ordering: .sequentiallyConsistent) { return 0 }
    state.pointee.inRender.store(true, ordering: .sequentiallyConsistent)
    defer { state.pointee.inRender.store(false, ordering: .sequentiallyConsistent) }
    if state.pointee.isShutDown.load(ordering: .sequentiallyConsistent) { return 0 }

    let client = state.pointee.client
    // The clock.
    var current: jack_nframes_t = 0
    var currentUsecs: jack_time_t = 0
    var nextUsecs: jack_time_t = 0
    var periodUsecs: Float = 0
    let frame32: UInt32
    if jack_get_cycle_times(client, &current, &currentUsecs, &nextUsecs, &periodUsecs) == 0 {
        frame32 = current
    } else {
        frame32 = jack_last_frame_time(client)
        currentUsecs = jack_get_time()
    }
    if state.pointee.started {
        if frame32 < state.pointee.lastFrame32 && state.pointee.lastFrame32 &- frame32 > 0x8000_0000 {
            state.pointee.high += 1 << 32
        }
    } else {
        state.pointee.started = true
    }
    state.pointee.lastFrame32 = frame32
    let sampleTime = state.pointee.high | Int64(frame32)
    var position = jack_position_t()
    let transport = jack_transport_query(client, &position)
    let sequence = state.pointee.clockSequence.load(ordering: .relaxed)
    state.pointee.clockSequence.store(sequence &+ 1, ordering: .relaxed)
    atomicMemoryFence(ordering: .releasing)
    state.pointee.cycleStart.store(sampleTime, ordering: .relaxed)
    state.pointee.cycleHostTime.store(currentUsecs, ordering: .relaxed)
    state.pointee.periodFrames.store(frames, ordering: .relaxed)
    state.pointee.transportState.store(transport.rawValue, ordering: .relaxed)
    state.pointee.transportFrame.store(position.frame, ordering: .relaxed)
    state.pointee.clockSequence.store(sequence &+ 2, ordering: .releasing)

    // Master output buffers.
    let channels = state.pointee.channelCount
    for c in 0..<channels {
        guard let port = state.pointee.ports[c],
              let raw = jack_port_get_buffer(port, jack_nframes_t(frames)) else { return 0 }
        state.pointee.channelPointers[c] = raw.assumingMemoryBound(to: Float.self)
    }
    // Input buffers.
    let inputs = state.pointee.inputCount
    for c in 0..<inputs {
        guard let port = state.pointee.inputPorts[c],
              let raw = jack_port_get_buffer(port, jack_nframes_t(frames)) else { return 0 }
        state.pointee.inputPointers[c] = raw.assumingMemoryBound(to: Float.self)
    }
    let input: UnsafePointer<UnsafeMutablePointer<Float>>? = inputs > 0 ? UnsafePointer(state.pointee.inputPointers) : nil
    // Per-queue output buffers.
    let sets = state.pointee.directSets
    for i in 0..<JACKRealtimeState.maximumDirectSets {
        let bits = sets[i].load(ordering: .acquiring)
        if bits == 0 { continue }
        guard let record = UnsafeMutablePointer<JACKDirectRecord>(bitPattern: bits) else { continue }
        for c in 0..<record.pointee.channelCount {
            if let port = record.pointee.ports[c], let raw = jack_port_get_buffer(port, jack_nframes_t(frames)) {
                let buffer = raw.assumingMemoryBound(to: Float.self)
                buffer.update(repeating: 0, count: frames)
                record.pointee.buffers[c] = buffer
            } else {
                record.pointee.buffers[c] = nil
            }
        }
    }

    let gated = state.pointee.transportGate.load(ordering: .relaxed)
        && transport != JackTransportRolling
    guard let renderer = state.pointee.renderer, !gated else {
        for c in 0..<channels { state.pointee.channelPointers[c].update(repeating: 0, count: frames) }
        return 0
    }
    // Render in chunks no longer than the engine's maximum.
    let maximum = state.pointee.maximumFrames
    if frames <= maximum {
        renderer.render(frames: frames, sampleTime: sampleTime, input: input, output: state.pointee.channelPointers)
    } else {
        var done = 0
        while done < frames {
            let n = min(maximum, frames - done)
            if done > 0 {
                for c in 0..<channels { state.pointee.channelPointers[c] += maximum }
                for c in 0..<inputs { state.pointee.inputPointers[c] += maximum }
                for i in 0..<JACKRealtimeState.maximumDirectSets {
                    let bits = sets[i].load(ordering: .acquiring)
                    guard bits != 0, let record = UnsafeMutablePointer<JACKDirectRecord>(bitPattern: bits) else { continue }
                    for c in 0..<record.pointee.channelCount {
                        if let buffer = record.pointee.buffers[c] { record.pointee.buffers[c] = buffer + maximum }
                    }
                }
            }
            renderer.render(frames: n, sampleTime: sampleTime + Int64(done), input: input, output: state.pointee.channelPointers)
            done += n
        }
    }
    state.pointee.cycles.wrappingAdd(1, ordering: .releasing)
    return 0
}

/// Records an xrun (JACK's notification thread; no JACK calls but the frame clock read).
let jackXrunCallback: JackXRunCallback = { argument in
    guard let argument else { return 0 }
    let state = argument.assumingMemoryBound(to: JACKRealtimeState.self)
    let index = state.pointee.xrunWrite.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
    let slot = index % JACKRealtimeState.xrunRingSize
    state.pointee.xrunFrames[slot].store(jack_frame_time(state.pointee.client), ordering: .relaxed)
    state.pointee.xrunDelays[slot].store(UInt32(max(0, min(Float(UInt32.max), jack_get_xrun_delayed_usecs(state.pointee.client)))), ordering: .relaxed)
    state.pointee.xrunReady[slot].store(index, ordering: .releasing)
    return 0
}

let jackBufferSizeCallback: JackBufferSizeCallback = { frames, argument in
    guard let argument else { return 0 }
    argument.assumingMemoryBound(to: JACKRealtimeState.self).pointee.bufferSize.store(Int(frames), ordering: .releasing)
    return 0
}

let jackSampleRateCallback: JackSampleRateCallback = { rate, argument in
    guard let argument else { return 0 }
    argument.assumingMemoryBound(to: JACKRealtimeState.self).pointee.sampleRate.store(Int(rate), ordering: .releasing)
    return 0
}

let jackFreewheelCallback: JackFreewheelCallback = { starting, argument in
    guard let argument else { return }
    argument.assumingMemoryBound(to: JACKRealtimeState.self).pointee.freewheel.store(starting != 0 ? 1 : 2, ordering: .releasing)
}

/// The server went away: record it; never call into JACK here.
let jackShutdownCallback: JackInfoShutdownCallback = { _, reason, argument in
    guard let argument else { return }
    let state = argument.assumingMemoryBound(to: JACKRealtimeState.self)
    if let reason {
        var i = 0
        while i < state.pointee.shutdownReasonLength - 1 && reason[i] != 0 {
            state.pointee.shutdownReason[i] = reason[i]
            i += 1
        }
        state.pointee.shutdownReason[i] = 0
    }
    state.pointee.isShutDown.store(true, ordering: .sequentiallyConsistent)
}
