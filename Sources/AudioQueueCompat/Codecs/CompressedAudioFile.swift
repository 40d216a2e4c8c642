import Foundation
import Lockstep
import LockstepFiles

/// Frames of priming, valid audio and remainder of a compressed file. The corresponding Apple
/// type is `AudioFilePacketTableInfo` (16 bytes).
public struct AudioFilePacketTableInfo: Sendable, Hashable {
    /// Frames of audio: the packets' frames less priming and remainder.
    public var mNumberValidFrames: Int64
    /// Frames of codec delay before the first valid frame.
    public var mPrimingFrames: Int32
    /// Frames of padding after the last valid frame.
    public var mRemainderFrames: Int32
    /// Creates a packet table.
    public init(mNumberValidFrames: Int64 = 0, mPrimingFrames: Int32 = 0, mRemainderFrames: Int32 = 0) {
        self.mNumberValidFrames = mNumberValidFrames
        self.mPrimingFrames = mPrimingFrames
        self.mRemainderFrames = mRemainderFrames
    }
}

/// The priming and remainder frames (``AudioFilePacketTableInfo``). The corresponding Apple
/// constant is `kAudioFilePropertyPacketTableInfo` (`'pnfo'`).
public let kAudioFilePropertyPacketTableInfo = fourCharCode("pnfo")
/// The bit rate in bits per second (`UInt32`). The corresponding Apple constant is `kAudioFilePropertyBitRate` (`'brat'`).
public let kAudioFilePropertyBitRate = fourCharCode("brat")

/// A compressed file behind an ``AudioFileID``: read (``CompressedFileReader``'s packets) or
/// written (``CompressedFileWriter``), at the packet level for Audio File Services and at the
/// frame level (decoding or encoding 32-bit float PCM) for Extended Audio File Services.
///
/// Frames read are the valid frames: priming is dropped and the remainder cut, as Apple's
/// ExtAudioFile does. A read at a frame other than where the last one ended decodes from a few
/// packets earlier (the codec's overlap and MP3's bit reservoir) and drops what precedes it.
///
/// `@unchecked Sendable`: every mutable field is guarded by `lock`.
final class CompressedAudioFile: @unchecked Sendable {
    let format: CompressedFormat
    let fileType: AudioFileTypeID
    let reader: CompressedFileReader?
    /// Packets decoded before the one a seek lands in.
    static let prerollPackets = 3

    private let lock = NSLock()
    private var writer: CompressedFileWriter?
    private var atomicOutput: AtomicFileOutput?
    private var descriptor: Int32 = -1
    private var encoder: PacketEncoder?
    private var decoder: PacketDecoder?
    /// Decoded frames (interleaved) beginning at decoded frame `decodedStart`; the next packet to decode.
    private var decoded: [Float] = []
    private var decodedStart: Int64 = 0
    private var nextPacket = 0

    init(reader: CompressedFileReader) {
        self.reader = reader
        format = reader.format
        fileType = reader.fileType
    }

    /// Creates a file for packets of `format` (the caller has checked the path may be written).
    /// An atomic file appears at `path` only when closed, replacing a file there only if `replacing`.
    init(creating path: String, type: AudioFileTypeID, format: CompressedFormat, atomic: Bool, replacing: Bool) throws(AudioQueueError) {
        self.format = format
        fileType = type
        reader = nil
        _ = try CompressedFileWriter.requireMuxer(type, format)
        if atomic {
            do {
                let output = try AtomicFileOutput(destinationPath: path)
                output.replacesExistingFile = replacing
                atomicOutput = output
                descriptor = output.descriptor
            } catch {
                throw AudioQueueError(error.kind == .permissionDenied ? kAudioFilePermissionsError : kAudioFileUnspecifiedError, "\(error)")
            }
        } else {
            descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
            guard descriptor >= 0 else {
                throw AudioQueueError(errno == EACCES ? kAudioFilePermissionsError : kAudioFileUnspecifiedError, "'\(path)' cannot be created: \(String(cString: strerror(errno)))")
            }
        }
        writer = try CompressedFileWriter(descriptor: descriptor, fileType: type, format: format)
    }

