import Foundation
import Lockstep
import LockstepFiles
import Synchronization

// The part of Audio File Services (AudioFile.h) that Audio Queue code uses, on libsndfile through
// LockstepFiles: open and create files, read and write linear PCM packets, read the data format,
// packet counts and sizes, close.

/// An open audio file: an opaque reference. The corresponding Apple type is `AudioFileID`.
public typealias AudioFileID = OpaquePointer
/// A file type such as ``kAudioFileAIFFType``. The corresponding Apple type is `AudioFileTypeID`.
public typealias AudioFileTypeID = UInt32
/// A file property such as ``kAudioFilePropertyDataFormat``. The corresponding Apple type is `AudioFilePropertyID`.
public typealias AudioFilePropertyID = UInt32

/// How a file is opened. The corresponding Apple type is `AudioFilePermissions`.
public enum AudioFilePermissions: Int8, Sendable {
    /// Read only (the one supported here).
    case readPermission = 1
    /// Write only (not supported for existing files: create them with ``AudioFileCreateWithURL(_:_:_:_:_:)``).
    case writePermission = 2
    /// Read and write (not supported for existing files).
    case readWritePermission = 3
}

/// Read only. The corresponding Apple constant is `kAudioFileReadPermission`.
public let kAudioFileReadPermission = AudioFilePermissions.readPermission
/// Write only. The corresponding Apple constant is `kAudioFileWritePermission`.
public let kAudioFileWritePermission = AudioFilePermissions.writePermission
/// Read and write. The corresponding Apple constant is `kAudioFileReadWritePermission`.
public let kAudioFileReadWritePermission = AudioFilePermissions.readWritePermission

/// Flags for creating a file. The corresponding Apple type is `AudioFileFlags`.
public struct AudioFileFlags: OptionSet, Sendable {
    /// The C value.
    public let rawValue: UInt32
    /// Creates flags from their C value.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Replace a file that exists. The corresponding Apple constant is `kAudioFileFlags_EraseFile`.
    public static let eraseFile = AudioFileFlags(rawValue: 1)
    /// Don't page-align the audio data (ignored). The corresponding Apple constant is `kAudioFileFlags_DontPageAlignAudioData`.
    public static let dontPageAlignAudioData = AudioFileFlags(rawValue: 2)
}

/// Replace a file that exists. The corresponding Apple constant is `kAudioFileFlags_EraseFile`.
public let kAudioFileFlags_EraseFile = AudioFileFlags.eraseFile
/// Don't page-align the audio data (ignored). The corresponding Apple constant is `kAudioFileFlags_DontPageAlignAudioData`.
public let kAudioFileFlags_DontPageAlignAudioData = AudioFileFlags.dontPageAlignAudioData

/// AIFF: big-endian integer PCM. The corresponding Apple constant is `kAudioFileAIFFType` (`'AIFF'`).
public let kAudioFileAIFFType = fourCharCode("AIFF")
/// AIFF-C: big-endian integer or float PCM. The corresponding Apple constant is `kAudioFileAIFCType` (`'AIFC'`).
public let kAudioFileAIFCType = fourCharCode("AIFC")
/// WAVE: little-endian PCM. The corresponding Apple constant is `kAudioFileWAVEType` (`'WAVE'`).
public let kAudioFileWAVEType = fourCharCode("WAVE")
/// Core Audio Format: PCM in either byte order. The corresponding Apple constant is `kAudioFileCAFType` (`'caff'`).
public let kAudioFileCAFType = fourCharCode("caff")
/// FLAC, written from and read as 16- or 24-bit linear PCM (on Apple its data format is
/// `kAudioFormatFLAC`). The corresponding Apple constant is `kAudioFileFLACType` (`'flac'`).
public let kAudioFileFLACType = fourCharCode("flac")
/// Wave64. The corresponding Apple constant is `kAudioFileWave64Type` (`'W64f'`).
public let kAudioFileWave64Type = fourCharCode("W64f")
/// RF64. The corresponding Apple constant is `kAudioFileRF64Type` (`'RF64'`).
public let kAudioFileRF64Type = fourCharCode("RF64")
/// MP3 (read only, as packets of 1152 frames). The corresponding Apple constant is `kAudioFileMP3Type` (`'MPG3'`).
public let kAudioFileMP3Type = fourCharCode("MPG3")

/// The file type (`AudioFileTypeID`). The corresponding Apple constant is `kAudioFilePropertyFileFormat` (`'ffmt'`).
public let kAudioFilePropertyFileFormat = fourCharCode("ffmt")
/// The audio data format (``AudioStreamBasicDescription``). The corresponding Apple constant is `kAudioFilePropertyDataFormat` (`'dfmt'`).
public let kAudioFilePropertyDataFormat = fourCharCode("dfmt")
/// Packets of audio (`UInt64`). The corresponding Apple constant is `kAudioFilePropertyAudioDataPacketCount` (`'pcnt'`).
public let kAudioFilePropertyAudioDataPacketCount = fourCharCode("pcnt")
/// Bytes of audio (`UInt64`). The corresponding Apple constant is `kAudioFilePropertyAudioDataByteCount` (`'bcnt'`).
public let kAudioFilePropertyAudioDataByteCount = fourCharCode("bcnt")
/// The largest packet in the file (`UInt32`). The corresponding Apple constant is `kAudioFilePropertyMaximumPacketSize` (`'psze'`).
public let kAudioFilePropertyMaximumPacketSize = fourCharCode("psze")
/// The largest packet the format allows (`UInt32`). The corresponding Apple constant is `kAudioFilePropertyPacketSizeUpperBound` (`'pkub'`).
public let kAudioFilePropertyPacketSizeUpperBound = fourCharCode("pkub")
/// The magic cookie (bytes; linear PCM files have none: size 0). The corresponding Apple constant is `kAudioFilePropertyMagicCookieData` (`'mgic'`).
public let kAudioFilePropertyMagicCookieData = fourCharCode("mgic")
/// The channel layout (``AudioChannelLayout``, read-only here): mono, stereo, or N discrete
/// channels in order — the order Lockstep reads them in (a layout stored in the file is not
/// read). The corresponding Apple constant is `kAudioFilePropertyChannelLayout` (`'cmap'`).
public let kAudioFilePropertyChannelLayout = fourCharCode("cmap")
/// The duration in seconds (`Float64`). The corresponding Apple constant is `kAudioFilePropertyEstimatedDuration` (`'edur'`).
public let kAudioFilePropertyEstimatedDuration = fourCharCode("edur")

