import Dispatch
import Synchronization

/// A playback queue: Audio Queue's output `AudioQueueRef`, in Swift.
///
/// Allocate a few buffers, fill and enqueue them, then ``start(at:)``. The queue plays its buffers
/// in order on the engine's shared timeline and hands each one back through the output callback
/// when it is done, so you can refill and re-enqueue it. Buffers may carry a start time (in queue
/// sample time), trims and parameter events; a buffer without a start time follows the previous
/// one gaplessly.
///
/// Format, channel and rate conversion happen when a buffer is enqueued, on the enqueuing thread,
/// so the render thread mixes ready floats only.
///
/// **Underruns.** If a running queue runs out of buffers, it plays silence and reports a
/// ``Discontinuity`` of kind `underrun` with the device sample time it began and its exact length.
/// By default (``lateBufferPolicy`` = ``LateBufferPolicy/skipToStayAligned``) the queue's clock
/// keeps running meanwhile, so audio enqueued late plays at the time it was scheduled for — the
/// late part is skipped — and the queue stays aligned with the others; with
/// ``LateBufferPolicy/playInFull`` a late buffer plays in full and the queue's timeline slides.
///
/// Thread safety: every method may be called from any thread (not the realtime thread), including
/// from the queue's own callbacks.
public final class OutputQueue: QueueBufferOwner, @unchecked Sendable {
    /// The queue's name, used in discontinuity reports and port names.
    public let name: String
    /// The format of the buffers the queue plays (`kAudioQueueProperty_StreamDescription`).
    public let format: StreamFormat
    /// Where the output callback and property listeners run.
    public var callbackExecutor: CallbackExecutor { callbacks.executor }

    weak var engine: Engine?
    let slot: Int32
    let renderState: UnsafeMutablePointer<QueueRenderState>
    /// The engine's render memory: the buffers' blocks, and (``Engine/stateMemory``) the render state's.
    let memory: RenderMemory
    let stateMemory: RenderMemory
    /// Device frames per queue frame.
    let ratio: Double
    /// The device rate the queue converts to (the device's rate when the queue was created).
    let deviceRate: Double
    let initialDeviceSampleRate: Double
    let initialDeviceChannelCount: Int
    let deviceName: String
    private let callback: @Sendable (OutputQueue, QueueBuffer) -> Void
    private let state: Mutex<UserState>
    private let callbacks: QueueCallbacks<OutputQueue>

    struct UserState: @unchecked Sendable {
        var pool: BufferPool
        var internalSegments: Set<UnsafeMutablePointer<Segment>> = []
        var nextStart: Int64 = 0
        var pendingFrames = 0
        var isRunning = false
        var converter: (any SampleRateConverter)?
        var converterHasInput = false
        var scratch: [Float] = []
        var volume: Float = 1
        var mixerGainDB: Double = 0
        var timelines: Set<ObjectIdentifier> = []
        var directOutputs: DirectOutputs?
    }

    init(engine: Engine, name: String, format: StreamFormat, slot: Int32,
         renderState: UnsafeMutablePointer<QueueRenderState>, converter: (any SampleRateConverter)?,
         callbackExecutor: CallbackExecutor, callback: @escaping @Sendable (OutputQueue, QueueBuffer) -> Void) {
        self.engine = engine
        self.name = name
        self.format = format
        self.slot = slot
        self.renderState = renderState
        memory = engine.audioMemory
        stateMemory = engine.stateMemory
        callbacks = QueueCallbacks(executor: callbackExecutor, delivery: engine.device.callbackDelivery)
        self.callback = callback
        initialDeviceSampleRate = engine.sampleRate
        initialDeviceChannelCount = engine.channelCount
        deviceName = engine.device.name
        ratio = engine.sampleRate / format.sampleRate
        deviceRate = engine.sampleRate
        var initial = UserState(pool: BufferPool(queueName: name, limit: engine.maximumBuffersPerQueue))
        initial.converter = converter
        state = Mutex(initial)
    }

    // MARK: - Buffers

