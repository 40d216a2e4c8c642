import Dispatch
import Synchronization

/// A recording queue: Audio Queue's input `AudioQueueRef`, in Swift.
///
/// Allocate a few buffers and enqueue them, then ``start(at:)``. The render thread copies every
/// frame of the device's input into a ring of its own (``ringFrames``, seconds long); the engine's
/// callback thread fills your enqueued buffers from that ring, converting to the queue's sample
/// format, and hands each full buffer to the input callback with the device sample time of its
/// first frame. Write it away and enqueue it again.
///
/// **Nothing is dropped silently.** If your callback is late and no buffer is free, frames wait
/// in the ring. Only if the ring overflows are frames lost — and then an `overflow`
/// ``Discontinuity`` says how many and from which sample time, and exactly that much silence is
/// put in their place, so the recording's timeline stays true. A buffer never spans a
/// discontinuity of time (a pause, say): it is delivered early instead, so every buffer's frames
/// are contiguous from its start time.
///
/// Thread safety: every method may be called from any thread (not the realtime thread),
/// including from the queue's own callbacks.
public final class InputQueue: QueueBufferOwner, @unchecked Sendable {
    /// The queue's name, for reports.
    public let name: String
    /// The format of the buffers the queue fills.
    public let format: StreamFormat
    /// Where the input callback and listeners run.
    public var callbackExecutor: CallbackExecutor { callbacks.executor }

    weak var engine: Engine?
    let slot: Int32
    let renderState: UnsafeMutablePointer<InputRenderState>
    /// The engine's render memory, where the buffers' blocks live.
    let memory: RenderMemory
    private let callback: @Sendable (InputQueue, QueueBuffer, Int64, Int) -> Void
    private let state: Mutex<UserState>
    private let callbacks: QueueCallbacks<InputQueue>

    struct UserState: @unchecked Sendable {
        var pool: BufferPool
        var fifo: [QueueBuffer] = []
        var filled = 0
        var fillStart: Int64 = 0
        var nextTime: Int64 = 0
        var pendingSilence = 0
        var isRunning = false
        var scratch: [Float] = []
        var compensatesCaptureLatency = true
    }

    init(engine: Engine, name: String, format: StreamFormat, slot: Int32, renderState: UnsafeMutablePointer<InputRenderState>,
         callbackExecutor: CallbackExecutor, callback: @escaping @Sendable (InputQueue, QueueBuffer, Int64, Int) -> Void) {
        self.engine = engine
        self.name = name
        self.format = format
        self.slot = slot
        self.renderState = renderState
        memory = engine.audioMemory
        callbacks = QueueCallbacks(executor: callbackExecutor, delivery: engine.device.callbackDelivery)
        self.callback = callback
        state = Mutex(UserState(pool: BufferPool(queueName: name, limit: 1024)))
    }

    deinit {
        renderState.pointee.deallocateStorage()
        renderState.deinitialize(count: 1)
        renderState.deallocate()
    }

    /// Frames of captured audio the queue can hold while your callback is late.
    public var ringFrames: Int { renderState.pointee.capacityFrames }

    /// Frames captured since the queue was created.
    public var capturedFrames: Int64 { renderState.pointee.capturedFrames.load(ordering: .relaxed) }

    /// Frames lost to ring overflows since the queue was created (each loss is also reported as
    /// an `overflow` discontinuity and replaced by silence).
    public var lostFrames: Int64 { renderState.pointee.lostFrames.load(ordering: .relaxed) }

    /// Reports frames that a layer recording through this queue had to drop after the queue
    /// delivered them (for example a converter's leftover that no buffer took before a new
    /// recording began): counts them in ``lostFrames`` and reports an `overflow`
    /// ``Discontinuity`` at device sample time `sampleTime`, exactly as a ring overflow is
    /// reported, so nothing is lost silently.
    ///
    /// Thread safety: any thread except the realtime thread.
    public func reportLostFrames(_ count: Int64, at sampleTime: Int64) {
        guard count > 0 else { return }
        renderState.pointee.lostFrames.wrappingAdd(count, ordering: .relaxed)
        let discontinuity = Discontinuity(kind: .overflow, sampleTime: sampleTime, length: count, queues: [name])
        engine?.record(discontinuity)
        yield(.discontinuity(discontinuity))
    }