/// Something went wrong that no other code describes (`'wht?'`). The corresponding Apple constant is `kAudioFileUnspecifiedError`.
public let kAudioFileUnspecifiedError = OSStatus(bitPattern: fourCharCode("wht?"))
/// The file type is not supported (`'typ?'`). The corresponding Apple constant is `kAudioFileUnsupportedFileTypeError`.
public let kAudioFileUnsupportedFileTypeError = OSStatus(bitPattern: fourCharCode("typ?"))
/// The data format is not supported by the file type (`'fmt?'`). The corresponding Apple constant is `kAudioFileUnsupportedDataFormatError`.
public let kAudioFileUnsupportedDataFormatError = OSStatus(bitPattern: fourCharCode("fmt?"))
/// The property is not supported (`'pty?'`). The corresponding Apple constant is `kAudioFileUnsupportedPropertyError`.
public let kAudioFileUnsupportedPropertyError = OSStatus(bitPattern: fourCharCode("pty?"))
/// The property size is wrong (`'!siz'`). The corresponding Apple constant is `kAudioFileBadPropertySizeError`.
public let kAudioFileBadPropertySizeError = OSStatus(bitPattern: fourCharCode("!siz"))
/// The operation is not permitted (`'prm?'`). The corresponding Apple constant is `kAudioFilePermissionsError`.
public let kAudioFilePermissionsError = OSStatus(bitPattern: fourCharCode("prm?"))
/// The packet offset is invalid (`'pck?'`). The corresponding Apple constant is `kAudioFileInvalidPacketOffsetError`.
public let kAudioFileInvalidPacketOffsetError = OSStatus(bitPattern: fourCharCode("pck?"))
/// The file is malformed (`'dta?'`). The corresponding Apple constant is `kAudioFileInvalidFileError`.
public let kAudioFileInvalidFileError = OSStatus(bitPattern: fourCharCode("dta?"))
/// The operation is not supported (`'op??'`). The corresponding Apple constant is `kAudioFileOperationNotSupportedError`.
public let kAudioFileOperationNotSupportedError = OSStatus(bitPattern: fourCharCode("op??"))
/// The file is closed (or was never opened) (-38). The corresponding Apple constant is `kAudioFileNotOpenError`.
public let kAudioFileNotOpenError: OSStatus = -38
/// The end of the file was reached (-39). The corresponding Apple constant is `kAudioFileEndOfFileError`.
public let kAudioFileEndOfFileError: OSStatus = -39
/// The position is invalid (-40). The corresponding Apple constant is `kAudioFilePositionError`.
public let kAudioFilePositionError: OSStatus = -40
/// The file does not exist (-43). The corresponding Apple constant is `kAudioFileFileNotFoundError`.
public let kAudioFileFileNotFoundError: OSStatus = -43

// MARK: - Functions

/// Opens an audio file for reading (a file URL). The corresponding Apple function is `AudioFileOpenURL`.
///
/// MP3, AAC (M4A, ADTS), ALAC (M4A, CAF) and IMA4 open through FFmpeg as compressed packets,
/// as on Apple; any other file libsndfile reads (WAV, AIFF, CAF, FLAC, W64, RF64, Ogg, …) opens as
/// linear PCM: the stored PCM for PCM files (AIFF and CAF big-endian), 16/24-bit native-endian PCM
/// for FLAC, 32-bit float for lossy files. `inFileTypeHint` is ignored.
/// - Returns: ``kAudioFileFileNotFoundError``, ``kAudioFilePermissionsError`` (unreadable, or
///   write permission asked), ``kAudioFileUnsupportedFileTypeError``, ``kAudioFileInvalidFileError``.
@discardableResult
public func AudioFileOpenURL(_ inFileRef: CFURL, _ inPermissions: AudioFilePermissions, _ inFileTypeHint: AudioFileTypeID,
                             _ outAudioFile: UnsafeMutablePointer<AudioFileID?>) -> OSStatus {
    AudioFileOpenURL(inFileRef.path, inPermissions, inFileTypeHint, outAudioFile)
}

/// Opens an audio file for reading, by path. Linux addition (Apple takes a `CFURL`); see
/// ``AudioFileOpenURL(_:_:_:_:)-(CFURL,_,_,_)``.
@discardableResult
public func AudioFileOpenURL(_ path: String, _ inPermissions: AudioFilePermissions, _ inFileTypeHint: AudioFileTypeID,
                             _ outAudioFile: UnsafeMutablePointer<AudioFileID?>) -> OSStatus {
    status { () throws(AudioQueueError) in
        guard inPermissions == .readPermission else {
            throw AudioQueueError(kAudioFilePermissionsError, "existing files open for reading only (kAudioFileReadPermission); create a new file with AudioFileCreateWithURL to write")
        }
        let file = try CompatAudioFile(openingForReading: path)
        FileRegistry.shared.add(file)
        outAudioFile.pointee = file.ref
    }
}

