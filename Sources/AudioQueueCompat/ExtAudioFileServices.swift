import Foundation
import Lockstep

// Extended Audio File Services (ExtendedAudioFile.h): an audio file read and written in a client
// format of your choice — any linear PCM, at any rate — converted to and from the file's data
// format by an AudioConverter, with Apple's names, Swift-imported signatures, properties and
// result codes. Files are read and written by libsndfile (LockstepFiles); files created here
// appear at their path only when ExtAudioFileDispose finishes them.

/// An extended audio file: an opaque reference. The corresponding Apple type is `ExtAudioFileRef`.
///
/// Functions given a nil, unknown or disposed-of reference return ``kAudio_ParamError`` (they
/// take an optional reference for that; passing a non-optional one works as on Apple).
public typealias ExtAudioFileRef = OpaquePointer
/// Identifies an extended audio file property. The corresponding Apple type is `ExtAudioFilePropertyID`.
public typealias ExtAudioFilePropertyID = UInt32

// MARK: - Properties

/// The file's data format (read-only ``AudioStreamBasicDescription``): linear PCM as the file
/// layer reads it (FLAC as 16/24-bit PCM, lossy files as 32-bit float). The corresponding Apple constant is `kExtAudioFileProperty_FileDataFormat` (`'ffmt'`).
public let kExtAudioFileProperty_FileDataFormat = fourCharCode("ffmt")
/// The file's channel layout (``AudioChannelLayout``): the one given to
/// ``ExtAudioFileCreateWithURL(_:_:_:_:_:_:)`` or mono/stereo/discrete-in-order; settable on a new
/// file before any audio (its channel count must match). It is not written into the file. The corresponding Apple constant is `kExtAudioFileProperty_FileChannelLayout` (`'fclo'`).
public let kExtAudioFileProperty_FileChannelLayout = fourCharCode("fclo")
/// The format you read and write (``AudioStreamBasicDescription``, any linear PCM; default the
/// file's). Sample encoding, byte order, interleaving, channel count (the converter's channel
/// map) and rate (libsoxr) are converted. The corresponding Apple constant is `kExtAudioFileProperty_ClientDataFormat` (`'cfmt'`).
public let kExtAudioFileProperty_ClientDataFormat = fourCharCode("cfmt")
/// The client's channel layout (``AudioChannelLayout``, its channel count must match the client
/// format's); stored and reported — channels are mapped by the converter's
/// ``kAudioConverterChannelMap``. The corresponding Apple constant is `kExtAudioFileProperty_ClientChannelLayout` (`'cclo'`).
public let kExtAudioFileProperty_ClientChannelLayout = fourCharCode("cclo")
/// The codec manufacturer (not provided: ``kExtAudioFileError_InvalidProperty``). The corresponding Apple constant is `kExtAudioFileProperty_CodecManufacturer` (`'cman'`).
public let kExtAudioFileProperty_CodecManufacturer = fourCharCode("cman")
/// The converter between file and client format (read-only ``AudioConverterRef``): set its
/// properties (``kAudioConverterChannelMap``, quality) with ``AudioConverterSetProperty(_:_:_:_:)``;
/// they apply at once. A new client format makes a new converter. The corresponding Apple constant is `kExtAudioFileProperty_AudioConverter` (`'acnv'`).
public let kExtAudioFileProperty_AudioConverter = fourCharCode("acnv")
/// The underlying audio file (read-only ``AudioFileID``; read its properties, but don't close it:
/// ``ExtAudioFileDispose(_:)`` does). The corresponding Apple constant is `kExtAudioFileProperty_AudioFile` (`'afil'`).
public let kExtAudioFileProperty_AudioFile = fourCharCode("afil")
/// The file's largest packet in bytes (read-only `UInt32`). The corresponding Apple constant is `kExtAudioFileProperty_FileMaxPacketSize` (`'fmps'`).
public let kExtAudioFileProperty_FileMaxPacketSize = fourCharCode("fmps")
/// The client format's largest packet in bytes, per buffer (read-only `UInt32`). The corresponding Apple constant is `kExtAudioFileProperty_ClientMaxPacketSize` (`'cmps'`).
public let kExtAudioFileProperty_ClientMaxPacketSize = fourCharCode("cmps")
/// The file's length in frames of the file's format (read-only `SInt64`; for a file being
/// written, the frames written so far). The corresponding Apple constant is `kExtAudioFileProperty_FileLengthFrames` (`'#frm'`).
public let kExtAudioFileProperty_FileLengthFrames = fourCharCode("#frm")
/// The converter's configuration (a pointer-sized property list, usually NULL): setting it is
/// accepted — converter properties already apply at once — and reading it gives NULL. The corresponding Apple constant is `kExtAudioFileProperty_ConverterConfig` (`'accf'`).
public let kExtAudioFileProperty_ConverterConfig = fourCharCode("accf")
/// The bytes of file data read or written at a time (`UInt32`, default 32 768). The corresponding Apple constant is `kExtAudioFileProperty_IOBufferSizeBytes` (`'iobs'`).
public let kExtAudioFileProperty_IOBufferSizeBytes = fourCharCode("iobs")
/// Your own I/O buffer (not provided: ``kExtAudioFileError_InvalidProperty``). The corresponding Apple constant is `kExtAudioFileProperty_IOBuffer` (`'iobf'`).
public let kExtAudioFileProperty_IOBuffer = fourCharCode("iobf")
/// The packet table of a compressed file (not provided: ``kExtAudioFileError_InvalidProperty``). The corresponding Apple constant is `kExtAudioFileProperty_PacketTable` (`'xpti'`).
public let kExtAudioFileProperty_PacketTable = fourCharCode("xpti")