    /// Frames the device skipped while the queue ran (its clock jumped over them in an xrun),
    /// recorded as silence so the timeline stays true (``fillsSkippedFrames``). The xrun itself is
    /// reported by the device.
    public var skippedFrames: Int64 { renderState.pointee.skippedFrames.load(ordering: .relaxed) }

    /// Whether frames the device skips in an xrun are recorded as silence (true, the default:
    /// right for a hardware capture, whose audio in that time was lost, and keeps the take on the
    /// wall clock) or left out (false: right when the inputs are other clients' outputs, which JACK
    /// skipped too, so their stream goes on unbroken after the xrun — the take holds exactly what
    /// they played, as `jack_capture` records it). Left-out frames are counted in
    /// ``leftOutFrames``; the buffer after the skip carries the later start time. Any thread; the
    /// next cycle follows it.
    public var fillsSkippedFrames: Bool {
        get { renderState.pointee.fillsSkippedFrames.load(ordering: .relaxed) }
        set { renderState.pointee.fillsSkippedFrames.store(newValue, ordering: .relaxed) }
    }

    /// Device frames the device skipped while the queue ran and that were left out of the stream
    /// (``fillsSkippedFrames`` false): how far the take's frames fall behind device time.
    public var leftOutFrames: Int64 { renderState.pointee.leftOutFrames.load(ordering: .relaxed) }

    /// The buffer size for `seconds` of audio in `format`, capped at `maximumBytes`: the
    /// `DeriveBufferSize` helper of Audio Queue's recording guide. Always a whole number of frames.
    public static func bufferByteSize(seconds: Double, format: StreamFormat, maximumBytes: Int = 0x50000) -> Int {
        let frames = max(1, Int((seconds * format.sampleRate).rounded(.up)))
        let bytes = min(frames * format.bytesPerFrame, max(format.bytesPerFrame, maximumBytes))
        return bytes - bytes % format.bytesPerFrame
    }

    // MARK: - Buffers

    /// Allocates a buffer of `byteCapacity` bytes: Audio Queue's `AudioQueueAllocateBuffer`.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` for a capacity without a whole frame;
    ///   ``AudioQueueError/Code/disposalPending``.
    public func allocateBuffer(byteCapacity: Int) throws(AudioQueueError) -> QueueBuffer {
        try BufferPool.checkCapacity(bytes: byteCapacity, format: format)
        return try state.withLock { state in
            state.pool.allocate { QueueBuffer(owner: self, format: format, byteCapacity: byteCapacity, convertedFrames: 1, memory: memory) }
        }.get()
    }

    /// Allocates a buffer holding `frameCapacity` frames.
    public func allocateBuffer(frameCapacity: Int) throws(AudioQueueError) -> QueueBuffer {
        try allocateBuffer(byteCapacity: BufferPool.byteCapacity(frames: frameCapacity, format: format))
    }

    /// Frees a buffer: Audio Queue's `AudioQueueFreeBuffer`.
    /// - Throws: ``AudioQueueError/Code/invalidBuffer`` (not this queue's),
    ///   ``AudioQueueError/Code/bufferInQueue`` while it is enqueued.
    public func freeBuffer(_ buffer: QueueBuffer) throws(AudioQueueError) {
        if let error = state.withLock({ $0.pool.free(buffer) }) { throw error }
    }

    /// Hands a buffer to the queue to be filled: Audio Queue's `AudioQueueEnqueueBuffer`.
    /// - Throws: ``AudioQueueError/Code/invalidBuffer``, ``AudioQueueError/Code/bufferEnqueuedTwice``,
    ///   ``AudioQueueError/Code/disposalPending``.
    public func enqueue(_ buffer: QueueBuffer) throws(AudioQueueError) {
        let error: AudioQueueError? = state.withLock { state in
            if let error = state.pool.enqueueError(buffer) { return error }
            buffer.isEnqueued = true
            buffer.byteSize = 0
            state.fifo.append(buffer)
            return nil
        }
        if let error { throw error }
    }