/// Creates an audio file (a file URL) for writing linear PCM in `inFormat`. The corresponding
/// Apple function is `AudioFileCreateWithURL`.
///
/// Types: ``kAudioFileAIFFType`` (big-endian integer), ``kAudioFileAIFCType`` (big-endian integer
/// or float), ``kAudioFileWAVEType``, ``kAudioFileWave64Type``, ``kAudioFileRF64Type``
/// (little-endian), ``kAudioFileCAFType`` (either), ``kAudioFileFLACType`` (16/24-bit PCM).
/// - Returns: ``kAudioFileUnsupportedFileTypeError``, ``kAudioFileUnsupportedDataFormatError``
///   (format the type cannot store, or not linear PCM), ``kAudioFilePermissionsError`` (the file
///   exists and ``kAudioFileFlags_EraseFile`` is not set, or the folder is not writable).
@discardableResult
public func AudioFileCreateWithURL(_ inFileRef: CFURL, _ inFileType: AudioFileTypeID,
                                   _ inFormat: UnsafePointer<AudioStreamBasicDescription>, _ inFlags: AudioFileFlags,
                                   _ outAudioFile: UnsafeMutablePointer<AudioFileID?>) -> OSStatus {
    AudioFileCreateWithURL(inFileRef.path, inFileType, inFormat, inFlags, outAudioFile)
}

/// Creates an audio file by path. Linux addition; see
/// ``AudioFileCreateWithURL(_:_:_:_:_:)-(CFURL,_,_,_,_)``.
@discardableResult
public func AudioFileCreateWithURL(_ path: String, _ inFileType: AudioFileTypeID,
                                   _ inFormat: UnsafePointer<AudioStreamBasicDescription>, _ inFlags: AudioFileFlags,
                                   _ outAudioFile: UnsafeMutablePointer<AudioFileID?>) -> OSStatus {
    status { () throws(AudioQueueError) in
        let file = try CompatAudioFile(creating: path, type: inFileType, format: inFormat.pointee, flags: inFlags)
        FileRegistry.shared.add(file)
        outAudioFile.pointee = file.ref
    }
}

/// Reads packets (frames of linear PCM) into `outBuffer` in the file's data format. The
/// corresponding Apple function is `AudioFileReadPackets` (deprecated on Apple).
///
/// At the end of the file `ioNumPackets` becomes 0 and the result is ``noErr``.
/// - Returns: ``kAudioFileNotOpenError`` (closed), ``kAudioFilePermissionsError`` (a file being
///   written), ``kAudioFileInvalidPacketOffsetError`` (negative start), ``kAudio_ParamError``
///   (NULL buffer).
@discardableResult
public func AudioFileReadPackets(_ inAudioFile: AudioFileID, _ inUseCache: Bool, _ outNumBytes: UnsafeMutablePointer<UInt32>,
                                 _ outPacketDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?,
                                 _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>,
                                 _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    withFile(inAudioFile) { file throws(AudioQueueError) in
        if let compressed = file.compressed {
            let (packets, bytes) = try compressed.readPackets(into: outBuffer, maxBytes: nil, descriptions: outPacketDescriptions,
                                                              from: inStartingPacket, count: Int(ioNumPackets.pointee))
            ioNumPackets.pointee = UInt32(packets)
            outNumBytes.pointee = UInt32(bytes)
            return
        }
        let packets = try file.read(into: outBuffer, from: inStartingPacket, packets: Int(ioNumPackets.pointee))
        ioNumPackets.pointee = UInt32(packets)
        outNumBytes.pointee = UInt32(packets * file.layout.bytesPerFrame)
    }
}

/// Reads packets into `outBuffer`, at most `ioNumBytes` bytes (on return, the bytes read). The
/// corresponding Apple function is `AudioFileReadPacketData`.
///
/// At the end of the file `ioNumPackets` and `ioNumBytes` become 0 and the result is ``noErr``.
/// - Returns: as ``AudioFileReadPackets(_:_:_:_:_:_:_:)``.
@discardableResult
public func AudioFileReadPacketData(_ inAudioFile: AudioFileID, _ inUseCache: Bool, _ ioNumBytes: UnsafeMutablePointer<UInt32>,
                                    _ outPacketDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?,
                                    _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>,
                                    _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    withFile(inAudioFile) { file throws(AudioQueueError) in
        if let compressed = file.compressed {
            let (packets, bytes) = try compressed.readPackets(into: outBuffer, maxBytes: Int(ioNumBytes.pointee), descriptions: outPacketDescriptions,
                                                              from: inStartingPacket, count: Int(ioNumPackets.pointee))
            ioNumPackets.pointee = UInt32(packets)
            ioNumBytes.pointee = UInt32(bytes)
            return
        }
        let fit = Int(ioNumBytes.pointee) / file.layout.bytesPerFrame
        let packets = try file.read(into: outBuffer, from: inStartingPacket, packets: min(Int(ioNumPackets.pointee), fit))
        ioNumPackets.pointee = UInt32(packets)
        ioNumBytes.pointee = UInt32(packets * file.layout.bytesPerFrame)
    }
}

