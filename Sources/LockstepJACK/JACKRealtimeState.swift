import CJack
import Dispatch
import Lockstep
import Synchronization

/// Everything JACK's process callback touches, in memory allocated when the device opens.
/// Plain fields are owned by the process thread; atomics are shared.
struct JACKRealtimeState: ~Copyable {
    static let maximumDirectSets = 1024
    static let xrunRingSize = 64

    /// The client; replaced (by the monitor thread, while no process callback can run) when the
    /// device reopens it after a server restart.
    var client: OpaquePointer
    let channelCount: Int
    let inputCount: Int
    let maximumFrames: Int
    let ports: UnsafeMutablePointer<OpaquePointer?>
    let channelPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let inputPorts: UnsafeMutablePointer<OpaquePointer?>
    let inputPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    var renderer: DeviceRenderer?
    /// The MIDI input port and the ring its events go to (set while no process callback runs).
    var midiPort: OpaquePointer?
    var midiRing: UnsafeMutablePointer<JACKMIDIRing>?
    /// The MIDI output ports and the queues of what they send (set while no process callback
    /// runs), ``midiOutCount`` of them.
    static let maximumMIDIOutputs = 4
    let midiOutPorts: UnsafeMutablePointer<OpaquePointer?>
    let midiOutQueues: UnsafeMutablePointer<UnsafeMutablePointer<JACKMIDIOutQueue>?>
    var midiOutCount = 0
    /// Wakes the device's monitor thread (latency change, shutdown, detach), from JACK's
    /// notification thread or the user side — never from the process thread.
    let monitorWake = DispatchSemaphore(value: 0)

    // Clock. The device sample time counts the frames really rendered (plus the frames an xrun
    // skipped at the hardware); JACK's frame time (32-bit, extended here to 64 bits) is mapped to
    // it by an offset that moves whenever JACK's clock jumps against the rendered frames (jackd2
    // moves it by new − old period at every period change). Process-thread-owned fields first.
    var lastFrame32: UInt32 = 0
    var high: Int64 = 0
    var started = false
    var previousJACKFrame: Int64 = 0
    var previousFrames = 0
    var previousDeviceTime: Int64 = 0
    var cycleIndex = 0
    var seenSampleRate = 0
    var previousHostTime: UInt64 = 0
    var previousPeriodMicroseconds: Float = 0
    var xrunsSeen = 0
    /// Xrun callbacks not yet matched to a clock skip, and the cycle the oldest arrived in.
    var pendingXruns = 0
    var pendingXrunCycle = 0
    var pendingXrunSampleTime: Int64 = 0
    /// Clock skips reported as xruns whose callback has not arrived yet, and the cycle of the last.
    var unclaimedSkips = 0
    var unclaimedSkipCycle = 0
    var freewheelStart: Int64 = -1
    /// The wall clock of the cycles: a delay-locked loop on the callbacks' own times (process
    /// thread), so that a device sample's wall-clock time comes from the frames really played,
    /// whatever clock the server keeps.
    var wallLoop = WallClockLoop()
    var lastReportedPeriod = 0
    /// Set by `start()`: the next cycle keeps the mapping but not the previous cycle's frame count
    /// (the client was inactive in between; time passed, nothing was lost).
    let resync = Atomic<Bool>(false)
    /// Set when the client was opened again on a restarted server: the next cycle continues the
    /// timeline from the last rendered frame (JACK's new clock has nothing to do with the old).
    let restartSync = Atomic<Bool>(false)
    /// How long the server was away, for the `serverRestart` report.
    let awayMilliseconds = Atomic<Int>(0)
    /// Published together under `clockLock`: the cycle's device sample time, JACK frame time
    /// (extended), host time, period and transport.
    let clockLock = SeqLock()
    let cycleStart = Atomic<Int64>(-1)
    let cycleJACKFrame = Atomic<Int64>(-1)
    let cycleHostTime = Atomic<UInt64>(0)
    /// The cycle's start on the wall clock (seconds since 1970, a Double's bits) and the seconds
    /// per device frame, by ``wallLoop``.
    let cycleWallTime = Atomic<UInt64>(0)
    let cycleSecondsPerFrame = Atomic<UInt64>(0)
    let periodFrames = Atomic<Int>(0)
    let cycles = Atomic<Int>(0)
    /// JACK transport at the cycle start (published under the clock's sequence lock).
    let transportState = Atomic<UInt32>(0)
    let transportFrame = Atomic<UInt32>(0)
    /// The steering stage (a `JACKSteering` pointer's bits; 0: none), set once by
    /// ``JACKDevice/enableSteering()`` and freed with the state.
    let steering = Atomic<UInt>(0)
    /// When set, the engine renders only while transport rolls (silence, and no queue time
    /// passing, while it is stopped).
    let transportGate = Atomic<Bool>(false)