    /// Allocates a buffer of `byteCapacity` bytes: Audio Queue's `AudioQueueAllocateBuffer`.
    ///
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` if the capacity holds no whole frame or
    ///   the queue already has ``Engine/maximumBuffersPerQueue`` buffers;
    ///   ``AudioQueueError/Code/disposalPending`` after ``dispose(immediately:)``.
    public func allocateBuffer(byteCapacity: Int) throws(AudioQueueError) -> QueueBuffer {
        try BufferPool.checkCapacity(bytes: byteCapacity, format: format)
        let frames = byteCapacity / format.bytesPerFrame
        let converted: Int
        let latency = state.withLock { $0.converter?.maximumLatencyFrames ?? 0 }
        if playsInPlace { converted = 0 } else if ratio == 1 { converted = frames } else {
            converted = Int((Double(frames) * ratio).rounded(.up)) + latency + 8
        }
        return try state.withLock { state in
            state.pool.allocate { QueueBuffer(owner: self, format: format, byteCapacity: byteCapacity, convertedFrames: converted, memory: memory) }
        }.get()
    }

    /// Allocates a buffer holding `frameCapacity` frames.
    public func allocateBuffer(frameCapacity: Int) throws(AudioQueueError) -> QueueBuffer {
        try allocateBuffer(byteCapacity: BufferPool.byteCapacity(frames: frameCapacity, format: format))
    }

    /// Frees a buffer: Audio Queue's `AudioQueueFreeBuffer`.
    ///
    /// - Throws: ``AudioQueueError/Code/invalidBuffer`` if the buffer isn't this queue's (or was
    ///   freed); ``AudioQueueError/Code/bufferInQueue`` while it is enqueued.
    public func freeBuffer(_ buffer: QueueBuffer) throws(AudioQueueError) {
        if let error = state.withLock({ $0.pool.free(buffer) }) { throw error }
    }

    func isEnqueued(_ buffer: QueueBuffer) -> Bool {
        state.withLock { _ in buffer.isEnqueued }
    }

    // MARK: - Enqueue

    /// Enqueues a filled buffer: Audio Queue's `AudioQueueEnqueueBuffer` and
    /// `AudioQueueEnqueueBufferWithParameters`.
    ///
    /// - Parameters:
    ///   - buffer: a buffer of this queue holding ``QueueBuffer/byteSize`` bytes of audio.
    ///   - startTime: when the buffer's first (untrimmed) frame plays, in queue sample time (frames
    ///     at the queue's rate since the queue started); nil to follow the previous buffer
    ///     gaplessly. Start times must ascend: a buffer may not start before the previous one ends.
    ///   - trimFramesAtStart: frames to skip at the start of the buffer.
    ///   - trimFramesAtEnd: frames to skip at the end.
    ///   - parameters: parameter values applied when the buffer starts playing (Volume, Pan, VolumeRampTime).
    /// - Returns: the queue sample time at which the buffer will start playing.
    /// - Throws: ``AudioQueueError/Code/invalidBuffer`` (not this queue's buffer),
    ///   ``AudioQueueError/Code/bufferEnqueuedTwice``, ``AudioQueueError/Code/bufferEmpty``,
    ///   ``AudioQueueError/Code/invalidParameter`` (bad trims, start time before the previous
    ///   buffer's end, bad parameter value), ``AudioQueueError/Code/disposalPending``.
    @discardableResult
    public func enqueue(_ buffer: QueueBuffer, startTime: Int64? = nil, trimFramesAtStart: Int = 0,
                        trimFramesAtEnd: Int = 0, parameters: [ParameterEvent] = []) throws(AudioQueueError) -> Int64
    {
        var volume = Float.nan
        var pan: Float?
        var rampFrames = -1
        for event in parameters {
            try Self.check(event.parameter, event.value)
            switch event.parameter {
            case .volume: volume = event.value
            case .pan: pan = event.value
            case .volumeRampTime: rampFrames = rampFrameCount(seconds: event.value)
            }
        }
        let result: Result<Int64, AudioQueueError> = state.withLock { state in
            if let error = state.pool.enqueueError(buffer) { return .failure(error) }
            guard buffer.byteSize > 0 else {
                return .failure(AudioQueueError(.bufferEmpty,
                    "buffer holds no audio (byteSize 0); fill it and set byteSize or frameCount before enqueueing"))
            }
            guard buffer.byteSize <= buffer.byteCapacity, buffer.byteSize % format.bytesPerFrame == 0 else {
                return .failure(AudioQueueError(.invalidParameter,
                    "buffer byteSize \(buffer.byteSize) is not a whole number of \(format.bytesPerFrame)-byte frames within its \(buffer.byteCapacity)-byte capacity"))
            }
            let frames = buffer.frameCount
            guard trimFramesAtStart >= 0, trimFramesAtEnd >= 0, trimFramesAtStart + trimFramesAtEnd < frames else {
                return .failure(AudioQueueError(.invalidParameter,
                    "trims (\(trimFramesAtStart) at start, \(trimFramesAtEnd) at end) must be non-negative and leave at least one of the buffer's \(frames) frames"))
            }
            var deviceStart: Int64? = nil
            if let startTime {
                guard startTime >= 0 else {
                    return .failure(AudioQueueError(.invalidParameter,
                        "start time \(startTime) is negative; queue sample time starts at 0"))
                }
                let start = toDevice(startTime)
                guard start >= state.nextStart else {
                    return .failure(AudioQueueError(.invalidParameter,
                        "start time \(startTime) is before the end of the previously enqueued audio (\(fromDevice(state.nextStart))); start times must ascend — use a later time or nil to follow gaplessly"))
                }
                deviceStart = start
            }
            let usable = frames - trimFramesAtStart - trimFramesAtEnd
            let source = UnsafeRawPointer(buffer.data) + trimFramesAtStart * format.bytesPerFrame
            let samples = usable * format.channelCount

            // A rate-converted stream that jumps in time: release the converter's tail first.
            if let start = deviceStart, start != state.nextStart, state.converterHasInput {
                if let error = enqueueConverterTail(&state) { return .failure(error) }
            }
            let segment = buffer.segment
            var produced: Int
            if let converter = state.converter {
                if state.scratch.count < samples { state.scratch = [Float](repeating: 0, count: samples) }
                produced = state.scratch.withUnsafeMutableBufferPointer { scratch in
                    PCMCodec.decode(source, format: format.sampleFormat, sampleCount: samples, into: scratch.baseAddress!)
                    return converter.process(scratch.baseAddress!, frames: usable, into: segment.pointee.samples,
                                             capacity: segment.pointee.capacityFrames)
                }
                state.converterHasInput = true
            } else if playsInPlace {
                // Already what the render thread mixes: it reads the buffer itself while enqueued.
                segment.pointee.samples = UnsafeMutableRawPointer(mutating: source).assumingMemoryBound(to: Float.self)
                produced = usable
            } else {
                PCMCodec.decode(source, format: format.sampleFormat, sampleCount: samples, into: segment.pointee.samples)
                produced = usable
            }
            let actualStart = deviceStart ?? state.nextStart
            segment.pointee.frameCount = produced
            segment.pointee.start = deviceStart ?? Segment.follow
            segment.pointee.volume = volume
            segment.pointee.panGains = pan.map(PanLaw.packed) ?? PanLaw.none
            segment.pointee.pan = pan ?? 0
            segment.pointee.rampFrames = rampFrames
            segment.pointee.started = false
            segment.pointee.truncatedFrames = 0
            guard renderState.pointee.commands.push(QueueCommand(kind: .enqueue, segment: segment, time: 0).message) else {
                return .failure(AudioQueueError(.invalidRunState,
                    "queue '\(name)' has too many pending commands; the device is not rendering"))
            }
            buffer.isEnqueued = true
            state.pendingFrames += produced
            state.nextStart = actualStart + Int64(produced)
            return .success(fromDevice(actualStart))
        }
        return try result.get()
    }

    /// Flushes the converter's held frames into an internal segment that follows gaplessly.
    private func enqueueConverterTail(_ state: inout UserState) -> AudioQueueError? {
        guard let converter = state.converter, state.converterHasInput else { return nil }
        state.converterHasInput = false
        let capacity = converter.maximumLatencyFrames + 16
        let segment = Segment.allocate(capacityFrames: capacity, channelCount: format.channelCount, owner: nil)
        let produced = converter.flush(into: segment.pointee.samples, capacity: capacity)
        converter.reset()
        guard produced > 0 else { Segment.free(segment); return nil }
        segment.pointee.frameCount = produced
        segment.pointee.start = Segment.follow
        guard renderState.pointee.commands.push(QueueCommand(kind: .enqueue, segment: segment, time: 0).message) else {
            Segment.free(segment)
            return AudioQueueError(.invalidRunState, "queue '\(name)' has too many pending commands; the device is not rendering")
        }
        state.internalSegments.insert(segment)
        state.pendingFrames += produced
        state.nextStart += Int64(produced)
        return nil
    }

    /// What the queue does with a buffer that arrives late, after an underrun: skip its late
    /// part to stay aligned (``LateBufferPolicy/skipToStayAligned``, the default) or play it in
    /// full and let the queue's timeline slide (``LateBufferPolicy/playInFull``, Apple's
    /// behaviour). The underrun is reported either way. Takes effect from the next render cycle.
    ///
    /// Thread safety: any thread except the realtime thread.
    public var lateBufferPolicy: LateBufferPolicy {
        get { renderState.pointee.playsLateInFull.load(ordering: .relaxed) ? .playInFull : .skipToStayAligned }
        set { renderState.pointee.playsLateInFull.store(newValue == .playInFull, ordering: .relaxed) }
    }

    /// Frames of the queue's audio skipped because the device's clock skipped them while the
    /// queue ran (an xrun, which the device reports with its length): under
    /// ``LateBufferPolicy/skipToStayAligned`` the queue keeps every later sample on the time it
    /// was scheduled for; under ``LateBufferPolicy/playInFull`` nothing is skipped and this
    /// stays 0.
    ///
    /// Thread safety: any thread.
    public var skippedFrames: Int64 { renderState.pointee.skippedFrames.load(ordering: .relaxed) }

    /// Whether enqueued buffers play from their own memory: float samples at the device's rate
    /// need no conversion, so the render thread reads the buffer while it is enqueued (Audio
    /// Queue's rule: its contents are the queue's until the callback hands it back).
    var playsInPlace: Bool { ratio == 1 && format.sampleFormat == .float32 }

    func toDevice(_ queueTime: Int64) -> Int64 {
        ratio == 1 ? queueTime : Int64((Double(queueTime) * ratio).rounded())
    }

    func fromDevice(_ deviceFrames: Int64) -> Int64 {
        ratio == 1 ? deviceFrames : Int64((Double(deviceFrames) / ratio).rounded())
    }

    // MARK: - Run state

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

    private func send(_ kind: QueueCommand.Kind, time: Int64 = 0) throws(AudioQueueError) {
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

    private func pushOrError(_ kind: QueueCommand.Kind) -> AudioQueueError? {
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

    // MARK: - Parameters

    /// The Volume parameter (`kAudioQueueParam_Volume`), 0…1, linear: the value in effect (set
    /// directly or by the last started buffer's parameter event).
    public var volume: Float { Float(bitPattern: renderState.pointee.effectiveVolumeBits.load(ordering: .relaxed)) }

    /// Sets the Volume parameter, 0…1; the change is ramped over 5 ms so it never clicks.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` outside 0…1.
    public func setVolume(_ volume: Float) throws(AudioQueueError) {
        try setParameter(.volume, to: volume)
    }

