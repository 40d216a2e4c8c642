import Foundation
import Lockstep
import Synchronization

// Audio File Stream Services (AudioFileStream.h): parsing a file as its bytes arrive — from a
// network, in pieces of any size — into its format, properties and packets, as streaming
// players do. MP3 and AAC in ADTS frames are parsed here (StreamPacketParser).

/// An audio file stream parser: an opaque reference. The corresponding Apple type is `AudioFileStreamID`.
public typealias AudioFileStreamID = OpaquePointer
/// A property of a stream such as ``kAudioFileStreamProperty_DataFormat``. The corresponding
/// Apple type is `AudioFileStreamPropertyID`.
public typealias AudioFileStreamPropertyID = UInt32

/// Called when the parser learns a property (format, cookie, data offset, ready to produce
/// packets…), on the thread that called ``AudioFileStreamParseBytes(_:_:_:_:)``. The
/// corresponding Apple type is `AudioFileStream_PropertyListenerProc`.
public typealias AudioFileStream_PropertyListenerProc = @convention(c) (
    _ inClientData: UnsafeMutableRawPointer, _ inAudioFileStream: AudioFileStreamID,
    _ inPropertyID: AudioFileStreamPropertyID, _ ioFlags: UnsafeMutablePointer<AudioFileStreamPropertyFlags>) -> Void

/// Called with packets the parser found (their bytes, back to back, and a description each),
/// on the thread that called ``AudioFileStreamParseBytes(_:_:_:_:)``; the bytes are valid only
/// during the call. The corresponding Apple type is `AudioFileStream_PacketsProc`.
public typealias AudioFileStream_PacketsProc = @convention(c) (
    _ inClientData: UnsafeMutableRawPointer, _ inNumberBytes: UInt32, _ inNumberPackets: UInt32,
    _ inInputData: UnsafeRawPointer, _ inPacketDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?) -> Void

extension AudioFileStreamPropertyFlags: @unchecked @retroactive Sendable {}
extension AudioFileStreamParseFlags: @unchecked @retroactive Sendable {}
extension AudioFileStreamSeekFlags: @unchecked @retroactive Sendable {}

/// The parser has what it needs to produce packets (`UInt32`, 1). The corresponding Apple constant is `kAudioFileStreamProperty_ReadyToProducePackets` (`'redy'`).
public let kAudioFileStreamProperty_ReadyToProducePackets = fourCharCode("redy")
/// The file type (`AudioFileTypeID`). The corresponding Apple constant is `kAudioFileStreamProperty_FileFormat` (`'ffmt'`).
public let kAudioFileStreamProperty_FileFormat = fourCharCode("ffmt")
/// The data format (``AudioStreamBasicDescription``). The corresponding Apple constant is `kAudioFileStreamProperty_DataFormat` (`'dfmt'`).
public let kAudioFileStreamProperty_DataFormat = fourCharCode("dfmt")
/// The magic cookie (bytes; AAC: an ES descriptor made from the ADTS header). The corresponding Apple constant is `kAudioFileStreamProperty_MagicCookieData` (`'mgic'`).
public let kAudioFileStreamProperty_MagicCookieData = fourCharCode("mgic")
/// Bytes of audio (`UInt64`), when a header (MP3's Xing) says. The corresponding Apple constant is `kAudioFileStreamProperty_AudioDataByteCount` (`'bcnt'`).
public let kAudioFileStreamProperty_AudioDataByteCount = fourCharCode("bcnt")
/// Packets of audio (`UInt64`), when a header (MP3's Xing) says. The corresponding Apple constant is `kAudioFileStreamProperty_AudioDataPacketCount` (`'pcnt'`).
public let kAudioFileStreamProperty_AudioDataPacketCount = fourCharCode("pcnt")
/// The largest packet parsed so far (`UInt32`). The corresponding Apple constant is `kAudioFileStreamProperty_MaximumPacketSize` (`'psze'`).
public let kAudioFileStreamProperty_MaximumPacketSize = fourCharCode("psze")
/// The byte offset of the first audio packet in the stream (`Int64`). The corresponding Apple constant is `kAudioFileStreamProperty_DataOffset` (`'doff'`).
public let kAudioFileStreamProperty_DataOffset = fourCharCode("doff")
/// The largest packet the format allows (`UInt32`). The corresponding Apple constant is `kAudioFileStreamProperty_PacketSizeUpperBound` (`'pkub'`).
public let kAudioFileStreamProperty_PacketSizeUpperBound = fourCharCode("pkub")
/// Priming and remainder frames (``AudioFilePacketTableInfo``), from MP3's LAME header. The corresponding Apple constant is `kAudioFileStreamProperty_PacketTableInfo` (`'pnfo'`).
public let kAudioFileStreamProperty_PacketTableInfo = fourCharCode("pnfo")
/// Average bytes per packet (`Float64`). The corresponding Apple constant is `kAudioFileStreamProperty_AverageBytesPerPacket` (`'abpp'`).
public let kAudioFileStreamProperty_AverageBytesPerPacket = fourCharCode("abpp")
/// The bit rate (`UInt32`, bits per second; MP3: the last frame header's). The corresponding Apple constant is `kAudioFileStreamProperty_BitRate` (`'brat'`).
public let kAudioFileStreamProperty_BitRate = fourCharCode("brat")

