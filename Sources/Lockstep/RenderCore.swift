import CRealtime
import Synchronization

/// Engine-level commands to the render thread.
struct EngineCommand {
    enum Kind: UInt8 { case addQueue, setDirectOutputs, addInputQueue }
    var kind: Kind
    var slot: Int32
    var state: UnsafeMutablePointer<QueueRenderState>?
    /// For `setDirectOutputs`: the device-owned channel pointer array, or nil to remove.
    var direct: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>? = nil
    /// For `addInputQueue`: the input queue's render state.
    var input: UnsafeMutablePointer<InputRenderState>? = nil

    var message: RingMessage {
        RingMessage(kind: kind.rawValue, slot: slot, segment: nil, state: state,
                    time: Int64(Int(bitPattern: direct)), value: Int64(Int(bitPattern: input)), detail: 0)
    }
}

/// Everything the render thread touches, as plain pointers into memory allocated when the engine
/// was created. A `RenderCore` is a trivial value: copying it copies pointers, never retains.
struct RenderCore {
    let channelCount: Int
    let maximumFrames: Int
    let maximumQueues: Int
    let rampFrames: Int
    /// ``QueueRenderState/hotLines``: the lines of each state the render loop prefetches.
    let hotStateLines = QueueRenderState.hotLines

    /// Slot table of queue states (render-owned).
    let slots: UnsafeMutablePointer<UnsafeMutablePointer<QueueRenderState>?>
    let engineCommands: UnsafeMutablePointer<SPSCRing>
    let events: UnsafeMutablePointer<SPSCRing>
    /// Per-frame gain scratch, `maximumFrames` long.
    let gainScratch: UnsafeMutablePointer<Float>
    /// Render-published counters and the master meter.
    let shared: UnsafeMutablePointer<RenderShared>
    /// Per queue slot, the queue's own output buffers for this cycle (one pointer per queue
    /// channel), or nil; filled by the device before each render.
    let directOutputs: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?>?
    /// Device input channels.
    let inputChannelCount: Int
    /// The most input queues.
    let maximumInputQueues: Int
    /// Slot table of input queue states (render-owned).
    let inputSlots: UnsafeMutablePointer<UnsafeMutablePointer<InputRenderState>?>
    /// For an engine of more than ``RenderLanes/minimumEngineQueues`` queues: the chunks of 128
    /// slots a helper thread may share; nil renders every queue on the render thread.
    let lanes: UnsafeMutablePointer<RenderLanes>?

    /// Renders `frames` frames starting at device sample time `sampleTime` into `output`, one
    /// pointer per device channel (each at least `frames` long). Realtime-safe: no allocation,
    /// no locks, no waiting; reads only memory preallocated by the engine.
    ///
    /// Release builds check this with `@_noAllocation @_noLocks` (the checks need optimisation:
    /// unspecialised atomics in debug builds would fail them).
    #if LOCKSTEP_REALTIME_CHECKS && !LOCKSTEP_UNOPTIMIZED
    @_noAllocation @_noLocks
    func render(frames requested: Int, sampleTime: Int64, input: UnsafePointer<UnsafeMutablePointer<Float>>?,
                output: UnsafePointer<UnsafeMutablePointer<Float>>) {
        renderCycle(frames: requested, sampleTime: sampleTime, input: input, output: output)
    }
    #else
    func render(frames requested: Int, sampleTime: Int64, input: UnsafePointer<UnsafeMutablePointer<Float>>?,
                output: UnsafePointer<UnsafeMutablePointer<Float>>) {
        renderCycle(frames: requested, sampleTime: sampleTime, input: input, output: output)
    }
    #endif

