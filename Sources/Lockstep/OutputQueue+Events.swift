import Dispatch
import Synchronization

/// What the render thread reports, handled on the callback thread.
extension OutputQueue {
    func handle(_ event: RenderEvent) {
        switch event.kind {
        case .bufferDone:
            guard let segment = event.segment else { return }
            let delivery: (QueueBuffer?, Bool) = state.withLock { state in
                state.pendingFrames -= segment.pointee.frameCount + segment.pointee.truncatedFrames
                guard let owner = segment.pointee.owner else {
                    state.internalSegments.remove(segment)
                    Segment.free(segment)
                    return (nil, false)
                }
                let buffer = Unmanaged<QueueBuffer>.fromOpaque(owner).takeUnretainedValue()
                buffer.isEnqueued = false
                return (buffer, state.pool.disposal != .immediate && state.pool.disposal != .done)
            }
            if let buffer = delivery.0, delivery.1 {
                yield(.bufferCompleted(buffer))
                let callback = self.callback
                deliver { callback(self, buffer) }
            }
        case .started:
            let changed = state.withLock { state in
                defer { state.isRunning = true }
                return !state.isRunning
            }
            yield(.started(sampleTime: event.sampleTime))
            if changed { notifyListeners(.isRunning) }
        case .paused:
            yield(.paused(sampleTime: event.sampleTime))
        case .stopped:
            let changed = state.withLock { state in
                defer { state.isRunning = false }
                return state.isRunning
            }
            yield(.stopped(sampleTime: event.sampleTime))
            if changed { notifyListeners(.isRunning) }
        case .underrun:
            let discontinuity = Discontinuity(kind: .underrun, sampleTime: event.sampleTime,
                                              length: event.value, queues: [name])
            engine?.record(discontinuity)
            deliverDiscontinuity(discontinuity)
        case .queueRemoved, .deviceDiscontinuity, .inputStarted, .inputPaused, .inputStopped, .inputOverflow, .inputRemoved:
            break
        }
    }

    func deliverDiscontinuity(_ discontinuity: Discontinuity) {
        yield(.discontinuity(discontinuity))
    }

    func yield(_ event: QueueEvent) {
        callbacks.yield(event, from: self)
    }

    func notifyListeners(_ property: QueueProperty) {
        callbacks.notify(property, from: self)
    }

    func deliver(_ work: @escaping @Sendable () -> Void) {
        callbacks.deliver(work)
    }

    /// Lets go of every buffer and internal segment and ends the event streams; called once the
    /// render thread has let go of the queue.
    func releaseAll() {
        let segments: Set<UnsafeMutablePointer<Segment>>? = state.withLock { state in
            guard state.pool.disposal != .done else { return nil }
            defer { state.internalSegments.removeAll() }
            state.pool.releaseAll()
            state.isRunning = false
            return state.internalSegments
        }
        guard let segments else { return }
        for segment in segments { Segment.free(segment) }
        callbacks.close()
    }
}