    deinit {
        if atomicOutput == nil, descriptor >= 0 { Foundation.close(descriptor) }
    }

    private func locked<T>(_ body: () throws(AudioQueueError) -> T) throws(AudioQueueError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    var isWritable: Bool { lock.withLock { writer != nil } }

    /// Packets in the file.
    var packetCount: Int64 { lock.withLock { reader.map { Int64($0.packetCount) } ?? writer?.packetsWritten ?? 0 } }

    /// Valid frames: read, the file's; written, the frames given so far.
    var frameCount: Int64 {
        lock.withLock {
            if let reader { return reader.validFrames }
            if let encoder { return Int64(encoder.inputFrames) }
            guard let writer else { return 0 }
            return writer.packetsWritten * Int64(format.framesPerPacket) - Int64(writer.primingFrames) - Int64(writer.remainderFrames)
        }
    }

    private var packetTable: AudioFilePacketTableInfo {
        if let reader {
            return AudioFilePacketTableInfo(mNumberValidFrames: reader.validFrames, mPrimingFrames: Int32(reader.primingFrames),
                                            mRemainderFrames: Int32(reader.remainderFrames))
        }
        let priming = writer?.primingFrames ?? 0, remainder = writer?.remainderFrames ?? 0
        let packets = writer?.packetsWritten ?? 0
        return AudioFilePacketTableInfo(mNumberValidFrames: max(0, packets * Int64(format.framesPerPacket) - Int64(priming + remainder)),
                                        mPrimingFrames: Int32(priming), mRemainderFrames: Int32(remainder))
    }

    /// A property's bytes, or nil for one the caller answers for every file.
    func property(_ id: AudioFilePropertyID) -> [UInt8]? {
        func bytes<T>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
        return lock.withLock { () -> [UInt8]? in
            let packets = reader.map { Int64($0.packetCount) } ?? writer?.packetsWritten ?? 0
            let byteCount = reader.map { Int64($0.byteCount) } ?? writer?.bytesWritten ?? 0
            let seconds = Double(packetTable.mNumberValidFrames) / format.sampleRate
            switch id {
            case kAudioFilePropertyDataFormat: return bytes(format.streamDescription)
            case kAudioFilePropertyAudioDataPacketCount: return bytes(UInt64(packets))
            case kAudioFilePropertyAudioDataByteCount: return bytes(UInt64(byteCount))
            case kAudioFilePropertyMaximumPacketSize:
                return bytes(UInt32(reader?.maximumPacketSize ?? max(writer?.maximumPacketSize ?? 0, format.bytesPerPacket)))
            case kAudioFilePropertyPacketSizeUpperBound: return bytes(UInt32(format.packetSizeUpperBound))
            case kAudioFilePropertyMagicCookieData: return reader?.cookie ?? writer?.cookie ?? []
            case kAudioFilePropertyPacketTableInfo: return bytes(packetTable)
            case kAudioFilePropertyEstimatedDuration: return bytes(Float64(seconds))
            case kAudioFilePropertyBitRate: return bytes(UInt32(seconds > 0 ? (Double(byteCount) * 8 / seconds).rounded() : 0))
            default: return nil
            }
        }
    }

    /// Sets the cookie or packet table of a file being written.
    func setProperty(_ id: AudioFilePropertyID, _ data: UnsafeRawBufferPointer) throws(AudioQueueError) {
        try locked { () throws(AudioQueueError) in
            guard let writer else {
                throw AudioQueueError(kAudioFilePermissionsError, "the file is open for reading; its properties cannot be set")
            }
            switch id {
            case kAudioFilePropertyMagicCookieData:
                // Apple's recording guide sets the cookie again after recording: the same one is fine.
                if writer.packetsWritten > 0 && Array(data) == writer.cookie { return }
                guard writer.packetsWritten == 0 else {
                    throw AudioQueueError(kAudioFileOperationNotSupportedError, "the magic cookie is written with the first packet; set it before writing packets")
                }
                _ = try MagicCookie.extradata(Array(data), codec: format.codec)
                writer.cookie = Array(data)
            case kAudioFilePropertyPacketTableInfo:
                guard data.count >= MemoryLayout<AudioFilePacketTableInfo>.size else {
                    throw AudioQueueError(kAudioFileBadPropertySizeError, "kAudioFilePropertyPacketTableInfo takes \(MemoryLayout<AudioFilePacketTableInfo>.size) bytes")
                }
                let table = data.loadUnaligned(as: AudioFilePacketTableInfo.self)
                guard table.mPrimingFrames >= 0, table.mRemainderFrames >= 0, Int(table.mRemainderFrames) < max(format.framesPerPacket, 1) else {
                    throw AudioQueueError(kAudio_ParamError, "priming (\(table.mPrimingFrames)) must not be negative and remainder (\(table.mRemainderFrames)) must be less than a packet (\(format.framesPerPacket) frames)")
                }
                guard Int(table.mPrimingFrames) == writer.primingFrames || writer.canChangePriming else {
                    throw AudioQueueError(kAudioFileOperationNotSupportedError, "an MPEG-4 file's priming is written with its first packets: set kAudioFilePropertyPacketTableInfo's mPrimingFrames (\(table.mPrimingFrames)) before writing packets, the remainder may follow at the end")
                }
                writer.primingFrames = Int(table.mPrimingFrames)
                writer.remainderFrames = Int(table.mRemainderFrames)
            default:
                throw AudioQueueError(kAudioFileUnsupportedPropertyError, "property '\(fourCharCodeString(id))' cannot be set")
            }
        }
    }

    /// Copies whole packets from `start` into `buffer` — at most `count`, and at most `maxBytes`
    /// bytes if given — with a description each; returns the packets and bytes copied.
    func readPackets(into buffer: UnsafeMutableRawPointer?, maxBytes: Int?, descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?,
                     from start: Int64, count: Int) throws(AudioQueueError) -> (packets: Int, bytes: Int) {
        guard let reader else {
            throw AudioQueueError(kAudioFilePermissionsError, "the file was created for writing; close it and open it with AudioFileOpenURL to read")
        }
        guard start >= 0 else { throw AudioQueueError(kAudioFileInvalidPacketOffsetError, "packet \(start) is negative") }
        guard count > 0, start < Int64(reader.packetCount) else { return (0, 0) }
        guard let buffer else { throw AudioQueueError(kAudio_ParamError, "outBuffer is NULL") }
        if format.codec.isVariableBitRate && descriptions == nil {
            throw AudioQueueError(kAudio_ParamError, "\(fourCharCodeString(format.codec.formatID)) packets vary in size: pass an array of AudioStreamPacketDescription (outPacketDescriptions) to learn where each packet is")
        }
        let first = Int(start)
        var packets = 0, bytes = 0
        while packets < count, first + packets < reader.packetCount {
            let index = first + packets
            let size = reader.packetSize(index)
            if let maxBytes, bytes + size > maxBytes {
                guard packets > 0 else {
                    throw AudioQueueError(kAudio_ParamError, "packet \(index) has \(size) bytes but the buffer holds \(maxBytes); size buffers with kAudioFilePropertyMaximumPacketSize")
                }
                break
            }
            reader.data.withUnsafeBytes { buffer.advanced(by: bytes).copyMemory(from: $0.baseAddress! + reader.offsets[index], byteCount: size) }
            descriptions?[packets] = AudioStreamPacketDescription(mStartOffset: Int64(bytes), mVariableFramesInPacket: 0, mDataByteSize: UInt32(size))
            bytes += size
            packets += 1
        }
        return (packets, bytes)
    }

    /// Appends `count` packets from `buffer` (`bytes` bytes): described by `descriptions`, or, for
    /// formats of constant packet size, back to back. `start` must be the packets written so far.
    func writePackets(from buffer: UnsafeRawPointer, bytes: Int, descriptions: UnsafePointer<AudioStreamPacketDescription>?,
                      start: Int64, count: Int) throws(AudioQueueError) {
        try locked { () throws(AudioQueueError) in
            guard let writer else {
                throw AudioQueueError(kAudioFilePermissionsError, "the file is open for reading; create a file with AudioFileCreateWithURL to write")
            }
            guard start == writer.packetsWritten else {
                throw AudioQueueError(kAudioFileInvalidPacketOffsetError, "packets are written in order: the next is \(writer.packetsWritten), not \(start)")
            }
            let ranges = try PacketRanges.make(bytes: bytes, count: count, descriptions: descriptions, format: format)
            for range in ranges {
                try writer.write(UnsafeRawBufferPointer(start: buffer + range.lowerBound, count: range.count))
            }
        }
    }

    /// Decodes valid frames from `start` (32-bit float interleaved) into `buffer`; returns the
    /// frames read (0 at the end).
    func readFrames(into buffer: UnsafeMutableRawPointer, from start: Int64, frames: Int) throws(AudioQueueError) -> Int {
        try locked { () throws(AudioQueueError) -> Int in
            guard let reader else {
                throw AudioQueueError(kAudioFilePermissionsError, "the file was created for writing")
            }
            let end = Int64(reader.primingFrames) + reader.validFrames
            let first = Int64(reader.primingFrames) + start
            let wanted = Int(max(0, min(Int64(frames), end - first)))
            guard wanted > 0 else { return 0 }
            let channels = format.channelCount
            let decodedEnd = decodedStart + Int64(decoded.count / channels)
            if decoder == nil || first < decodedStart || first > decodedEnd + Int64(format.framesPerPacket) {
                if decoder == nil { decoder = try PacketDecoder(format: format, cookie: reader.cookie) }
                decoder?.reset()
                nextPacket = max(0, Int(first / Int64(format.framesPerPacket)) - Self.prerollPackets)
                decodedStart = Int64(nextPacket) * Int64(format.framesPerPacket)
                decoded.removeAll(keepingCapacity: true)
            }
            while decodedStart + Int64(decoded.count / channels) < first + Int64(wanted), nextPacket < reader.packetCount {
                let index = nextPacket
                _ = try reader.data.withBytes { (raw) throws(AudioQueueError) -> Int in
                    let packet = UnsafeRawBufferPointer(rebasing: raw[reader.offsets[index]..<reader.offsets[index + 1]])
                    return try decoder!.decode(packet, into: &decoded, status: kAudioFileInvalidFileError)
                }
                nextPacket += 1
                // Keep only what is at or after the first frame wanted.
                let drop = Int(max(0, min(first - decodedStart, Int64(decoded.count / channels))))
                if drop > 0 {
                    decoded.removeFirst(drop * channels)
                    decodedStart += Int64(drop)
                }
            }
            let available = Int(decodedStart + Int64(decoded.count / channels) - first)
            let got = max(0, min(wanted, available))
            let skip = Int(first - decodedStart)
            decoded.withUnsafeBufferPointer {
                buffer.copyMemory(from: $0.baseAddress! + skip * channels, byteCount: got * channels * MemoryLayout<Float>.size)
            }
            return got
        }
    }

    /// Encodes `frames` frames of 32-bit float interleaved PCM and writes the packets completed.
    func writeFrames(from buffer: UnsafeRawPointer, frames: Int) throws(AudioQueueError) {
        try locked { () throws(AudioQueueError) in
            guard let writer else {
                throw AudioQueueError(kAudioFilePermissionsError, "the file is open for reading")
            }
            if encoder == nil {
                let made = try PacketEncoder(format: format)
                writer.cookie = made.cookie
                writer.primingFrames = made.primingFrames
                encoder = made
            }
            // The packets completed are written even when the codec refused part of the input;
            // the caller then gets its error, with the frames lost.
            let encoded = encoder!.encode(buffer.assumingMemoryBound(to: Float.self), frames: frames)
            for packet in encoded.packets { try packet.data.withBytes { (raw) throws(AudioQueueError) in try writer.write(raw) } }
            if let failure = encoded.failure {
                throw AudioQueueError(failure.code, "\(failure.message); \(encoded.lostFrames) of the \(frames) frames written were lost")
            }
        }
    }

    /// Finishes the file: the encoder's last packets, the packet table, the container's trailer;
    /// an atomic file appears at its path.
    func close() throws(AudioQueueError) {
        try locked { () throws(AudioQueueError) in
            guard let writer else { return }
            defer { self.writer = nil }
            do throws(AudioQueueError) {
                if let encoder {
                    for packet in try encoder.finish() {
                        try packet.data.withBytes { (raw) throws(AudioQueueError) in try writer.write(raw) }
                    }
                    let total = writer.packetsWritten * Int64(format.framesPerPacket)
                    writer.remainderFrames = Int(max(0, total - Int64(writer.primingFrames) - Int64(encoder.inputFrames)))
                }
                try writer.close()
                if let atomicOutput {
                    do throws(FileError) { try atomicOutput.commit() } catch {
                        throw AudioQueueError(error.kind == .unwritableOutput ? kAudioFilePermissionsError : kAudioFileUnspecifiedError, "\(error)")
                    }
                }
            } catch {
                atomicOutput?.abort()
                throw error
            }
        }
    }

    /// Abandons a file being written: an atomic one leaves nothing behind.
    func abort() {
        lock.withLock {
            writer = nil
            atomicOutput?.abort()
        }
    }
}

/// Where each packet of a buffer is, from its packet descriptions or, for formats of constant
/// packet size, back to back.
enum PacketRanges {
    static func make(bytes: Int, count: Int, descriptions: UnsafePointer<AudioStreamPacketDescription>?,
                     format: CompressedFormat) throws(AudioQueueError) -> [Range<Int>] {
        guard count >= 0 else { throw AudioQueueError(kAudio_ParamError, "packet count \(count) is negative") }
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(count)
        if let descriptions {
            for i in 0..<count {
                let d = descriptions[i]
                let end = d.mStartOffset + Int64(d.mDataByteSize)
                guard d.mStartOffset >= 0, d.mDataByteSize > 0, end <= Int64(bytes) else {
                    throw AudioQueueError(kAudio_ParamError, "packet description \(i) (offset \(d.mStartOffset), \(d.mDataByteSize) bytes) lies outside the \(bytes) bytes of audio data")
                }
                ranges.append(Int(d.mStartOffset)..<Int(end))
            }
            return ranges
        }
        guard format.bytesPerPacket > 0 else {
            throw AudioQueueError(kAudio_ParamError, "\(fourCharCodeString(format.codec.formatID)) packets vary in size: pass their packet descriptions")
        }
        guard count * format.bytesPerPacket <= bytes else {
            throw AudioQueueError(kAudio_ParamError, "\(count) packets of \(format.bytesPerPacket) bytes need \(count * format.bytesPerPacket) bytes, not \(bytes)")
        }
        for i in 0..<count { ranges.append((i * format.bytesPerPacket)..<((i + 1) * format.bytesPerPacket)) }
        return ranges
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws ``AudioQueueError``.
    func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws(AudioQueueError) -> T) throws(AudioQueueError) -> T {
        try withUnsafeBytes { raw in Result { () throws(AudioQueueError) -> T in try body(raw) } }.get()
    }
}

/// The packet descriptions an enqueue came with (`inNumPacketDescs`, `inPacketDescs`).
struct PacketList {
    var count: UInt32 = 0
    var descriptions: UnsafePointer<AudioStreamPacketDescription>? = nil
}