// MARK: - Result codes

/// The property is unknown, read-only or not provided (-66561). The corresponding Apple constant is `kExtAudioFileError_InvalidProperty`.
public let kExtAudioFileError_InvalidProperty: OSStatus = -66561
/// The property value has the wrong size (-66562). The corresponding Apple constant is `kExtAudioFileError_InvalidPropertySize`.
public let kExtAudioFileError_InvalidPropertySize: OSStatus = -66562
/// The client format is not linear PCM (-66563). The corresponding Apple constant is `kExtAudioFileError_NonPCMClientFormat`.
public let kExtAudioFileError_NonPCMClientFormat: OSStatus = -66563
/// A channel layout's channel count does not match its format (-66564). The corresponding Apple constant is `kExtAudioFileError_InvalidChannelMap`.
public let kExtAudioFileError_InvalidChannelMap: OSStatus = -66564
/// The call does not fit the file's state: reading a file being written, writing one being read,
/// setting the file's layout after audio was written (-66565). The corresponding Apple constant is `kExtAudioFileError_InvalidOperationOrder`.
public let kExtAudioFileError_InvalidOperationOrder: OSStatus = -66565
/// The data format is invalid (-66566). The corresponding Apple constant is `kExtAudioFileError_InvalidDataFormat`.
public let kExtAudioFileError_InvalidDataFormat: OSStatus = -66566
/// The largest packet size is unknown (-66567; not returned for linear PCM). The corresponding Apple constant is `kExtAudioFileError_MaxPacketSizeUnknown`.
public let kExtAudioFileError_MaxPacketSizeUnknown: OSStatus = -66567
/// A seek outside the file, or any seek but to the end of a file being written (-66568). The corresponding Apple constant is `kExtAudioFileError_InvalidSeek`.
public let kExtAudioFileError_InvalidSeek: OSStatus = -66568
/// One ``ExtAudioFileWriteAsync(_:_:_:)`` call gave more than 65 536 frames (-66569). The corresponding Apple constant is `kExtAudioFileError_AsyncWriteTooLarge`.
public let kExtAudioFileError_AsyncWriteTooLarge: OSStatus = -66569
/// The asynchronous writer fell 65 536 frames behind; that call's frames were not written (-66570). The corresponding Apple constant is `kExtAudioFileError_AsyncWriteBufferOverflow`.
public let kExtAudioFileError_AsyncWriteBufferOverflow: OSStatus = -66570