    /// Input queues take no per-buffer parameters: Audio Queue's
    /// `AudioQueueEnqueueBufferWithParameters` on an input queue.
    /// - Throws: always ``AudioQueueError/Code/invalidQueueType``.
    public func enqueue(_ buffer: QueueBuffer, startTime: Int64?, parameters: [ParameterEvent]) throws(AudioQueueError) {
        throw AudioQueueError(.invalidQueueType, "input queues take no start times, trims or parameters; use enqueue(_:)")
    }

    func isEnqueued(_ buffer: QueueBuffer) -> Bool { state.withLock { _ in buffer.isEnqueued } }

    // MARK: - Run state

    private func send(_ kind: QueueCommand.Kind, time: Int64 = -1) throws(AudioQueueError) {
        try sendMessage(QueueCommand(kind: kind, segment: nil, time: time).message)
    }

    private func sendMessage(_ message: RingMessage) throws(AudioQueueError) {
        // Under the user-state lock: the command ring has one producer at a time.
        let result: AudioQueueError? = state.withLock { state in
            if let error = state.pool.usableError() { return error }
            return renderState.pointee.commands.push(message) ? nil
                : AudioQueueError(.invalidRunState, "input queue '\(name)' has too many pending commands; the device is not rendering")
        }
        if let result { throw result }
    }

    /// Starts (or resumes) recording: Audio Queue's `AudioQueueStart`. Starts the device if needed.
    /// - Parameter sampleTime: the device sample time of the first frame to record; nil for the
    ///   next rendered frame. A start at the same time as output queues records in sample
    ///   alignment with them.
    public func start(at sampleTime: Int64? = nil) throws(AudioQueueError) {
        guard let engine else { throw AudioQueueError(.invalidDevice, "input queue '\(name)' has lost its engine") }
        if let sampleTime, sampleTime < 0 {
            throw AudioQueueError(.invalidParameter, "start time \(sampleTime) is negative; device sample time starts at 0")
        }
        try engine.startDevice()
        guard format.sampleRate == engine.device.sampleRate else {
            throw AudioQueueError(.cannotStart,
                "the device runs at \(Int(engine.device.sampleRate)) Hz now; input queue '\(name)' records at \(Int(format.sampleRate)) Hz; create an input queue at the new rate")
        }
        let latency = !renderState.pointee.capturesOutput && compensatesCaptureLatency ? engine.device.captureLatency : 0
        renderState.pointee.requestedLatency.store(Int64(max(0, latency)), ordering: .releasing)
        var message = QueueCommand(kind: .start, segment: nil, time: sampleTime ?? -1).message
        message.value = Int64(format.sampleRate.rounded())
        try sendMessage(message)
    }

    /// Why the engine stopped the queue, or nil: the device's sample rate changed during a run
    /// (the queue stopped on the change's sample rather than record at the wrong rate).
    public var stopError: AudioQueueError? {
        let rate = renderState.pointee.invalidatedByRate.load(ordering: .acquiring)
        guard rate != 0 else { return nil }
        return AudioQueueError(.cannotStart,
            "the device's sample rate changed to \(rate) Hz; input queue '\(name)' records at \(Int(format.sampleRate)) Hz and stopped on the change; create an input queue at the new rate")
    }

    /// Whether the queue places each captured frame at the device time it was *heard* — its
    /// capture time minus the device's ``AudioDevice/captureLatency`` (JACK: the capture latency
    /// of the ports connected to the inputs, from JACK's latency ranges) — rather than at the time
    /// it reached the device. On by default; it applies to queues recording the device input (the
    /// mix has no capture latency) and takes effect at the next start from stopped, so one run
    /// keeps one timeline. Times handed to the callback, ``start(at:)`` and
    /// ``stop(atSampleTime:)`` are then all on that "heard" timeline.
    public var compensatesCaptureLatency: Bool {
        get { state.withLock { $0.compensatesCaptureLatency } }
        set { state.withLock { $0.compensatesCaptureLatency = newValue } }
    }

    /// The capture latency in frames this queue compensates in its current (or last) run.
    public var compensatedLatency: Int64 { renderState.pointee.requestedLatency.load(ordering: .acquiring) }

