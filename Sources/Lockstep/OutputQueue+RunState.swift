import Dispatch
import Synchronization

/// Starting, pausing, stopping, resetting, truncating and disposing.
extension OutputQueue {
    /// Why the engine stopped the queue for good, or nil: the device's sample rate changed while
    /// the queue held audio converted for the old rate, so it stopped on the change's sample
    /// rather than play at the wrong pitch. Starts then throw this error; create the queue again
    /// (``Engine/makeOutputQueue(format:name:callbackExecutor:callback:)`` converts to the new rate).
    public var stopError: AudioQueueError? {
        let rate = renderState.pointee.invalidatedByRate.load(ordering: .acquiring)
        guard rate != 0 else { return nil }
        return AudioQueueError(.cannotStart,
            "the device's sample rate changed from \(Int(deviceRate)) Hz to \(rate) Hz; queue '\(name)' held audio for \(Int(deviceRate)) Hz and stopped rather than play at the wrong pitch; create its queue again at the new rate")
    }

    func checkStartable() throws(AudioQueueError) {
        if let error = state.withLock({ $0.pool.usableError() }) { throw error }
        if let error = stopError { throw error }
        if engine == nil {
            throw AudioQueueError(.invalidDevice, "queue '\(name)' has lost its engine; keep the Engine alive while its queues play")
        }
    }

    func send(_ kind: QueueCommand.Kind, time: Int64 = 0) throws(AudioQueueError) {
        // Under the user-state lock: the command ring has one producer at a time.
        let pushed = state.withLock { _ in
            renderState.pointee.commands.push(QueueCommand(kind: kind, segment: nil, time: time).message)
        }
        guard pushed else {
            throw AudioQueueError(.invalidRunState, "queue '\(name)' has too many pending commands; the device is not rendering")
        }
    }

    /// Starts (or resumes) playback: Audio Queue's `AudioQueueStart`.
    ///
    /// Starts the device if it isn't running.
    /// - Parameter sampleTime: the device sample time at which queue time 0 plays — on that exact
    ///   frame, even inside a render cycle; nil to start with the next rendered frame. A time that
    ///   has already passed starts at once (late).
    /// - Throws: ``AudioQueueError/Code/disposalPending``, ``AudioQueueError/Code/cannotStart`` if
    ///   the device cannot start, ``AudioQueueError/Code/invalidParameter`` for a negative time.
    public func start(at sampleTime: Int64? = nil) throws(AudioQueueError) {
        try start(at: sampleTime, queueTimeAtStart: 0, stayAligned: false)
    }

    /// Starts with queue time `queueTimeAtStart` (device frames) at `sampleTime`; a late start
    /// either stays aligned to the requested timeline or plays from `queueTimeAtStart`.
    func start(at sampleTime: Int64?, queueTimeAtStart: Int64, stayAligned: Bool) throws(AudioQueueError) {
        try checkStartable()
        if let sampleTime, sampleTime < 0 {
            throw AudioQueueError(.invalidParameter, "start time \(sampleTime) is negative; device sample time starts at 0")
        }
        try engine?.startDevice()
        if let error = Self.pushStarts([self][...], at: sampleTime, queueTimeAtStart: queueTimeAtStart,
                                       stayAligned: stayAligned) {
            throw error
        }
    }

    /// Sends a start to every queue of `queues` (distinct, in slot order) or to none: each queue's
    /// user state stays locked from its check until every start is pushed, so no queue can be
    /// disposed of or have its command ring filled in between. Returns the first error.
    static func pushStarts(_ queues: ArraySlice<OutputQueue>, at sampleTime: Int64?, queueTimeAtStart: Int64,
                           stayAligned: Bool) -> AudioQueueError? {
        guard let queue = queues.first else { return nil }
        return queue.state.withLock { state -> AudioQueueError? in
            if let error = state.pool.usableError() { return error }
            let ring = queue.renderState
            if ring.pointee.commands.count >= ring.pointee.commands.capacity {
                return AudioQueueError(.invalidRunState, "queue '\(queue.name)' has too many pending commands; the device is not rendering")
            }
            if let error = pushStarts(queues.dropFirst(), at: sampleTime, queueTimeAtStart: queueTimeAtStart,
                                      stayAligned: stayAligned) {
                return error
            }
            var message = QueueCommand(kind: .start, segment: nil, time: sampleTime ?? -1).message
            message.value = queueTimeAtStart
            message.detail = stayAligned ? 1 : 0
            // Room was checked under this lock, and every push to the ring happens under it.
            _ = ring.pointee.commands.push(message)
            return nil
        }
    }

    /// Resumes a paused queue at the next rendered frame (the same as ``start(at:)`` with nil).
    public func resume() throws(AudioQueueError) { try start() }

    /// Pauses playback without touching the buffers: Audio Queue's `AudioQueuePause`. Queue time
    /// stops advancing until ``resume()``.
    public func pause() throws(AudioQueueError) {
        try checkStartable()
        try send(.pause)
    }