    /// How long each process callback took: counts in buckets of `callbackBucketMicroseconds`
    /// (the last one counts everything longer), the longest (µs), and the cycles whose callback
    /// took longer than their period. Written by the process thread only; read by anyone.
    static let callbackBucketMicroseconds = 25
    static let callbackBuckets = 800
    let callbackHistogram: UnsafeMutablePointer<Atomic<UInt32>>
    let callbackLongest = Atomic<Int>(0)
    let callbackOverPeriod = Atomic<Int>(0)

    // Shutdown hand-shake: the process callback marks itself busy; after a shutdown, whoever
    // takes over waits until it is not.
    let isShutDown = Atomic<Bool>(false)
    let inRender = Atomic<Bool>(false)

    // Notifications recorded by JACK's threads, reported by the process thread at its next cycle.
    let xrunWrite = Atomic<Int>(0)
    let xrunDelays: UnsafeMutablePointer<Atomic<UInt32>>
    let xrunReady: UnsafeMutablePointer<Atomic<Int>>
    let bufferSize = Atomic<Int>(0)
    let sampleRate = Atomic<Int>(0)
    let freewheel = Atomic<Int>(0)
    let shutdownReason: UnsafeMutablePointer<CChar>
    let shutdownReasonLength = 256

    // Per-queue outputs: a fixed table of records the process thread refreshes.
    let directSets: UnsafeMutablePointer<Atomic<UInt>>
    /// One past the highest entry of ``directSets`` ever used: what a cycle looks at (read once
    /// per cycle).
    let directSetsUsed = Atomic<Int>(0)

    // Latency compensation: delay lines for the master outputs (playback, when enabled) and the
    // inputs (capture, when enabled; the delayed inputs go to scratch buffers the engine reads).
    let outputDelays: UnsafeMutablePointer<JACKDelayBank>?
    let inputDelays: UnsafeMutablePointer<JACKDelayBank>?
    let inputScratch: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    static let inputScratchFrames = 16_384
    /// Set by JACK's latency callback; the monitor thread recomputes the delays.
    let latencyDirty = Atomic<Bool>(true)
    /// The compensated latencies (frames), published by the monitor thread.
    let playbackLatency = Atomic<Int>(0)
    let captureLatency = Atomic<Int>(0)
    /// The largest − smallest playback latency of the connected outputs (monitor thread).
    let playbackLatencySpread = Atomic<Int>(0)
    /// Set by JACK's port registration callback (a port appeared or went away); the monitor
    /// re-measures and makes again the connections it made that are missing.
    let portsRegistered = Atomic<Bool>(false)
    /// Marks the monitor thread sets when a measurement changed what an output does (a
    /// destination lost or back, a new latency or delay); the process thread stamps each with the
    /// sample time of the first cycle that sees it, in `markTimes[mark % markSlots]`, and
    /// publishes the newest mark stamped in `stampedMark`. Every measurement that moved a
    /// delay line sets a mark too, with the delay generations it published in
    /// `markDelayGenerations[mark % markSlots]`: the process thread reports a latency change
    /// only through a mark, so the discontinuity and the history's change share one sample time.
    let markGeneration = Atomic<Int>(0)
    let stampedMark = Atomic<Int>(0)
    let markTimes: UnsafeMutablePointer<Atomic<Int64>>
    /// Per mark: the playback delay generation (high 32 bits) and the capture one (low 32 bits).
    let markDelayGenerations: UnsafeMutablePointer<Atomic<Int>>
    /// Per mark: the playback latency (high 32 bits) and the capture latency (low 32 bits) its
    /// measurement published.
    let markLatencies: UnsafeMutablePointer<Atomic<Int>>
    static let markSlots = 64
    /// The newest mark the process thread stamped (process thread only).
    var seenMark = 0
    /// What the process thread last saw.
    var reportedPlaybackLatency = 0
    var reportedCaptureLatency = 0
    var seenPlaybackDelayGeneration = 0
    var seenCaptureDelayGeneration = 0

