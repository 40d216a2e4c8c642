import Dispatch
import Synchronization

/// Device properties, property listeners and event streams.
extension OutputQueue {
    /// The device's sample rate (`kAudioQueueDeviceProperty_SampleRate`); listeners of
    /// ``QueueProperty/deviceSampleRate`` hear when it changes.
    public var deviceSampleRate: Double { engine?.sampleRate ?? initialDeviceSampleRate }
    /// The device's channel count (`kAudioQueueDeviceProperty_NumberChannels`).
    public var deviceChannelCount: Int { engine?.channelCount ?? initialDeviceChannelCount }

    /// Gives the queue outputs of its own on the device besides the master mix — for JACK, ports
    /// `<name>_1…<name>_N`, one per queue channel — carrying its post-gain audio.
    ///
    /// - Returns: the outputs' names (JACK: full port names), to connect in the graph.
    /// - Throws: ``AudioQueueError/Code/invalidDevice`` if the device has no per-queue outputs
    ///   (the offline device) or cannot create them; ``AudioQueueError/Code/disposalPending``.
    @discardableResult
    public func enableDirectOutputs() throws(AudioQueueError) -> [String] {
        try checkStartable()
        if let existing = state.withLock({ $0.directOutputs }) { return existing.names }
        guard let engine else { throw AudioQueueError(.invalidDevice, "queue '\(name)' has lost its engine") }
        let outputs = try engine.device.makeDirectOutputs(name: name, channelCount: format.channelCount)
        state.withLock { $0.directOutputs = outputs }
        guard engine.installDirectOutputs(outputs, slot: slot) else {
            throw AudioQueueError(.invalidRunState, "too many engine changes are waiting for the device to render")
        }
        return outputs.names
    }

    /// Whether the queue is summed into the master mix (default true). Set it to false for a
    /// queue that should sound only on its own outputs (``enableDirectOutputs()``); it is still
    /// metered. Takes effect from the next render cycle; safe from any thread.
    public var mixesIntoMaster: Bool {
        get { renderState.pointee.routeRequest.load(ordering: .relaxed) & 1 == 0 }
        set { setRoute(toMaster: newValue, directOutputs: carriesDirectOutputs) }
    }

    /// Whether the queue's own outputs (``enableDirectOutputs()``) carry its audio (default true).
    public var carriesDirectOutputs: Bool { renderState.pointee.routeRequest.load(ordering: .relaxed) & 2 == 0 }

    /// Routes the queue from the start of the next render cycle: into the master mix or not, and
    /// on its own outputs or silent there — both changed on the same cycle's first frame, so a
    /// queue moved from the master mix to its own outputs (or back) is neither doubled nor
    /// missing for a sample. Safe from any thread.
    /// - Returns: the route's generation, for ``routeAppliedSampleTime(_:)`` (it wraps after 64
    ///   routes: ask within a few cycles).
    @discardableResult
    public func setRoute(toMaster: Bool, directOutputs: Bool) -> UInt8 {
        var old = renderState.pointee.routeRequest.load(ordering: .relaxed)
        while true {
            let generation = ((old >> 2) &+ 1) & 0x3F
            let new = generation << 2 | (toMaster ? 0 : 1) | (directOutputs ? 0 : 2)
            let (exchanged, seen) = renderState.pointee.routeRequest.compareExchange(expected: old, desired: new,
                                                                                     ordering: .acquiringAndReleasing)
            if exchanged { return generation }
            old = seen
        }
    }

    /// The device sample of the first cycle that rendered the route of `generation` (or a later
    /// one), once the render thread has taken it; nil until then.
    public func routeAppliedSampleTime(_ generation: UInt8) -> Int64? {
        let applied = renderState.pointee.routeAppliedGeneration.load(ordering: .acquiring)
        // (Wrapping: a generation less than half the range ahead counts as later.)
        guard (applied &- generation) & 0x3F < 32 else { return nil }
        let at = renderState.pointee.routeAppliedAt.load(ordering: .relaxed)
        return at >= 0 ? at : nil
    }

    /// The names of the queue's own outputs (empty unless ``enableDirectOutputs()`` was called).
    public var directOutputNames: [String] { state.withLock { $0.directOutputs?.names ?? [] } }

    func takeDirectOutputs() -> DirectOutputs? {
        state.withLock { state in
            defer { state.directOutputs = nil }
            return state.directOutputs
        }
    }

    /// The device's name (`kAudioQueueProperty_CurrentDevice`).
    public var currentDevice: String { deviceName }

    // MARK: - Listeners and events

    /// Calls `listener` (on the queue's callback executor) whenever `property` changes: Audio
    /// Queue's `AudioQueueAddPropertyListener`.
    /// - Returns: a token for ``removePropertyListener(_:)``.
    /// - Throws: ``AudioQueueError/Code/invalidProperty`` for the meter properties, which change
    ///   continuously and cannot be listened to; ``AudioQueueError/Code/disposalPending``.
    @discardableResult
    public func addPropertyListener(_ property: QueueProperty,
                                    _ listener: @escaping @Sendable (OutputQueue, QueueProperty) -> Void)
        throws(AudioQueueError) -> PropertyListenerToken
    {
        if let error = state.withLock({ $0.pool.usableError() }) { throw error }
        return try callbacks.addListener(property, queueName: name, listener)
    }

    /// Removes a listener: Audio Queue's `AudioQueueRemovePropertyListener`.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` for a token not registered here.
    public func removePropertyListener(_ token: PropertyListenerToken) throws(AudioQueueError) {
        try callbacks.removeListener(token, queueName: name)
    }

    /// An asynchronous sequence of the queue's events from now on (starts, stops, completed
    /// buffers, discontinuities). Each access creates a new sequence; it finishes when the queue is
    /// disposed of.
    public var events: AsyncStream<QueueEvent> { callbacks.events }

    /// Calls `handler` on the queue's callback executor for every event from now on (the same
    /// events as ``events``, delivered synchronously: with an offline device, before `render`
    /// returns).
    /// - Returns: a token for ``removeEventHandler(_:)``.
    @discardableResult
    public func addEventHandler(_ handler: @escaping @Sendable (OutputQueue, QueueEvent) -> Void) -> Int {
        callbacks.addHandler(handler)
    }

    /// Removes a handler added with ``addEventHandler(_:)``.
    public func removeEventHandler(_ token: Int) {
        callbacks.removeHandler(token)
    }
}
