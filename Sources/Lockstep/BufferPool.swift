/// What a ``QueueBuffer`` knows of the queue that allocated it: its name (for errors) and
/// whether the buffer is in its hands.
protocol QueueBufferOwner: AnyObject, Sendable {
    /// The queue's name.
    var name: String { get }
    /// Whether `buffer` is enqueued on the queue now.
    func isEnqueued(_ buffer: QueueBuffer) -> Bool
}

/// The buffers of one queue and the queue's disposal state, shared by ``OutputQueue`` and
/// ``InputQueue``: allocation within a limit, ownership checks with errors that say what to do,
/// freeing, and letting go of everything at disposal.
///
/// A value kept inside the queue's user-state lock: every method runs under that lock, so a
/// check and the change it guards (an enqueue, a free) are one step.
struct BufferPool: @unchecked Sendable {
    /// How far disposal has gone.
    enum Disposal { case none, pending, immediate, done }

    /// The queue's name, for errors.
    let queueName: String
    /// The most buffers the queue may hold at once.
    let limit: Int
    /// How far the queue's disposal has gone.
    var disposal = Disposal.none
    private var buffers: [ObjectIdentifier: QueueBuffer] = [:]

    /// An empty pool for the queue `queueName`, holding at most `limit` buffers.
    init(queueName: String, limit: Int) {
        self.queueName = queueName
        self.limit = limit
    }

    /// The number of buffers allocated and not freed.
    var count: Int { buffers.count }

    /// The error for using a queue that is disposed of, or nil.
    func usableError() -> AudioQueueError? {
        disposal == .none ? nil :
            AudioQueueError(.disposalPending, "queue '\(queueName)' is disposed of (or being disposed of); create a new queue")
    }

    /// The checks of `AudioQueueAllocateBuffer`: a byte capacity holding 1 frame … 1 GiB.
    static func checkCapacity(bytes: Int, format: StreamFormat) throws(AudioQueueError) {
        guard bytes >= format.bytesPerFrame, bytes <= 1 << 30 else {
            throw AudioQueueError(.invalidParameter,
                "buffer capacity \(bytes) bytes is out of range; allocate at least one frame (\(format.bytesPerFrame) bytes) and at most 1 GiB")
        }
    }

    /// The byte capacity of `frames` frames, checked.
    static func byteCapacity(frames: Int, format: StreamFormat) throws(AudioQueueError) -> Int {
        guard frames > 0, frames <= (1 << 30) / format.bytesPerFrame else {
            throw AudioQueueError(.invalidParameter, "buffer capacity \(frames) frames is out of range; use 1…\((1 << 30) / format.bytesPerFrame)")
        }
        return frames * format.bytesPerFrame
    }

    /// Adds a buffer made by `make` unless the queue is disposed of or full.
    mutating func allocate(_ make: () -> QueueBuffer) -> Result<QueueBuffer, AudioQueueError> {
        if let error = usableError() { return .failure(error) }
        guard buffers.count < limit else {
            return .failure(AudioQueueError(.invalidParameter,
                "queue '\(queueName)' already has \(limit) buffers; free one, or create the Engine with a larger maximumBuffersPerQueue"))
        }
        let buffer = make()
        buffers[ObjectIdentifier(buffer)] = buffer
        return .success(buffer)
    }

    /// Whether `buffer` is one of this pool's live buffers.
    func owns(_ buffer: QueueBuffer) -> Bool {
        !buffer.isFreed && buffers[ObjectIdentifier(buffer)] === buffer
    }

    /// Nil if `buffer` may be enqueued now; otherwise why not (not this queue's, freed, disposed
    /// of, already enqueued).
    func enqueueError(_ buffer: QueueBuffer) -> AudioQueueError? {
        guard owns(buffer) else { return foreignError(buffer) }
        if let error = usableError() { return error }
        if buffer.isEnqueued {
            return AudioQueueError(.bufferEnqueuedTwice,
                "buffer is already enqueued on queue '\(queueName)'; wait for the callback to hand it back")
        }
        return nil
    }

    /// Frees `buffer`, or says why it cannot be freed.
    mutating func free(_ buffer: QueueBuffer) -> AudioQueueError? {
        guard owns(buffer) else { return foreignError(buffer) }
        if buffer.isEnqueued {
            return AudioQueueError(.bufferInQueue,
                "buffer is still enqueued on queue '\(queueName)'; free it after the queue hands it back (its callback), or after reset()/stop()")
        }
        buffer.isFreed = true
        buffers.removeValue(forKey: ObjectIdentifier(buffer))
        return nil
    }

    /// Marks every buffer freed and lets go of them; the pool is then disposed of for good.
    mutating func releaseAll() {
        for buffer in buffers.values { buffer.isFreed = true }
        buffers.removeAll()
        disposal = .done
    }

    /// Why `buffer` is not this queue's.
    private func foreignError(_ buffer: QueueBuffer) -> AudioQueueError {
        if buffer.isFreed {
            return AudioQueueError(.invalidBuffer, "buffer was freed; allocate a new one with allocateBuffer")
        }
        guard let owner = buffer.owner else {
            return AudioQueueError(.invalidBuffer, "buffer's queue was disposed of; allocate buffers from '\(queueName)' with allocateBuffer")
        }
        return AudioQueueError(.invalidBuffer,
            "buffer belongs to queue '\(owner.name)', not '\(queueName)'; enqueue it on the queue that allocated it")
    }
}