/// The stream's file type is not supported (`'typ?'`). The corresponding Apple constant is `kAudioFileStreamError_UnsupportedFileType`.
public let kAudioFileStreamError_UnsupportedFileType = OSStatus(bitPattern: fourCharCode("typ?"))
/// The data format is not supported (`'fmt?'`). The corresponding Apple constant is `kAudioFileStreamError_UnsupportedDataFormat`.
public let kAudioFileStreamError_UnsupportedDataFormat = OSStatus(bitPattern: fourCharCode("fmt?"))
/// The property is not supported (`'pty?'`). The corresponding Apple constant is `kAudioFileStreamError_UnsupportedProperty`.
public let kAudioFileStreamError_UnsupportedProperty = OSStatus(bitPattern: fourCharCode("pty?"))
/// The property size is wrong (`'!siz'`). The corresponding Apple constant is `kAudioFileStreamError_BadPropertySize`.
public let kAudioFileStreamError_BadPropertySize = OSStatus(bitPattern: fourCharCode("!siz"))
/// The stream cannot do this yet: parse until ReadyToProducePackets (`'optm'`). The corresponding Apple constant is `kAudioFileStreamError_NotOptimized`.
public let kAudioFileStreamError_NotOptimized = OSStatus(bitPattern: fourCharCode("optm"))
/// The packet offset is invalid (`'pck?'`). The corresponding Apple constant is `kAudioFileStreamError_InvalidPacketOffset`.
public let kAudioFileStreamError_InvalidPacketOffset = OSStatus(bitPattern: fourCharCode("pck?"))
/// The stream is malformed (`'dta?'`). The corresponding Apple constant is `kAudioFileStreamError_InvalidFile`.
public let kAudioFileStreamError_InvalidFile = OSStatus(bitPattern: fourCharCode("dta?"))
/// The property's value is not known (yet) (`'unk?'`). The corresponding Apple constant is `kAudioFileStreamError_ValueUnknown`.
public let kAudioFileStreamError_ValueUnknown = OSStatus(bitPattern: fourCharCode("unk?"))
/// More data is needed (`'more'`). The corresponding Apple constant is `kAudioFileStreamError_DataUnavailable`.
public let kAudioFileStreamError_DataUnavailable = OSStatus(bitPattern: fourCharCode("more"))
/// The operation is not allowed (`'nope'`). The corresponding Apple constant is `kAudioFileStreamError_IllegalOperation`.
public let kAudioFileStreamError_IllegalOperation = OSStatus(bitPattern: fourCharCode("nope"))
/// Something went wrong that no other code describes (`'wht?'`). The corresponding Apple constant is `kAudioFileStreamError_UnspecifiedError`.
public let kAudioFileStreamError_UnspecifiedError = OSStatus(bitPattern: fourCharCode("wht?"))
/// The parser cannot recover from the discontinuity (`'dsc!'`). The corresponding Apple constant is `kAudioFileStreamError_DiscontinuityCantRecover`.
public let kAudioFileStreamError_DiscontinuityCantRecover = OSStatus(bitPattern: fourCharCode("dsc!"))