    init(client: OpaquePointer, channelCount: Int, inputCount: Int, maximumFrames: Int,
         compensatesPlayback: Bool, compensatesCapture: Bool) {
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
        midiOutPorts = .allocate(capacity: Self.maximumMIDIOutputs)
        midiOutPorts.initialize(repeating: nil, count: Self.maximumMIDIOutputs)
        midiOutQueues = .allocate(capacity: Self.maximumMIDIOutputs)
        midiOutQueues.initialize(repeating: nil, count: Self.maximumMIDIOutputs)
        inputPorts.initialize(repeating: nil, count: max(1, inputCount))
        inputPointers = .allocate(capacity: max(1, inputCount))
        inputPointers.initialize(repeating: scratch, count: max(1, inputCount))
        scratch.deallocate()
        xrunDelays = .allocate(capacity: Self.xrunRingSize)
        xrunReady = .allocate(capacity: Self.xrunRingSize)
        for i in 0..<Self.xrunRingSize {
            (xrunDelays + i).initialize(to: Atomic(0))
            (xrunReady + i).initialize(to: Atomic(-1))
        }
        shutdownReason = .allocate(capacity: 256)
        shutdownReason.initialize(repeating: 0, count: 256)
        directSets = .allocate(capacity: Self.maximumDirectSets)
        for i in 0..<Self.maximumDirectSets { (directSets + i).initialize(to: Atomic(0)) }
        callbackHistogram = .allocate(capacity: Self.callbackBuckets)
        for i in 0..<Self.callbackBuckets { (callbackHistogram + i).initialize(to: Atomic(0)) }
        markTimes = .allocate(capacity: Self.markSlots)
        for i in 0..<Self.markSlots { (markTimes + i).initialize(to: Atomic(0)) }
        markDelayGenerations = .allocate(capacity: Self.markSlots)
        for i in 0..<Self.markSlots { (markDelayGenerations + i).initialize(to: Atomic(0)) }
        markLatencies = .allocate(capacity: Self.markSlots)
        for i in 0..<Self.markSlots { (markLatencies + i).initialize(to: Atomic(0)) }
        if compensatesPlayback && channelCount > 0 {
            let bank = UnsafeMutablePointer<JACKDelayBank>.allocate(capacity: 1)
            bank.initialize(to: JACKDelayBank(count: channelCount))
            outputDelays = bank
        } else {
            outputDelays = nil
        }
        inputScratch = .allocate(capacity: max(1, inputCount))
        if compensatesCapture && inputCount > 0 {
            let bank = UnsafeMutablePointer<JACKDelayBank>.allocate(capacity: 1)
            bank.initialize(to: JACKDelayBank(count: inputCount))
            inputDelays = bank
            for c in 0..<inputCount {
                let buffer = UnsafeMutablePointer<Float>.allocate(capacity: Self.inputScratchFrames)
                buffer.initialize(repeating: 0, count: Self.inputScratchFrames)
                (inputScratch + c).initialize(to: buffer)
            }
        } else {
            inputDelays = nil
        }
    }

    func deallocate() {
        if let stage = UnsafeMutablePointer<JACKSteering>(bitPattern: steering.load(ordering: .acquiring)) {
            stage.pointee.deallocate()
            stage.deinitialize(count: 1)
            stage.deallocate()
        }
        midiOutPorts.deallocate()
        midiOutQueues.deallocate()
        ports.deallocate()
        channelPointers.deallocate()
        inputPorts.deallocate()
        inputPointers.deallocate()
        for i in 0..<Self.xrunRingSize {
            (xrunDelays + i).deinitialize(count: 1)
            (xrunReady + i).deinitialize(count: 1)
        }
        xrunDelays.deallocate()
        xrunReady.deallocate()
        shutdownReason.deallocate()
        for i in 0..<Self.maximumDirectSets { (directSets + i).deinitialize(count: 1) }
        directSets.deallocate()
        for i in 0..<Self.callbackBuckets { (callbackHistogram + i).deinitialize(count: 1) }
        callbackHistogram.deallocate()
        for i in 0..<Self.markSlots { (markTimes + i).deinitialize(count: 1) }
        markTimes.deallocate()
        for i in 0..<Self.markSlots { (markDelayGenerations + i).deinitialize(count: 1) }
        markDelayGenerations.deallocate()
        for i in 0..<Self.markSlots { (markLatencies + i).deinitialize(count: 1) }
        markLatencies.deallocate()
        if let outputDelays {
            outputDelays.pointee.deallocate()
            outputDelays.deinitialize(count: 1)
            outputDelays.deallocate()
        }
        if let inputDelays {
            inputDelays.pointee.deallocate()
            inputDelays.deinitialize(count: 1)
            inputDelays.deallocate()
            for c in 0..<inputCount { inputScratch[c].deallocate() }
        }
        inputScratch.deallocate()
    }

    /// The latest cycle's clock, read consistently: device sample time, JACK frame time
    /// (extended), host time and period; nil before the first cycle.
    func clock() -> (sampleTime: Int64, jackFrame: Int64, hostTime: UInt64, period: Int)? {
        let (start, frame, host, period) = clockLock.read {
            (cycleStart.load(ordering: .relaxed), cycleJACKFrame.load(ordering: .relaxed),
             cycleHostTime.load(ordering: .relaxed), periodFrames.load(ordering: .relaxed))
        }
        return start < 0 ? nil : (start, frame, host, period)
    }

