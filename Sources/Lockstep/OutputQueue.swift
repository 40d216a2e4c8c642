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
    let callback: @Sendable (OutputQueue, QueueBuffer) -> Void
    let state: Mutex<UserState>
    let callbacks: QueueCallbacks<OutputQueue>

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

    /// The render state outlives every reference the render thread had: the engine holds the queue
    /// while it is in a render slot, and stops the device before letting go.
    deinit {
        QueueRenderState.free(renderState, in: stateMemory)
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
