import Lockstep

// Property listeners: adding and removing them, and calling them when a property changes.
extension CompatQueue {
    /// A property listener: the C function and user data to call when property `id` changes.
    struct Listener {
        var id: AudioQueuePropertyID
        var proc: AudioQueuePropertyListenerProc
        var userData: UnsafeMutableRawPointer?

        func matches(_ id: AudioQueuePropertyID, _ proc: AudioQueuePropertyListenerProc,
                     _ userData: UnsafeMutableRawPointer?) -> Bool {
            self.id == id && self.userData == userData
                && unsafeBitCast(self.proc, to: UnsafeRawPointer.self) == unsafeBitCast(proc, to: UnsafeRawPointer.self)
        }
    }

    func addListener(_ id: AudioQueuePropertyID, _ proc: AudioQueuePropertyListenerProc,
                     _ userData: UnsafeMutableRawPointer?) throws(AudioQueueError) {
        guard Self.listenable.contains(id) else {
            if Self.meters.contains(id) {
                throw AudioQueueError(.invalidProperty, "level meters change continuously and cannot be listened to; read them when you need them")
            }
            throw unknownProperty(id)
        }
        try state.withLock { (state) throws(AudioQueueError) in
            try state.checkDisposal()
            state.listeners.append(Listener(id: id, proc: proc, userData: userData))
        }
    }

    func removeListener(_ id: AudioQueuePropertyID, _ proc: AudioQueuePropertyListenerProc,
                        _ userData: UnsafeMutableRawPointer?) throws(AudioQueueError) {
        try state.withLock { (state) throws(AudioQueueError) in
            try state.checkDisposal()
            guard let index = state.listeners.firstIndex(where: { $0.matches(id, proc, userData) }) else {
                throw AudioQueueError(kAudio_ParamError, "no listener for '\(fourCharCodeString(id))' with this function and user data")
            }
            state.listeners.remove(at: index)
        }
    }

    func notify(_ targets: [Listener], _ id: AudioQueuePropertyID) {
        let queue = ref
        let targets = Unchecked(targets)
        runCallback { for listener in targets.value { listener.proc(listener.userData, queue, id) } }
    }

    func notifyListeners(_ id: AudioQueuePropertyID) {
        notify(state.withLock { $0.listeners.filter { $0.id == id } }, id)
    }
}
