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
    #if LOCKSTEP_REALTIME_CHECKS
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
        captureInputs(input, frames: frames, t0: sampleTime, mix: false)

        if let lanes {
            let used = lanes.pointee.usedSlots
            let chunks = (used + lanes.pointee.queuesPerChunk - 1) / lanes.pointee.queuesPerChunk
            if chunks > 1 {
                renderShared(lanes, chunks: chunks, frames: frames, t0: sampleTime, output: output)
            } else {
                renderSlots(0, used, frames: frames, t0: sampleTime, output: output)
            }
        } else {
            renderSlots(0, maximumQueues, frames: frames, t0: sampleTime, output: output)
        }

        captureInputs(output, frames: frames, t0: sampleTime, mix: true)
        if shared.pointee.masterMeteringEnabled.load(ordering: .relaxed) {
            shared.pointee.masterMeter.accumulateMaster(output, channels: channelCount, frames: frames, at: sampleTime)
        }
        shared.pointee.renderedCycles.wrappingAdd(1, ordering: .relaxed)
        shared.pointee.nextSampleTime.store(sampleTime &+ Int64(requested), ordering: .releasing)
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
                if let lanes { lanes.pointee.usedSlots = max(lanes.pointee.usedSlots, Int(message.slot) + 1) }
            case .setDirectOutputs:
                directOutputs?[Int(message.slot)] =
                    UnsafeMutablePointer<UnsafeMutablePointer<Float>?>(bitPattern: Int(message.time))
            case .addInputQueue:
                inputSlots[Int(message.slot)] = UnsafeMutablePointer<InputRenderState>(bitPattern: Int(message.value))
            }
        }
    }

    /// Reports a device-level discontinuity (xrun, rate change, …) from the render thread.
    #if LOCKSTEP_REALTIME_CHECKS
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
    #if LOCKSTEP_REALTIME_CHECKS
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

    // MARK: - One queue

    @inline(__always)
    func renderQueue(_ q: UnsafeMutablePointer<QueueRenderState>, frames n: Int, t0: Int64,
                     output: UnsafePointer<UnsafeMutablePointer<Float>>) {
        applyCommands(q, t0: t0)
        if q.pointee.removed { return }
        let skipped = q.pointee.renderedUntil >= 0 ? t0 - q.pointee.renderedUntil : 0
        q.pointee.renderedUntil = t0 + Int64(n)
        if skipped > 0 && q.pointee.runState == .running && !q.pointee.playsLateInFull.load(ordering: .relaxed) {
            // The device's clock skipped frames (an xrun, reported by the device): the queue
            // skips as much of its audio, so it plays on the timeline's sample as before and
            // every queue stays where the timeline puts it. (Under `playInFull` it slides, as
            // Apple's queues do.)
            q.pointee.queueTime += skipped
            q.pointee.skippedFrames.wrappingAdd(skipped, ordering: .relaxed)
        }
        if q.pointee.invalidatedByRate.load(ordering: .relaxed) != 0 {
            // Prepared for another rate: it never plays again (the user side refuses starts).
            if q.pointee.runState != .stopped { stop(q, at: t0) }
            publishClock(q, deviceTime: t0 + Int64(n))
            return
        }
        updateGainTarget(q)

        var f = 0
        if q.pointee.runState == .scheduled {
            let startAt = q.pointee.startAt
            if startAt >= t0 + Int64(n) { publishClock(q, deviceTime: t0 + Int64(n)); return }
            f = Int(max(0, startAt - t0))
            q.pointee.runState = .running
            q.pointee.startDeviceTime = t0 + Int64(f)
            // Queue time at the first rendered frame: the requested offset, plus — for a start
            // that must stay on the timeline (group starts) but arrived late — the frames missed.
            q.pointee.queueTime = q.pointee.startQueueTime
                + (q.pointee.alignLateStart && startAt < t0 ? t0 - startAt : 0)
            emit(RenderEvent(kind: .started, slot: q.pointee.slot, segment: nil,
                             sampleTime: t0 + Int64(f), value: 0, detail: 0))
        }

        while f < n && q.pointee.runState == .running {
            if q.pointee.current == nil { q.pointee.current = popSegment(q) }
            guard let seg = q.pointee.current else {
                if q.pointee.drainThenStop {
                    stop(q, at: t0 + Int64(f))
                    break
                }
                if q.pointee.starvedSince < 0 && !q.pointee.awaitingAfterReset {
                    q.pointee.starvedSince = q.pointee.queueTime
                    q.pointee.starvedDeviceTime = t0 + Int64(f)
                    q.pointee.discontinuityCount.wrappingAdd(1, ordering: .relaxed)
                }
                meterSilence(q, frames: n - f, at: t0 + Int64(f))
                q.pointee.queueTime += Int64(n - f)
                f = n
                break
            }
            if !seg.pointee.started && seg.pointee.start == Segment.follow {
                seg.pointee.start = q.pointee.awaitingAfterReset
                    ? max(q.pointee.lastEnd, q.pointee.queueTime) : q.pointee.lastEnd
            }
            q.pointee.awaitingAfterReset = false
            var segStart = seg.pointee.start
            if q.pointee.starvedSince >= 0 {
                // Silence ran from `starvedSince` to now; the part from when this segment was due
                // (its start, if later) to now was missing audio: that is the underrun.
                let due = max(segStart, q.pointee.starvedSince)
                let length = q.pointee.queueTime - due
                if length > 0 {
                    emit(RenderEvent(kind: .underrun, slot: q.pointee.slot, segment: nil,
                                     sampleTime: q.pointee.starvedDeviceTime + (due - q.pointee.starvedSince),
                                     value: length, detail: 0))
                }
                q.pointee.starvedSince = -1
            }
            if !seg.pointee.started && segStart < q.pointee.queueTime
                && q.pointee.playsLateInFull.load(ordering: .relaxed) {
                // Late (after an underrun, reported above): play it in full from now; the
                // queue's timeline slides by the lateness.
                segStart = q.pointee.queueTime
                seg.pointee.start = segStart
            }
            let queueTime = q.pointee.queueTime
            if queueTime < segStart {
                let k = Int(min(Int64(n - f), segStart - queueTime))
                meterSilence(q, frames: k, at: t0 + Int64(f))
                q.pointee.queueTime += Int64(k)
                f += k
                continue
            }
            let position = Int(queueTime - segStart)
            let count = seg.pointee.frameCount
            if position >= count {
                finishSegment(q, seg, t0: t0 + Int64(f))
                continue
            }
            if !seg.pointee.started {
                seg.pointee.started = true
                seg.pointee.resolvedStart = segStart
                let frames = seg.pointee.rampFrames
                if frames >= 0 {
                    q.pointee.activeRampFrames = frames
                    q.pointee.effectiveRampFrames.store(frames, ordering: .relaxed)
                }
                let pan = seg.pointee.panGains
                if pan != PanLaw.none {
                    beginPanRamp(q, to: pan)
                    q.pointee.effectivePanBits.store(seg.pointee.pan.bitPattern, ordering: .relaxed)
                }
                let v = seg.pointee.volume
                if !v.isNaN {
                    q.pointee.volume = v
                    q.pointee.effectiveVolumeBits.store(v.bitPattern, ordering: .relaxed)
                    let target = v * Float(bitPattern: q.pointee.mixerGainBits.load(ordering: .relaxed))
                    beginRamp(q, to: target)
                }
            }
            let k = min(n - f, count - position)
            let rampBefore = q.pointee.rampRemaining
            let gainBefore = q.pointee.gain
            mix(q, seg, from: position, frames: k, into: output, at: f, deviceTime: t0 + Int64(f))
            q.pointee.prefetchHint = UnsafeRawPointer(seg.pointee.samples + (position + k) * seg.pointee.channelCount)
            q.pointee.prefetchBytes = (count - position - k) * seg.pointee.channelCount * MemoryLayout<Float>.size
            q.pointee.prefetchSegment = seg
            if let direct = directOutputs?[Int(q.pointee.slot)] {
                mixDirect(q, seg, from: position, frames: k, into: direct, at: f,
                          ramped: rampBefore > 0, gain: gainBefore)
            }
            q.pointee.queueTime += Int64(k)
            f += k
            if position + k == count { finishSegment(q, seg, t0: t0 + Int64(f)) }
        }
        publishClock(q, deviceTime: t0 + Int64(n))
    }

    @inline(__always)
    func popSegment(_ q: UnsafeMutablePointer<QueueRenderState>) -> UnsafeMutablePointer<Segment>? {
        if q.pointee.fifoCount == 0 { return nil }
        let index = q.pointee.fifoHead
        let seg = q.pointee.fifo[index]
        q.pointee.fifo[index] = nil
        q.pointee.fifoHead = (index + 1) & q.pointee.fifoMask
        q.pointee.fifoCount -= 1
        return seg
    }

    @inline(__always)
    func finishSegment(_ q: UnsafeMutablePointer<QueueRenderState>, _ seg: UnsafeMutablePointer<Segment>,
                       t0: Int64) {
        q.pointee.lastEnd = seg.pointee.start + Int64(seg.pointee.frameCount)
        q.pointee.current = nil
        q.pointee.prefetchSegment = nil
        emit(RenderEvent(kind: .bufferDone, slot: q.pointee.slot, segment: seg,
                         sampleTime: t0, value: 0, detail: 0))
    }

    /// Returns every pending segment through `bufferDone` events, oldest first.
    @inline(__always)
    func returnAllSegments(_ q: UnsafeMutablePointer<QueueRenderState>, sampleTime: Int64, notify: Bool) {
        q.pointee.prefetchSegment = nil
        if let seg = q.pointee.current {
            q.pointee.current = nil
            if notify { emit(RenderEvent(kind: .bufferDone, slot: q.pointee.slot, segment: seg,
                                         sampleTime: sampleTime, value: 0, detail: 0)) }
        }
        while let seg = popSegment(q) {
            if notify { emit(RenderEvent(kind: .bufferDone, slot: q.pointee.slot, segment: seg,
                                         sampleTime: sampleTime, value: 0, detail: 0)) }
        }
    }

    /// Cuts the queue's audio at queue time `time`: the part of the current or a pending segment
    /// from there on is dropped, segments that start there or later come back unplayed (oldest
    /// first), and segments enqueued afterwards without a start time follow from `time`. Audio
    /// already played cannot be cut: a `time` the queue has passed cuts where it is.
    @inline(__always)
    func truncate(_ q: UnsafeMutablePointer<QueueRenderState>, at time: Int64, t0: Int64) {
        let playing = q.pointee.runState == .running || q.pointee.runState == .paused
        let cut = playing ? max(time, q.pointee.queueTime) : time
        let followFrom = q.pointee.awaitingAfterReset ? max(q.pointee.lastEnd, q.pointee.queueTime) : q.pointee.lastEnd
        var end = followFrom
        if let seg = q.pointee.current {
            if !seg.pointee.started && seg.pointee.start == Segment.follow { seg.pointee.start = followFrom }
            let start = seg.pointee.start
            if start >= cut && !seg.pointee.started {
                q.pointee.current = nil
                q.pointee.prefetchSegment = nil
                emit(RenderEvent(kind: .bufferDone, slot: q.pointee.slot, segment: seg, sampleTime: t0, value: 0, detail: 0))
            } else {
                cutSegment(seg, start: start, at: cut)
                end = start + Int64(seg.pointee.frameCount)
                if q.pointee.prefetchSegment == seg { q.pointee.prefetchSegment = nil }
            }
        }
        var kept = 0
        while kept < q.pointee.fifoCount {
            let seg = q.pointee.fifo[(q.pointee.fifoHead + kept) & q.pointee.fifoMask]!
            let start = seg.pointee.start == Segment.follow ? end : seg.pointee.start
            if start >= cut { break }
            cutSegment(seg, start: start, at: cut)
            end = start + Int64(seg.pointee.frameCount)
            kept += 1
        }
        var index = kept
        while index < q.pointee.fifoCount {
            let slot = (q.pointee.fifoHead + index) & q.pointee.fifoMask
            if let seg = q.pointee.fifo[slot] {
                q.pointee.fifo[slot] = nil
                emit(RenderEvent(kind: .bufferDone, slot: q.pointee.slot, segment: seg, sampleTime: t0, value: 0, detail: 0))
            }
            index += 1
        }
        q.pointee.fifoCount = kept
        if q.pointee.current == nil && kept == 0 {
            // Nothing left before the cut: what follows starts at `time` (a late cut stays on
            // the timeline: the render loop skips the part already passed).
            q.pointee.lastEnd = time
            q.pointee.awaitingAfterReset = false
        }
    }

    /// Shortens `seg` (starting at queue time `start`) so that it ends at `cut` at the latest.
    @inline(__always)
    func cutSegment(_ seg: UnsafeMutablePointer<Segment>, start: Int64, at cut: Int64) {
        let count = Int64(seg.pointee.frameCount)
        guard start + count > cut else { return }
        let removed = Int(start + count - max(cut, start))
        seg.pointee.frameCount -= removed
        seg.pointee.truncatedFrames += removed
    }

    @inline(__always)
    func endStarvation(_ q: UnsafeMutablePointer<QueueRenderState>) {
        if q.pointee.starvedSince >= 0 {
            let length = q.pointee.queueTime - q.pointee.starvedSince
            if length > 0 {
                emit(RenderEvent(kind: .underrun, slot: q.pointee.slot, segment: nil,
                                 sampleTime: q.pointee.starvedDeviceTime, value: length, detail: 0))
            }
            q.pointee.starvedSince = -1
        }
    }

    @inline(__always)
    func stop(_ q: UnsafeMutablePointer<QueueRenderState>, at sampleTime: Int64) {
        let wasActive = q.pointee.runState == .running || q.pointee.runState == .paused
        endStarvation(q)
        returnAllSegments(q, sampleTime: sampleTime, notify: !q.pointee.disposeAfterStop)
        q.pointee.runState = .stopped
        q.pointee.queueTime = 0
        q.pointee.lastEnd = 0
        q.pointee.drainThenStop = false
        q.pointee.rampRemaining = 0
        q.pointee.gain = q.pointee.gainTarget
        q.pointee.meter.clear()
        if wasActive {
            emit(RenderEvent(kind: .stopped, slot: q.pointee.slot, segment: nil,
                             sampleTime: sampleTime, value: 0, detail: 0))
        }
        if q.pointee.disposeAfterStop { q.pointee.removed = true }
    }

    @inline(__always)
    func applyCommands(_ q: UnsafeMutablePointer<QueueRenderState>, t0: Int64) {
        while let message = q.pointee.commands.pop() {
            guard let command = QueueCommand(message) else { continue }
            switch command.kind {
            case .enqueue:
                guard let seg = command.segment else { continue }
                let index = (q.pointee.fifoHead + q.pointee.fifoCount) & q.pointee.fifoMask
                q.pointee.fifo[index] = seg
                q.pointee.fifoCount += 1
            case .start:
                switch q.pointee.runState {
                case .stopped:
                    q.pointee.runState = .scheduled
                    q.pointee.startAt = command.time < 0 ? t0 : command.time
                    q.pointee.startQueueTime = message.value
                    q.pointee.alignLateStart = message.detail & 1 != 0
                    q.pointee.queueTime = 0
                    q.pointee.lastEnd = 0
                    q.pointee.awaitingAfterReset = false
                case .paused:
                    q.pointee.runState = .running
                    emit(RenderEvent(kind: .started, slot: q.pointee.slot, segment: nil,
                                     sampleTime: t0, value: 1, detail: 0))
                case .scheduled, .running:
                    break
                }
            case .pause:
                if q.pointee.runState == .running {
                    q.pointee.runState = .paused
                    emit(RenderEvent(kind: .paused, slot: q.pointee.slot, segment: nil,
                                     sampleTime: t0, value: 0, detail: 0))
                }
            case .stopNow:
                stop(q, at: t0)
            case .stopWhenDrained:
                // On a queue that hasn't started yet this takes effect once it runs.
                q.pointee.drainThenStop = true
            case .reset:
                endStarvation(q)
                returnAllSegments(q, sampleTime: t0, notify: true)
                q.pointee.lastEnd = q.pointee.queueTime
                q.pointee.drainThenStop = false
                q.pointee.awaitingAfterReset = true
            case .truncate:
                truncate(q, at: command.time, t0: t0)
            case .disposeNow:
                returnAllSegments(q, sampleTime: t0, notify: false)
                q.pointee.runState = .stopped
                q.pointee.removed = true
                return
            case .disposeWhenDrained:
                q.pointee.disposeAfterStop = true
                if q.pointee.runState == .stopped {
                    q.pointee.removed = true
                    return
                }
                q.pointee.drainThenStop = true
            }
        }
    }

    @inline(__always)
    func updateGainTarget(_ q: UnsafeMutablePointer<QueueRenderState>) {
        let rampGeneration = q.pointee.rampGeneration.load(ordering: .acquiring)
        if rampGeneration != q.pointee.seenRampGeneration {
            q.pointee.seenRampGeneration = rampGeneration
            q.pointee.activeRampFrames = q.pointee.userRampFrames.load(ordering: .relaxed)
        }
        let panGeneration = q.pointee.panGeneration.load(ordering: .acquiring)
        if panGeneration != q.pointee.seenPanGeneration {
            q.pointee.seenPanGeneration = panGeneration
            let gains = q.pointee.userPanGains.load(ordering: .relaxed)
            if q.pointee.runState == .running { beginPanRamp(q, to: gains) } else {
                let left = Float(bitPattern: UInt32(truncatingIfNeeded: gains))
                let right = Float(bitPattern: UInt32(truncatingIfNeeded: gains >> 32))
                q.pointee.panLeft = left
                q.pointee.panRight = right
                q.pointee.panTargetLeft = left
                q.pointee.panTargetRight = right
                q.pointee.panRemaining = 0
            }
        }
        let generation = q.pointee.volumeGeneration.load(ordering: .acquiring)
        if generation != q.pointee.seenVolumeGeneration {
            q.pointee.seenVolumeGeneration = generation
            let v = Float(bitPattern: q.pointee.userVolumeBits.load(ordering: .relaxed))
            q.pointee.volume = v
            q.pointee.effectiveVolumeBits.store(v.bitPattern, ordering: .relaxed)
        }
        let target = q.pointee.volume * Float(bitPattern: q.pointee.mixerGainBits.load(ordering: .relaxed))
        if target != q.pointee.gainTarget {
            if q.pointee.runState == .running { beginRamp(q, to: target) } else {
                q.pointee.gainTarget = target
                q.pointee.gain = target
                q.pointee.rampRemaining = 0
            }
        }
    }

    /// The length of the queue's gain and pan ramps: its Volume ramp time, or the engine's 5 ms.
    @inline(__always)
    func rampLength(_ q: UnsafeMutablePointer<QueueRenderState>) -> Int {
        let frames = q.pointee.activeRampFrames
        return max(1, frames > 0 ? frames : rampFrames)
    }

    /// Starts ramping the pan gains to `packed` (``PanLaw/packed(_:)``).
    @inline(__always)
    func beginPanRamp(_ q: UnsafeMutablePointer<QueueRenderState>, to packed: UInt64) {
        let left = Float(bitPattern: UInt32(truncatingIfNeeded: packed))
        let right = Float(bitPattern: UInt32(truncatingIfNeeded: packed >> 32))
        let steps = rampLength(q)
        q.pointee.panTargetLeft = left
        q.pointee.panTargetRight = right
        q.pointee.panStepLeft = (left - q.pointee.panLeft) / Float(steps)
        q.pointee.panStepRight = (right - q.pointee.panRight) / Float(steps)
        q.pointee.panRemaining = steps
    }

    @inline(__always)
    func beginRamp(_ q: UnsafeMutablePointer<QueueRenderState>, to target: Float) {
        q.pointee.gainTarget = target
        let steps = rampLength(q)
        q.pointee.rampStep = (target - q.pointee.gain) / Float(steps)
        q.pointee.rampRemaining = steps
    }

    /// Mixes `frames` frames of `seg` starting at `position` into the output at offset `at`,
    /// applying the gain ramp and channel map, and meters the queue.
    @inline(__always)
    func mix(_ q: UnsafeMutablePointer<QueueRenderState>, _ seg: UnsafeMutablePointer<Segment>,
             from position: Int, frames: Int, into output: UnsafePointer<UnsafeMutablePointer<Float>>,
             at offset: Int, deviceTime: Int64) {
        let qc = seg.pointee.channelCount
        let source = UnsafePointer(seg.pointee.samples + position * qc)
        let metering = q.pointee.meteringEnabled.load(ordering: .relaxed)
        let toMaster = !q.pointee.excludedFromMaster.load(ordering: .relaxed)

        // Pan applies to mono and stereo queues on a device of two or more channels.
        let panned = qc <= 2 && channelCount >= 2
            && (q.pointee.panRemaining > 0 || q.pointee.panLeft != 1 || q.pointee.panRight != 1)
        if q.pointee.rampRemaining == 0 && !panned {
            // Steady gain: one scalar for the whole chunk.
            let g = q.pointee.gain
            if qc == 2 && channelCount >= 2 && g != 0 && toMaster && metering {
                mixAndMeterStereo(q, source, frames: frames, gain: g, into: output, at: offset, deviceTime: deviceTime)
                return
            }
            if g != 0 && toMaster { mixSteady(source, channels: qc, frames: frames, gain: g, into: output, at: offset) }
            if metering { meterSteady(q, source, channels: qc, frames: frames, gain: g, at: deviceTime) }
            return
        }

        // Ramping (or panned): per-frame gains for this chunk.
        var gain = q.pointee.gain
        var remaining = q.pointee.rampRemaining
        let step = q.pointee.rampStep
        for i in 0..<frames {
            if remaining > 0 {
                remaining -= 1
                gain = remaining == 0 ? q.pointee.gainTarget : gain + step
            }
            gainScratch[i] = gain
        }
        q.pointee.gain = gain
        q.pointee.rampRemaining = remaining

        if panned {
            mixPanned(q, source, channels: qc, frames: frames, into: toMaster ? output : nil, at: offset)
        }
        let targets = toMaster && !panned ? (qc == 1 ? min(2, channelCount) : min(qc, channelCount)) : 0
        for c in 0..<targets {
            let out = output[c] + offset
            var p = source + (qc == 1 ? 0 : c)
            for i in 0..<frames {
                out[i] += p.pointee * gainScratch[i]
                p += qc
            }
        }
        if metering {
            for c in 0..<qc {
                var sum: Float = 0
                var peak = q.pointee.meter.peaks[c]
                var p = source + c
                for i in 0..<frames {
                    let v = p.pointee * gainScratch[i]
                    sum += v * v
                    let a = abs(v)
                    if a > peak { peak = a }
                    p += qc
                }
                q.pointee.meter.sumSquares[c] += sum
                q.pointee.meter.peaks[c] = peak
            }
            q.pointee.meter.finishPlanar(frames: frames, at: deviceTime)
        }
    }

    /// Adds a mono or stereo chunk to outputs 1 and 2 with the per-frame gains in `gainScratch`
    /// and the pan gains (ramping them); with no `output` it only advances the pan ramp.
    @inline(__always)
    func mixPanned(_ q: UnsafeMutablePointer<QueueRenderState>, _ source: UnsafePointer<Float>, channels qc: Int,
                   frames: Int, into output: UnsafePointer<UnsafeMutablePointer<Float>>?, at offset: Int) {
        var left = q.pointee.panLeft
        var right = q.pointee.panRight
        var remaining = q.pointee.panRemaining
        let stepLeft = q.pointee.panStepLeft
        let stepRight = q.pointee.panStepRight
        if let output {
            let out0 = output[0] + offset
            let out1 = output[1] + offset
            for i in 0..<frames {
                if remaining > 0 {
                    remaining -= 1
                    left = remaining == 0 ? q.pointee.panTargetLeft : left + stepLeft
                    right = remaining == 0 ? q.pointee.panTargetRight : right + stepRight
                }
                let g = gainScratch[i]
                if qc == 1 {
                    let v = source[i] * g
                    out0[i] += v * left
                    out1[i] += v * right
                } else {
                    out0[i] += source[2 * i] * g * left
                    out1[i] += source[2 * i + 1] * g * right
                }
            }
        } else if remaining > 0 {
            let n = min(frames, remaining)
            remaining -= n
            left = remaining == 0 ? q.pointee.panTargetLeft : left + stepLeft * Float(n)
            right = remaining == 0 ? q.pointee.panTargetRight : right + stepRight * Float(n)
        }
        q.pointee.panLeft = left
        q.pointee.panRight = right
        q.pointee.panRemaining = remaining
    }

    /// Adds a chunk to the queue's own (direct) outputs: channel i to output i, with the same
    /// gains the master mix used (`gainScratch` still holds a ramp's per-frame gains).
    @inline(__always)
    func mixDirect(_ q: UnsafeMutablePointer<QueueRenderState>, _ seg: UnsafeMutablePointer<Segment>,
                   from position: Int, frames: Int, into direct: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                   at offset: Int, ramped: Bool, gain: Float) {
        let qc = seg.pointee.channelCount
        let source = seg.pointee.samples + position * qc
        for c in 0..<qc {
            guard let out = direct[c] else { continue }
            var p = source + c
            if ramped {
                for i in 0..<frames {
                    out[offset + i] += p.pointee * gainScratch[i]
                    p += qc
                }
            } else {
                for i in 0..<frames {
                    out[offset + i] += p.pointee * gain
                    p += qc
                }
            }
        }
    }

    /// Adds `frames` frames of interleaved `source` × `gain` into the planar output, mapping
    /// channels (mono to the first two, otherwise by index).
    @inline(__always)
    func mixSteady(_ source: UnsafePointer<Float>, channels qc: Int, frames: Int, gain g: Float,
                   into output: UnsafePointer<UnsafeMutablePointer<Float>>, at offset: Int) {
        if qc == 1 {
            let out0 = output[0] + offset
            if channelCount >= 2 {
                let out1 = output[1] + offset
                for i in 0..<frames {
                    let v = source[i] * g
                    out0[i] += v
                    out1[i] += v
                }
            } else {
                for i in 0..<frames { out0[i] += source[i] * g }
            }
        } else if qc == 2 && channelCount >= 2 {
            // Four frames at a time: the left and right halves of eight interleaved samples.
            let raw = UnsafeRawPointer(source)
            let left = UnsafeMutableRawPointer(output[0] + offset)
            let right = UnsafeMutableRawPointer(output[1] + offset)
            var i = 0
            while i + 4 <= frames {
                let v = raw.loadUnaligned(fromByteOffset: 8 * i, as: SIMD8<Float>.self)
                left.storeBytes(of: left.loadUnaligned(fromByteOffset: 4 * i, as: SIMD4<Float>.self) + v.evenHalf * g,
                                toByteOffset: 4 * i, as: SIMD4<Float>.self)
                right.storeBytes(of: right.loadUnaligned(fromByteOffset: 4 * i, as: SIMD4<Float>.self) + v.oddHalf * g,
                                 toByteOffset: 4 * i, as: SIMD4<Float>.self)
                i += 4
            }
            let out0 = output[0] + offset
            let out1 = output[1] + offset
            while i < frames {
                out0[i] += source[2 * i] * g
                out1[i] += source[2 * i + 1] * g
                i += 1
            }
        } else {
            for c in 0..<min(qc, channelCount) {
                let out = output[c] + offset
                var p = source + c
                for i in 0..<frames {
                    out[i] += p.pointee * g
                    p += qc
                }
            }
        }
    }

    /// Mixes and meters a steady-gain stereo chunk in one pass over its samples (the common case
    /// at thousands of layers): four frames at a time, the left and right halves added to outputs
    /// 1 and 2, squares summed and magnitudes maxed lane by lane (even lanes left, odd right).
    @inline(__always)
    func mixAndMeterStereo(_ q: UnsafeMutablePointer<QueueRenderState>, _ source: UnsafePointer<Float>, frames: Int,
                           gain g: Float, into output: UnsafePointer<UnsafeMutablePointer<Float>>, at offset: Int,
                           deviceTime: Int64) {
        let raw = UnsafeRawPointer(source)
        let out0 = UnsafeMutableRawPointer(output[0] + offset)
        let out1 = UnsafeMutableRawPointer(output[1] + offset)
        var squares = SIMD8<Float>(), peaks = SIMD8<Float>()
        var i = 0
        while i + 4 <= frames {
            let v = raw.loadUnaligned(fromByteOffset: 8 * i, as: SIMD8<Float>.self)
            let left = out0.loadUnaligned(fromByteOffset: 4 * i, as: SIMD4<Float>.self) + v.evenHalf * g
            let right = out1.loadUnaligned(fromByteOffset: 4 * i, as: SIMD4<Float>.self) + v.oddHalf * g
            out0.storeBytes(of: left, toByteOffset: 4 * i, as: SIMD4<Float>.self)
            out1.storeBytes(of: right, toByteOffset: 4 * i, as: SIMD4<Float>.self)
            squares += v * v
            let magnitude = v.replacing(with: -v, where: v .< 0)
            peaks.replace(with: magnitude, where: magnitude .> peaks)
            i += 4
        }
        let o0 = output[0] + offset, o1 = output[1] + offset
        for k in i..<frames {
            o0[k] += source[2 * k] * g
            o1[k] += source[2 * k + 1] * g
        }
        finishStereoMeter(q, squares: squares, peaks: peaks, tail: source + 2 * i, tailFrames: frames - i,
                          frames: frames, gain: g, at: deviceTime)
    }

    /// Ends the metering of a steady-gain stereo chunk: folds the eight lanes (even left, odd
    /// right), adds the frames after the last whole group of four (`tail`), scales by the gain and
    /// adds it all to the queue's meter.
    @inline(__always)
    func finishStereoMeter(_ q: UnsafeMutablePointer<QueueRenderState>, squares: SIMD8<Float>, peaks: SIMD8<Float>,
                           tail: UnsafePointer<Float>, tailFrames: Int, frames: Int, gain g: Float, at deviceTime: Int64) {
        var s0 = squares[0] + squares[2] + squares[4] + squares[6]
        var s1 = squares[1] + squares[3] + squares[5] + squares[7]
        var p0 = max(max(peaks[0], peaks[2]), max(peaks[4], peaks[6]))
        var p1 = max(max(peaks[1], peaks[3]), max(peaks[5], peaks[7]))
        for k in 0..<tailFrames {
            let a = tail[2 * k], b = tail[2 * k + 1]
            s0 += a * a; s1 += b * b
            p0 = max(p0, abs(a)); p1 = max(p1, abs(b))
        }
        let gg = g * g, ag = abs(g)
        q.pointee.meter.sumSquares[0] += s0 * gg
        q.pointee.meter.sumSquares[1] += s1 * gg
        q.pointee.meter.peaks[0] = max(q.pointee.meter.peaks[0], p0 * ag)
        q.pointee.meter.peaks[1] = max(q.pointee.meter.peaks[1], p1 * ag)
        q.pointee.meter.finishPlanar(frames: frames, at: deviceTime)
    }

    /// Meters a steady-gain chunk. Independent accumulators per channel (and two per channel for
    /// mono and stereo) keep the additions from waiting on each other.
    @inline(__always)
    func meterSteady(_ q: UnsafeMutablePointer<QueueRenderState>, _ source: UnsafePointer<Float>, channels qc: Int,
                     frames: Int, gain g: Float, at deviceTime: Int64) {
        if qc == 2 {
            // Eight interleaved samples at a time (even lanes left, odd lanes right): squares
            // summed and magnitudes maxed lane by lane, which the compiler keeps in vector registers.
            let raw = UnsafeRawPointer(source)
            let count = 2 * frames
            var squares = SIMD8<Float>(), peaks = SIMD8<Float>()
            var k = 0
            while k + 8 <= count {
                let v = raw.loadUnaligned(fromByteOffset: 4 * k, as: SIMD8<Float>.self)
                squares += v * v
                let magnitude = v.replacing(with: -v, where: v .< 0)
                peaks.replace(with: magnitude, where: magnitude .> peaks)
                k += 8
            }
            finishStereoMeter(q, squares: squares, peaks: peaks, tail: source + k, tailFrames: (count - k) / 2,
                              frames: frames, gain: g, at: deviceTime)
            return
        } else {
            for c in 0..<qc {
                var sumA: Float = 0, sumB: Float = 0
                var high: Float = 0, low: Float = 0
                var p = source + c
                var i = 0
                while i + 1 < frames {
                    let a = p.pointee, b = (p + qc).pointee
                    sumA += a * a; sumB += b * b
                    high = max(high, max(a, b)); low = min(low, min(a, b))
                    p += 2 * qc
                    i += 2
                }
                if i < frames {
                    let a = p.pointee
                    sumA += a * a
                    high = max(high, a); low = min(low, a)
                }
                q.pointee.meter.sumSquares[c] += (sumA + sumB) * g * g
                q.pointee.meter.peaks[c] = max(q.pointee.meter.peaks[c], max(high, -low) * abs(g))
            }
        }
        q.pointee.meter.finishPlanar(frames: frames, at: deviceTime)
    }

    /// Counts silent frames into the meter window so levels fall to zero in gaps.
    @inline(__always)
    func meterSilence(_ q: UnsafeMutablePointer<QueueRenderState>, frames: Int, at deviceTime: Int64) {
        if q.pointee.meteringEnabled.load(ordering: .relaxed) {
            q.pointee.meter.finishPlanar(frames: frames, at: deviceTime)
        }
    }

    @inline(__always)
    func publishClock(_ q: UnsafeMutablePointer<QueueRenderState>, deviceTime: Int64) {
        let queueTime = q.pointee.queueTime
        let runState = q.pointee.runState.rawValue
        q.pointee.clockLock.write {
            q.pointee.publishedQueueTime.store(queueTime, ordering: .relaxed)
            q.pointee.publishedDeviceTime.store(deviceTime, ordering: .relaxed)
            q.pointee.publishedRunState.store(runState, ordering: .relaxed)
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