    /// Reads a parameter: Audio Queue's `AudioQueueGetParameter`. The value in effect: set
    /// directly or by the last started buffer's parameter event.
    public func parameter(_ parameter: QueueParameter) -> Float {
        switch parameter {
        case .volume: volume
        case .volumeRampTime: Float(Double(renderState.pointee.effectiveRampFrames.load(ordering: .relaxed)) / deviceSampleRate)
        case .pan: Float(bitPattern: renderState.pointee.effectivePanBits.load(ordering: .relaxed))
        }
    }

    /// Checks a parameter value: Volume 0…1, VolumeRampTime ≥ 0 seconds, Pan −1…1.
    public static func check(_ parameter: QueueParameter, _ value: Float) throws(AudioQueueError) {
        switch parameter {
        case .volume:
            guard value.isFinite, (0...1).contains(value) else {
                throw AudioQueueError(.invalidParameter, "volume \(value) is out of range; use 0…1")
            }
        case .volumeRampTime:
            guard value.isFinite, value >= 0, value <= 3600 else {
                throw AudioQueueError(.invalidParameter, "volume ramp time \(value) s is out of range; use 0…3600 seconds (0: the 5 ms anti-click ramp)")
            }
        case .pan:
            guard value.isFinite, (-1...1).contains(value) else {
                throw AudioQueueError(.invalidParameter, "pan \(value) is out of range; use -1 (left) … 1 (right)")
            }
        }
    }