    @inline(__always)
    func renderCycle(frames requested: Int, sampleTime: Int64, input: UnsafePointer<UnsafeMutablePointer<Float>>?,
                     output: UnsafePointer<UnsafeMutablePointer<Float>>) {
        let frames = min(requested, maximumFrames)
        for c in 0..<channelCount { output[c].update(repeating: 0, count: requested) }

        applyEngineCommands()
        let capturesDevice = captureInputs(input, frames: frames, t0: sampleTime, mix: false)

        if let lanes {
            let used = shared.pointee.usedSlots
            let chunks = (used + lanes.pointee.queuesPerChunk - 1) / lanes.pointee.queuesPerChunk
            if chunks > 1 {
                renderShared(lanes, chunks: chunks, frames: frames, t0: sampleTime, output: output)
            } else {
                renderSlots(0, used, frames: frames, t0: sampleTime, output: output)
            }
        } else {
            renderSlots(0, shared.pointee.usedSlots, frames: frames, t0: sampleTime, output: output)
        }

        let capturesMix = captureInputs(output, frames: frames, t0: sampleTime, mix: true)
        shared.pointee.hasInputQueues.store(capturesDevice || capturesMix, ordering: .relaxed)
        if shared.pointee.masterMeteringEnabled.load(ordering: .relaxed) {
            shared.pointee.masterMeter.accumulateMaster(output, channels: channelCount, frames: frames, at: sampleTime)
        }
        shared.pointee.renderedCycles.wrappingAdd(1, ordering: .relaxed)
        shared.pointee.nextSampleTime.store(sampleTime &+ Int64(requested), ordering: .releasing)
    }

    /// Whether the callback thread has work after this cycle: events in the ring, input queues
    /// to service, or a thread waiting on deliveries. Realtime-safe (atomic loads).
    @inline(__always)
    var hasDeliveries: Bool {
        events.pointee.count > 0 || shared.pointee.hasInputQueues.load(ordering: .relaxed)
            || shared.pointee.deliveryWaiters.load(ordering: .relaxed) > 0
    }

    /// Renders the output queues of slots `start..<end` into `output`, in slot order, removing
    /// the queues that were disposed of. Touches no slot outside the range (a helper thread may
    /// be rendering the next range).
    @inline(__always)
    func renderSlots(_ start: Int, _ end: Int, frames: Int, t0: Int64, output: UnsafePointer<UnsafeMutablePointer<Float>>) {
        let stateLines = hotStateLines
        // The loop prefetches ahead within the range; the first states come in now.
        for s in start..<min(start + Self.prefetchStateDistance, end) {
            if let queue = slots[s] { prefetchState(queue, stateLines: stateLines) }
        }
        for s in start..<max(start, end) {
            guard let queue = slots[s] else { continue }
            prefetchAhead(from: s, end: end, stateLines: stateLines)
            renderQueue(queue, frames: frames, t0: t0, output: output)
            if queue.pointee.removed {
                slots[s] = nil
                directOutputs?[s] = nil
                emit(RenderEvent(kind: .queueRemoved, slot: queue.pointee.slot, segment: nil,
                                 sampleTime: t0, value: 0, detail: 0))
            }
        }
    }

    /// How many queues ahead the render loop prefetches a queue's audio and segment (its state
    /// was prefetched ``prefetchStateDistance`` queues ahead, so it is in the cache by then).
    static let prefetchAudioDistance = 8
    /// How many queues ahead the render loop prefetches a queue's state block.
    static let prefetchStateDistance = 16

    /// Hides memory latency with thousands of queues: while queue `s` renders, the hot lines of
    /// the state block (``QueueRenderState/hotLines`` and the meter's sums in the line before
    /// them) of queue `s + 16` and the segment header and next audio of queue `s + 8` (whose
    /// state came in eight queues ago) are prefetched, never past `end` (the range being
    /// rendered): the state into the first-level cache, the audio (up to 32 lines) into the
    /// second, so their cache misses overlap each other and the mixing instead of stalling it one
    /// by one later. A prefetch never faults, so an address read from a state the user side is
    /// changing is harmless; the audio is only prefetched while its segment is still the queue's
    /// ``QueueRenderState/current`` (at most 2 KiB, a 256-frame stereo cycle, never past the
    /// segment's end).
    @inline(__always)
    func prefetchAhead(from s: Int, end: Int, stateLines: Int) {
        if s + Self.prefetchStateDistance < end, let far = slots[s + Self.prefetchStateDistance] {
            prefetchState(far, stateLines: stateLines)
        }
        if s + Self.prefetchAudioDistance < end, let near = slots[s + Self.prefetchAudioDistance],
           let segment = near.pointee.current {
            prefetch(UnsafeRawPointer(segment))
            if let hint = near.pointee.prefetchHint, segment == near.pointee.prefetchSegment {
                let lines = min(32, (near.pointee.prefetchBytes + 63) / 64)
                for line in 0..<lines { prefetchToSecondLevel(hint + 64 * line) }
            }
        }
    }