    /// Stops playback: Audio Queue's `AudioQueueStop`.
    ///
    /// - Parameter immediately: true stops at the next rendered frame and hands every enqueued
    ///   buffer back through the callback (a reset); false lets the enqueued buffers play out, then
    ///   stops (the is-running listener fires when it really stops).
    public func stop(immediately: Bool = true) throws(AudioQueueError) {
        let error: AudioQueueError? = state.withLock { state in
            if let error = state.pool.usableError() { return error }
            if immediately {
                state.converter?.reset()
                state.converterHasInput = false
                state.nextStart = 0
                return pushOrError(.stopNow)
            }
            if let error = enqueueConverterTail(&state) { return error }
            state.nextStart = 0
            return pushOrError(.stopWhenDrained)
        }
        if let error { throw error }
    }

    func pushOrError(_ kind: QueueCommand.Kind) -> AudioQueueError? {
        renderState.pointee.commands.push(QueueCommand(kind: kind, segment: nil, time: 0).message) ? nil :
            AudioQueueError(.invalidRunState, "queue '\(name)' has too many pending commands; the device is not rendering")
    }

    /// Hands every enqueued buffer back through the callback and clears the converter state,
    /// without stopping: Audio Queue's `AudioQueueReset`. Buffers enqueued afterwards without a
    /// start time play as soon as they can.
    public func reset() throws(AudioQueueError) {
        let current = currentQueueDeviceFrames()
        let error: AudioQueueError? = state.withLock { state in
            if let error = state.pool.usableError() { return error }
            state.converter?.reset()
            state.converterHasInput = false
            state.nextStart = current
            return pushOrError(.reset)
        }
        if let error { throw error }
    }

    /// Cuts the enqueued audio at queue sample time `queueTime`, without stopping: frames from
    /// there on are not played. A buffer that starts there or later comes back through the
    /// callback unplayed; one that runs across it plays up to it; buffers enqueued afterwards
    /// without a start time follow from `queueTime`, and a start time of `queueTime` or later is
    /// accepted. Lockstep's own addition to the Audio Queue model (an `AudioQueueReset` that
    /// keeps what plays before a given time), for changing audio already enqueued — a cue fired
    /// on a layer whose next seconds are queued — within a period or two.
    ///
    /// The cut is applied at the start of the next render cycle. A `queueTime` the queue has
    /// already played past cuts where the queue is instead; buffers then enqueued with a start
    /// time stay on the timeline (their first frames, already late, are skipped). A queue that
    /// converts its rate restarts its converter, as after ``reset()``.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` for a negative time,
    ///   ``AudioQueueError/Code/disposalPending``.
    public func truncate(at queueTime: Int64) throws(AudioQueueError) {
        guard queueTime >= 0 else {
            throw AudioQueueError(.invalidParameter, "truncate time \(queueTime) is negative; queue sample time starts at 0")
        }
        let error: AudioQueueError? = state.withLock { state in
            if let error = state.pool.usableError() { return error }
            let cut = toDevice(queueTime)
            if state.converter != nil {
                state.converter?.reset()
                state.converterHasInput = false
            }
            state.nextStart = min(state.nextStart, cut)
            return renderState.pointee.commands.push(QueueCommand(kind: .truncate, segment: nil, time: cut).message) ? nil :
                AudioQueueError(.invalidRunState, "queue '\(name)' has too many pending commands; the device is not rendering")
        }
        if let error { throw error }
    }

    /// Makes sure everything enqueued so far will be played, including the frames a rate converter
    /// holds back: Audio Queue's `AudioQueueFlush`. Call it after the last buffer of a stream.
    public func flush() throws(AudioQueueError) {
        let error: AudioQueueError? = state.withLock { state in
            if let error = state.pool.usableError() { return error }
            return enqueueConverterTail(&state)
        }
        if let error { throw error }
    }

    /// Prepares enqueued buffers for playback: Audio Queue's `AudioQueuePrime`.
    ///
    /// Lockstep converts buffers when they are enqueued, so everything enqueued is already
    /// prepared and a start is instant.
    /// - Parameter frames: the frames you need prepared (0: all); informational.
    /// - Returns: the number of frames (at the queue's rate) enqueued and ready to play.
    @discardableResult
    public func prime(frames: Int = 0) throws(AudioQueueError) -> Int {
        let result: Result<Int, AudioQueueError> = state.withLock { state in
            if let error = state.pool.usableError() { return .failure(error) }
            return .success(Int(fromDevice(Int64(state.pendingFrames))))
        }
        return try result.get()
    }

    /// Disposes of the queue and its buffers: Audio Queue's `AudioQueueDispose`.
    ///
    /// - Parameter immediately: true stops at once, invokes no more callbacks and frees everything
    ///   as soon as the render thread lets go; false lets the enqueued buffers play out (with their
    ///   callbacks), then disposes.
    public func dispose(immediately: Bool = true) throws(AudioQueueError) {
        let error: AudioQueueError? = state.withLock { state in
            if let error = state.pool.usableError() { return error }
            if immediately {
                state.pool.disposal = .immediate
                return pushOrError(.disposeNow)
            }
            if let error = enqueueConverterTail(&state) { return error }
            state.pool.disposal = .pending
            return pushOrError(.disposeWhenDrained)
        }
        if let error { throw error }
    }

    /// Whether the queue is playing (`kAudioQueueProperty_IsRunning`): true from the frame it
    /// really starts until it really stops; paused queues count as running.
    public var isRunning: Bool { state.withLock { $0.isRunning } }

    /// Whether ``dispose(immediately:)`` has been called.
    public var isDisposed: Bool { state.withLock { $0.pool.disposal != .none } }
}