// MARK: - Functions

/// Opens an audio file for reading (any file the file layer reads). The corresponding Apple
/// function is `ExtAudioFileOpenURL`.
///
/// The client format starts as the file's data format; set ``kExtAudioFileProperty_ClientDataFormat``
/// to read another.
/// - Returns: as ``AudioFileOpenURL(_:_:_:_:)-(CFURL,_,_,_)``: ``kAudioFileFileNotFoundError``,
///   ``kAudioFilePermissionsError``, ``kAudioFileUnsupportedFileTypeError``, ``kAudioFileInvalidFileError``.
@discardableResult
public func ExtAudioFileOpenURL(_ inURL: CFURL, _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>) -> OSStatus {
    ExtAudioFileOpenURL(inURL.path, outExtAudioFile)
}

/// Opens an audio file for reading, by path. Linux addition; see
/// ``ExtAudioFileOpenURL(_:_:)-(CFURL,_)``.
@discardableResult
public func ExtAudioFileOpenURL(_ path: String, _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>) -> OSStatus {
    status { () throws(AudioQueueError) in
        let file = try CompatAudioFile(openingForReading: path)
        let ext = try CompatExtAudioFile(file: file, mode: .reading, ownsFile: true, layout: nil)
        ExtAudioFileRegistry.shared.add(ext)
        outExtAudioFile.pointee = ext.ref
    }
}

/// Creates an audio file for writing linear PCM in `inStreamDesc` (the file's data format). The
/// corresponding Apple function is `ExtAudioFileCreateWithURL`.
///
/// The file is written to an unnamed temporary file and appears at `inURL`, complete, only when
/// ``ExtAudioFileDispose(_:)`` finishes it: a process that dies before leaves nothing behind. An
/// existing file is replaced only with `kAudioFileFlags_EraseFile` (`AudioFileFlags.eraseFile.rawValue`)
/// in `inFlags` — even one that appears while this one is written. File types and formats as
/// ``AudioFileCreateWithURL(_:_:_:_:_:)-(CFURL,_,_,_,_)``. `inChannelLayout`, if given, must have
/// the format's channel count; it is reported as ``kExtAudioFileProperty_FileChannelLayout``.
/// - Returns: ``kAudioFilePermissionsError`` (the file exists without the erase flag, or the
///   folder is not writable), ``kAudioFileUnsupportedFileTypeError``,
///   ``kAudioFileUnsupportedDataFormatError``, ``kExtAudioFileError_InvalidChannelMap``.
@discardableResult
public func ExtAudioFileCreateWithURL(_ inURL: CFURL, _ inFileType: AudioFileTypeID,
                                      _ inStreamDesc: UnsafePointer<AudioStreamBasicDescription>,
                                      _ inChannelLayout: UnsafePointer<AudioChannelLayout>?, _ inFlags: UInt32,
                                      _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>) -> OSStatus {
    ExtAudioFileCreateWithURL(inURL.path, inFileType, inStreamDesc, inChannelLayout, inFlags, outExtAudioFile)
}

