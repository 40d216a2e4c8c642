import Foundation
import Lockstep
import LockstepFiles
import Synchronization

/// Computing the layers: first buffers, refills, and recomputing a layer after a change.
extension SessionPlayer {
    func prepare(from position: Int64) throws(AudioQueueError) {
        let all = buffers.withLock { $0 }
        state.withLock { state in
            state.filled = Array(repeating: position, count: queues.count)
            state.phase = .starting
            state.run += 1
            currentRun.store(state.run, ordering: .releasing)
            state.pausedPosition = position
            state.queueOrigin = position
            state.timeline.pauseFade = nil      // (a pause cut short by a stop or a restart)
            state.spares = all.map { Array($0.suffix(Self.spareCount)) }
        }
        // Under each layer's lock: a refill that passed its run check before the halt may still
        // be computing that layer on a streamer (its buffer is already back, so the halt did not
        // wait for it), and the renderer's open cues are not to be shared.
        for (layer, renderer) in renderers.enumerated() {
            layerLocks[layer].lock()
            renderer.reset()
            layerLocks[layer].unlock()
        }
        // The first buffers of every layer, computed on the layers' lanes (all threads at once).
        let run = state.withLock { $0.run }
        let done = DispatchGroup()
        for (layer, list) in all.enumerated() {
            let fill: @Sendable () -> Void = { [self] in
                for buffer in list.dropLast(Self.spareCount) { refill(layer: layer, buffer: buffer, run: run) }
            }
            done.enter()
            if streamer?.submit(lane: layer, { fill(); done.leave() }) != true {
                fill()
                done.leave()
            }
        }
        timecodeOutput?.prepare(from: position)
        done.wait()
    }

    /// Periods a live change (one the armed standby cue does not carry, asked for no sample) lands
    /// after the nearest start the device offers: time for its layers to be recomputed and cut in
    /// before the device renders that cycle.
    static let changeMarginPeriods: Int64 = 1

