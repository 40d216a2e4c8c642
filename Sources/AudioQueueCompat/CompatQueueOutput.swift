import Dispatch
import Lockstep

// The output side: buffers the engine has played come back and go to the user's output callback
// (a C function on the callback thread, or a block on its dispatch queue).
extension CompatQueue {
    /// An engine buffer has played (or was handed back by a stop or reset): it becomes spare,
    /// and the queue's buffer it carried, if not handed back yet, goes to the callback now, with
    /// any others the decode buffer has room for. Called on the callback thread (or the offline
    /// render thread).
    func outputDone(_ engineBuffer: QueueBuffer) {
        let (finished, offline) = state.withLock { (state) -> (AudioQueueBufferRef?, Bool) in
            let offline = state.offlineLayout != nil
            guard state.disposal != .done,
                  let index = state.inFlight.firstIndex(where: { $0.engineBuffer === engineBuffer }) else { return (nil, offline) }
            let entry = state.inFlight.remove(at: index)
            state.spare.append(engineBuffer)
            if let ref = entry.buffer { forget(ref, &state) }
            return (entry.buffer, offline)
        }
        // Offline, buffers still playing go back only at the start of a render.
        releaseDecoded(finished: finished, decodeAhead: !offline)
    }

    /// Offline, at the start of a render of `frames` queue frames: hands back to the callback, in
    /// order, the buffers whose audio ends within it (with a decode buffer; without one, only
    /// played buffers go back). Whatever the callback then does — enqueue more, or flush and stop
    /// at the end of its file — this render plays all of what was handed back, so a render loop
    /// that stops once the callback has flushed gets every frame.
    ///
    /// Buffers the callback enqueues meanwhile whose audio also ends within the render go back in
    /// the same way, until none is left: a file's last buffer, read while its predecessor went
    /// back, then comes back before the render too, and the callback's flush and stop at the end
    /// of the file end this render's audio where the file ends (no silence rendered after it).
    func releaseForOfflineRender(frames: Int64) {
        while releaseOnceForOfflineRender(frames: frames) {}
    }

    /// One round of ``releaseForOfflineRender(frames:)``; whether it handed any buffer back.
    private func releaseOnceForOfflineRender(frames: Int64) -> Bool {
        let decoded = state.withLock { (state) -> [AudioQueueBufferRef] in
            guard state.disposal != .done, state.decodeBufferFrames > 0, let output = state.output,
                  let now = try? output.currentTime().sampleTime else { return [] }
            var refs: [AudioQueueBufferRef] = []
            for index in state.inFlight.indices {
                guard state.inFlight[index].end - Int64(now) <= frames else { break }
                guard let buffer = state.inFlight[index].buffer else { continue }
                state.inFlight[index].buffer = nil
                refs.append(buffer)
            }
            for ref in refs { forget(ref, &state) }
            if !refs.isEmpty { state.outputCallbacksRunning += 1 }
            return refs
        }
        guard !decoded.isEmpty else { return false }
        deliverOutput(decoded)
        state.withLock { state in
            for ref in decoded { state.resetting.remove(ref) }
            state.outputCallbacksRunning -= 1
        }
        return true
    }

    /// Hands back to the callback, in order, the queue's buffers whose audio is in the engine
    /// queue and within `kAudioQueueProperty_DecodeBufferSizeFrames` of the play position (each
    /// carries one engine buffer; their number stays within the engine's per-queue limit), and
    /// `finished`, a buffer whose audio has played. Called on the callback thread.
    func releaseDecoded(finished: AudioQueueBufferRef? = nil, decodeAhead: Bool = true) {
        let withFinished = finished != nil
        let decoded = state.withLock { (state) -> [AudioQueueBufferRef] in
            guard state.disposal != .done, decodeAhead else { return [] }
            var refs: [AudioQueueBufferRef] = []
            let limit = state.decodeBufferFrames
            let maximum = state.engine?.maximumBuffersPerQueue ?? 0
            var ahead = 0
            for index in state.inFlight.indices where limit > 0 {
                ahead += state.inFlight[index].frames
                guard let buffer = state.inFlight[index].buffer else { continue }
                guard ahead <= limit || ahead == state.inFlight[index].frames,
                      state.inFlight.count + state.buffers.count < maximum else { break }
                state.inFlight[index].buffer = nil
                refs.append(buffer)
            }
            for ref in refs { forget(ref, &state) }
            if !refs.isEmpty || withFinished { state.outputCallbacksRunning += 1 }
            return refs
        }
        let refs = (finished.map { [$0] } ?? []) + decoded
        guard !refs.isEmpty else { return }
        deliverOutput(refs)
        // A reset is over once the callback of its last buffer has run.
        state.withLock { state in
            for ref in refs { state.resetting.remove(ref) }
            state.outputCallbacksRunning -= 1
        }
    }

    /// Marks a buffer handed back: no longer enqueued. Called with `state` locked.
    private func forget(_ ref: AudioQueueBufferRef, _ state: inout State) {
        state.buffers[ref]?.isEnqueued = false
        if let index = state.enqueued.firstIndex(where: { $0.buffer == ref }) { state.enqueued.remove(at: index) }
    }

    /// Hands buffers to the output callback: the C function on this thread, or the block on its
    /// dispatch queue (synchronously for an offline device, as the core does).
    func deliverOutput(_ refs: [AudioQueueBufferRef]) {
        let queue = ref
        switch callback {
        case .output(let proc):
            let userData = Unchecked(userData)
            runCallback(counted: true) { for buffer in refs { proc(userData.value, queue, buffer) } }
        case .outputBlock(let block, let dispatch):
            onDispatchQueue(dispatch) { for buffer in refs { block(queue, buffer) } }
        case .input, .inputBlock:
            break
        }
    }

    /// Runs a C callback (output, input or property listener): posted to the queue's run loop
    /// when it was created with one — run there unless the queue is disposed of by then — or
    /// here, on the callback thread. A device that delivers inline (offline rendering) runs it
    /// here too: inside the render call, as on Apple. `counted` output callbacks are counted in
    /// `outputCallbacksPosted` until they have run (or been dropped).
    func runCallback(counted: Bool = false, _ work: @escaping () -> Void) {
        guard let (runLoop, mode) = callbackRunLoop,
              state.withLock({ $0.engine?.device.callbackDelivery }) != .inline else { return CallbackThread.run(work) }
        if counted { state.withLock { $0.outputCallbacksPosted += 1 } }
        runLoop.perform(mode: mode) { [self] in
            defer {
                if counted {
                    state.withLock { $0.outputCallbacksPosted -= 1 }
                    startIfDecodedAhead()
                }
            }
            guard state.withLock({ $0.disposal != .done }) else { return }
            CallbackThread.run(work)
        }
    }

    /// Runs one call of a block callback on the block's dispatch queue, marked as a callback:
    /// synchronously when the device delivers inline (offline, as the core does), else
    /// asynchronously — unless the queue is disposed of by then, as for a run loop (the call
    /// keeps the queue, and so its buffers, alive until it has run). `work` holds the user's block
    /// and buffer pointers, which Apple's API hands to that queue as they are.
    func onDispatchQueue(_ dispatch: any CallbackDispatchQueue, _ work: @escaping () -> Void) {
        let inline = state.withLock { $0.engine?.device.callbackDelivery == .inline }
        dispatch.run(synchronously: inline, Unchecked { [self] in
            guard state.withLock({ $0.disposal != .done }) else { return }
            CallbackThread.run(work)
        })
    }
}