    /// Prefetches the hot lines of a queue's state (and the meter's sums in the line before).
    @inline(__always)
    func prefetchState(_ queue: UnsafeMutablePointer<QueueRenderState>, stateLines: Int) {
        let base = UnsafeRawPointer(queue)
        for line in 0..<stateLines { prefetch(base + 64 * line) }
        prefetch(base - 64)
    }

    /// One cache prefetch (``lockstep_prefetch``, inlined: no call, no lock, no allocation,
    /// which the realtime checks cannot see through a C function, hence the exemption).
    @inline(__always)
    func prefetch(_ address: UnsafeRawPointer) {
        _unsafePerformance { lockstep_prefetch(address) }
    }

    /// One prefetch into the second-level cache only (``lockstep_prefetch_l2``): for the bulk
    /// of a queue's next audio, read eight queues later.
    @inline(__always)
    func prefetchToSecondLevel(_ address: UnsafeRawPointer) {
        _unsafePerformance { lockstep_prefetch_l2(address) }
    }

    /// Applies every queue's pending commands and stops every queue at `sampleTime`, handing
    /// their buffers back. Only for a device that will never render again: the caller becomes
    /// the render side (the sole producer of events and consumer of commands).
    func stopEverything(at sampleTime: Int64) {
        applyEngineCommands()
        for s in 0..<maximumInputQueues {
            guard let q = inputSlots[s] else { continue }
            captureInput(q, input: nil, frames: 0, t0: sampleTime)
            if q.pointee.runState != .stopped {
                q.pointee.stopAt = sampleTime
                finishCapture(q, at: sampleTime)
            }
            if q.pointee.removed {
                inputSlots[s] = nil
                emit(RenderEvent(kind: .inputRemoved, slot: q.pointee.slot, segment: nil, sampleTime: sampleTime, value: 0, detail: 0))
            }
        }
        for s in 0..<maximumQueues {
            guard let queue = slots[s] else { continue }
            applyCommands(queue, t0: sampleTime)
            if !queue.pointee.removed { stop(queue, at: sampleTime) }
            publishClock(queue, deviceTime: sampleTime)
            if queue.pointee.removed {
                slots[s] = nil
                directOutputs?[s] = nil
                emit(RenderEvent(kind: .queueRemoved, slot: queue.pointee.slot, segment: nil,
                                 sampleTime: sampleTime, value: 0, detail: 0))
            }
        }
    }

    @inline(__always)
    func applyEngineCommands() {
        while let message = engineCommands.pointee.pop() {
            guard let kind = EngineCommand.Kind(rawValue: message.kind) else { continue }
            switch kind {
            case .addQueue:
                slots[Int(message.slot)] = message.state
                shared.pointee.usedSlots = max(shared.pointee.usedSlots, Int(message.slot) + 1)
            case .setDirectOutputs:
                directOutputs?[Int(message.slot)] =
                    UnsafeMutablePointer<UnsafeMutablePointer<Float>?>(bitPattern: Int(message.time))
            case .addInputQueue:
                inputSlots[Int(message.slot)] = UnsafeMutablePointer<InputRenderState>(bitPattern: Int(message.value))
                shared.pointee.usedInputSlots = max(shared.pointee.usedInputSlots, Int(message.slot) + 1)
            }
        }
    }

    /// Reports a device-level discontinuity (xrun, rate change, …) from the render thread.
    #if LOCKSTEP_REALTIME_CHECKS && !LOCKSTEP_UNOPTIMIZED
    @_noAllocation @_noLocks
    func reportDeviceDiscontinuity(kind: Int64, sampleTime: Int64, length: Int64, detail: Int64) {
        reportDiscontinuityBody(kind: kind, sampleTime: sampleTime, length: length, detail: detail)
    }
    #else
    func reportDeviceDiscontinuity(kind: Int64, sampleTime: Int64, length: Int64, detail: Int64) {
        reportDiscontinuityBody(kind: kind, sampleTime: sampleTime, length: length, detail: detail)
    }
    #endif