/// Creates an audio file by path. Linux addition; see
/// ``ExtAudioFileCreateWithURL(_:_:_:_:_:_:)-(CFURL,_,_,_,_,_)``.
@discardableResult
public func ExtAudioFileCreateWithURL(_ path: String, _ inFileType: AudioFileTypeID,
                                      _ inStreamDesc: UnsafePointer<AudioStreamBasicDescription>,
                                      _ inChannelLayout: UnsafePointer<AudioChannelLayout>?, _ inFlags: UInt32,
                                      _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>) -> OSStatus {
    status { () throws(AudioQueueError) in
        var layout: [UInt8]?
        if let inChannelLayout {
            let raw = UnsafeRawPointer(inChannelLayout)
            let descriptions = Int(inChannelLayout.pointee.mNumberChannelDescriptions)
            let size = inChannelLayout.pointee.mChannelLayoutTag == kAudioChannelLayoutTag_UseChannelDescriptions ? 12 + 20 * descriptions : 12
            let channels = try ChannelLayoutBytes.channelCount(raw, size: size, sizeError: kExtAudioFileError_InvalidChannelMap)
            guard channels == Int(inStreamDesc.pointee.mChannelsPerFrame) else {
                throw AudioQueueError(kExtAudioFileError_InvalidChannelMap, "the channel layout describes \(channels) channels but the format has \(inStreamDesc.pointee.mChannelsPerFrame)")
            }
            layout = Array(UnsafeRawBufferPointer(start: raw, count: size))
        }
        let file = try CompatAudioFile(creating: path, type: inFileType, format: inStreamDesc.pointee,
                                       flags: AudioFileFlags(rawValue: inFlags), atomic: true)
        let ext: CompatExtAudioFile
        do throws(AudioQueueError) {
            ext = try CompatExtAudioFile(file: file, mode: .writing, ownsFile: true, layout: layout)
        } catch {
            file.abort()
            throw error
        }
        ExtAudioFileRegistry.shared.add(ext)
        outExtAudioFile.pointee = ext.ref
    }
}

/// Wraps an open ``AudioFileID`` — for reading, or, with `inForWriting`, one made by
/// ``AudioFileCreateWithURL(_:_:_:_:_:)-(CFURL,_,_,_,_)`` — in an ExtAudioFile.
/// ``ExtAudioFileDispose(_:)`` then finishes the conversion but leaves the audio file open, as
/// on Apple. The corresponding Apple function is `ExtAudioFileWrapAudioFileID`.
/// - Returns: ``kAudioFileNotOpenError`` (not an open file), ``kExtAudioFileError_InvalidOperationOrder``
///   (`inForWriting` does not match how the file was opened).
@discardableResult
public func ExtAudioFileWrapAudioFileID(_ inFileID: AudioFileID, _ inForWriting: Bool,
                                        _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>) -> OSStatus {
    status { () throws(AudioQueueError) in
        let file = try FileRegistry.shared.file(inFileID)
        guard file.isWritable == inForWriting else {
            throw AudioQueueError(kExtAudioFileError_InvalidOperationOrder, inForWriting
                ? "the audio file is open for reading; wrap it with inForWriting false, or create one with AudioFileCreateWithURL to write"
                : "the audio file was created for writing; wrap it with inForWriting true")
        }
        let ext = try CompatExtAudioFile(file: file, mode: inForWriting ? .writing : .reading, ownsFile: false, layout: nil)
        ExtAudioFileRegistry.shared.add(ext)
        outExtAudioFile.pointee = ext.ref
    }
}

/// Finishes and closes the file — written audio still held by the asynchronous writer and the
/// rate converter goes to the file first — and invalidates the reference. A file created with
/// ``ExtAudioFileCreateWithURL(_:_:_:_:_:_:)-(CFURL,_,_,_,_,_)`` appears at its path now. The
/// corresponding Apple function is `ExtAudioFileDispose`.
/// - Returns: a write error met by the asynchronous writer or now (the file is then abandoned:
///   nothing appears at its path), ``kAudioFilePermissionsError`` (a file appeared at the path
///   meanwhile and `kAudioFileFlags_EraseFile` was not given).
@discardableResult
public func ExtAudioFileDispose(_ inExtAudioFile: ExtAudioFileRef?) -> OSStatus {
    withExtFile(inExtAudioFile) { file throws(AudioQueueError) in
        ExtAudioFileRegistry.shared.remove(file)
        try file.dispose()
    }
}