    /// The latest cycle's device sample time, its start on the wall clock (seconds since 1970)
    /// and the seconds per device frame (``wallLoop``'s); nil before the first cycle.
    func wallClock() -> (sampleTime: Int64, time: Double, secondsPerFrame: Double)? {
        let (start, time, perFrame) = clockLock.read {
            (cycleStart.load(ordering: .relaxed), cycleWallTime.load(ordering: .relaxed), cycleSecondsPerFrame.load(ordering: .relaxed))
        }
        return start < 0 || perFrame == 0 ? nil : (start, Double(bitPattern: time), Double(bitPattern: perFrame))
    }

    /// Extends a 32-bit JACK frame time near the latest cycle's to 64 bits (JACK's time line).
    func extendJACKFrame(_ frame: UInt32) -> Int64 {
        guard let clock = clock() else { return Int64(frame) }
        let delta = Int32(bitPattern: frame &- UInt32(truncatingIfNeeded: clock.jackFrame))
        return clock.jackFrame + Int64(delta)
    }

    /// The device sample time of a JACK frame time near the latest cycle (current mapping).
    func deviceTime(forJACKFrame frame: UInt32) -> Int64 {
        guard let clock = clock() else { return Int64(frame) }
        let delta = Int32(bitPattern: frame &- UInt32(truncatingIfNeeded: clock.jackFrame))
        return clock.sampleTime + Int64(delta)
    }

    /// The JACK frame time (32-bit, as JACK's API takes it) of a device sample time, by the
    /// current mapping.
    func jackFrame(forDeviceTime sampleTime: Int64) -> UInt32 {
        guard let clock = clock() else { return UInt32(truncatingIfNeeded: sampleTime) }
        return UInt32(truncatingIfNeeded: sampleTime &- clock.sampleTime &+ clock.jackFrame)
    }
}

