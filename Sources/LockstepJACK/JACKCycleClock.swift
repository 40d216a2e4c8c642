import CJack
import Dispatch
import Lockstep
import Synchronization

// What the process thread works out each cycle besides the mix: the device clock's advance, the
// latency changes the monitor published, and the cycle's discontinuities (xruns, clock jumps).

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
