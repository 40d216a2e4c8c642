import Lockstep

/// Recording at a rate other than the device's, or into a compressed format. Apple's input queues
/// convert and encode; Lockstep's input queues record linear PCM at the device rate. So the engine
/// queue records 32-bit floats at the device rate into buffers of this layer, and this object
/// converts them (libsoxr, latency-compensated; passed through at the device's rate), encodes them
/// if the queue's format is compressed (``InputPacketEncoding``), and fills the queue's own
/// buffers, in order, in their format — on the callback thread.
///
/// It converts only as much as the enqueued buffers need: recorded engine buffers wait
/// (``CompatQueue/State/recorded``) until a buffer of the queue is enqueued, and behind them the
/// engine queue's ring (10 s) holds what is captured meanwhile — where an overflow is counted and
/// reported. So the converted audio held here stays below one engine buffer plus one buffer of
/// the queue, and nothing waits for the next device cycle once a buffer is there.
///
/// Not thread-safe: the owning ``CompatQueue`` calls it with its lock held.
final class InputRateConversion {
    /// The format of the engine queue: the device's rate, the queue's channels, float.
    let internalFormat: StreamFormat
    /// Device frames per queue frame.
    let deviceFramesPerFrame: Double
    /// Converted frames handed to the queue's buffers so far: queue sample time.
    private(set) var deliveredFrames: Int64 = 0
    /// While true (a reset), recorded audio is dropped instead of converted.
    var discarding = false
    /// True from a stop of a running queue until the recording's last frame has been delivered
    /// (or no buffer is left to take it): a synchronous `AudioQueueStop` waits for it.
    var flushing = false
    /// True once the recording has stopped and the converter's tail is in ``waitingFrames``: the
    /// last buffer may then be delivered partly filled. Cleared by ``beginRun()``.
    private(set) var ended = false

    /// The encoder of a queue of a compressed format (nil: the queue's buffers take linear PCM).
    let encoding: InputPacketEncoding?
    /// The rate converter; nil when the queue records at the device's rate.
    private let converter: (any SampleRateConverter)?
    private let layout: LinearPCMLayout
    /// Converted frames (interleaved, the queue's rate) not yet in a buffer or the encoder.
    private var fifo: [Float] = []
    private var scratch: [Float] = []

    init(layout: LinearPCMLayout, deviceRate: Double, factory: SampleRateConverterFactory,
         encoding: InputPacketEncoding? = nil) throws(AudioQueueError) {
        self.layout = layout
        self.encoding = encoding
        internalFormat = StreamFormat(sampleRate: deviceRate, channelCount: layout.format.channelCount, sampleFormat: .float32)
        deviceFramesPerFrame = deviceRate / layout.format.sampleRate
        guard deviceRate != layout.format.sampleRate else {
            converter = nil
            return
        }
        do {
            converter = try factory(deviceRate, layout.format.sampleRate, layout.format.channelCount)
        } catch {
            throw AudioQueueError(.unsupportedFormat, "cannot record at \(layout.format.sampleRate) Hz from a \(deviceRate) Hz device: \(error)")
        }
    }

    /// How many device frames each internal buffer holds (20 ms, at least 256).
    var internalBufferFrames: Int { max(256, Int(internalFormat.sampleRate / 50)) }

    /// Converts `frames` recorded frames and keeps the result (encoded, for a compressed format).
    func append(_ samples: UnsafePointer<Float>, frames: Int) {
        guard !discarding, frames > 0 else { return }
        if let converter {
            let capacity = Int((Double(frames) / deviceFramesPerFrame).rounded(.up)) + converter.maximumLatencyFrames + 8
            convert(capacity: capacity) { converter.process(samples, frames: frames, into: $0, capacity: capacity) }
        } else {
            fifo.append(contentsOf: UnsafeBufferPointer(start: samples, count: frames * internalFormat.channelCount))
        }
        encodeFifo()
    }