/// Appends packets (frames of linear PCM in the file's data format) from `inBuffer`. The
/// corresponding Apple function is `AudioFileWritePackets`.
///
/// `inStartingPacket` must be the number of packets written so far (files are written in order).
/// - Returns: ``kAudioFileInvalidPacketOffsetError`` for any other start,
///   ``kAudioFilePermissionsError`` for a file opened for reading, ``kAudioFileNotOpenError``,
///   ``kAudio_ParamError`` when `inNumBytes` holds fewer bytes than `ioNumPackets` packets.
@discardableResult
public func AudioFileWritePackets(_ inAudioFile: AudioFileID, _ inUseCache: Bool, _ inNumBytes: UInt32,
                                  _ inPacketDescriptions: UnsafePointer<AudioStreamPacketDescription>?,
                                  _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>,
                                  _ inBuffer: UnsafeRawPointer) -> OSStatus {
    withFile(inAudioFile) { file throws(AudioQueueError) in
        let packets = Int(ioNumPackets.pointee)
        if let compressed = file.compressed {
            try compressed.writePackets(from: inBuffer, bytes: Int(inNumBytes), descriptions: inPacketDescriptions,
                                        start: inStartingPacket, count: packets)
            return
        }
        guard Int(inNumBytes) >= packets * file.layout.bytesPerFrame else {
            throw AudioQueueError(kAudio_ParamError, "\(packets) packets need \(packets * file.layout.bytesPerFrame) bytes but inNumBytes is \(inNumBytes)")
        }
        try file.write(from: inBuffer, at: inStartingPacket, packets: packets)
    }
}

/// Reads bytes of audio data (the file's data format) starting at byte `inStartingByte` of the
/// audio data. The corresponding Apple function is `AudioFileReadBytes`.
///
/// On return `ioNumBytes` is the bytes read; a read that reaches the end of the audio returns
/// ``kAudioFileEndOfFileError`` with the bytes before it. Any byte offset works, inside a frame too.
/// - Returns: ``kAudioFileEndOfFileError``, ``kAudioFilePositionError`` (negative start),
///   ``kAudioFilePermissionsError`` (a file being written), ``kAudioFileNotOpenError``.
@discardableResult
public func AudioFileReadBytes(_ inAudioFile: AudioFileID, _ inUseCache: Bool, _ inStartingByte: Int64,
                               _ ioNumBytes: UnsafeMutablePointer<UInt32>, _ outBuffer: UnsafeMutableRawPointer) -> OSStatus {
    var endOfFile = false
    let result = withFile(inAudioFile) { file throws(AudioQueueError) in
        let wanted = Int(ioNumBytes.pointee)
        let read = try file.readBytes(into: outBuffer, from: inStartingByte, count: wanted)
        ioNumBytes.pointee = UInt32(read)
        endOfFile = read < wanted
    }
    guard result == noErr, endOfFile else { return result }
    return fail(kAudioFileEndOfFileError, "the read reached the end of the audio data after \(ioNumBytes.pointee) bytes")
}

/// Appends bytes of audio data (the file's data format) to a file being written. The
/// corresponding Apple function is `AudioFileWriteBytes`.
///
/// Files are written in order: `inStartingByte` must be the bytes written so far. Bytes need not
/// make whole frames: a partial frame waits for the rest (``AudioFileClose(_:)`` reports one
/// left unfinished). On return `ioNumBytes` is the bytes taken.
/// - Returns: ``kAudioFilePositionError`` (any other start), ``kAudioFilePermissionsError`` (a
///   file opened for reading), ``kAudioFileNotOpenError``.
@discardableResult
public func AudioFileWriteBytes(_ inAudioFile: AudioFileID, _ inUseCache: Bool, _ inStartingByte: Int64,
                                _ ioNumBytes: UnsafeMutablePointer<UInt32>, _ inBuffer: UnsafeRawPointer) -> OSStatus {
    withFile(inAudioFile) { file throws(AudioQueueError) in
        try file.writeBytes(from: inBuffer, at: inStartingByte, count: Int(ioNumBytes.pointee))
    }
}

/// Reads a property: ``kAudioFilePropertyDataFormat``, ``kAudioFilePropertyAudioDataPacketCount``,
/// ``kAudioFilePropertyMaximumPacketSize`` and the others listed with the constants. The
/// corresponding Apple function is `AudioFileGetProperty`.
/// - Returns: ``kAudioFileUnsupportedPropertyError``, ``kAudioFileBadPropertySizeError`` (too small).
@discardableResult
public func AudioFileGetProperty(_ inAudioFile: AudioFileID, _ inPropertyID: AudioFilePropertyID,
                                 _ ioDataSize: UnsafeMutablePointer<UInt32>, _ outPropertyData: UnsafeMutableRawPointer) -> OSStatus {
    withFile(inAudioFile) { file throws(AudioQueueError) in
        let bytes = try file.property(inPropertyID)
        guard Int(ioDataSize.pointee) >= bytes.count else {
            throw AudioQueueError(kAudioFileBadPropertySizeError, "property '\(fourCharCodeString(inPropertyID))' needs \(bytes.count) bytes, not \(ioDataSize.pointee)")
        }
        bytes.withUnsafeBytes { if let base = $0.baseAddress { outPropertyData.copyMemory(from: base, byteCount: bytes.count) } }
        ioDataSize.pointee = UInt32(bytes.count)
    }
}