    /// Resumes a paused queue.
    public func resume() throws(AudioQueueError) { try start() }

    /// Pauses recording (frames during the pause are not recorded): Audio Queue's `AudioQueuePause`.
    public func pause() throws(AudioQueueError) { try send(.pause) }

    /// Stops recording: Audio Queue's `AudioQueueStop`. Everything captured up to the stop is
    /// still delivered (the last buffer partly filled); the is-running listener fires after it.
    /// - Parameter immediately: true stops at the next rendered frame; false records until the
    ///   buffer being filled now is full.
    public func stop(immediately: Bool = true) throws(AudioQueueError) {
        if immediately { try send(.stopNow); return }
        let end: Int64 = state.withLock { state in
            guard let buffer = state.fifo.first else { return -1 }
            let start = state.filled > 0 ? state.fillStart : state.nextTime
            return start + Int64(buffer.frameCapacity)
        }
        try send(.stopNow, time: end)
    }

    /// Stops recording before device sample time `sampleTime`: the last recorded frame is the one
    /// at `sampleTime − 1`. May be called right after ``start(at:)`` to record an exact span.
    public func stop(atSampleTime sampleTime: Int64) throws(AudioQueueError) {
        guard sampleTime >= 0 else {
            throw AudioQueueError(.invalidParameter, "stop time \(sampleTime) is negative")
        }
        try send(.stopNow, time: sampleTime)
    }

    /// Hands every enqueued buffer back through the callback (the one being filled with what it
    /// holds, the others empty) and discards captured frames not yet delivered: Audio Queue's
    /// `AudioQueueReset`. Keeps recording.
    public func reset() throws(AudioQueueError) {
        var deliveries: [(QueueBuffer, Int64, Int)] = []
        let error: AudioQueueError? = state.withLock { state in
            if let error = state.pool.usableError() { return error }
            let write = renderState.pointee.writeIndex.load(ordering: .acquiring)
            renderState.pointee.readIndex.store(write, ordering: .releasing)
            for (index, buffer) in state.fifo.enumerated() {
                buffer.isEnqueued = false
                let frames = index == 0 ? state.filled : 0
                buffer.frameCount = frames
                deliveries.append((buffer, index == 0 ? state.fillStart : state.nextTime, frames))
            }
            state.fifo.removeAll()
            state.filled = 0
            state.pendingSilence = 0
            return nil
        }
        if let error { throw error }
        for (buffer, start, frames) in deliveries { deliverBuffer(buffer, start: start, frames: frames) }
    }

    /// Disposes of the queue and its buffers: Audio Queue's `AudioQueueDispose`. No callbacks
    /// follow.
    public func dispose(immediately: Bool = true) throws(AudioQueueError) {
        let error: AudioQueueError? = state.withLock { state in
            if let error = state.pool.usableError() { return error }
            state.pool.disposal = .immediate
            return renderState.pointee.commands.push(QueueCommand(kind: .disposeNow, segment: nil, time: 0).message) ? nil :
                AudioQueueError(.invalidRunState, "input queue '\(name)' has too many pending commands")
        }
        if let error { throw error }
    }

    /// Whether ``dispose(immediately:)`` has been called.
    public var isDisposed: Bool { state.withLock { $0.pool.disposal != .none } }

    /// Whether the queue is recording (`kAudioQueueProperty_IsRunning`): true from its first
    /// recorded frame until its last buffer has been delivered after a stop.
    public var isRunning: Bool { state.withLock { $0.isRunning } }

    // MARK: - Metering

    /// Whether level metering is on (`kAudioQueueProperty_EnableLevelMetering`). Off by default.
    public var isLevelMeteringEnabled: Bool {
        get { renderState.pointee.meteringEnabled.load(ordering: .relaxed) }
        set { renderState.pointee.meteringEnabled.store(newValue, ordering: .relaxed) }
    }