/// A per-queue output set as the process thread sees it.
struct JACKDirectRecord {
    let ports: UnsafeMutablePointer<OpaquePointer?>
    let buffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    let channelCount: Int
    /// The ports' delay lines when playback latency is compensated.
    let delays: UnsafeMutablePointer<JACKDelayBank>?
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
    // The callback's own time, measured while it still holds the state (runs before the defer
    // above: a shutdown may free the state once `inRender` is clear).
    let callbackStart = jack_get_time()
    let callbackWall = wallClockNow()
    defer { recordCallbackTime(state, microseconds: Int(truncatingIfNeeded: jack_get_time() &- callbackStart), frames: frames) }

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
    }
    state.pointee.lastFrame32 = frame32
    let jackFrame = state.pointee.high | Int64(frame32)
    // The rate as JACK has it for this cycle (a plain read of the client's shared state).
    let rate = Int(jack_get_sample_rate(client))
    let clock = advanceClock(state, jackFrame: jackFrame, frames: frames, rate: rate, hostTime: currentUsecs,
                             periodMicroseconds: periodUsecs)
    // Steered, the engine's time runs at its own rate: the device's plus what steering added.
    let steering = UnsafeMutablePointer<JACKSteering>(bitPattern: state.pointee.steering.load(ordering: .acquiring))
    let sampleTime = clock.sampleTime + (steering?.pointee.offset ?? 0)
    let wall = state.pointee.wallLoop.advance(measured: callbackWall, frames: frames, rate: rate,
                                              continuous: clock.skipped == 0 && clock.jump == 0 && !clock.restarted)
    if let renderer = state.pointee.renderer {
        if clock.skipped > 0 {
            // Time passed at the hardware without a cycle: an xrun, measured here on its sample.
            renderer.reportDiscontinuity(.xrun, sampleTime: sampleTime - clock.skipped, length: clock.skipped,
                                         detail: takeXrunDelay(state))
        }
        if clock.restarted {
            renderer.reportDiscontinuity(.serverRestart, sampleTime: sampleTime, length: 0,
                                         detail: Int64(state.pointee.awayMilliseconds.load(ordering: .acquiring)))
        }
        if clock.jump != 0 {
            renderer.reportDiscontinuity(.clockJump, sampleTime: sampleTime, length: clock.jump, detail: Int64(frames))
        }
    }
    var position = jack_position_t()
    let transport = jack_transport_query(client, &position)
    let transportFrame = position.frame
    let hostTime = currentUsecs
    state.pointee.clockLock.write {
        state.pointee.cycleStart.store(sampleTime, ordering: .relaxed)
        state.pointee.cycleJACKFrame.store(jackFrame, ordering: .relaxed)
        state.pointee.cycleHostTime.store(hostTime, ordering: .relaxed)
        state.pointee.cycleWallTime.store(wall.time.bitPattern, ordering: .relaxed)
        state.pointee.cycleSecondsPerFrame.store(wall.secondsPerFrame.bitPattern, ordering: .relaxed)
        state.pointee.periodFrames.store(frames, ordering: .relaxed)
        state.pointee.transportState.store(transport.rawValue, ordering: .relaxed)
        state.pointee.transportFrame.store(transportFrame, ordering: .relaxed)
    }
    reportCycleDiscontinuities(state, sampleTime: sampleTime, frames: frames, rate: rate)
    // MIDI in: this cycle's events, each on its device sample time.
    if let ring = state.pointee.midiRing, let port = state.pointee.midiPort,
       let buffer = jack_port_get_buffer(port, jack_nframes_t(frames)) {
        captureMIDI(ring, buffer: buffer, cycleStart: sampleTime)
    }
    // MIDI out: the events scheduled in this cycle, each on its frame.
    for index in 0..<state.pointee.midiOutCount {
        if let queue = state.pointee.midiOutQueues[index], let port = state.pointee.midiOutPorts[index] {
            playMIDI(queue, port: port, cycleStart: sampleTime, frames: frames)
        }
    }

    // Master output buffers.
    let channels = state.pointee.channelCount
    for c in 0..<channels {
        guard let port = state.pointee.ports[c],
              let raw = jack_port_get_buffer(port, jack_nframes_t(frames)) else { return 0 }
        state.pointee.channelPointers[c] = raw.assumingMemoryBound(to: Float.self)
    }
    // Input buffers (through the capture delay lines when the inputs are aligned).
    let inputs = state.pointee.inputCount
    let alignInputs = state.pointee.inputDelays != nil && frames <= JACKRealtimeState.inputScratchFrames
    for c in 0..<inputs {
        guard let port = state.pointee.inputPorts[c],
              let raw = jack_port_get_buffer(port, jack_nframes_t(frames)) else { return 0 }
        let buffer = raw.assumingMemoryBound(to: Float.self)
        if alignInputs, let bank = state.pointee.inputDelays {
            let scratch = state.pointee.inputScratch[c]
            bank.pointee.apply(channel: c, from: buffer, to: scratch, frames: frames)
            state.pointee.inputPointers[c] = scratch
        } else {
            state.pointee.inputPointers[c] = buffer
        }
    }
    reportLatencyChanges(state, sampleTime: sampleTime)
    let input: UnsafePointer<UnsafeMutablePointer<Float>>? = inputs > 0 ? UnsafePointer(state.pointee.inputPointers) : nil
    // Per-queue output buffers.
    let sets = state.pointee.directSets
    let setsUsed = min(state.pointee.directSetsUsed.load(ordering: .acquiring), JACKRealtimeState.maximumDirectSets)
    for i in 0..<setsUsed {
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
        delayOutputs(state, frames: frames, setsUsed: setsUsed)
        return 0
    }
    // Render in chunks no longer than the engine's maximum.
    let maximum = state.pointee.maximumFrames
    if let steering {
        _ = renderSteered(state, steering, renderer: renderer, frames: frames, sampleTime: sampleTime)
    } else if frames <= maximum {
        renderer.render(frames: frames, sampleTime: sampleTime, input: input, output: state.pointee.channelPointers)
    } else {
        var done = 0
        while done < frames {
            let n = min(maximum, frames - done)
            if done > 0 {
                for c in 0..<channels { state.pointee.channelPointers[c] += maximum }
                for c in 0..<inputs { state.pointee.inputPointers[c] += maximum }
                for i in 0..<setsUsed {
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
    delayOutputs(state, frames: frames, setsUsed: setsUsed)
    state.pointee.cycles.wrappingAdd(1, ordering: .releasing)
    // Completed buffers and events of this cycle go out now, not at the next poll.
    renderer.wakeCallbackThread()
    return 0
}

/// Counts one callback's duration in the histogram (process thread only; atomics, no wait).
@_noAllocation @_noLocks
func recordCallbackTime(_ state: UnsafeMutablePointer<JACKRealtimeState>, microseconds: Int, frames: Int) {
    guard microseconds >= 0 else { return }
    let bucket = min(microseconds / JACKRealtimeState.callbackBucketMicroseconds, JACKRealtimeState.callbackBuckets - 1)
    state.pointee.callbackHistogram[bucket].wrappingAdd(1, ordering: .relaxed)
    if microseconds > state.pointee.callbackLongest.load(ordering: .relaxed) {
        state.pointee.callbackLongest.store(microseconds, ordering: .relaxed)
    }
    let rate = state.pointee.seenSampleRate
    if rate > 0 && microseconds * rate > frames * 1_000_000 {
        state.pointee.callbackOverPeriod.wrappingAdd(1, ordering: .relaxed)
    }
}

/// Passes every output port (master and per-queue) through its delay line, when playback latency
/// is compensated, so that all reach their far ends on the same sample (`setsUsed`: the entries
/// of the per-queue table this cycle looks at). Process thread only.
@inline(__always)
func delayOutputs(_ state: UnsafeMutablePointer<JACKRealtimeState>, frames: Int, setsUsed: Int) {
    if let bank = state.pointee.outputDelays {
        for c in 0..<state.pointee.channelCount {
            guard let port = state.pointee.ports[c], let raw = jack_port_get_buffer(port, jack_nframes_t(frames)) else { continue }
            let buffer = raw.assumingMemoryBound(to: Float.self)
            bank.pointee.apply(channel: c, from: buffer, to: buffer, frames: frames)
        }
    }
    let sets = state.pointee.directSets
    for i in 0..<setsUsed {
        let bits = sets[i].load(ordering: .acquiring)
        guard bits != 0, let record = UnsafeMutablePointer<JACKDirectRecord>(bitPattern: bits),
              let bank = record.pointee.delays else { continue }
        for c in 0..<record.pointee.channelCount {
            guard let port = record.pointee.ports[c], let raw = jack_port_get_buffer(port, jack_nframes_t(frames)) else { continue }
            let buffer = raw.assumingMemoryBound(to: Float.self)
            bank.pointee.apply(channel: c, from: buffer, to: buffer, frames: frames)
        }
    }
}

/// Reports a change of the compensation delays (published by the monitor thread) on this cycle's
/// sample time: the audio through the delay lines jumps there; stamps the monitor's new marks with
/// the same sample time. A change of latency that moves no
/// delay line (compensation off, or one port) changes nothing that plays and is not reported.
/// Process thread only.
@inline(__always)
func reportLatencyChanges(_ state: UnsafeMutablePointer<JACKRealtimeState>, sampleTime: Int64) {
    // The monitor's marks: a mark is set after the delays it concerns, with the delay
    // generations of its measurement, so a delay change is reported on the sample its mark gets.
    let mark = state.pointee.markGeneration.load(ordering: .acquiring)
    guard mark != state.pointee.seenMark else { return }
    let slots = JACKRealtimeState.markSlots
    var m = max(state.pointee.seenMark + 1, mark - slots + 1)
    while m <= mark {
        state.pointee.markTimes[m & (slots - 1)].store(sampleTime, ordering: .relaxed)
        m += 1
    }
    state.pointee.stampedMark.store(mark, ordering: .releasing)
    state.pointee.seenMark = mark
    let generations = state.pointee.markDelayGenerations[mark & (slots - 1)].load(ordering: .relaxed)
    let playbackGeneration = generations >> 32
    let captureGeneration = generations & 0xFFFF_FFFF
    let latencies = state.pointee.markLatencies[mark & (slots - 1)].load(ordering: .relaxed)
    let playback = latencies >> 32
    let capture = latencies & 0xFFFF_FFFF
    if let renderer = state.pointee.renderer {
        if playbackGeneration != state.pointee.seenPlaybackDelayGeneration {
            renderer.reportDiscontinuity(.playbackLatencyChange, sampleTime: sampleTime,
                                         length: Int64(playback - state.pointee.reportedPlaybackLatency), detail: Int64(playback))
        }
        if captureGeneration != state.pointee.seenCaptureDelayGeneration {
            renderer.reportDiscontinuity(.captureLatencyChange, sampleTime: sampleTime,
                                         length: Int64(capture - state.pointee.reportedCaptureLatency), detail: Int64(capture))
        }
    }
    state.pointee.seenPlaybackDelayGeneration = playbackGeneration
    state.pointee.seenCaptureDelayGeneration = captureGeneration
    state.pointee.reportedPlaybackLatency = playback
    state.pointee.reportedCaptureLatency = capture
}

/// JACK's latency callback (notification thread): marks the latencies for recomputation by the
/// device's monitor thread.
let jackLatencyCallback: JackLatencyCallback = { _, argument in
    guard let argument else { return }
    let state = argument.assumingMemoryBound(to: JACKRealtimeState.self)
    state.pointee.latencyDirty.store(true, ordering: .releasing)
    state.pointee.monitorWake.signal()
}

/// JACK's port registration callback (notification thread): a port appeared or went away, so the
/// monitor re-measures, notes destinations that are gone and makes again the connections of the
/// device's ports that are missing.
let jackPortRegistrationCallback: JackPortRegistrationCallback = { _, _, argument in
    guard let argument else { return }
    let state = argument.assumingMemoryBound(to: JACKRealtimeState.self)
    state.pointee.portsRegistered.store(true, ordering: .releasing)
    state.pointee.monitorWake.signal()
}

/// How many cycles an xrun callback waits for the clock skip it caused before it is reported on
/// its own (JACK delivers the callback on another thread, before or after the skipped cycle).
let xrunMatchCycles = 4

/// Advances the device clock by one cycle: the frames rendered in the previous cycle plus the
/// frames JACK's clock says the hardware ran on without us (an xrun), never the artefact jump
/// jackd2 makes at a period change. Process thread only. Returns this cycle's device sample time.
@_noAllocation @_noLocks
func advanceClock(_ state: UnsafeMutablePointer<JACKRealtimeState>, jackFrame: Int64, frames: Int, rate: Int,
                  hostTime: UInt64, periodMicroseconds: Float) -> (sampleTime: Int64, skipped: Int64, jump: Int64, restarted: Bool) {
    defer {
        state.pointee.previousHostTime = hostTime
        state.pointee.previousPeriodMicroseconds = periodMicroseconds
    }
    if state.pointee.started && state.pointee.restartSync.exchange(false, ordering: .acquiringAndReleasing) {
        // A new server: the timeline goes on from the last rendered frame; the mapping to the new
        // server's clock starts afresh (its jump against the old mapping is reported).
        let oldOffset = state.pointee.previousJACKFrame - state.pointee.previousDeviceTime
        let sampleTime = state.pointee.previousDeviceTime + Int64(state.pointee.previousFrames)
        state.pointee.cycleIndex &+= 1
        state.pointee.previousJACKFrame = jackFrame
        state.pointee.previousFrames = frames
        state.pointee.previousDeviceTime = sampleTime
        state.pointee.previousHostTime = 0
        state.pointee.xrunsSeen = state.pointee.xrunWrite.load(ordering: .acquiring)
        state.pointee.pendingXruns = 0
        state.pointee.unclaimedSkips = 0
        return (sampleTime, 0, (jackFrame - sampleTime) - oldOffset, true)
    }
    guard state.pointee.started, !state.pointee.resync.exchange(false, ordering: .acquiringAndReleasing) else {
        // First cycle, or the first after (re)activation: keep the mapping (JACK time passed).
        let offset = state.pointee.started ? state.pointee.previousJACKFrame - state.pointee.previousDeviceTime : 0
        state.pointee.started = true
        state.pointee.previousJACKFrame = jackFrame
        state.pointee.previousFrames = frames
        state.pointee.previousDeviceTime = jackFrame - offset
        state.pointee.seenSampleRate = state.pointee.sampleRate.load(ordering: .acquiring)
        state.pointee.xrunsSeen = state.pointee.xrunWrite.load(ordering: .acquiring)
        return (jackFrame - offset, 0, 0, false)
    }
    let delta = jackFrame - state.pointee.previousJACKFrame
    let previous = Int64(state.pointee.previousFrames)
    // jackd2 advances its frame clock by the *new* period on the first cycle after a change; a
    // server that counts the previous period (the frames really played) is right already.
    let expected = Int64(frames) == previous || delta == previous ? previous : Int64(frames)
    // The first cycle after a reconfiguration (new period or rate: the server stopped and restarted
    // its driver) never counts frames as lost: no cycle was missed, whatever its clock says.
    let reconfigured = Int64(frames) != previous || (rate > 0 && rate != state.pointee.seenSampleRate)
    var skipped = reconfigured ? 0 : max(0, delta - expected)
    if skipped > 0 && state.pointee.previousHostTime > 0 && hostTime > state.pointee.previousHostTime
        && state.pointee.previousPeriodMicroseconds > 0 {
        // Frames count as lost only if the wall clock agrees that time passed without a cycle
        // (an xrun); a server that merely re-counts its clock on a reconfiguration (PipeWire
        // jumps by one quantum on a rate or quantum change) makes a clock jump, not a gap.
        let elapsed = Double(hostTime - state.pointee.previousHostTime)
        let late = elapsed - Double(state.pointee.previousPeriodMicroseconds)
        let rate = Double(max(1, state.pointee.seenSampleRate))
        let lateFrames = Int64(late * rate / 1_000_000)
        if lateFrames < skipped / 2 { skipped = 0 }
    }
    let sampleTime = state.pointee.previousDeviceTime + previous + skipped
    let jump = delta - (previous + skipped)
    state.pointee.cycleIndex &+= 1
    state.pointee.previousJACKFrame = jackFrame
    state.pointee.previousFrames = frames
    state.pointee.previousDeviceTime = sampleTime
    return (sampleTime, skipped, jump, false)
}

/// The delay of a pending xrun callback, claimed by a clock skip; or, if its callback has not
/// arrived yet, remembers that the next one is already reported.
@_noAllocation @_noLocks
func takeXrunDelay(_ state: UnsafeMutablePointer<JACKRealtimeState>) -> Int64 {
    collectXrunCallbacks(state)
    if state.pointee.pendingXruns > 0 {
        state.pointee.pendingXruns -= 1
        let slot = (state.pointee.xrunsSeen - state.pointee.pendingXruns - 1) % JACKRealtimeState.xrunRingSize
        return Int64(state.pointee.xrunDelays[max(0, slot)].load(ordering: .relaxed))
    }
    state.pointee.unclaimedSkips += 1
    state.pointee.unclaimedSkipCycle = state.pointee.cycleIndex
    return 0
}

/// Moves newly arrived xrun callbacks to the pending count (or matches them to skips already
/// reported).
@_noAllocation @_noLocks
func collectXrunCallbacks(_ state: UnsafeMutablePointer<JACKRealtimeState>) {
    let written = state.pointee.xrunWrite.load(ordering: .acquiring)
    while state.pointee.xrunsSeen < written {
        let index = state.pointee.xrunsSeen
        let slot = index % JACKRealtimeState.xrunRingSize
        guard state.pointee.xrunReady[slot].load(ordering: .acquiring) == index else { break }
        state.pointee.xrunsSeen += 1
        if state.pointee.unclaimedSkips > 0
            && state.pointee.cycleIndex - state.pointee.unclaimedSkipCycle <= xrunMatchCycles {
            state.pointee.unclaimedSkips -= 1
            continue
        }
        state.pointee.unclaimedSkips = 0
        if state.pointee.pendingXruns == 0 {
            state.pointee.pendingXrunCycle = state.pointee.cycleIndex
            state.pointee.pendingXrunSampleTime = state.pointee.previousDeviceTime
        }
        state.pointee.pendingXruns += 1
    }
}

/// Reports what JACK's notification callbacks recorded since the last cycle, on this cycle's
/// sample time: period and rate changes, freewheel, and xruns whose clock did not skip.
@inline(__always)
func reportCycleDiscontinuities(_ state: UnsafeMutablePointer<JACKRealtimeState>, sampleTime: Int64, frames: Int, rate: Int) {
    guard let renderer = state.pointee.renderer else { return }
    collectXrunCallbacks(state)
    if state.pointee.pendingXruns > 0 && state.pointee.cycleIndex - state.pointee.pendingXrunCycle >= xrunMatchCycles {
        // A late client rather than a skipped clock: one xrun (JACK notifies several for one late
        // cycle), on the first cycle that saw a callback, with no frames skipped and the largest
        // delay JACK gave.
        var delay: Int64 = 0
        while state.pointee.pendingXruns > 0 {
            state.pointee.pendingXruns -= 1
            let slot = (state.pointee.xrunsSeen - state.pointee.pendingXruns - 1) % JACKRealtimeState.xrunRingSize
            delay = max(delay, Int64(state.pointee.xrunDelays[max(0, slot)].load(ordering: .relaxed)))
        }
        renderer.reportDiscontinuity(.xrun, sampleTime: state.pointee.pendingXrunSampleTime, length: 0, detail: delay)
    }
    if state.pointee.cycleIndex > 0 && frames != state.pointee.lastReportedPeriod {
        renderer.reportDiscontinuity(.bufferSizeChange, sampleTime: sampleTime, length: 0, detail: Int64(frames))
    }
    state.pointee.lastReportedPeriod = frames
    // The rate as JACK has it for this cycle (a plain read of the client's shared state), so no
    // cycle at a new rate renders before the engine has stopped what was prepared for the old.
    if rate > 0 && rate != state.pointee.seenSampleRate {
        state.pointee.seenSampleRate = rate
        state.pointee.sampleRate.store(rate, ordering: .releasing)
        renderer.reportSampleRateChange(sampleTime: sampleTime, rate: rate)
    }
    let wheel = state.pointee.freewheel.exchange(0, ordering: .acquiringAndReleasing)
    if wheel == 1 {
        state.pointee.freewheelStart = sampleTime
        renderer.reportDiscontinuity(.freewheel, sampleTime: sampleTime, length: 0, detail: 1)
    } else if wheel == 2 {
        let length = state.pointee.freewheelStart >= 0 ? sampleTime - state.pointee.freewheelStart : 0
        state.pointee.freewheelStart = -1
        renderer.reportDiscontinuity(.freewheel, sampleTime: sampleTime, length: length, detail: 0)
    }
}

/// Records an xrun (JACK's notification thread; no JACK calls but the delay read). The process
/// thread reports it at its next cycle.
let jackXrunCallback: JackXRunCallback = { argument in
    guard let argument else { return 0 }
    let state = argument.assumingMemoryBound(to: JACKRealtimeState.self)
    let index = state.pointee.xrunWrite.load(ordering: .acquiring)
    let slot = index % JACKRealtimeState.xrunRingSize
    state.pointee.xrunDelays[slot].store(UInt32(max(0, min(Float(UInt32.max), jack_get_xrun_delayed_usecs(state.pointee.client)))), ordering: .relaxed)
    state.pointee.xrunReady[slot].store(index, ordering: .releasing)
    state.pointee.xrunWrite.store(index + 1, ordering: .releasing)
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
    state.pointee.monitorWake.signal()
}