/// The size of a property and whether it can be set. The corresponding Apple function is
/// `AudioFileGetPropertyInfo`. ``kAudioFilePropertyMagicCookieData`` of a PCM file has size 0.
@discardableResult
public func AudioFileGetPropertyInfo(_ inAudioFile: AudioFileID, _ inPropertyID: AudioFilePropertyID,
                                     _ outDataSize: UnsafeMutablePointer<UInt32>?, _ isWritable: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    withFile(inAudioFile) { file throws(AudioQueueError) in
        let bytes = try file.property(inPropertyID)
        outDataSize?.pointee = UInt32(bytes.count)
        let settable = inPropertyID == kAudioFilePropertyMagicCookieData
            || (inPropertyID == kAudioFilePropertyPacketTableInfo && file.compressed != nil)
        isWritable?.pointee = settable && file.isWritable ? 1 : 0
    }
}

/// Sets a property: only ``kAudioFilePropertyMagicCookieData``, and only empty (linear PCM has no
/// cookie). The corresponding Apple function is `AudioFileSetProperty`.
/// - Returns: ``kAudioFileUnsupportedPropertyError`` for anything else.
@discardableResult
public func AudioFileSetProperty(_ inAudioFile: AudioFileID, _ inPropertyID: AudioFilePropertyID,
                                 _ inDataSize: UInt32, _ inPropertyData: UnsafeRawPointer) -> OSStatus {
    withFile(inAudioFile) { file throws(AudioQueueError) in
        if let compressed = file.compressed {
            try compressed.setProperty(inPropertyID, UnsafeRawBufferPointer(start: inPropertyData, count: Int(inDataSize)))
            return
        }
        guard inPropertyID == kAudioFilePropertyMagicCookieData, inDataSize == 0 else {
            throw AudioQueueError(kAudioFileUnsupportedPropertyError, "property '\(fourCharCodeString(inPropertyID))' cannot be set on a linear PCM file (a magic cookie may only be empty)")
        }
    }
}

/// Finishes and closes the file; the reference is invalid afterwards. The corresponding Apple
/// function is `AudioFileClose`.
/// - Returns: ``kAudioFileNotOpenError`` for a closed or unknown file; ``kAudioFileUnspecifiedError``
///   when finishing the file fails (disk full).
@discardableResult
public func AudioFileClose(_ inAudioFile: AudioFileID) -> OSStatus {
    withFile(inAudioFile) { file throws(AudioQueueError) in
        FileRegistry.shared.remove(file)
        try file.close()
    }
}

private func withFile(_ ref: AudioFileID, _ body: (CompatAudioFile) throws(AudioQueueError) -> Void) -> OSStatus {
    status { () throws(AudioQueueError) in try body(try FileRegistry.shared.file(ref)) }
}

// MARK: - Implementation

/// An open file behind an ``AudioFileID``: a LockstepFiles reader or writer plus the file's data
/// format, converting between its bytes and libsndfile's exact integer/float frames.
///
/// Any thread may call it; `state` serializes reads, writes and closing.
final class CompatAudioFile: Sendable {
    let path: String
    let fileType: AudioFileTypeID
    /// The file's linear PCM, or for a compressed file the 32-bit float PCM it decodes to.
    let layout: LinearPCMLayout
    /// A compressed file (MP3, AAC, ALAC, IMA4 through FFmpeg); nil for files of libsndfile.
    let compressed: CompressedAudioFile?

    /// The open reader or writer (nil once closed), how many packets have been written, and the
    /// bytes of a frame ``writeBytes(from:at:count:)`` has begun.
    private struct State {
        var reader: AudioFileReader?
        var writer: AudioFileWriter?
        var packetsWritten: Int64 = 0
        var partialFrame: [UInt8] = []
    }

    private let state: Mutex<State>

    var ref: AudioFileID { FileRegistry.handle(self) }
    var isWritable: Bool { compressed?.isWritable ?? state.withLock { $0.writer != nil } }

    init(openingForReading path: String) throws(AudioQueueError) {
        self.path = path
        if let reader = try CompressedFileReader.open(path) {
            compressed = CompressedAudioFile(reader: reader)
            fileType = reader.fileType
            layout = reader.format.pcmLayout
            state = Mutex(State())
            return
        }
        compressed = nil
        let reader: AudioFileReader
        do {
            reader = try AudioFileReader(path: path)
        } catch {
            let status: OSStatus = switch error.kind {
            case .notFound: kAudioFileFileNotFoundError
            case .permissionDenied, .notAFile: kAudioFilePermissionsError
            case .unsupportedFormat, .emptyFile: kAudioFileUnsupportedFileTypeError
            case .corrupt, .truncated: kAudioFileInvalidFileError
            default: kAudioFileUnspecifiedError
            }
            throw AudioQueueError(status, "\(error)")
        }
        state = Mutex(State(reader: reader))
        let type = reader.fileType
        fileType = type.map(Self.typeID) ?? 0
        var format = reader.format
        if type == nil || type == .oggVorbis || type == .opus || type == .mp3 { format.sampleFormat = .float32 }
        // libsndfile's endianness bits: 0x10000000 little, 0x20000000 big, 0 the container's default.
        let endian = reader.libsndfileFormat & 0x3000_0000
        let bigEndian = endian == 0x2000_0000 || (endian == 0 && (type == .aiff || type == .caf))
        layout = LinearPCMLayout(format: format, isBigEndian: bigEndian && type != .flac)
    }

