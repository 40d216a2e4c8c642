import CJack
import Dispatch
import Lockstep
import Synchronization

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
