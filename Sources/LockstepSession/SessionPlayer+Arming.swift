import Foundation
import Lockstep
import LockstepFiles

/// The standby cue, armed: while a live session plays, the layer of the cue a plain `go` would fire
/// holds the audio it would play were the cue fired on each of the next few cycles
/// (``OutputQueue/arm(_:startTime:)``), computed ahead on the layer's lane. A `go` of it (plain, or
/// naming it; not placed on a given sample) then only asks
/// the render thread to fire the one for the next cycle it renders: the cue starts on the first
/// frame of the cycle after the command, however late in the period it came, with nothing to
/// compute in between. The timeline is edited as for any `go` on that sample, so the audio stays
/// what an offline render of the same `go` gives.
///
/// A cue is armed when it is the playhead's and an audio cue, the session plays on a streamer, and
/// what its `go` places lies on its own layer (cues chained to it on other layers start at least one armed
/// piece later) and holds no MIDI cue within that piece. Any other control change disarms it, and
/// it is armed again afterwards.
extension SessionPlayer {
    /// The cycles ahead (beyond the next one) the standby cue is armed for: slack for a lane busy
    /// with thousands of layers (a piece is computed each cycle whatever the number).
    static let armedCycles = 12

    struct Arming {
        /// The layer and cue armed.
        var layer: Int?
        var cue: Int?
        /// Bumped by every control change: pieces computed before it are not armed.
        var generation = 0
        /// Per layer: its arming buffers not armed now, and every one of them.
        var free: [Int: [QueueBuffer]] = [:]
        /// Every arming buffer, with its layer (a buffer belongs to its layer's queue).
        var owned: [ObjectIdentifier: Int] = [:]
        /// The queue times armed.
        var armedTimes: Set<Int64> = []
        var statistics = StandbyStatistics()
    }

    /// How the plain `go`s of a run were carried out.
    public struct StandbyStatistics: Sendable, Hashable {
        /// Fired from the armed standby cue on the next cycle.
        public var armed = 0
        /// Asked of the render thread, but nothing was armed for its cycle (placed as any change).
        public var missed = 0
        /// With nothing armed (placed as any change): the cue could not be armed, or was not yet.
        public var unarmed = 0

        /// Creates statistics.
        public init(armed: Int = 0, missed: Int = 0, unarmed: Int = 0) {
            self.armed = armed
            self.missed = missed
            self.unarmed = unarmed
        }
    }

    /// How the plain `go`s so far were carried out.
    public var standbyStatistics: StandbyStatistics { state.withLock { $0.arming.statistics } }

    /// Whether `buffer` is one of the arming buffers.
    func isArmingBuffer(_ buffer: QueueBuffer) -> Bool {
        state.withLock { $0.arming.owned[ObjectIdentifier(buffer)] != nil }
    }

    /// An arming buffer came back (fired and played, passed unfired, or disarmed): free again;
    /// the standby cue is armed anew on the layer's lane.
    func armingBufferBack(layer: Int, buffer: QueueBuffer) {
        state.withLock { state in
            state.arming.free[layer, default: []].append(buffer)
        }
        scheduleArming(layer: layer)
    }

    /// Disarms the standby cue (a control change is about to alter the timeline); the next
    /// ``scheduleArming(layer:)`` arms it again on the new timeline.
    func disarm() {
        let layer = state.withLock { state -> Int? in
            state.arming.generation += 1
            state.arming.armedTimes = []
            return state.arming.layer
        }
        if let layer { try? queues[layer].disarm() }
    }

    /// Arms the standby cue on its layer's lane (live only).
    func scheduleArming(layer: Int? = nil) {
        guard let streamer else { return }
        let target = layer ?? state.withLock { state in state.playhead.map { state.timeline.cues[$0].layer } }
        guard let target else { return }
        _ = streamer.submit(lane: target, urgent: true) { [self] in arm(onLaneOf: target) }
    }

