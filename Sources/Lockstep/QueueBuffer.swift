#if canImport(Glibc)
import Glibc
#endif

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

    init(owner: any QueueBufferOwner, format: StreamFormat, byteCapacity: Int, convertedFrames: Int) {
        self.owner = owner
        self.format = format
        self.byteCapacity = byteCapacity
        byteSize = 0
        // Zeroed by calloc: large buffers come from fresh zero pages the kernel maps on first
        // use, so allocating thousands of buffers does not write them all once more (16-byte
        // aligned, as malloc is on 64-bit Linux).
        guard let memory = calloc(1, max(byteCapacity, 1)) else { fatalError("out of memory for a \(byteCapacity)-byte buffer") }
        data = memory
        segment = Segment.allocate(capacityFrames: convertedFrames, channelCount: format.channelCount, owner: nil)
        segment.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
    }

    /// The buffer's memory lives as long as the buffer object. The queue holds every buffer it
    /// allocated until it is freed or the queue is disposed of, and never lets go of one the
    /// render thread still references, so the memory is never freed under the render thread.
    deinit {
        free(data)
        Segment.free(segment)
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