    /// Creates a file for writing. A direct file (AudioFileCreateWithURL's, `atomic` false) is at
    /// `path` from the start and keeps what was written should the process die; an atomic one
    /// (ExtAudioFileCreateWithURL's) appears at `path` only when closed, complete — replacing a
    /// file there only with ``AudioFileFlags/eraseFile``.
    init(creating path: String, type: AudioFileTypeID, format: AudioStreamBasicDescription, flags: AudioFileFlags,
         atomic: Bool = false) throws(AudioQueueError) {
        self.path = path
        fileType = type
        if let made = CompressedFormat.make(format) {
            let codec: CompressedFormat
            switch made {
            case .success(let format): codec = format
            case .failure(let error): throw AudioQueueError(kAudioFileUnsupportedDataFormatError, error.message)
            }
            if FileManager.default.fileExists(atPath: path) && !flags.contains(.eraseFile) {
                throw AudioQueueError(kAudioFilePermissionsError, "'\(path)' exists; pass kAudioFileFlags_EraseFile to replace it")
            }
            compressed = try CompressedAudioFile(creating: path, type: type, format: codec, atomic: atomic, replacing: flags.contains(.eraseFile))
            layout = codec.pcmLayout
            state = Mutex(State())
            return
        }
        compressed = nil
        guard let container = Self.container(type) else {
            throw AudioQueueError(kAudioFileUnsupportedFileTypeError, "file type '\(fourCharCodeString(type))' cannot be written; use kAudioFileAIFFType, kAudioFileAIFCType, kAudioFileWAVEType, kAudioFileCAFType, kAudioFileFLACType, kAudioFileWave64Type or kAudioFileRF64Type")
        }
        let layout: LinearPCMLayout
        switch LinearPCMLayout.make(format) {
        case .success(let made): layout = made
        case .failure(let error): throw AudioQueueError(kAudioFileUnsupportedDataFormatError, error.message)
        }
        let sample = layout.format.sampleFormat
        switch type {
        case kAudioFileAIFFType where !layout.isBigEndian || sample.isFloat:
            throw AudioQueueError(kAudioFileUnsupportedDataFormatError, "AIFF stores big-endian integer PCM: set kLinearPCMFormatFlagIsBigEndian | kLinearPCMFormatFlagIsSignedInteger (floats go in kAudioFileAIFCType)")
        case kAudioFileAIFCType where !layout.isBigEndian:
            throw AudioQueueError(kAudioFileUnsupportedDataFormatError, "AIFF-C here stores big-endian PCM: set kLinearPCMFormatFlagIsBigEndian")
        case kAudioFileWAVEType, kAudioFileWave64Type, kAudioFileRF64Type:
            if layout.isBigEndian {
                throw AudioQueueError(kAudioFileUnsupportedDataFormatError, "\(container) stores little-endian PCM: clear kLinearPCMFormatFlagIsBigEndian")
            }
        default:
            break
        }
        guard container.writableSampleFormats.contains(sample) else {
            throw AudioQueueError(kAudioFileUnsupportedDataFormatError, "\(container) cannot store \(sample) samples; it stores \(container.writableSampleFormats.map(\.description).joined(separator: ", "))")
        }
        if FileManager.default.fileExists(atPath: path) && !flags.contains(.eraseFile) {
            throw AudioQueueError(kAudioFilePermissionsError, "'\(path)' exists; pass kAudioFileFlags_EraseFile to replace it")
        }
        if flags.contains(.eraseFile) && !atomic { try? FileManager.default.removeItem(atPath: path) }
        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(path: path, type: container, format: layout.format, atomic: atomic)
        } catch {
            let status: OSStatus = switch error.kind {
            case .unsupportedOutputFormat: kAudioFileUnsupportedDataFormatError
            case .permissionDenied, .unwritableOutput: kAudioFilePermissionsError
            default: kAudioFileUnspecifiedError
            }
            throw AudioQueueError(status, "\(error)")
        }
        if atomic { writer.replacesExistingFile = flags.contains(.eraseFile) } else { writer.keepsFileOnFailure = true }
        state = Mutex(State(writer: writer))
        self.layout = layout
    }

    private static func container(_ type: AudioFileTypeID) -> AudioFileType? {
        switch type {
        case kAudioFileAIFFType, kAudioFileAIFCType: .aiff
        case kAudioFileWAVEType: .wav
        case kAudioFileCAFType: .caf
        case kAudioFileFLACType: .flac
        case kAudioFileWave64Type: .w64
        case kAudioFileRF64Type: .rf64
        default: nil
        }
    }

    private static func typeID(_ type: AudioFileType) -> AudioFileTypeID {
        switch type {
        case .aiff: kAudioFileAIFFType
        case .wav: kAudioFileWAVEType
        case .caf: kAudioFileCAFType
        case .flac: kAudioFileFLACType
        case .w64: kAudioFileWave64Type
        case .rf64: kAudioFileRF64Type
        case .mp3: kAudioFileMP3Type
        case .au: fourCharCode("NeXT")  // Apple's kAudioFileNextType
        default: 0
        }
    }

    var packetCount: Int64 { compressed?.packetCount ?? state.withLock { $0.reader?.frameCount ?? $0.packetsWritten } }

    /// Frames of PCM the file holds (for a compressed file, its valid frames).
    var frameCount: Int64 { compressed?.frameCount ?? packetCount }

    /// The data format Apple's API reports: the compressed format, or the linear PCM.
    var dataFormat: AudioStreamBasicDescription { compressed?.format.streamDescription ?? layout.streamDescription }

    /// Reads up to `frames` frames of ``layout``'s PCM from frame `start` (a compressed file decodes).
    func readFrames(into buffer: UnsafeMutableRawPointer, from start: Int64, frames: Int) throws(AudioQueueError) -> Int {
        if let compressed { return try compressed.readFrames(into: buffer, from: start, frames: frames) }
        return try read(into: buffer, from: start, packets: frames)
    }

    /// Appends `frames` frames of ``layout``'s PCM (a compressed file encodes them).
    func writeFrames(from buffer: UnsafeRawPointer, frames: Int) throws(AudioQueueError) {
        if let compressed { return try compressed.writeFrames(from: buffer, frames: frames) }
        try write(from: buffer, at: packetCount, packets: frames)
    }

    func property(_ id: AudioFilePropertyID) throws(AudioQueueError) -> [UInt8] {
        func bytes<T>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
        if let bytes = compressed?.property(id) { return bytes }
        switch id {
        case kAudioFilePropertyFileFormat: return bytes(fileType)
        case kAudioFilePropertyDataFormat: return bytes(layout.streamDescription)
        case kAudioFilePropertyAudioDataPacketCount: return bytes(UInt64(packetCount))
        case kAudioFilePropertyAudioDataByteCount: return bytes(UInt64(packetCount) * UInt64(layout.bytesPerFrame))
        case kAudioFilePropertyMaximumPacketSize, kAudioFilePropertyPacketSizeUpperBound:
            return bytes(UInt32(layout.bytesPerFrame))
        case kAudioFilePropertyMagicCookieData: return []
        case kAudioFilePropertyChannelLayout: return ChannelLayoutBytes.standard(channels: layout.format.channelCount)
        case kAudioFilePropertyEstimatedDuration: return bytes(Float64(packetCount) / layout.format.sampleRate)
        default:
            throw AudioQueueError(kAudioFileUnsupportedPropertyError, "audio file property '\(fourCharCodeString(id))' is not supported")
        }
    }

    /// Reads up to `packets` frames at `start` in the file's data format; returns the frames read.
    func read(into buffer: UnsafeMutableRawPointer?, from start: Int64, packets: Int) throws(AudioQueueError) -> Int {
        try state.withLock { (state) throws(AudioQueueError) -> Int in
            guard let reader = state.reader else {
                throw AudioQueueError(kAudioFilePermissionsError, "the file was created for writing; close it and open it with AudioFileOpenURL to read")
            }
            guard start >= 0 else { throw AudioQueueError(kAudioFileInvalidPacketOffsetError, "packet \(start) is negative") }
            guard packets > 0, start < reader.frameCount else { return 0 }
            guard let buffer else { throw AudioQueueError(kAudio_ParamError, "outBuffer is NULL") }
            if reader.position != start {
                do { try reader.seek(toFrame: start) } catch { throw AudioQueueError(kAudioFilePositionError, "\(error)") }
            }
            let samples = packets * layout.format.channelCount
            do {
                switch layout.format.sampleFormat {
                case .float32:
                    let got = try reader.read(into: buffer.bindMemory(to: Float.self, capacity: samples), frames: packets)
                    layout.convertByteOrder(from: buffer, to: buffer, byteCount: got * layout.bytesPerFrame)
                    return got
                case .float64:
                    let got = try reader.read(doubleSamples: buffer.bindMemory(to: Double.self, capacity: samples), frames: packets)
                    layout.convertByteOrder(from: buffer, to: buffer, byteCount: got * layout.bytesPerFrame)
                    return got
                case .int16, .int24, .int32:
                    var scratch = [Int32](repeating: 0, count: samples)
                    let got = try scratch.withUnsafeMutableBufferPointer { (pointer) throws(FileError) in
                        try reader.read(int32Samples: pointer.baseAddress!, frames: packets)
                    }
                    IntegerPCM.encode(scratch, count: got * layout.format.channelCount, layout: layout, into: buffer)
                    return got
                }
            } catch {
                throw AudioQueueError(kAudioFileInvalidFileError, "\(error)")
            }
        }
    }

    func write(from buffer: UnsafeRawPointer, at start: Int64, packets: Int) throws(AudioQueueError) {
        try state.withLock { (state) throws(AudioQueueError) in
            guard let writer = state.writer else {
                throw AudioQueueError(kAudioFilePermissionsError, "the file is open for reading; create a file with AudioFileCreateWithURL to write")
            }
            guard start == state.packetsWritten else {
                throw AudioQueueError(kAudioFileInvalidPacketOffsetError, "packets are written in order: the next is \(state.packetsWritten), not \(start)")
            }
            guard packets > 0 else { return }
            let samples = packets * layout.format.channelCount
            let bytes = packets * layout.bytesPerFrame
            do {
                switch layout.format.sampleFormat {
                case .float32, .float64:
                    let native = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
                    defer { native.deallocate() }
                    layout.convertByteOrder(from: buffer, to: native, byteCount: bytes)
                    if layout.format.sampleFormat == .float32 {
                        try writer.write(UnsafePointer(native.bindMemory(to: Float.self, capacity: samples)), frames: packets)
                    } else {
                        try writer.write(doubleSamples: UnsafePointer(native.bindMemory(to: Double.self, capacity: samples)), frames: packets)
                    }
                case .int16, .int24, .int32:
                    let values = IntegerPCM.decode(buffer, count: samples, layout: layout)
                    try values.withUnsafeBufferPointer { (pointer) throws(FileError) in
                        try writer.write(int32Samples: pointer.baseAddress!, frames: packets)
                    }
                }
            } catch {
                throw AudioQueueError(kAudioFileUnspecifiedError, "\(error)")
            }
            state.packetsWritten += Int64(packets)
        }
    }

    /// Reads `count` bytes of audio data from byte `start`; returns the bytes read (fewer at the end).
    func readBytes(into buffer: UnsafeMutableRawPointer, from start: Int64, count: Int) throws(AudioQueueError) -> Int {
        guard start >= 0 else { throw AudioQueueError(kAudioFilePositionError, "byte \(start) is negative") }
        guard count > 0 else { return 0 }
        if let compressed {
            guard let reader = compressed.reader else {
                throw AudioQueueError(kAudioFilePermissionsError, "the file was created for writing; close it and open it with AudioFileOpenURL to read")
            }
            let n = Int(max(0, min(Int64(count), Int64(reader.byteCount) - start)))
            if n > 0 { reader.data.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + Int(start), byteCount: n) } }
            return n
        }
        let frameBytes = Int64(layout.bytesPerFrame)
        let firstFrame = start / frameBytes
        let skip = Int(start - firstFrame * frameBytes)
        let frames = (skip + count + Int(frameBytes) - 1) / Int(frameBytes)
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: frames * Int(frameBytes), alignment: 16)
        defer { scratch.deallocate() }
        let got = try read(into: scratch, from: firstFrame, packets: frames)
        let available = max(0, got * Int(frameBytes) - skip)
        let n = min(count, available)
        if n > 0 { buffer.copyMemory(from: scratch + skip, byteCount: n) }
        return n
    }

    /// Appends `count` bytes of audio data, which must start at the bytes written so far.
    func writeBytes(from buffer: UnsafeRawPointer, at start: Int64, count: Int) throws(AudioQueueError) {
        guard compressed == nil else {
            throw AudioQueueError(kAudioFileOperationNotSupportedError, "bytes of a compressed format are written as packets (AudioFileWritePackets with packet descriptions), not with AudioFileWriteBytes")
        }
        let (written, partial) = state.withLock { ($0.packetsWritten, $0.partialFrame) }
        let end = written * Int64(layout.bytesPerFrame) + Int64(partial.count)
        guard start == end else {
            throw AudioQueueError(kAudioFilePositionError, "bytes are written in order: the next is byte \(end), not \(start)")
        }
        guard count > 0 else { return }
        var bytes = partial
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: buffer, count: count))
        let whole = bytes.count / layout.bytesPerFrame
        if whole > 0 {
            let outcome = bytes.withUnsafeBytes { raw in
                Result { () throws(AudioQueueError) in try write(from: raw.baseAddress!, at: written, packets: whole) }
            }
            try outcome.get()
        }
        let rest = Array(bytes[(whole * layout.bytesPerFrame)...])
        state.withLock { $0.partialFrame = rest }
    }

    func close() throws(AudioQueueError) {
        if let compressed { return try compressed.close() }
        let partial = try state.withLock { (state) throws(AudioQueueError) -> Int in
            state.reader?.close()
            state.reader = nil
            defer { state.writer = nil }
            do throws(FileError) { try state.writer?.close() } catch {
                // unwritableOutput: an atomic file found another at its path and left it alone.
                throw AudioQueueError(error.kind == .unwritableOutput ? kAudioFilePermissionsError : kAudioFileUnspecifiedError, "\(error)")
            }
            return state.partialFrame.count
        }
        if partial > 0 {
            throw AudioQueueError(kAudioFileInvalidPacketOffsetError, "the last \(partial) bytes written with AudioFileWriteBytes do not make a whole \(layout.bytesPerFrame)-byte frame and were not written; the file holds every whole frame")
        }
    }

    /// Abandons a file being written: an atomic one leaves nothing behind.
    func abort() {
        compressed?.abort()
        state.withLock { state in
            state.writer?.abort()
            state.writer = nil
            state.reader?.close()
            state.reader = nil
        }
    }
}

