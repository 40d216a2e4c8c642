/// An audio buffer owned by an ``OutputQueue``: Audio Queue's `AudioQueueBuffer`.
///
/// Allocate buffers with ``OutputQueue/allocateBuffer(byteCapacity:)`` (or `frameCapacity:`),
/// fill ``data`` with frames in the queue's ``StreamFormat``, set ``byteSize`` (or
/// ``frameCount``), and enqueue. The queue hands the buffer back through its output callback when
/// it has played it; only then may you refill it. The buffer's memory stays valid until the buffer
/// is freed or its queue is disposed of.
///
/// Thread safety: a buffer belongs to whoever holds it — the queue while it is enqueued, your code
/// otherwise. Don't touch its contents while it is enqueued.
public final class QueueBuffer: @unchecked Sendable {
    /// The size of ``data`` in bytes (`mAudioDataBytesCapacity`).
    public let byteCapacity: Int
    /// The audio data (`mAudioData`): interleaved frames in ``format``.
    public let data: UnsafeMutableRawPointer
    /// The number of valid bytes in ``data`` (`mAudioDataByteSize`); a whole number of frames.
    public var byteSize: Int
    /// Your own pointer, carried with the buffer (`mUserData`).
    public var userData: UnsafeMutableRawPointer?
    /// The format of ``data``: the owning queue's stream format.
    public let format: StreamFormat

    /// The queue that allocated the buffer, output or input (weak: the queue keeps its buffers,
    /// not the reverse). The user side's reference: ownership checks and errors.
    weak var owner: (any QueueBufferOwner)?
    /// Converted audio for the render thread, which finds the buffer again through the segment's
    /// `owner` pointer: the render side's reference. Output buffers only.
    let segment: UnsafeMutablePointer<Segment>
    /// Guarded by the owning queue's lock.
    var isEnqueued = false
    var isFreed = false

    /// The memory ``data`` and ``segment`` live in (one block: the segment's header, its
    /// converted frames, then the data).
    private let memory: RenderMemory
    private let block: UnsafeMutableRawPointer
    private let blockBytes: Int

    init(owner: any QueueBufferOwner, format: StreamFormat, byteCapacity: Int, convertedFrames: Int,
         memory: RenderMemory) {
        self.owner = owner
        self.format = format
        self.byteCapacity = byteCapacity
        byteSize = 0
        // One zeroed block from the engine's render memory (huge pages where the kernel gives
        // them): the segment header first, so the render thread finds it beside the audio.
        let header = Self.roundedToLines(MemoryLayout<Segment>.stride)
        let storageSamples = max(1, convertedFrames * format.channelCount)
        let storageBytes = Self.roundedToLines(storageSamples * MemoryLayout<Float>.stride)
        blockBytes = header + storageBytes + max(byteCapacity, 1)
        self.memory = memory
        block = memory.allocate(bytes: blockBytes)
        data = block + header + storageBytes
        let storage = (block + header).bindMemory(to: Float.self, capacity: storageSamples)
        segment = block.bindMemory(to: Segment.self, capacity: 1)
        segment.initialize(to: Segment(samples: storage, storage: storage, capacityFrames: convertedFrames, frameCount: 0,
                                       channelCount: format.channelCount, start: Segment.follow, volume: .nan,
                                       owner: nil, started: false, resolvedStart: 0))
        segment.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
    }

    private static func roundedToLines(_ bytes: Int) -> Int {
        (bytes + RenderMemory.blockAlignment - 1) / RenderMemory.blockAlignment * RenderMemory.blockAlignment
    }

    /// The buffer's memory lives as long as the buffer object. The queue holds every buffer it
    /// allocated until it is freed or the queue is disposed of, and never lets go of one the
    /// render thread still references, so the memory is never freed under the render thread.
    deinit {
        segment.deinitialize(count: 1)
        memory.free(block, bytes: blockBytes)
    }

    /// Whether the buffer is enqueued (in the queue's hands) right now.
    public var isInFlight: Bool { owner?.isEnqueued(self) ?? false }

    /// How many whole frames fit in the buffer.
    public var frameCapacity: Int { byteCapacity / format.bytesPerFrame }

    /// The number of valid frames: ``byteSize`` divided by the bytes per frame.
    public var frameCount: Int {
        get { byteSize / format.bytesPerFrame }
        set { byteSize = max(0, min(newValue, frameCapacity)) * format.bytesPerFrame }
    }

    /// Calls `body` with the buffer's frames as interleaved float samples (only valid for
    /// ``SampleFormat/float32`` queues), sized to the whole capacity.
    ///
    /// - Precondition: the queue's sample format is `float32`.
    public func withFloatSamples<R>(_ body: (UnsafeMutableBufferPointer<Float>) throws -> R) rethrows -> R {
        precondition(format.sampleFormat == .float32, "withFloatSamples needs a float32 queue; this one is \(format)")
        let pointer = data.bindMemory(to: Float.self, capacity: frameCapacity * format.channelCount)
        return try body(UnsafeMutableBufferPointer(start: pointer, count: frameCapacity * format.channelCount))
    }

    /// Copies interleaved float samples into the buffer, encoding them in the queue's sample
    /// format, and sets ``frameCount``. Returns the number of frames copied (at most the capacity).
    @discardableResult
    public func fill(from samples: UnsafeBufferPointer<Float>) -> Int {
        let frames = min(samples.count / format.channelCount, frameCapacity)
        if let base = samples.baseAddress {
            PCMCodec.encode(base, sampleCount: frames * format.channelCount, format: format.sampleFormat, into: data)
        }
        frameCount = frames
        return frames
    }

    /// Copies interleaved float samples into the buffer (see ``fill(from:)-(UnsafeBufferPointer<Float>)``).
    @discardableResult
    public func fill(from samples: [Float]) -> Int {
        samples.withUnsafeBufferPointer { fill(from: $0) }
    }
}