/// Reads up to `ioNumberFrames` frames in the client format into `ioData` (one buffer, or one
/// per channel for a non-interleaved format); on return `ioNumberFrames` and each buffer's
/// `mDataByteSize` say how many were read — 0 at the end of the file. The corresponding Apple
/// function is `ExtAudioFileRead`.
///
/// Frames beyond what the buffers' `mDataByteSize` hold are not read.
/// - Returns: ``kAudio_ParamError`` (another number of buffers than the client format, or no
///   data), ``kExtAudioFileError_InvalidOperationOrder`` (a file being written).
@discardableResult
public func ExtAudioFileRead(_ inExtAudioFile: ExtAudioFileRef?, _ ioNumberFrames: UnsafeMutablePointer<UInt32>,
                             _ ioData: UnsafeMutablePointer<AudioBufferList>) -> OSStatus {
    withExtFile(inExtAudioFile) { file throws(AudioQueueError) in
        let frames = try file.read(frames: Int(ioNumberFrames.pointee), into: UnsafeMutableAudioBufferListPointer(ioData))
        ioNumberFrames.pointee = UInt32(frames)
    }
}

/// Converts `inNumberFrames` frames of the client format from `ioData` and writes them, on this
/// thread. The corresponding Apple function is `ExtAudioFileWrite`.
/// - Returns: ``kAudio_ParamError`` (another number of buffers than the client format, no data,
///   or buffers holding fewer frames), ``kExtAudioFileError_InvalidOperationOrder`` (a file open
///   for reading), a write error (``kAudioFileUnspecifiedError``).
@discardableResult
public func ExtAudioFileWrite(_ inExtAudioFile: ExtAudioFileRef?, _ inNumberFrames: UInt32,
                              _ ioData: UnsafePointer<AudioBufferList>) -> OSStatus {
    withExtFile(inExtAudioFile) { file throws(AudioQueueError) in
        try file.write(frames: Int(inNumberFrames), from: UnsafeMutableAudioBufferListPointer(UnsafeMutablePointer(mutating: ioData)))
    }
}

/// Queues `inNumberFrames` frames of the client format for writing on a thread of the file's
/// own; returns at once. `ExtAudioFileWriteAsync(file, 0, nil)` only primes: it starts that
/// thread and allocates its buffer, so later calls (from a callback, say) need not allocate (written not to; not measured). The
/// corresponding Apple function is `ExtAudioFileWriteAsync`.
///
/// The frames are copied before it returns. Nothing waits for the disk; the call takes two brief
/// uncontended locks (the reference lookup and the writer's state). The writer holds 65 536
/// frames; ``ExtAudioFileDispose(_:)`` writes everything queued before finishing the file.
/// - Returns: ``kExtAudioFileError_AsyncWriteTooLarge`` (more than 65 536 frames at once),
///   ``kExtAudioFileError_AsyncWriteBufferOverflow`` (the disk has fallen behind: these frames
///   are not written), an error the writer met earlier, ``kAudio_ParamError`` (a malformed list),
///   ``kExtAudioFileError_InvalidOperationOrder`` (a file open for reading).
@discardableResult
public func ExtAudioFileWriteAsync(_ inExtAudioFile: ExtAudioFileRef?, _ inNumberFrames: UInt32,
                                   _ ioData: UnsafePointer<AudioBufferList>?) -> OSStatus {
    withExtFile(inExtAudioFile) { file throws(AudioQueueError) in
        try file.writeAsync(frames: Int(inNumberFrames),
                            from: ioData.map { UnsafeMutableAudioBufferListPointer(UnsafeMutablePointer(mutating: $0)) })
    }
}

/// Moves the read position to frame `inFrameOffset` of the file — in the file's frames and rate,
/// not the client's (Apple's QA1609); the next read starts there exactly. The corresponding Apple
/// function is `ExtAudioFileSeek`.
/// - Returns: ``kExtAudioFileError_InvalidSeek`` (outside 0…length; on a file being written, any
///   frame but its end).
@discardableResult
public func ExtAudioFileSeek(_ inExtAudioFile: ExtAudioFileRef?, _ inFrameOffset: Int64) -> OSStatus {
    withExtFile(inExtAudioFile) { file throws(AudioQueueError) in try file.seek(inFrameOffset) }
}