/// Opens a parser. `inFileTypeHint` (``kAudioFileMP3Type``, ``kAudioFileAAC_ADTSType``, or 0)
/// narrows what it looks for. The corresponding Apple function is `AudioFileStreamOpen`.
/// - Returns: ``kAudioFileStreamError_UnsupportedFileType`` for a hint of another type.
@discardableResult
public func AudioFileStreamOpen(_ inClientData: UnsafeMutableRawPointer?, _ inPropertyListenerProc: AudioFileStream_PropertyListenerProc,
                                _ inPacketsProc: AudioFileStream_PacketsProc, _ inFileTypeHint: AudioFileTypeID,
                                _ outAudioFileStream: UnsafeMutablePointer<AudioFileStreamID?>) -> OSStatus {
    status { () throws(AudioQueueError) in
        guard [0, kAudioFileMP3Type, kAudioFileAAC_ADTSType].contains(inFileTypeHint) else {
            throw AudioQueueError(kAudioFileStreamError_UnsupportedFileType, "streams of type '\(fourCharCodeString(inFileTypeHint))' are not parsed here; MP3 (kAudioFileMP3Type) and ADTS AAC (kAudioFileAAC_ADTSType) are")
        }
        let stream = CompatFileStream(clientData: inClientData, listener: inPropertyListenerProc, packets: inPacketsProc, hint: inFileTypeHint)
        FileStreamRegistry.shared.add(stream)
        outAudioFileStream.pointee = stream.ref
    }
}

/// Parses the next bytes of the stream, calling the property listener and the packets callback
/// (on this thread, before returning) for what they complete. Pass
/// ``AudioFileStreamParseFlags/discontinuity`` when the bytes do not follow the last ones.
/// The corresponding Apple function is `AudioFileStreamParseBytes`.
/// - Returns: ``kAudioFileStreamError_UnsupportedFileType`` (no MP3 or ADTS frames in the first
///   MiB), ``kAudioFileStreamError_InvalidFile``, ``kAudio_ParamError`` (NULL data with a size).
@discardableResult
public func AudioFileStreamParseBytes(_ inAudioFileStream: AudioFileStreamID, _ inDataByteSize: UInt32, _ inData: UnsafeRawPointer?,
                                      _ inFlags: AudioFileStreamParseFlags) -> OSStatus {
    withStream(inAudioFileStream) { stream throws(AudioQueueError) in
        guard inData != nil || inDataByteSize == 0 else { throw AudioQueueError(kAudio_ParamError, "inData is NULL") }
        try stream.parse(UnsafeRawBufferPointer(start: inData, count: Int(inDataByteSize)), discontinuity: inFlags.contains(.discontinuity))
    }
}

/// The byte offset, relative to the first audio packet (add ``kAudioFileStreamProperty_DataOffset``
/// for the stream's), where packet `inPacketOffset` starts: exact for packets already parsed,
/// else estimated from the average packet size (``AudioFileStreamSeekFlags/offsetIsEstimated``).
/// Parse the bytes from there next. The corresponding Apple function is `AudioFileStreamSeek`.
/// - Returns: ``kAudioFileStreamError_NotOptimized`` before the stream is ready,
///   ``kAudioFileStreamError_InvalidPacketOffset`` for a negative packet.
@discardableResult
public func AudioFileStreamSeek(_ inAudioFileStream: AudioFileStreamID, _ inPacketOffset: Int64,
                                _ outDataByteOffset: UnsafeMutablePointer<Int64>, _ ioFlags: UnsafeMutablePointer<AudioFileStreamSeekFlags>) -> OSStatus {
    withStream(inAudioFileStream) { stream throws(AudioQueueError) in
        let (offset, estimated) = try stream.seek(inPacketOffset)
        outDataByteOffset.pointee = offset
        ioFlags.pointee = estimated ? .offsetIsEstimated : []
    }
}

/// A property's size and whether it can be set (none can). The corresponding Apple function is
/// `AudioFileStreamGetPropertyInfo`.
/// - Returns: as ``AudioFileStreamGetProperty(_:_:_:_:)``.
@discardableResult
public func AudioFileStreamGetPropertyInfo(_ inAudioFileStream: AudioFileStreamID, _ inPropertyID: AudioFileStreamPropertyID,
                                           _ outPropertyDataSize: UnsafeMutablePointer<UInt32>?, _ outWritable: UnsafeMutablePointer<DarwinBoolean>?) -> OSStatus {
    withStream(inAudioFileStream) { stream throws(AudioQueueError) in
        outPropertyDataSize?.pointee = UInt32(try stream.property(inPropertyID).count)
        outWritable?.pointee = false
    }
}