    /// A ramp time in seconds as device frames (0 stays 0: the engine's default ramp).
    private func rampFrameCount(seconds: Float) -> Int {
        seconds == 0 ? 0 : max(1, Int((Double(seconds) * deviceSampleRate).rounded()))
    }

    /// Sets a parameter, effective immediately: Audio Queue's `AudioQueueSetParameter`. Volume and
    /// Pan changes ramp over the Volume ramp time (``QueueParameter/volumeRampTime``; by default
    /// the engine's 5 ms) so they never click; a new ramp time applies to later changes.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` for a value out of range.
    public func setParameter(_ parameter: QueueParameter, to value: Float) throws(AudioQueueError) {
        try Self.check(parameter, value)
        try checkStartable()
        switch parameter {
        case .volume:
            state.withLock { state in
                state.volume = value
                renderState.pointee.userVolumeBits.store(value.bitPattern, ordering: .relaxed)
                renderState.pointee.volumeGeneration.wrappingAdd(1, ordering: .releasing)
                if !state.isRunning { renderState.pointee.effectiveVolumeBits.store(value.bitPattern, ordering: .relaxed) }
            }
        case .volumeRampTime:
            let frames = rampFrameCount(seconds: value)
            state.withLock { _ in
                renderState.pointee.userRampFrames.store(frames, ordering: .relaxed)
                renderState.pointee.rampGeneration.wrappingAdd(1, ordering: .releasing)
                renderState.pointee.effectiveRampFrames.store(frames, ordering: .relaxed)
            }
        case .pan:
            state.withLock { _ in
                renderState.pointee.userPanGains.store(PanLaw.packed(value), ordering: .relaxed)
                renderState.pointee.panGeneration.wrappingAdd(1, ordering: .releasing)
                renderState.pointee.effectivePanBits.store(value.bitPattern, ordering: .relaxed)
            }
        }
    }