    /// Peak and average (RMS) power per queue channel over the last ≈50 ms, linear
    /// (`kAudioQueueProperty_CurrentLevelMeter`).
    /// - Throws: ``AudioQueueError/Code/invalidProperty`` when metering is off.
    public func currentLevelMeter() throws(AudioQueueError) -> [ChannelLevel] {
        guard isLevelMeteringEnabled else {
            throw AudioQueueError(.invalidProperty, "level metering is off on input queue '\(name)'; set isLevelMeteringEnabled = true first")
        }
        return renderState.pointee.meter.read()
    }

    /// The same levels in dBFS (`kAudioQueueProperty_CurrentLevelMeterDB`).
    public func currentLevelMeterDB() throws(AudioQueueError) -> [ChannelLevel] {
        try currentLevelMeter().map(\.decibels)
    }

    /// The levels over the most recent window with the window's place on the device timeline
    /// (the device sample time of its first captured frame, and its length); linear.
    /// - Throws: ``AudioQueueError/Code/invalidProperty`` when metering is off.
    public func currentLevelReading() throws(AudioQueueError) -> LevelReading {
        guard isLevelMeteringEnabled else {
            throw AudioQueueError(.invalidProperty, "level metering is off on input queue '\(name)'; set isLevelMeteringEnabled = true first")
        }
        return renderState.pointee.meter.reading()
    }

    /// The largest peak per channel since metering was enabled or ``resetPeakHold()``.
    public var peakHold: [Float] { renderState.pointee.meter.readHold() }

    /// Starts a new ``peakHold``.
    public func resetPeakHold() { renderState.pointee.meter.resetHold() }

    // MARK: - Listeners and events

    /// Calls `listener` on the callback executor when `property` changes (``QueueProperty/isRunning``).
    /// - Throws: ``AudioQueueError/Code/invalidProperty`` for properties that cannot be listened to.
    @discardableResult
    public func addPropertyListener(_ property: QueueProperty,
                                    _ listener: @escaping @Sendable (InputQueue, QueueProperty) -> Void)
        throws(AudioQueueError) -> PropertyListenerToken
    {
        try callbacks.addListener(property, queueName: name, listener)
    }

    /// Removes a listener.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` for an unknown token.
    public func removePropertyListener(_ token: PropertyListenerToken) throws(AudioQueueError) {
        try callbacks.removeListener(token, queueName: name)
    }

    /// Calls `handler` on the callback executor for every event from now on (started, stopped,
    /// discontinuities); synchronously with an offline device.
    @discardableResult
    public func addEventHandler(_ handler: @escaping @Sendable (InputQueue, QueueEvent) -> Void) -> Int {
        callbacks.addHandler(handler)
    }

    /// Removes a handler added with ``addEventHandler(_:)``.
    public func removeEventHandler(_ token: Int) {
        callbacks.removeHandler(token)
    }

    /// The queue's events as an asynchronous sequence (finishes when the queue is disposed of).
    public var events: AsyncStream<QueueEvent> { callbacks.events }

    // MARK: - Render events and delivery (callback thread)

    /// The ring position up to which frames may be read now (taken before events are drained).
    func captureLimit() -> Int { renderState.pointee.writeIndex.load(ordering: .acquiring) }

    func handle(_ event: RenderEvent) {
        switch event.kind {
        case .inputStarted:
            let changed = state.withLock { state in
                defer { state.isRunning = true }
                return !state.isRunning
            }
            yield(.started(sampleTime: event.sampleTime))
            if changed { notify(.isRunning) }
        case .inputPaused:
            yield(.paused(sampleTime: event.sampleTime))
        case .inputOverflow:
            let discontinuity = Discontinuity(kind: .overflow, sampleTime: event.sampleTime, length: event.value, queues: [name])
            engine?.record(discontinuity)
            yield(.discontinuity(discontinuity))
        default:
            break
        }
    }

