import Synchronization

/// Armed starts: audio prepared for several possible start times, one of which the render thread
/// picks — the first frame of the cycle after a fire request — so a start lands on the very next
/// cycle, however late in the period it is asked for. Lockstep's own addition to the Audio Queue
/// model, for a show's standby cue: a GO costs no computing after the command.
extension OutputQueue {
    /// What a fire request did.
    public enum FireOutcome: Sendable, Equatable {
        /// The segment armed for this queue time (device frames) plays from there; the queue's
        /// audio after it was cut, as by ``truncate(at:)``.
        case fired(queueTime: Int64)
        /// Nothing was armed for the cycle that saw the request (or the queue was not running).
        case missed
    }

    /// Holds `buffer` as the audio to play from queue time `startTime` (device frames) should a
    /// fire request (``fireArmed()``) reach the render thread in the cycle that starts there.
    /// The buffer comes back through the callback when it fires and has played, when the queue
    /// passes `startTime` without firing it, on ``disarm()``, or on a stop. The queue must play
    /// 32-bit float at the device's rate (it converts nothing).
    ///
    /// - Throws: ``AudioQueueError/Code/invalidBuffer``, ``AudioQueueError/Code/bufferEnqueuedTwice``,
    ///   ``AudioQueueError/Code/bufferEmpty`` as ``enqueue(_:startTime:trimFramesAtStart:trimFramesAtEnd:parameters:)``;
    ///   ``AudioQueueError/Code/invalidParameter`` for a queue that converts or a negative time.
    public func arm(_ buffer: QueueBuffer, startTime: Int64) throws(AudioQueueError) {
        guard playsInPlace else {
            throw AudioQueueError(.invalidParameter, "queue '\(name)' converts its audio; only a queue of 32-bit float at the device's rate arms starts")
        }
        guard startTime >= 0 else {
            throw AudioQueueError(.invalidParameter, "armed start time \(startTime) is negative; queue sample time starts at 0")
        }
        let error: AudioQueueError? = state.withLock { state in
            if let error = state.pool.enqueueError(buffer) { return error }
            guard buffer.byteSize > 0, buffer.byteSize <= buffer.byteCapacity, buffer.byteSize % format.bytesPerFrame == 0 else {
                return AudioQueueError(.bufferEmpty, "an armed buffer must hold whole frames of audio (byteSize \(buffer.byteSize))")
            }
            let segment = buffer.segment
            segment.pointee.samples = buffer.data.assumingMemoryBound(to: Float.self)
            segment.pointee.frameCount = buffer.frameCount
            segment.pointee.start = toDevice(startTime)
            segment.pointee.volume = .nan
            segment.pointee.panGains = PanLaw.none
            segment.pointee.pan = 0
            segment.pointee.rampFrames = -1
            segment.pointee.started = false
            segment.pointee.truncatedFrames = 0
            guard renderState.pointee.commands.push(QueueCommand(kind: .arm, segment: segment, time: 0).message) else {
                return AudioQueueError(.invalidRunState, "queue '\(name)' has too many pending commands; the device is not rendering")
            }
            buffer.isEnqueued = true
            state.pendingFrames += buffer.frameCount
            return nil
        }
        if let error { throw error }
    }

    /// Hands every armed buffer back (at the next cycle).
    public func disarm() throws(AudioQueueError) {
        let error: AudioQueueError? = state.withLock { state in
            if let error = state.pool.usableError() { return error }
            return renderState.pointee.commands.push(QueueCommand(kind: .disarm, segment: nil, time: 0).message) ? nil :
                AudioQueueError(.invalidRunState, "queue '\(name)' has too many pending commands; the device is not rendering")
        }
        if let error { throw error }
    }

    /// Asks the render thread to fire, in the next cycle it renders, the segment armed for that
    /// cycle's first frame. Realtime-safe (two atomic stores). Read the answer with
    /// ``fireOutcome(of:)``.
    /// - Parameter notBefore: the earliest queue time to fire on (an event's own sample, say, when
    ///   it lies ahead of the cycle being rendered): a cycle that starts before it leaves the
    ///   request to a later cycle (answered missed at once when nothing is armed). Nil: any.
    /// - Returns: the request's number.
    public func fireArmed(notBefore: Int64? = nil) -> UInt32 {
        renderState.pointee.fireNotBefore.store(notBefore.map(toDevice) ?? .min, ordering: .relaxed)
        return renderState.pointee.fireRequest.wrappingAdd(1, ordering: .releasing).newValue
    }

    /// What fire request `request` did, once the render thread has answered it; nil until then.
    /// After a ``FireOutcome/fired(queueTime:)``, buffers enqueued with a start time follow the
    /// fired segment (its end is the queue's end, as after ``truncate(at:)``).
    public func fireOutcome(of request: UInt32) -> FireOutcome? {
        let answered = renderState.pointee.fireOutcomeGeneration.load(ordering: .acquiring)
        // Requests are numbered in order: a later answer answers this one too (as missed, unless
        // it is this one's).
        guard Int32(bitPattern: answered &- request) >= 0 else { return nil }
        let time = renderState.pointee.fireOutcomeTime.load(ordering: .relaxed)
        guard answered == request, time >= 0 else { return .missed }
        return .fired(queueTime: fromDevice(time))
    }
}
