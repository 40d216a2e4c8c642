import Lockstep

/// Recording into a compressed format (AAC, ALAC, IMA4): the queue's recorded PCM (32-bit float at
/// the queue's rate) is encoded with a ``PacketEncoder`` into packets, which wait here until a
/// buffer of the queue takes them — whole packets, with their descriptions, as Apple's input
/// queues hand them to the callback.
///
/// A buffer is full when it holds as many packets as its capacity allows at the format's largest
/// packet (`kAudioQueueProperty_MaximumOutputPacketSize`; at least one), or when the next packet
/// would not fit in its bytes or its packet descriptions: so a buffer sized as Apple's recording
/// guide sizes it (seconds × packets a second × the largest packet) carries about that much audio.
///
/// At the end of a recording ``finish()`` encodes what is left and drains the encoder; the
/// priming and remainder frames then say which frames of the packets are the recording
/// (`kAudioConverterPrimeInfo` of the queue), so a file written with them reads back with the
/// exact frame count. Runs on the engine's callback thread, never on the realtime thread.
///
/// Not thread-safe: the owning ``CompatQueue`` calls it with its lock held.
final class InputPacketEncoding {
    /// One filled buffer's packets: their frames, their count and their descriptions (nil for
    /// formats of constant packet size, as Apple passes them).
    struct Fill {
        var frames: Int
        var packets: Int
        var descriptions: [AudioStreamPacketDescription]?
    }

    let format: CompressedFormat
    /// Apple's magic cookie of the stream (the same for every run).
    let cookie: [UInt8]
    /// Frames of codec delay before the first recorded frame of a run (Apple's leading frames).
    let primingFrames: Int
    private let bitRate: Int
    private var encoder: PacketEncoder
    /// Encoded packets waiting for a buffer, from `head` on.
    private var packets: [EncodedPacket] = []
    private var head = 0
    /// Frames of the packets waiting for a buffer.
    private(set) var waitingFrames = 0
    /// Frames recorded into this run's encoder, and frames of this run's packets handed out.
    private var runInputFrames = 0
    private var runPacketFrames = 0
    /// True once the run's encoder is drained (``finish()``).
    private(set) var finished = false
    /// The last encoder failure (Apple's `kAudioQueueProperty_ConverterError`), or 0.
    private(set) var lastError: OSStatus = 0
    /// Encoder failures and the recorded frames they lost, not yet reported (``takeFailures()``).
    private var unreportedFailures = 0
    private var unreportedFrames = 0

    /// Opens the encoder for `format`.
    /// - Throws: `kAudioFormatUnsupportedDataFormatError` when the format cannot be encoded.
    init(format: CompressedFormat, bitRate: Int = 0) throws(AudioQueueError) {
        self.format = format
        self.bitRate = bitRate
        encoder = try PacketEncoder(format: format, bitRate: bitRate)
        cookie = encoder.cookie
        primingFrames = encoder.primingFrames
    }

    /// The largest packet the format makes (bytes).
    var maximumPacketSize: Int { format.packetSizeUpperBound }

    /// Frames after the last recorded frame in the run's packets (known once ``finished``; 0
    /// before): the packets' frames less priming and the frames recorded.
    var remainderFrames: Int { finished ? max(0, runPacketFrames + waitingFrames - primingFrames - runInputFrames) : 0 }

    /// Packets a buffer of `capacity` bytes takes before it counts as full.
    func packetsPerBuffer(capacity: Int) -> Int { max(1, capacity / max(maximumPacketSize, 1)) }

    /// Encodes `frames` recorded frames; the packets completed wait for a buffer. A failure is
    /// kept in ``lastError`` and counted with the frames it lost, which the queue reports
    /// (``takeFailures()``: the `ConverterError` listeners, and the lost frames as an `overflow`
    /// discontinuity of the engine queue) — never dropped silently.
    func encode(_ samples: UnsafePointer<Float>, frames: Int) {
        guard frames > 0, !finished else { return }
        runInputFrames += frames
        let encoded = encoder.encode(samples, frames: frames)
        append(encoded.packets)
        if let failure = encoded.failure {
            lastError = failure.osStatus
            unreportedFailures += 1
            unreportedFrames += encoded.lostFrames
        }
    }