    /// Fills enqueued buffers from the ring (up to ring position `limit`), applying marks, and
    /// delivers the full ones; returns whether anything happened.
    func service(upTo limit: Int) -> Bool {
        var deliveries: [(QueueBuffer, Int64, Int)] = []
        var stopped: Int64?
        let rs = renderState
        state.withLock { state in
            if state.pool.disposal != .none { return }
            var read = rs.pointee.readIndex.load(ordering: .relaxed)
            let channels = format.channelCount
            let capacity = rs.pointee.capacityFrames
            while true {
                // Marks placed at the current position.
                let marksRead = rs.pointee.marksRead.load(ordering: .relaxed)
                if state.pendingSilence == 0, marksRead < rs.pointee.marksWritten.load(ordering: .acquiring) {
                    let mark = rs.pointee.marks[marksRead % rs.pointee.marksCapacity]
                    if mark.index <= read {
                        rs.pointee.marksRead.store(marksRead + 1, ordering: .releasing)
                        if mark.silence < 0 {
                            if state.filled > 0, let buffer = state.fifo.first { complete(buffer, &state, &deliveries) }
                            stopped = mark.sampleTime
                            continue
                        }
                        let resumeTime = mark.sampleTime - Int64(mark.silence)
                        if state.filled > 0 && resumeTime != state.nextTime, let buffer = state.fifo.first {
                            complete(buffer, &state, &deliveries)
                        }
                        state.nextTime = resumeTime
                        state.pendingSilence = mark.silence
                        continue
                    }
                }
                guard let buffer = state.fifo.first else { break }
                let space = buffer.frameCapacity - state.filled
                let n: Int
                if state.pendingSilence > 0 {
                    n = min(space, state.pendingSilence)
                    if state.filled == 0 { state.fillStart = state.nextTime }
                    (buffer.data + state.filled * format.bytesPerFrame).initializeMemory(as: UInt8.self, repeating: 0,
                                                                                        count: n * format.bytesPerFrame)
                    state.pendingSilence -= n
                } else {
                    // Frames up to the next mark or the limit.
                    var end = limit
                    let marksNow = rs.pointee.marksRead.load(ordering: .relaxed)
                    if marksNow < rs.pointee.marksWritten.load(ordering: .acquiring) {
                        end = min(end, rs.pointee.marks[marksNow % rs.pointee.marksCapacity].index)
                    }
                    n = min(space, end - read)
                    if n <= 0 { break }
                    if state.filled == 0 { state.fillStart = state.nextTime }
                    var done = 0
                    while done < n {
                        let position = (read + done) % capacity
                        let chunk = min(n - done, capacity - position)
                        PCMCodec.encode(rs.pointee.ring + position * channels, sampleCount: chunk * channels,
                                        format: format.sampleFormat,
                                        into: buffer.data + (state.filled + done) * format.bytesPerFrame)
                        done += chunk
                    }
                    read += n
                    rs.pointee.readIndex.store(read, ordering: .releasing)
                }
                state.filled += n
                state.nextTime += Int64(n)
                if state.filled == buffer.frameCapacity { complete(buffer, &state, &deliveries) }
            }
        }
        for (buffer, start, frames) in deliveries { deliverBuffer(buffer, start: start, frames: frames) }
        if let stopped {
            // Not running only once the last buffers are in the callback's hands.
            state.withLock { $0.isRunning = false }
            yield(.stopped(sampleTime: stopped))
            notify(.isRunning)
        }
        return !deliveries.isEmpty || stopped != nil
    }

    private func complete(_ buffer: QueueBuffer, _ state: inout UserState, _ deliveries: inout [(QueueBuffer, Int64, Int)]) {
        state.fifo.removeFirst()
        buffer.isEnqueued = false
        buffer.frameCount = state.filled
        deliveries.append((buffer, state.fillStart, state.filled))
        state.filled = 0
    }

    private func deliverBuffer(_ buffer: QueueBuffer, start: Int64, frames: Int) {
        let callback = self.callback
        callbacks.deliver { callback(self, buffer, start, frames) }
    }

    private func yield(_ event: QueueEvent) { callbacks.yield(event, from: self) }

    private func notify(_ property: QueueProperty) { callbacks.notify(property, from: self) }

    /// Lets go of the buffers and ends the streams once the render thread has let go.
    func releaseAll() {
        let released = state.withLock { state -> Bool in
            guard state.pool.disposal != .done else { return false }
            state.pool.releaseAll()
            state.fifo.removeAll()
            state.isRunning = false
            return true
        }
        if released { callbacks.close() }
    }
}