    /// The queue's gain in the mixer, in dB (−∞…+12), applied on top of Volume.
    public var mixerGainDB: Double { state.withLock { $0.mixerGainDB } }

    /// Sets the queue's mixer gain in dB (−∞ for silence … +12); ramped over 5 ms.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` above +12 dB or for NaN.
    public func setMixerGain(decibels: Double) throws(AudioQueueError) {
        guard !decibels.isNaN, decibels <= 12 else {
            throw AudioQueueError(.invalidParameter, "mixer gain \(decibels) dB is out of range; use -inf…+12 dB")
        }
        state.withLock { state in
            state.mixerGainDB = decibels
            renderState.pointee.mixerGainBits.store(Float(Decibels.toLinear(decibels)).bitPattern, ordering: .relaxed)
        }
    }

    // MARK: - Metering

    /// Whether level metering is on (`kAudioQueueProperty_EnableLevelMetering`). Off by default.
    public var isLevelMeteringEnabled: Bool {
        get { renderState.pointee.meteringEnabled.load(ordering: .relaxed) }
        set {
            let old = renderState.pointee.meteringEnabled.exchange(newValue, ordering: .relaxed)
            if old != newValue { notifyListeners(.isLevelMeteringEnabled) }
        }
    }

    /// The level per queue channel over the most recent window (≈50 ms), linear
    /// (`kAudioQueueProperty_CurrentLevelMeter`); post-gain.
    /// - Throws: ``AudioQueueError/Code/invalidProperty`` when metering is off.
    public func currentLevelMeter() throws(AudioQueueError) -> [ChannelLevel] {
        guard isLevelMeteringEnabled else {
            throw AudioQueueError(.invalidProperty, "level metering is off on queue '\(name)'; set isLevelMeteringEnabled = true first")
        }
        return renderState.pointee.meter.read()
    }