    /// The cue a plain `go` fires now, if it can be armed: its layer and index.
    static func armable(_ state: State, pieceFrames: Int64) -> (layer: Int, cue: Int)? {
        // (A main's go must reach its backup before it lands: never on the next cycle.)
        guard state.phase == .playing, state.changeLead == 0, let index = state.playhead,
              !state.timeline.cues[index].awaitsResume else { return nil }
        let cue = state.timeline.cues[index]
        // An action cue sits on its target's layer, whose refills the pieces would hold up
        // (computed first on its lane); its go lands as any change does.
        guard cue.isAudio else { return nil }
        let computed = state.filled.min() ?? 0
        // A MIDI cue going with it must be scheduled before its cycle, which the render thread
        // only chooses when it fires: such a go lands as any change does.
        for other in state.timeline.cues where other.trigger == index && other.offsetFromTrigger < pieceFrames {
            if case .midi = other.action { return nil }
        }
        for other in state.timeline.cues where other.trigger == index && other.layer != cue.layer {
            if other.offsetFromTrigger < pieceFrames { return nil }
            // A cue of the chain still sounding on another layer is cut by the go: not armed.
            if other.start != nil, other.end.map({ $0 > computed }) ?? true { return nil }
        }
        return (cue.layer, index)
    }

    /// Computes and arms the standby cue's pieces for the cycles ahead that have none, on the lane
    /// of layer `lane` (the work of one layer stays on its lane: its renderers are not shared
    /// between threads). When the standby cue has moved to a layer of another lane, the work
    /// moves there.
    func arm(onLaneOf lane: Int) {
        let period = Int64(max(1, engine.device.periodFrames))
        let pieceFrames = bufferFrames
        let next = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime)
        // What to arm, under the lock: the cue, the timeline, the queue times without a piece;
        // and the layer to disarm when the standby cue moved (its pieces must never fire).
        var stale: Int?
        let plan = state.withLock { state -> (layer: Int, cue: Int, timeline: SessionTimeline, generation: Int,
                                               times: [Int64], origin: Int64, offset: Int64)? in
            let armable = Self.armable(state, pieceFrames: Int64(pieceFrames))
            if let layer = state.arming.layer, armable?.layer != layer || armable?.cue != state.arming.cue {
                stale = layer
                state.arming.armedTimes = []
                state.arming.generation += 1
            }
            state.arming.layer = armable?.layer
            state.arming.cue = armable?.cue
            guard let (layer, cue) = armable else { return nil }
            let toQueueTime = state.originPosition - state.originDevice - state.queueOrigin
            // The cycles from the next one, or from the first after the layers start.
            let first = state.originDevice >= next ? (state.originDevice - next) / period + 1 : 0
            let times = (first...(first + Int64(Self.armedCycles))).map { next + $0 * period + toQueueTime }
                .filter { !state.arming.armedTimes.contains($0) }
            return (layer, cue, state.timeline, state.arming.generation, times, state.queueOrigin, state.loaded[cue] ?? 0)
        }
        if let stale { try? queues[stale].disarm() }
        guard let plan, !plan.times.isEmpty else { return }
        guard plan.layer == lane else {
            scheduleArming(layer: plan.layer)
            return
        }
        let queue = queues[plan.layer]
        let fade = declickFade()
        for time in plan.times {
            guard let buffer = takeArmingBuffer(layer: plan.layer, queue: queue) else { return }
            let position = time + plan.origin
            var timeline = plan.timeline
            timeline.applyActions(of: timeline.refire(plan.cue, at: position, fade: fade, offset: plan.offset))
            let renderer = armingRenderers[plan.layer]
            buffer.withFloatSamples { samples in
                renderer.render(timeline, position: position, frames: pieceFrames, into: samples.baseAddress!)
            }
            buffer.frameCount = pieceFrames
            // Armed only if no control change came meanwhile (it would have disarmed it); one
            // under way (holding the lock, maybe waiting for this lane) arms again afterwards.
            guard controlLock.try() else {
                state.withLock { state in state.arming.free[plan.layer, default: []].append(buffer) }
                return
            }
            let current = state.withLock { state -> Bool in
                guard state.arming.generation == plan.generation, state.phase == .playing else { return false }
                state.arming.armedTimes.insert(time)
                return true
            }
            var armed = false
            if current { armed = (try? queue.arm(buffer, startTime: time)) != nil }
            controlLock.unlock()
            if !armed {
                state.withLock { state in
                    state.arming.armedTimes.remove(time)
                    state.arming.free[plan.layer, default: []].append(buffer)
                }
                return
            }
        }
    }

    /// Computes the layer's next buffer after a fired piece into one of its spares (they come
    /// back to the spares once played), or into a buffer added to the layer when none is there:
    /// GOs closer together than the buffers a GO cuts take to come back (through the engine's
    /// callback thread, an ordinary one) found none among 4096 layers, and the layer underran.
    func continueAfterFire(layer: Int, run: Int) {
        let lock = layerLocks[layer]
        lock.lock()
        defer { lock.unlock() }
        let added = addedBuffers(layer: layer, toHave: 1)
        guard let (buffer, timeline, position, origin) = state.withLock({ state -> (QueueBuffer, SessionTimeline, Int64, Int64)? in
            // (An added buffer not used here is a spare from now on.)
            state.spares[layer].insert(contentsOf: added, at: 0)
            guard state.run == run, state.phase.computes, let spare = state.spares[layer].popLast() else { return nil }
            let position = state.filled[layer]
            state.filled[layer] += Int64(spare.frameCapacity)
            return (spare, state.timeline, position, state.queueOrigin)
        }) else { return }
        render(layer: layer, timeline: timeline, position: position, into: buffer)
        _ = try? queues[layer].enqueue(buffer, startTime: position - origin)
    }

    /// Buffers added to `layer`'s own so that it has `count` spares: for a GO or a change that
    /// comes before the buffers cut by the ones before it are back (in all, at most
    /// ``spareCount`` more than the layer started with).
    func addedBuffers(layer: Int, toHave count: Int) -> [QueueBuffer] {
        let short = state.withLock { count - $0.spares[layer].count }
        return short > 0 ? (0..<short).compactMap { _ in addedBuffer(layer: layer) } : []
    }

    /// A buffer added to `layer`'s own (nil once it has ``spareCount`` more than it started with).
    private func addedBuffer(layer: Int) -> QueueBuffer? {
        buffers.withLock { all -> QueueBuffer? in
            guard all[layer].count < bufferCount + 2 * Self.spareCount,
                  let buffer = try? queues[layer].allocateBuffer(frameCapacity: bufferFrames) else { return nil }
            all[layer].append(buffer)
            return buffer
        }
    }

    /// A free arming buffer of `layer` (allocated on first use; a layer keeps at most enough for
    /// its pieces and those coming back, whichever layers were armed before).
    private func takeArmingBuffer(layer: Int, queue: OutputQueue) -> QueueBuffer? {
        if let buffer = state.withLock({ state in state.arming.free[layer]?.popLast() }) { return buffer }
        let allocated = state.withLock { $0.arming.owned.values.count { $0 == layer } }
        guard allocated < 2 * (Self.armedCycles + 1) + 4, let buffer = try? queue.allocateBuffer(frameCapacity: bufferFrames) else { return nil }
        state.withLock { $0.arming.owned[ObjectIdentifier(buffer)] = layer }
        return buffer
    }

    /// A `go` of the armed standby cue (unnamed, or naming it): fired by the render thread on the
    /// next cycle; nil when nothing was armed for that cycle (the caller then places it as any
    /// change), or when `name` names another cue. With `notBefore` (a device sample), the cycle
    /// fired is the first that starts there or later.
    func goArmed(named name: String?, notBefore: Int64? = nil) -> GoResult? {
        let latest = engine.currentTime().sampleTime + 2 * Int64(max(1, engine.device.periodFrames))
        guard let (layer, cueIndex, earliest) = state.withLock({ state -> (Int, Int, Int64?)? in
            let standby = state.playhead
            if let name, standby.map({ state.timeline.cues[$0].name }) != name { return nil }
            guard let layer = state.arming.layer, let cue = state.arming.cue, state.phase == .playing,
                  cue == standby else {
                if state.phase == .playing && streamer != nil { state.arming.statistics.unarmed += 1 }
                return nil
            }
            let toQueueTime = state.originPosition - state.originDevice - state.queueOrigin
            return (layer, cue, notBefore.map { min($0, latest) + toQueueTime })
        }) else { return nil }
        let queue = queues[layer]
        let lock = layerLocks[layer]
        controlLock.lock()
        defer { releaseControl() }
        // The layer's refills wait until the timeline holds the fired cue.
        lock.lock()
        let request = queue.fireArmed(notBefore: earliest)
        var outcome: OutputQueue.FireOutcome?
        // (Not woken by the deliveries: among 1024 layers their thread reported a fire 12–31 ms
        // late in one GO of twenty: the fired piece had ended before its layer was computed on.)
        _ = engine.waitForRenderThread(timeout: 0.2) {
            outcome = queue.fireOutcome(of: request)
            return outcome != nil
        }
        // Unanswered (the device stalled): a disarm reaches the render thread before the
        // request does, so the request misses whenever it is seen.
        if outcome == nil { try? queue.disarm() }
        guard case .fired(let queueTime)? = outcome else {
            lock.unlock()
            state.withLock { $0.arming.statistics.missed += 1 }
            return nil
        }
        let pieceFrames = Int64(bufferFrames)
        let fade = declickFade()
        let (result, changes, run) = state.withLock { state -> (GoResult, [(layer: Int, from: Int64)], Int) in
            let sample = queueTime + state.queueOrigin
            state.touched = [:]
            // Placed as any `go` is, on the sample the render thread chose.
            state.earliestChangeable = sample
            var result = Self.fire(state.timeline.cues[cueIndex], in: &state, fade: fade)
            state.earliestChangeable = nil
            if name == nil { state.lastPlainGo = sample }
            state.movePlayhead(after: cueIndex)
            result.playhead = state.playhead.map { state.timeline.cues[$0].name }
            // The fired piece holds the layer up to its end; the refills compute on from there.
            state.filled[layer] = sample + pieceFrames
            state.arming.armedTimes = []
            state.arming.generation += 1
            state.arming.statistics.armed += 1
            var changes: [(layer: Int, from: Int64)] = []
            for (other, from) in state.touched where other != layer && from < state.filled[other] {
                changes.append((other, max(from, state.queueOrigin)))
            }
            state.touched = [:]
            return (result, changes, state.run)
        }
        noteChange()
        // Buffers enqueued from now on follow the fired piece; the next two are computed into the
        // layer's spares at once, ahead of the ordinary refills of every other layer.
        try? queue.truncate(at: queueTime + pieceFrames)
        try? queue.disarm()
        lock.unlock()
        for _ in 0..<Self.spareCount {
            if streamer?.submit(lane: layer, urgent: true, { [self] in continueAfterFire(layer: layer, run: run) }) != true {
                continueAfterFire(layer: layer, run: run)
            }
        }
        let done = DispatchGroup()
        for change in changes {
            done.enter()
            if streamer?.submit(lane: change.layer, urgent: true, { [self] in
                recompute(layer: change.layer, from: change.from, run: run)
                done.leave()
            }) != true {
                recompute(layer: change.layer, from: change.from, run: run)
                done.leave()
            }
        }
        done.wait()
        return result
    }

    /// Releases ``controlLock``, then arms the standby cue anew. Not before: a lane that arms
    /// while the lock is held gives its pieces up (the holder may be waiting for that lane), so an
    /// arming asked for under the lock could leave the next cue with nothing armed, and its GO
    /// placed as any change.
    func releaseControl() {
        controlLock.unlock()
        scheduleArming()
    }
}
