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

/// How many cycles an xrun callback waits for the clock skip it caused before it is reported on
/// its own (JACK delivers the callback on another thread, before or after the skipped cycle).
let xrunMatchCycles = 4

// The functions below read the state's constants: in a debug build, a realtime-checked function
// may not call another file's accessors.

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