    /// The level per queue channel over the most recent window with the window's place on the
    /// device timeline (its first sample time and length); linear, post-gain.
    /// - Throws: ``AudioQueueError/Code/invalidProperty`` when metering is off.
    public func currentLevelReading() throws(AudioQueueError) -> LevelReading {
        guard isLevelMeteringEnabled else {
            throw AudioQueueError(.invalidProperty, "level metering is off on queue '\(name)'; set isLevelMeteringEnabled = true first")
        }
        return renderState.pointee.meter.reading()
    }

    /// The largest peak per queue channel (linear, post-gain) since metering was enabled or
    /// ``resetPeakHold()`` was called; metered windows only.
    public var peakHold: [Float] { renderState.pointee.meter.readHold() }

    /// Starts a new ``peakHold``.
    public func resetPeakHold() { renderState.pointee.meter.resetHold() }

    /// The same levels in dBFS (`kAudioQueueProperty_CurrentLevelMeterDB`).
    public func currentLevelMeterDB() throws(AudioQueueError) -> [ChannelLevel] {
        try currentLevelMeter().map(\.decibels)
    }

    // MARK: - Device properties

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
        get { !renderState.pointee.excludedFromMaster.load(ordering: .relaxed) }
        set { renderState.pointee.excludedFromMaster.store(!newValue, ordering: .relaxed) }
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

    // MARK: - Time

    /// Creates a timeline that reports discontinuities: Audio Queue's `AudioQueueCreateTimeline`.
    public func makeTimeline() throws(AudioQueueError) -> Timeline {
        try checkStartable()
        let timeline = Timeline(queue: self, seen: renderState.pointee.discontinuityCount.load(ordering: .acquiring))
        state.withLock { _ = $0.timelines.insert(ObjectIdentifier(timeline)) }
        return timeline
    }

    /// Disposes of a timeline: Audio Queue's `AudioQueueDisposeTimeline`.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` for a timeline of another queue.
    public func disposeTimeline(_ timeline: Timeline) throws(AudioQueueError) {
        let removed = state.withLock { $0.timelines.remove(ObjectIdentifier(timeline)) != nil }
        if !removed {
            throw AudioQueueError(.invalidParameter, "timeline does not belong to queue '\(name)' (or was disposed of)")
        }
    }

    /// The current queue time: Audio Queue's `AudioQueueGetCurrentTime`.
    ///
    /// - Parameter timeline: a timeline of this queue; its discontinuity flag is reported and
    ///   cleared. Nil reports no discontinuity.
    /// - Returns: the queue sample time (frames at the queue's rate since it started, pauses
    ///   excluded), the device sample time and host time it corresponds to, and whether a
    ///   discontinuity happened since the timeline was last read.
    public func currentTime(timeline: Timeline? = nil) throws(AudioQueueError) -> QueueTimeStamp {
        if let timeline {
            let known = state.withLock { $0.timelines.contains(ObjectIdentifier(timeline)) }
            guard known, timeline.queue === self else {
                throw AudioQueueError(.invalidParameter, "timeline does not belong to queue '\(name)' (or was disposed of)")
            }
        }
        guard let engine else {
            throw AudioQueueError(.invalidDevice, "queue '\(name)' has lost its engine")
        }
        let snapshot = clockSnapshot()
        var queueFrames = snapshot.queueTime
        let now = engine.device.currentTime()
        if snapshot.runState == .running, now.sampleTime > snapshot.deviceTime {
            queueFrames += now.sampleTime - snapshot.deviceTime
        }
        var discontinuity = false
        if let timeline {
            let count = renderState.pointee.discontinuityCount.load(ordering: .acquiring)
            discontinuity = timeline.exchangeSeen(count) != count
        }
        return QueueTimeStamp(sampleTime: fromDevice(queueFrames), deviceSampleTime: now.sampleTime,
                              hostTime: now.hostTime, discontinuity: discontinuity)
    }