/// Reads a property the parser knows. The corresponding Apple function is `AudioFileStreamGetProperty`.
/// - Returns: ``kAudioFileStreamError_DataUnavailable`` (not parsed far enough yet),
///   ``kAudioFileStreamError_ValueUnknown`` (the stream does not say, such as the packet count of
///   a stream without a header), ``kAudioFileStreamError_BadPropertySize``,
///   ``kAudioFileStreamError_UnsupportedProperty``.
@discardableResult
public func AudioFileStreamGetProperty(_ inAudioFileStream: AudioFileStreamID, _ inPropertyID: AudioFileStreamPropertyID,
                                       _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>, _ outPropertyData: UnsafeMutableRawPointer) -> OSStatus {
    withStream(inAudioFileStream) { stream throws(AudioQueueError) in
        let bytes = try stream.property(inPropertyID)
        guard Int(ioPropertyDataSize.pointee) >= bytes.count else {
            throw AudioQueueError(kAudioFileStreamError_BadPropertySize, "property '\(fourCharCodeString(inPropertyID))' needs \(bytes.count) bytes, not \(ioPropertyDataSize.pointee)")
        }
        bytes.withUnsafeBytes { if let base = $0.baseAddress { outPropertyData.copyMemory(from: base, byteCount: bytes.count) } }
        ioPropertyDataSize.pointee = UInt32(bytes.count)
    }
}

/// Sets a property: none can be set here. The corresponding Apple function is `AudioFileStreamSetProperty`.
/// - Returns: ``kAudioFileStreamError_IllegalOperation``.
@discardableResult
public func AudioFileStreamSetProperty(_ inAudioFileStream: AudioFileStreamID, _ inPropertyID: AudioFileStreamPropertyID,
                                       _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer) -> OSStatus {
    withStream(inAudioFileStream) { _ throws(AudioQueueError) in
        throw AudioQueueError(kAudioFileStreamError_IllegalOperation, "audio file stream property '\(fourCharCodeString(inPropertyID))' cannot be set")
    }
}

/// Closes the parser; the reference is invalid afterwards. The corresponding Apple function is
/// `AudioFileStreamClose`.
/// - Returns: ``kAudio_ParamError`` for a closed or unknown stream.
@discardableResult
public func AudioFileStreamClose(_ inAudioFileStream: AudioFileStreamID) -> OSStatus {
    withStream(inAudioFileStream) { stream throws(AudioQueueError) in FileStreamRegistry.shared.remove(stream) }
}

private func withStream(_ ref: AudioFileStreamID, _ body: (CompatFileStream) throws(AudioQueueError) -> Void) -> OSStatus {
    status { () throws(AudioQueueError) in try body(try FileStreamRegistry.shared.object(ref)) }
}

/// The object behind an ``AudioFileStreamID``: a ``StreamPacketParser`` and the client's callbacks.
///
/// Apple's parser is used from one thread at a time; `lock` makes any misuse safe. Callbacks run
/// after the lock is released, so they may call ``AudioFileStreamGetProperty(_:_:_:_:)`` (and
/// may not parse more bytes of the same stream, as on Apple).
final class CompatFileStream: @unchecked Sendable {
    private let clientData: UnsafeMutableRawPointer?
    private let listener: AudioFileStream_PropertyListenerProc
    private let packets: AudioFileStream_PacketsProc
    private let parser: StreamPacketParser
    private let lock = NSLock()

    var ref: AudioFileStreamID { FileStreamRegistry.handle(self) }

    init(clientData: UnsafeMutableRawPointer?, listener: @escaping AudioFileStream_PropertyListenerProc,
         packets: @escaping AudioFileStream_PacketsProc, hint: AudioFileTypeID) {
        self.clientData = clientData
        self.listener = listener
        self.packets = packets
        parser = StreamPacketParser(hint: hint)
    }