    /// The encoder failures since the last call, and the recorded frames they lost.
    func takeFailures() -> (count: Int, frames: Int) {
        defer { unreportedFailures = 0; unreportedFrames = 0 }
        return (unreportedFailures, unreportedFrames)
    }

    /// Encodes what the encoder still holds and drains it: the run's last packets.
    func finish() {
        guard !finished else { return }
        do {
            append(try encoder.finish())
        } catch {
            lastError = error.osStatus
            unreportedFailures += 1
        }
        finished = true
    }

    private func append(_ made: [EncodedPacket]) {
        packets.append(contentsOf: made)
        for packet in made { waitingFrames += frames(of: packet) }
    }

    /// The frames a packet stands for in the packet table's count: the format's frames per
    /// packet (a short last packet counts whole, its missing frames being the remainder), or the
    /// packet's own where packets differ.
    private func frames(of packet: EncodedPacket) -> Int {
        format.framesPerPacket > 0 ? format.framesPerPacket : packet.frames
    }

    /// A new run (after a stop, or a reset): drops the packets no buffer took and returns their
    /// frames; the next frames start a new stream (a fresh encoder, its priming again).
    func beginRun() -> Int {
        let dropped = waitingFrames
        packets.removeAll(keepingCapacity: true)
        head = 0
        waitingFrames = 0
        if finished || runInputFrames > 0 {
            do {
                encoder = try PacketEncoder(format: format, bitRate: bitRate)
            } catch {
                lastError = error.osStatus
                unreportedFailures += 1
            }
        }
        runInputFrames = 0
        runPacketFrames = 0
        finished = false
        return dropped
    }

    /// Fills `buffer` with whole packets if a full buffer's worth is waiting (or, when `final`,
    /// any packet at all): the data back to back from offset 0, `mAudioDataByteSize`, and the
    /// buffer's own packet descriptions if it has them.
    func fill(_ buffer: AudioQueueBufferRef, final: Bool) -> Fill? {
        let capacity = Int(buffer.pointee.mAudioDataBytesCapacity)
        let ownDescriptions = buffer.pointee.mPacketDescriptions
        let descriptionCapacity = ownDescriptions == nil ? Int.max : Int(buffer.pointee.mPacketDescriptionCapacity)
        let target = min(packetsPerBuffer(capacity: capacity), descriptionCapacity)
        // How many waiting packets fit, and whether the buffer is full with them.
        var count = 0, bytes = 0
        var full = false
        while head + count < packets.count {
            let size = packets[head + count].data.count
            if count == target || bytes + size > capacity { full = true; break }
            bytes += size
            count += 1
        }
        if count == target { full = true }
        if count == 0, head < packets.count, final {
            // A packet larger than the whole buffer: it can never be delivered; drop it, reported.
            lastError = kAudioQueueErr_BufferEmpty
            waitingFrames -= packets[head].frames
            head += 1
            return nil
        }
        guard count > 0, full || final else { return nil }
        var descriptions: [AudioStreamPacketDescription] = []
        descriptions.reserveCapacity(count)
        var offset = 0, frames = 0
        let data = buffer.pointee.mAudioData
        for packet in packets[head..<(head + count)] {
            packet.data.withUnsafeBytes { data.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: packet.data.count) }
            // Frames in the description only where the format's packets differ in frames (Apple's rule).
            let variable = format.framesPerPacket > 0 ? 0 : UInt32(packet.frames)
            descriptions.append(AudioStreamPacketDescription(mStartOffset: Int64(offset), mVariableFramesInPacket: variable,
                                                             mDataByteSize: UInt32(packet.data.count)))
            offset += packet.data.count
            frames += self.frames(of: packet)
        }
        head += count
        waitingFrames -= frames
        runPacketFrames += frames
        if head > 256, head * 2 > packets.count {
            packets.removeFirst(head)
            head = 0
        }
        buffer.pointee.mAudioDataByteSize = UInt32(offset)
        if let ownDescriptions {
            for (index, description) in descriptions.enumerated() { ownDescriptions[index] = description }
            buffer.pointee.mPacketDescriptionCount = UInt32(count)
        }
        return Fill(frames: frames, packets: count, descriptions: format.bytesPerPacket > 0 ? nil : descriptions)
    }
}