    @inline(__always)
    func reportDiscontinuityBody(kind: Int64, sampleTime: Int64, length: Int64, detail: Int64) {
        for s in 0..<maximumQueues {
            if let queue = slots[s] { queue.pointee.discontinuityCount.wrappingAdd(1, ordering: .relaxed) }
        }
        emit(RenderEvent(kind: .deviceDiscontinuity, slot: -1, segment: nil,
                         sampleTime: sampleTime, value: kind, detail: detail, length: length))
    }

    /// The device's sample rate changed at `sampleTime` (to `rate`): every output queue stops
    /// there for good — its audio was converted for the old rate and would play at the wrong
    /// pitch — and every input queue recording stops there. Render thread only, before the cycle
    /// renders; realtime-safe.
    #if LOCKSTEP_REALTIME_CHECKS && !LOCKSTEP_UNOPTIMIZED
    @_noAllocation @_noLocks
    func stopForRateChange(at sampleTime: Int64, rate: Int64) {
        stopForRateChangeBody(at: sampleTime, rate: rate)
    }
    #else
    func stopForRateChange(at sampleTime: Int64, rate: Int64) {
        stopForRateChangeBody(at: sampleTime, rate: rate)
    }
    #endif

    @inline(__always)
    func stopForRateChangeBody(at sampleTime: Int64, rate: Int64) {
        applyEngineCommands()
        shared.pointee.deviceRate.store(rate, ordering: .releasing)
        reportDiscontinuityBody(kind: Discontinuity.Kind.sampleRateChange.code, sampleTime: sampleTime, length: 0, detail: rate)
        for s in 0..<maximumQueues {
            guard let q = slots[s] else { continue }
            q.pointee.invalidatedByRate.store(max(1, rate), ordering: .releasing)
        }
        for s in 0..<maximumInputQueues {
            guard let q = inputSlots[s], q.pointee.runState != .stopped else { continue }
            q.pointee.invalidatedByRate.store(max(1, rate), ordering: .releasing)
            q.pointee.stopAt = min(q.pointee.stopAt, sampleTime)
            if q.pointee.runState == .scheduled { q.pointee.runState = .stopped }
        }
    }

    @inline(__always)
    func emit(_ event: RenderEvent) {
        if !events.pointee.push(event.message) {
            shared.pointee.droppedEvents.wrappingAdd(1, ordering: .relaxed)
        }
    }
}


/// Counters and meters the render thread publishes for the engine as a whole.
struct RenderShared: ~Copyable {
    let nextSampleTime = Atomic<Int64>(0)
    /// The device's rate as the render thread last saw it (updated on a rate change).
    let deviceRate = Atomic<Int64>(0)
    let renderedCycles = Atomic<Int>(0)
    let droppedEvents = Atomic<Int>(0)
    /// Whether the last cycle held an input queue (whose rings the callback thread services).
    let hasInputQueues = Atomic<Bool>(false)
    /// Threads waiting on deliveries (``Engine/waitUntilRendered(through:timeout:)``,
    /// ``Engine/waitForDeliveries(timeout:until:)``): each cycle wakes the callback thread
    /// while there is one.
    let deliveryWaiters = Atomic<Int>(0)
    /// One past the highest slot a queue (an input queue) was ever added to: the slots a cycle
    /// looks at. Written by the render thread only; the render helper reads `usedSlots` in the
    /// cycle the render thread published to it.
    var usedSlots = 0
    var usedInputSlots = 0
    let masterMeteringEnabled = Atomic<Bool>(false)
    var masterMeter: LevelAccumulator

    init(channelCount: Int, meterWindow: Int) {
        masterMeter = LevelAccumulator(channelCount: channelCount, window: meterWindow)
    }
}

extension LevelAccumulator {
    /// Meters planar device output.
    @inline(__always)
    mutating func accumulateMaster(_ output: UnsafePointer<UnsafeMutablePointer<Float>>, channels: Int,
                                   frames: Int, at sampleTime: Int64) {
        for c in 0..<min(channels, channelCount) {
            accumulatePlanar(channel: c, output[c], frames: frames)
        }
        finishPlanar(frames: frames, at: sampleTime)
    }
}