/// Integer PCM bytes (16/24/32-bit, either byte order) ↔ libsndfile's 32-bit integers (full
/// scale ±2³¹), exactly.
enum IntegerPCM {
    static func encode(_ values: [Int32], count: Int, layout: LinearPCMLayout, into buffer: UnsafeMutableRawPointer) {
        let width = layout.bytesPerSample
        let bytes = buffer.assumingMemoryBound(to: UInt8.self)
        for i in 0..<count {
            let value = UInt32(bitPattern: values[i])
            for b in 0..<width {
                // Little-endian byte b of the top `width` bytes.
                let byte = UInt8(truncatingIfNeeded: value >> UInt32(32 - 8 * width + 8 * b))
                bytes[i * width + (layout.isBigEndian ? width - 1 - b : b)] = byte
            }
        }
    }

    static func decode(_ buffer: UnsafeRawPointer, count: Int, layout: LinearPCMLayout) -> [Int32] {
        let width = layout.bytesPerSample
        let bytes = buffer.assumingMemoryBound(to: UInt8.self)
        var values = [Int32](repeating: 0, count: count)
        for i in 0..<count {
            var value: UInt32 = 0
            for b in 0..<width {
                let byte = bytes[i * width + (layout.isBigEndian ? width - 1 - b : b)]
                value |= UInt32(byte) << UInt32(32 - 8 * width + 8 * b)
            }
            values[i] = Int32(bitPattern: value)
        }
        return values
    }
}

/// Every open ``CompatAudioFile`` by its reference, so closed or foreign references return
/// ``kAudioFileNotOpenError`` instead of being dereferenced.
typealias FileRegistry = HandleRegistry<CompatAudioFile>

extension HandleRegistry where Object == CompatAudioFile {
    static let shared = HandleRegistry(unknown: AudioQueueError(kAudioFileNotOpenError, "not an open audio file (never opened, or closed)"))
    func file(_ ref: AudioFileID) throws(AudioQueueError) -> CompatAudioFile { try object(ref) }
}
