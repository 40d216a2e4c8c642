import CJack
import Lockstep
import Synchronization

// The process thread's clock (device sample time from JACK's frame time, xruns matched to
// clock skips) and what JACK's notification threads record for it.

/// The xrun callbacks' ring: how many the process thread may have yet to collect. (A constant
/// of this file: the realtime checks see only what the file they check holds.)
let xrunRingSize = 64

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
        let slot = (state.pointee.xrunsSeen - state.pointee.pendingXruns - 1) % xrunRingSize
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
        let slot = index % xrunRingSize
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
            let slot = (state.pointee.xrunsSeen - state.pointee.pendingXruns - 1) % xrunRingSize
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
    let slot = index % xrunRingSize
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