    /// Applies a control change: `body` edits the state (timeline, playhead…) with the control
    /// sample set to the earliest sample the device can still change, noting the layers it
    /// touches; then every touched layer that has computed audio past its change is recomputed
    /// from there (``recompute(layer:from:run:)``), on its lane of the streamer, and this returns
    /// once they all are.
    func control<T, E: Error>(at requested: Int64? = nil, _ body: (inout State) throws(E) -> T) throws(E) -> T {
        controlLock.lock()
        disarm()
        defer { releaseControl() }
        // Live and as soon as possible, one period more than the nearest start: the layers' lane
        // threads (ordinary threads) recompute and cut a change in 1 to 3 ms, which left 2 to
        // 4.5 ms before its cycle at period 256 — a lane held up longer played the change a
        // period late. A change asked for a sample (a time tag, a MIDI latency) keeps its own.
        let margin = streamer == nil || requested != nil ? 0
            : Int64(max(0, engine.device.periodFrames)) * Self.changeMarginPeriods + state.withLock { $0.changeLead }
        let earliestDevice = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime) + margin
        let outcome: Result<(T, [(layer: Int, from: Int64)], Int), E> = state.withLock { state in
            let live = state.phase == .playing
            state.earliestChangeable = live
                ? max(state.originPosition, state.originPosition + earliestDevice - state.originDevice) : nil
            state.touched = [:]
            state.requestedSample = requested
            defer {
                state.earliestChangeable = nil
                state.requestedSample = nil
                state.touched = [:]
            }
            let result: T
            do throws(E) { result = try body(&state) } catch { return .failure(error) }
            var changes: [(layer: Int, from: Int64)] = []
            if live {
                for (layer, sample) in state.touched.sorted(by: { $0.key < $1.key }) where sample < state.filled[layer] {
                    changes.append((layer, max(sample, state.queueOrigin)))
                }
            }
            return .success((result, changes, state.run))
        }
        let (result, changes, run) = try outcome.get()
        noteChange()    // (a watcher of the timeline need not wait for the layers' recompute)
        guard !changes.isEmpty else { return result }
        guard let streamer else {
            for change in changes { recompute(layer: change.layer, from: change.from, run: run) }
            return result
        }
        let done = DispatchGroup()
        for change in changes {
            done.enter()
            let accepted = streamer.submit(lane: change.layer, urgent: true) { [self] in
                recompute(layer: change.layer, from: change.from, run: run)
                done.leave()
            }
            if !accepted {
                recompute(layer: change.layer, from: change.from, run: run)
                done.leave()
            }
        }
        done.wait()
        return result
    }

    /// Buffers per layer kept out of circulation for control changes: the first takes a short
    /// piece (a period) so the cut reaches the device quickly, the second the buffer after it.
    static let spareCount = 2

    /// A change on a layer whose cut is not yet known to have been in time.
    struct Unverified {
        var layer: Int
        var position: Int64
        /// The device sample the change is for.
        var deviceTime: Int64
        /// The device sample by whose end the cut has been applied (the cycle after the post).
        var appliedBy: Int64
        /// The queue's ``OutputQueue/lateCutFrames`` before the cut.
        var lateBefore: Int64
    }

    /// Cuts `layer`'s queue at session sample `sample` and computes its audio again from there:
    /// a short first piece at once into a spare (so the cut is posted within a fraction of a
    /// period), the next buffer into the other spare, the rest as buffers come back. Whether the
    /// cut was in time is known once the device has rendered that far (``verifyChanges()``).
    func recompute(layer: Int, from sample: Int64, run: Int) {
        let lock = layerLocks[layer]
        lock.lock()
        defer { lock.unlock() }
        let first = min(bufferFrames, max(64, engine.device.periodFrames))
        // A layer whose spares the changes before took (the buffers they cut come back through
        // the engine's callback thread, and refill them) gets buffers added: with none, the cut
        // left its queue empty from the change on, and the change's audio waited for a refill
        // behind every other layer's (an underrun among 4096 layers, the GO's audio lost).
        let added = addedBuffers(layer: layer, toHave: Self.spareCount)
        guard let (timeline, origin, spares, deviceOffset) = state.withLock({ state -> (SessionTimeline, Int64, [QueueBuffer], Int64)? in
            // (Buffers added and not used here are spares from now on.)
            state.spares[layer].insert(contentsOf: added, at: 0)
            guard state.run == run, state.phase.computes, sample < state.filled[layer] else { return nil }
            let spares = Array(state.spares[layer].prefix(Self.spareCount))
            state.spares[layer].removeFirst(spares.count)
            state.filled[layer] = sample + (spares.isEmpty ? 0 : Int64(first)) + (spares.count > 1 ? Int64(bufferFrames) : 0)
            return (state.timeline, state.queueOrigin, spares, state.originDevice - state.originPosition)
        }) else { return }
        let queue = queues[layer]
        let lateBefore = queue.lateCutFrames
        if let piece = spares.first { render(layer: layer, timeline: timeline, position: sample, frames: first, into: piece) }
        try? queue.truncate(at: sample - origin)
        if let piece = spares.first { _ = try? queue.enqueue(piece, startTime: sample - origin) }
        let posted = engine.currentTime().sampleTime
        if spares.count > 1 {
            let next = sample + Int64(first)
            render(layer: layer, timeline: timeline, position: next, frames: bufferFrames, into: spares[1])
            _ = try? queue.enqueue(spares[1], startTime: next - origin)
        }
        guard streamer != nil else { return }           // offline: cut before the device renders on
        let period = Int64(max(1, engine.device.periodFrames))
        // The cut applies at the start of the first cycle after the post, whatever its sample.
        let check = Unverified(layer: layer, position: sample, deviceTime: sample + deviceOffset,
                               appliedBy: posted + 2 * period, lateBefore: lateBefore)
        state.withLock { $0.unverified.append(check) }
    }

    /// Records a ``LateStart`` for every change whose cut the device has applied by now and that
    /// came too late (its queue's ``OutputQueue/lateCutFrames`` grew).
    func verifyChanges() {
        let rendered = engine.renderedSampleTime
        let due = state.withLock { state -> [Unverified] in
            let due = state.unverified.filter { $0.appliedBy <= rendered }
            state.unverified.removeAll { $0.appliedBy <= rendered }
            return due
        }
        guard !due.isEmpty else { return }
        var late: [LateStart] = []
        for check in due {
            let missed = queues[check.layer].lateCutFrames - check.lateBefore
            if missed > 0 {
                late.append(LateStart(position: check.position, sampleTime: check.deviceTime + missed, skippedFrames: missed))
            }
        }
        if !late.isEmpty { state.withLock { $0.lateStarts += late } }
    }

    /// Computes `frames` frames (nil: the buffer's capacity) of `layer` from session sample
    /// `position` into `buffer`.
    func render(layer: Int, timeline: SessionTimeline, position: Int64, frames: Int? = nil, into buffer: QueueBuffer) {
        let renderer = renderers[layer]
        let frames = min(frames ?? buffer.frameCapacity, buffer.frameCapacity)
        buffer.withFloatSamples { samples in
            renderer.render(timeline, position: position, frames: frames, into: samples.baseAddress!)
        }
        buffer.frameCount = frames
        if let problem = renderer.error {
            state.withLock { if $0.error == nil { $0.error = problem } }
        }
    }

    /// Stops every queue at once and waits until all buffers are back.
    func halt() throws(AudioQueueError) {
        endSegment()
        state.withLock { state in
            switch state.phase {
            case .playing: state.phase = .halting
            case .starting: state.phase = .stopped
            case .stopped, .halting, .paused: break
            }
        }
        noteChange()
        let all = queues + (timecodeOutput.map { [$0.queue] } ?? [])
        for queue in all { try? queue.stop(immediately: true) }
        let deadline = ContinuousClock.now + .seconds(2)
        var lastStop = ContinuousClock.now
        /// Whether a layer's (or the LTC's) buffer is still with its queue.
        func inFlight() -> Bool {
            buffers.withLock { $0.joined().contains { $0.isInFlight } } || timecodeOutput?.hasBuffersInFlight == true
        }
        while inFlight() {
            // A refill that was under way when the halt began may enqueue after the stop:
            // stop again so that buffer comes back too.
            if ContinuousClock.now - lastStop > .milliseconds(20) {
                for queue in all { try? queue.stop(immediately: true) }
                lastStop = ContinuousClock.now
            }
            if ContinuousClock.now > deadline {
                throw AudioQueueError(.invalidRunState, "the layer queues did not hand their buffers back within 2 s; is the engine's callback thread blocked?")
            }
            // Woken by the next delivery of render events (the buffers come back through them).
            engine.waitForDeliveries(timeout: 0.02) { !inFlight() }
        }
    }

    /// A buffer `layer`'s queue handed back: computed again on the layer's lane of the streamer,
    /// or here without one.
    func bufferHandedBack(layer: Int, buffer: QueueBuffer) {
        if isArmingBuffer(buffer) { return armingBufferBack(layer: layer, buffer: buffer) }
        let run = currentRun.load(ordering: .acquiring)
        guard let streamer else { return refill(layer: layer, buffer: buffer, run: run) }
        // A layer short of spares (a GO or a change took them) gets this one at once, not after
        // the refills waiting on its lane: among 4096 layers they came back too late for the
        // next GO, which found none and left its layer to underrun.
        let kept = state.withLock { state -> Bool in
            guard state.phase.computes, state.run == run, state.spares[layer].count < Self.spareCount else { return false }
            state.spares[layer].append(buffer)
            return true
        }
        if kept { return }
        if !streamer.submit(lane: layer, { [self] in refill(layer: layer, buffer: buffer, run: run) }) {
            refill(layer: layer, buffer: buffer, run: run)
        }
    }

    /// Computes the layer's next buffer into `buffer` (back from the queue) and enqueues it on
    /// its sample; keeps it as the layer's spare when the layer has none. Does nothing for a
    /// buffer of an earlier run (the start that followed took it back).
    func refill(layer: Int, buffer: QueueBuffer, run: Int) {
        let lock = layerLocks[layer]
        lock.lock()
        defer { lock.unlock() }
        guard let (timeline, position, origin) = state.withLock({ state -> (SessionTimeline, Int64, Int64)? in
            if !state.phase.computes || state.run != run { return nil }
            if state.spares[layer].count < Self.spareCount {
                state.spares[layer].append(buffer)
                return nil
            }
            let position = state.filled[layer]
            state.filled[layer] += Int64(buffer.frameCapacity)
            return (state.timeline, position, state.queueOrigin)
        }) else { return }
        render(layer: layer, timeline: timeline, position: position, into: buffer)
        _ = try? queues[layer].enqueue(buffer, startTime: position - origin)
    }
}