    /// Releases what the converter still holds (the end of a recording), drains the encoder, and
    /// marks the recording ended.
    func flush() {
        if let converter {
            let capacity = converter.maximumLatencyFrames + 16
            convert(capacity: capacity) { converter.flush(into: $0, capacity: capacity) }
            converter.reset()
        }
        encodeFifo()
        encoding?.finish()
        ended = true
    }

    /// Hands the converted frames to the encoder, for a compressed format.
    private func encodeFifo() {
        guard let encoding, !fifo.isEmpty else { return }
        fifo.withUnsafeBufferPointer { encoding.encode($0.baseAddress!, frames: $0.count / internalFormat.channelCount) }
        fifo.removeAll(keepingCapacity: true)
    }

    /// Frames recorded and converted (or encoded) that wait for a buffer of the queue.
    var waitingFrames: Int { fifo.count / internalFormat.channelCount + (encoding?.waitingFrames ?? 0) }

    /// A new recording begins: drops what the last one left that no buffer took, and returns how
    /// many frames that was (the caller reports them).
    func beginRun() -> Int {
        let dropped = fifo.count / internalFormat.channelCount + (encoding?.beginRun() ?? 0)
        deliveredFrames += Int64(dropped)   // their place on the queue's timeline stays theirs
        fifo.removeAll(keepingCapacity: true)
        converter?.reset()
        ended = false
        return dropped
    }

    /// Drops everything recorded but not delivered, and the converter's (and encoder's) state.
    func reset() {
        converter?.reset()
        fifo.removeAll(keepingCapacity: true)
        _ = encoding?.beginRun()
    }

    private func convert(capacity: Int, _ body: (UnsafeMutablePointer<Float>) -> Int) {
        let channels = internalFormat.channelCount
        if scratch.count < capacity * channels { scratch = [Float](repeating: 0, count: capacity * channels) }
        let produced = scratch.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
        fifo.append(contentsOf: scratch[0..<(produced * channels)])
    }

    /// What one fill put in a buffer of the queue: the queue sample time of its first frame, its
    /// frames, its packets (frames, for linear PCM) and, for a variable-size compressed format,
    /// their descriptions.
    struct Fill {
        var sampleTime: Int64
        var frames: Int
        var packets: Int
        var descriptions: [AudioStreamPacketDescription]?
    }

    /// Frames a buffer takes before it counts as full (for a compressed format, at the format's
    /// largest packet: frames of packets).
    func frameCapacity(_ buffer: AudioQueueBufferRef) -> Int {
        let capacity = Int(buffer.pointee.mAudioDataBytesCapacity)
        guard let encoding else { return capacity / layout.bytesPerFrame }
        return encoding.packetsPerBuffer(capacity: capacity) * max(encoding.format.framesPerPacket, 1)
    }

    /// Fills `buffer` from the converted audio if a whole buffer is there (or, when `final`, any
    /// audio at all) — whole packets, for a compressed format.
    func fill(_ buffer: AudioQueueBufferRef, final: Bool) -> Fill? {
        if let encoding {
            guard let filled = encoding.fill(buffer, final: final) else { return nil }
            defer { deliveredFrames += Int64(filled.frames) }
            return Fill(sampleTime: deliveredFrames, frames: filled.frames, packets: filled.packets, descriptions: filled.descriptions)
        }
        let channels = internalFormat.channelCount
        let capacity = Int(buffer.pointee.mAudioDataBytesCapacity) / layout.bytesPerFrame
        let frames = min(capacity, fifo.count / channels)
        guard frames > 0, frames == capacity || final else { return nil }
        fifo.withUnsafeBufferPointer {
            PCMCodec.encode($0.baseAddress!, sampleCount: frames * channels, format: layout.format.sampleFormat,
                            into: buffer.pointee.mAudioData)
        }
        let bytes = frames * layout.bytesPerFrame
        layout.convertByteOrder(from: buffer.pointee.mAudioData, to: buffer.pointee.mAudioData, byteCount: bytes)
        buffer.pointee.mAudioDataByteSize = UInt32(bytes)
        fifo.removeFirst(frames * channels)
        defer { deliveredFrames += Int64(frames) }
        return Fill(sampleTime: deliveredFrames, frames: frames, packets: frames, descriptions: nil)
    }
}
