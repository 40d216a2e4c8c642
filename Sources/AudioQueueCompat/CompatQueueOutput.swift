import Dispatch
import Lockstep

// The output side: buffers the engine has played come back and go to the user's output callback
// (a C function on the callback thread, or a block on its dispatch queue).
extension CompatQueue {
    /// An engine buffer has played. Called on the callback thread (or the offline render thread).
    func outputDone(_ engineBuffer: QueueBuffer) {
        guard let ref = takeBack(engineBuffer) else { return }
        state.withLock { $0.outputCallbacksRunning += 1 }
        deliverOutput([ref])
        // A reset is over once the callback of its last buffer has run.
        state.withLock { state in
            state.resetting.remove(ref)
            state.outputCallbacksRunning -= 1
        }
    }

    /// Hands buffers to the output callback: the C function on this thread, or the block on its
    /// dispatch queue (synchronously for an offline device, as the core does).
    func deliverOutput(_ refs: [AudioQueueBufferRef]) {
        let queue = ref
        switch callback {
        case .output(let proc):
            CallbackThread.run { for buffer in refs { proc(userData, queue, buffer) } }
        case .outputBlock(let block, let dispatch):
            onDispatchQueue(dispatch) { for buffer in refs { block(queue, buffer) } }
        case .input, .inputBlock:
            break
        }
    }

    /// Runs one call of a block callback on the block's dispatch queue, marked as a callback:
    /// synchronously when the device delivers inline (offline, as the core does), else
    /// asynchronously. `work` holds
    /// the user's block and buffer pointers, which Apple's API hands to that queue as they are.
    func onDispatchQueue(_ dispatch: DispatchQueue, _ work: @escaping () -> Void) {
        let work = Unchecked(work)
        if state.withLock({ $0.engine?.device.callbackDelivery == .inline }) {
            dispatch.sync { CallbackThread.run(work.value) }
        } else {
            dispatch.async { CallbackThread.run(work.value) }
        }
    }
}