/// The read or write position in the file's frames and rate (the client frames read or written,
/// converted to the file's rate and rounded). The corresponding Apple function is `ExtAudioFileTell`.
@discardableResult
public func ExtAudioFileTell(_ inExtAudioFile: ExtAudioFileRef?, _ outFrameOffset: UnsafeMutablePointer<Int64>) -> OSStatus {
    withExtFile(inExtAudioFile) { file throws(AudioQueueError) in outFrameOffset.pointee = try file.tell() }
}

/// The size of a property's value and whether it can be set now. The corresponding Apple
/// function is `ExtAudioFileGetPropertyInfo`.
/// - Returns: ``kExtAudioFileError_InvalidProperty``.
@discardableResult
public func ExtAudioFileGetPropertyInfo(_ inExtAudioFile: ExtAudioFileRef?, _ inPropertyID: ExtAudioFilePropertyID,
                                        _ outSize: UnsafeMutablePointer<UInt32>?,
                                        _ outWritable: UnsafeMutablePointer<DarwinBoolean>?) -> OSStatus {
    withExtFile(inExtAudioFile) { file throws(AudioQueueError) in
        let (size, writable) = try file.propertyInfo(inPropertyID)
        outSize?.pointee = UInt32(size)
        outWritable?.pointee = DarwinBoolean(writable)
    }
}

/// Reads a property into `outPropertyData`; on return `ioPropertyDataSize` is the size written.
/// The corresponding Apple function is `ExtAudioFileGetProperty`.
/// - Returns: ``kExtAudioFileError_InvalidProperty``, ``kExtAudioFileError_InvalidPropertySize``
///   (`ioPropertyDataSize` too small).
@discardableResult
public func ExtAudioFileGetProperty(_ inExtAudioFile: ExtAudioFileRef?, _ inPropertyID: ExtAudioFilePropertyID,
                                    _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>,
                                    _ outPropertyData: UnsafeMutableRawPointer) -> OSStatus {
    withExtFile(inExtAudioFile) { file throws(AudioQueueError) in
        try file.property(inPropertyID, outPropertyData, &ioPropertyDataSize.pointee)
    }
}

/// Sets a property: the client format and channel layout, the file's channel layout (new file,
/// before any audio), the I/O buffer size, the converter configuration. The corresponding Apple
/// function is `ExtAudioFileSetProperty`.
///
/// A new client format takes effect where the client is: reading goes on from the frame reached;
/// writing finishes what the old format converted (its rate converter's tail included) first.
/// - Returns: ``kExtAudioFileError_InvalidProperty`` (unknown or read-only),
///   ``kExtAudioFileError_InvalidPropertySize``, ``kExtAudioFileError_NonPCMClientFormat``,
///   ``kAudioConverterErr_FormatNotSupported`` (a linear PCM variant not handled),
///   ``kAudioConverterErr_OutputSampleRateOutOfRange``, ``kExtAudioFileError_InvalidChannelMap``,
///   ``kExtAudioFileError_InvalidOperationOrder`` (the file's layout after audio was written).
@discardableResult
public func ExtAudioFileSetProperty(_ inExtAudioFile: ExtAudioFileRef?, _ inPropertyID: ExtAudioFilePropertyID,
                                    _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer) -> OSStatus {
    withExtFile(inExtAudioFile) { file throws(AudioQueueError) in
        try file.setProperty(inPropertyID, inPropertyData, Int(inPropertyDataSize))
    }
}

private func withExtFile(_ ref: ExtAudioFileRef?, _ body: (CompatExtAudioFile) throws(AudioQueueError) -> Void) -> OSStatus {
    status { () throws(AudioQueueError) in
        guard let ref else { throw AudioQueueError(kAudio_ParamError, "the ExtAudioFileRef is NULL") }
        try body(try ExtAudioFileRegistry.shared.object(ref))
    }
}