    struct ClockSnapshot { var queueTime: Int64; var deviceTime: Int64; var runState: RenderRunState }

    func clockSnapshot() -> ClockSnapshot {
        let r = renderState
        return r.pointee.clockLock.read {
            ClockSnapshot(queueTime: r.pointee.publishedQueueTime.load(ordering: .relaxed),
                          deviceTime: r.pointee.publishedDeviceTime.load(ordering: .relaxed),
                          runState: RenderRunState(rawValue: r.pointee.publishedRunState.load(ordering: .relaxed)) ?? .stopped)
        }
    }

    private func currentQueueDeviceFrames() -> Int64 {
        let snapshot = clockSnapshot()
        var frames = snapshot.queueTime
        if snapshot.runState == .running, let now = engine?.device.currentTime().sampleTime, now > snapshot.deviceTime {
            frames += now - snapshot.deviceTime
        }
        return frames
    }

    /// The device sample time at which queue sample time `queueTime` plays (or played), given the
    /// queue keeps running without pause: part of Audio Queue's `AudioQueueDeviceTranslateTime`.
    /// - Throws: ``AudioQueueError/Code/invalidRunState`` unless the queue is running.
    public func deviceSampleTime(forQueueTime queueTime: Int64) throws(AudioQueueError) -> Int64 {
        let snapshot = clockSnapshot()
        guard snapshot.runState == .running else {
            throw AudioQueueError(.invalidRunState, "queue '\(name)' is not running; queue time maps to device time only while it runs")
        }
        return snapshot.deviceTime - snapshot.queueTime + toDevice(queueTime)
    }

    /// The queue sample time that plays at device sample time `sampleTime` (inverse of
    /// ``deviceSampleTime(forQueueTime:)``).
    public func queueTime(forDeviceSampleTime sampleTime: Int64) throws(AudioQueueError) -> Int64 {
        let snapshot = clockSnapshot()
        guard snapshot.runState == .running else {
            throw AudioQueueError(.invalidRunState, "queue '\(name)' is not running; device time maps to queue time only while it runs")
        }
        return fromDevice(sampleTime - snapshot.deviceTime + snapshot.queueTime)
    }

    // MARK: - Render events (callback thread)

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

    private func yield(_ event: QueueEvent) {
        callbacks.yield(event, from: self)
    }

    func notifyListeners(_ property: QueueProperty) {
        callbacks.notify(property, from: self)
    }

    private func deliver(_ work: @escaping @Sendable () -> Void) {
        callbacks.deliver(work)
    }

    /// The render state outlives every reference the render thread had: the engine holds the queue
    /// while it is in a render slot, and stops the device before letting go.
    deinit {
        QueueRenderState.free(renderState, in: stateMemory)
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

/// Identifies a property listener added with ``OutputQueue/addPropertyListener(_:_:)``.
public struct PropertyListenerToken: Sendable, Hashable {
    let id: Int
    /// The property listened to.
    public let property: QueueProperty
}

/// A queue time reading: Audio Queue's `AudioTimeStamp` from `AudioQueueGetCurrentTime`, with
/// the timeline discontinuity flag.
public struct QueueTimeStamp: Sendable, Hashable {
    /// Queue sample time: frames at the queue's rate since it started, pauses excluded.
    public var sampleTime: Int64
    /// The device sample time of the reading.
    public var deviceSampleTime: Int64
    /// The host time (µs) of the reading.
    public var hostTime: UInt64
    /// Whether a discontinuity happened since the timeline was last read.
    public var discontinuity: Bool
}