    func parse(_ bytes: UnsafeRawBufferPointer, discontinuity: Bool) throws(AudioQueueError) {
        lock.lock()
        let outcome = Result { () throws(AudioQueueError) in try parser.parse(bytes, discontinuity: discontinuity) }
        lock.unlock()
        let events = try outcome.get()
        // Apple's callbacks take a non-NULL client pointer; a NULL one is passed as a dangling
        // one the callback must not use (the caller gave none).
        let client = clientData ?? UnsafeMutableRawPointer(bitPattern: 1)!
        for event in events {
            switch event {
            case .property(let id):
                var flags: AudioFileStreamPropertyFlags = .propertyIsCached
                listener(client, ref, id, &flags)
            case .packets(var data, var descriptions):
                let count = descriptions.count
                let size = data.count
                data.withUnsafeMutableBytes { raw in
                    descriptions.withUnsafeMutableBufferPointer { packets(client, UInt32(size), UInt32(count), raw.baseAddress!, $0.baseAddress) }
                }
            }
        }
    }

    func seek(_ packet: Int64) throws(AudioQueueError) -> (Int64, Bool) {
        lock.lock()
        defer { lock.unlock() }
        return try parser.seek(toPacket: packet)
    }

    func property(_ id: AudioFileStreamPropertyID) throws(AudioQueueError) -> [UInt8] {
        func bytes<T>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
        lock.lock()
        defer { lock.unlock() }
        func unknown(_ what: String) -> AudioQueueError {
            AudioQueueError(kAudioFileStreamError_ValueUnknown, "the stream does not say its \(what)")
        }
        guard let format = parser.dataFormat, let kind = parser.kind else {
            guard id == kAudioFileStreamProperty_ReadyToProducePackets else {
                throw AudioQueueError(kAudioFileStreamError_DataUnavailable, "the stream's format is not known yet; parse more bytes")
            }
            return bytes(UInt32(0))
        }
        switch id {
        case kAudioFileStreamProperty_ReadyToProducePackets: return bytes(UInt32(parser.ready ? 1 : 0))
        case kAudioFileStreamProperty_FileFormat: return bytes(kind == .mp3 ? kAudioFileMP3Type : kAudioFileAAC_ADTSType)
        case kAudioFileStreamProperty_DataFormat: return bytes(format)
        case kAudioFileStreamProperty_MagicCookieData: return parser.cookie
        case kAudioFileStreamProperty_DataOffset:
            guard let offset = parser.dataOffset else { throw AudioQueueError(kAudioFileStreamError_DataUnavailable, "no audio packet parsed yet") }
            return bytes(offset)
        case kAudioFileStreamProperty_AudioDataPacketCount:
            guard let count = parser.packetCountFromHeader else { throw unknown("packet count (it has no Xing header)") }
            return bytes(UInt64(count))
        case kAudioFileStreamProperty_AudioDataByteCount:
            guard let count = parser.byteCountFromHeader else { throw unknown("byte count (it has no Xing header)") }
            return bytes(UInt64(count))
        case kAudioFileStreamProperty_PacketTableInfo:
            guard let table = parser.packetTable else { throw unknown("priming and remainder (it has no LAME header)") }
            return bytes(table)
        case kAudioFileStreamProperty_MaximumPacketSize: return bytes(UInt32(parser.maximumPacketSize))
        case kAudioFileStreamProperty_PacketSizeUpperBound:
            let codec = CompressedFormat.make(format).flatMap { try? $0.get() }
            return bytes(UInt32(codec?.packetSizeUpperBound ?? parser.maximumPacketSize))
        case kAudioFileStreamProperty_AverageBytesPerPacket: return bytes(Float64(parser.averageBytesPerPacket))
        case kAudioFileStreamProperty_BitRate:
            let perPacket = parser.averageBytesPerPacket * 8 * format.mSampleRate / Double(format.mFramesPerPacket)
            return bytes(UInt32(kind == .mp3 && parser.packetCountFromHeader == nil ? Double(parser.bitRate) : perPacket.rounded()))
        default:
            throw AudioQueueError(kAudioFileStreamError_UnsupportedProperty, "audio file stream property '\(fourCharCodeString(id))' is not supported")
        }
    }
}

/// Every open ``CompatFileStream`` by its reference, so closed or foreign references return
/// ``kAudio_ParamError`` instead of being dereferenced.
typealias FileStreamRegistry = HandleRegistry<CompatFileStream>

extension HandleRegistry where Object == CompatFileStream {
    static let shared = HandleRegistry(unknown: AudioQueueError(kAudio_ParamError, "not an open audio file stream (never opened, or closed)"))
}
