import Foundation
import Lockstep

// Run state: start, pause, stop, reset, flush, prime and disposal, and the engine queue's
// running-state changes that end stops and asynchronous disposals.
extension CompatQueue {
    func start(_ stamp: AudioTimeStamp?) throws(AudioQueueError) {
        let (output, input, engine) = try state.withLock { (state) throws(AudioQueueError) in
            try state.checkDisposal()
            try bind(&state)
            return (state.output, state.input, state.engine)
        }
        guard let engine else { return }
        var at: Int64?
        if let stamp {
            if !stamp.mFlags.contains(.sampleTimeValid), stamp.mFlags.contains(.hostTimeValid) {
                at = engine.sampleTime(forHostTime: stamp.mHostTime)
            } else {
                guard stamp.mSampleTime.isFinite, stamp.mSampleTime >= 0 else {
                    throw AudioQueueError(.invalidParameter, "start time \(stamp.mSampleTime) is negative or not a number; device sample time starts at 0")
                }
                at = Int64(stamp.mSampleTime.rounded())
            }
        }
        if state.withLock({ $0.deferredStart }) { return }
        let running = output?.isRunning ?? input?.isRunning ?? false
        if at == nil, !running, let output, !engine.device.isOffline, !CallbackThread.isCurrent,
           !waitForDecodedAhead(output, engine: engine) {
            // The callbacks that decode ahead run on this thread's run loop, once this call has
            // returned: the queue starts when they have (or after 100 ms), as Apple's queue
            // starts a moment after AudioQueueStart; the IsRunning listeners hear of it then.
            state.withLock { state in
                state.startPending = true
                state.deferredStart = true
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { [weak self] in self?.startIfDecodedAhead(force: true) }
            return
        }
        if !running && input != nil { beginConversionRun() }
        if !running { state.withLock { $0.startPending = true } }
        do {
            if let output { try output.start(at: at) } else { try input?.start(at: at) }
        } catch {
            state.withLock { $0.startPending = false }
            throw error
        }
        try stopIfAskedBeforeStart(output, input)
    }

    /// An asynchronous stop asked for before the start: the queue stops once it has played what
    /// is enqueued.
    private func stopIfAskedBeforeStart(_ output: OutputQueue?, _ input: InputQueue?) throws(AudioQueueError) {
        let drain = state.withLock { (state) -> Bool in
            defer { state.stopWhenDrained = false }
            return state.stopWhenDrained
        }
        if drain {
            if let output { try output.stop(immediately: false) } else { try input?.stop(immediately: false) }
        }
    }

    /// A deferred start (``start(_:)``) happens once two periods are decoded ahead, no callback
    /// that could decode more is waiting or running, or `force` (its 100 ms are up). Called after
    /// each enqueue (callback thread), after each run-loop callback, and by the 100 ms timer.
    func startIfDecodedAhead(force: Bool = false) {
        let output = state.withLock { (state) -> OutputQueue? in
            guard state.deferredStart, state.disposal == .none, let output = state.output, let engine = state.engine else { return nil }
            if !force && Self.decodeAheadPending(state, target: decodeAheadTarget(output, engine: engine)) { return nil }
            state.deferredStart = false
            return output
        }
        guard let output else { return }
        do {
            try output.start(at: nil)
            try stopIfAskedBeforeStart(output, nil)
        } catch {
            state.withLock { $0.startPending = false }
        }
    }

    /// Two device periods of the queue's frames (at most the decode buffer's size).
    private func decodeAheadTarget(_ output: OutputQueue, engine: Engine) -> Int {
        let period = Double(2 * max(1, engine.device.maximumFramesPerCycle))
        return Int((period * output.format.sampleRate / engine.sampleRate).rounded(.up))
    }

    /// Whether fewer than `target` frames are decoded ahead while more may still come: more comes
    /// only while converted buffers wait for their callback, or one is posted or running.
    private static func decodeAheadPending(_ state: State, target: Int) -> Bool {
        let ahead = state.inFlight.reduce(0) { $0 + $1.frames }
        if ahead >= min(target, max(1, state.decodeBufferFrames)) { return false }
        return state.inFlight.contains { $0.buffer != nil } || state.outputCallbacksRunning > 0 || state.outputCallbacksPosted > 0
    }

    /// Before a start "as soon as possible": lets the callback chain that the primed buffers set
    /// off (each buffer handed back once converted, refilled, enqueued again) put two device
    /// periods of audio in the engine queue — or as much as the decode buffer holds, or all the
    /// callback gives — so that the first cycles do not play a gap while it catches up. At most
    /// 100 ms; not from inside a callback (that would hold up the chain itself). Returns false,
    /// at once, when that chain runs on this thread's run loop (Apple's AQPlayer: the queue made
    /// with `CFRunLoopGetCurrent()` and started from that thread): the start is deferred then.
    private func waitForDecodedAhead(_ output: OutputQueue, engine: Engine) -> Bool {
        let target = decodeAheadTarget(output, engine: engine)
        let ownLoop = callbackRunLoop.map { $0.0 === CFRunLoopGetCurrent() } ?? false
        let deadline = Date().addingTimeInterval(0.1)
        while Date() < deadline {
            let (pending, posted) = state.withLock { (Self.decodeAheadPending($0, target: target), $0.outputCallbacksPosted) }
            if !pending { return true }
            if ownLoop && posted > 0 { return false }
            usleep(500)
        }
        return true
    }

    func pause() throws(AudioQueueError) {
        let (output, input) = try state.withLock { (state) throws(AudioQueueError) in
            try state.checkDisposal()
            state.cancelDeferredStart()
            return (state.output, state.input)
        }
        if let output { try output.pause() } else { try input?.pause() }
    }

    /// Stop and reset share this: an unbound queue hands its buffers back itself.
    private func returnPendingBuffers() {
        let refs: [AudioQueueBufferRef] = state.withLock { state in
            let refs = state.enqueued.map(\.buffer)
            for ref in refs { state.buffers[ref]?.isEnqueued = false }
            state.enqueued.removeAll()
            state.pendingEnd = 0
            state.startPending = false
            state.stopWhenDrained = false
            if case .output = callback { state.resetting = Set(refs) }
            return isOutput ? refs : []
        }
        deliverOutput(refs)
        state.withLock { $0.resetting.removeAll() }
    }

    /// Marks the playback buffers enqueued now as being handed back by a reset.
    private func beginReset() {
        state.withLock { state in if isOutput { state.resetting = Set(state.enqueued.map(\.buffer)) } }
    }

    func stop(immediately: Bool) throws(AudioQueueError) {
        let (output, input, engine, deferred) = try state.withLock { (state) throws(AudioQueueError) in
            try state.checkDisposal()
            let running = state.output?.isRunning ?? state.input?.isRunning ?? false
            if !immediately && !running && (!state.startPending || state.deferredStart) {
                // Not started yet: stop once it has played what is enqueued by then.
                state.stopWhenDrained = true
                return (state.output, state.input, state.engine, true)
            }
            state.stopWhenDrained = false
            state.cancelDeferredStart()
            if running, let conversion = state.conversion { conversion.flushing = true }
            return (state.output, state.input, state.engine, false)
        }
        if deferred { return }
        guard let engine else { return returnPendingBuffers() }
        // A converting input queue hands its held engine buffers back from now on.
        if input != nil, state.withLock({ $0.conversion?.flushing ?? false }) { schedulePump(engine) }
        if immediately { beginReset() }
        do {
            if let output {
                try output.stop(immediately: immediately)
            } else if !immediately, let input, let end = conversionEnd() {
                try input.stop(atSampleTime: end)
            } else {
                try input?.stop(immediately: immediately)
            }
        } catch {
            state.withLock { $0.resetting.removeAll() }
            throw error
        }
        // Apple's synchronous stop: every callback of the stop has run when it returns. An offline
        // device delivers them at its next render; a callback must not wait for itself.
        guard immediately, engine.device.callbackDelivery != .inline, !CallbackThread.isCurrent else { return }
        waitUntil(seconds: 2) {
            let running = output?.isRunning ?? input?.isRunning ?? false
            return state.withLock { state in
                !running && !state.startPending && !(state.conversion?.flushing ?? false)
                    && (input != nil || (state.enqueued.isEmpty && state.outputCallbacksRunning == 0))
            }
        }
    }

    /// For an asynchronous stop of an input queue that converts: the device sample time at which
    /// the buffers enqueued now are full (Apple's queue stops once its enqueued buffers are
    /// recorded), or now if the recording is already past it; nil when that is not known yet.
    private func conversionEnd() -> Int64? {
        state.withLock { (state) -> Int64? in
            guard let conversion = state.conversion, let origin = state.inputOrigin else { return nil }
            let room = state.enqueued.reduce(0) { $0 + conversion.frameCapacity($1.buffer) }
            let frames = conversion.deliveredFrames + Int64(room)
            return origin + Int64((Double(frames) * conversion.deviceFramesPerFrame).rounded(.up))
        }
    }

    /// Waits for `condition`, re-checked after each delivery of the engine's render events (the
    /// stops, hand-backs and callbacks it waits for come through them), at most `seconds`.
    private func waitUntil(seconds: Double, _ condition: () -> Bool) {
        guard let engine = state.withLock({ $0.engine }) else { return }
        engine.waitForDeliveries(timeout: seconds, until: condition)
    }

    func reset() throws(AudioQueueError) {
        let (output, input) = try state.withLock { (state) throws(AudioQueueError) in
            try state.checkDisposal()
            return (state.output, state.input)
        }
        // The decoder starts afresh: what follows a reset does not continue what came before.
        decodeOrder.withLock { _ in state.withLock { $0.decoder?.reset() } }
        if output == nil && input == nil { return returnPendingBuffers() }
        if let input, state.withLock({ $0.conversion != nil }) { return try resetConversion(input) }
        beginReset()
        do {
            if let output { try output.reset() } else { try input?.reset() }
        } catch {
            state.withLock { $0.resetting.removeAll() }
            throw error
        }
    }

    func flush() throws(AudioQueueError) {
        let output = try state.withLock { (state) throws(AudioQueueError) in
            try state.checkDisposal()
            return state.output
        }
        try output?.flush()
    }

    func prime(frames: UInt32) throws(AudioQueueError) -> UInt32 {
        let output = try state.withLock { (state) throws(AudioQueueError) in
            try state.checkDisposal()
            try requireOutput("AudioQueuePrime")
            try bind(&state)
            return state.output
        }
        guard let output else { return 0 }
        let prepared = try output.prime(frames: Int(frames))
        return UInt32(clamping: prepared)
    }

    /// The engine queue started or stopped. Called on the callback thread (or the offline render thread).
    func runningChanged(_ running: Bool) {
        let (targets, finish, ended) = state.withLock { (state) -> ([Listener], Bool, Bool) in
            if running { state.startPending = false }
            let finish = !running && state.disposal == .pending
            let ended = !running && state.conversion != nil && state.disposal != .done
            return (state.listeners.filter { $0.id == kAudioQueueProperty_IsRunning }, finish, ended)
        }
        // The recording ended: everything recorded, and the converter's tail, goes into the
        // enqueued buffers (the last one partly filled) before the listeners hear of the stop.
        if ended { endConversion() }
        notify(targets, kAudioQueueProperty_IsRunning)
        if finish { finishDisposal() }
    }

    /// Disposes of the queue. Returns whether the registry should forget it now.
    func dispose(immediately: Bool) throws(AudioQueueError) -> Bool {
        let done = try state.withLock { (state) throws(AudioQueueError) -> Bool in
            try state.checkDisposal()
            if !immediately, let output = state.output, output.isRunning {
                state.disposal = .pending
                try output.dispose(immediately: false)
                return false
            }
            state.disposal = .done
            dropEngineQueue(&state)
            state.listeners.removeAll()
            return true
        }
        if done { detachRunLoopSource() }
        return done
    }

    private func finishDisposal() {
        state.withLock { state in
            state.disposal = .done
            dropEngineQueue(&state)
            state.listeners.removeAll()
        }
        detachRunLoopSource()
        QueueRegistry.shared.remove(self)
    }
}
