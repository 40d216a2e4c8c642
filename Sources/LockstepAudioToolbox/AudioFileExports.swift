import AudioQueueCompat
import Foundation

// Audio File, Extended Audio File, Audio File Stream and Audio Converter Services for C
// (include/AudioToolbox/AudioFile.h, ExtendedAudioFile.h, AudioFileStream.h, AudioConverter.h):
// the Swift implementation's functions, called with the C arguments.

/// The path of a C `CFURLRef`, or nil (with the error recorded) when it is not a file URL.
private func path(_ function: String, _ url: OpaquePointer?) -> String? {
    guard let file = cfObject(url, as: FileURL.self) else {
        fail(kAudio_ParamError, "\(function): the URL is NULL or not a CFURLRef (make one with CFURLCreateWithFileSystemPath)")
        return nil
    }
    return file.url.path
}

/// Runs `body` with a `DarwinBoolean` pointer standing for C's `Boolean *` (nil for NULL).
private func withBoolean(_ out: UnsafeMutablePointer<UInt8>?,
                         _ body: (UnsafeMutablePointer<DarwinBoolean>?) -> OSStatus) -> OSStatus {
    guard let out else { return body(nil) }
    var value = DarwinBoolean(false)
    let status = body(&value)
    if status == noErr { out.pointee = value.rawValue }
    return status
}

// MARK: Audio File

/// C's `AudioFileOpenURL`, declared and documented in `<AudioToolbox/AudioFile.h>`: the Swift function of the same name.
@_cdecl("AudioFileOpenURL")
public func cAudioFileOpenURL(_ inFileRef: OpaquePointer?, _ inPermissions: Int8, _ inFileTypeHint: AudioFileTypeID,
                       _ outAudioFile: UnsafeMutablePointer<AudioFileID?>?) -> OSStatus {
    guard let path = path("AudioFileOpenURL", inFileRef) else { return kAudio_ParamError }
    guard let outAudioFile else { return nullArgument("AudioFileOpenURL", "outAudioFile") }
    guard let permissions = AudioFilePermissions(rawValue: inPermissions) else {
        return fail(kAudioFilePermissionsError, "AudioFileOpenURL: permissions \(inPermissions) are not kAudioFileReadPermission (1), kAudioFileWritePermission (2) or kAudioFileReadWritePermission (3)")
    }
    return AudioFileOpenURL(path, permissions, inFileTypeHint, outAudioFile)
}

/// C's `AudioFileCreateWithURL`, declared and documented in `<AudioToolbox/AudioFile.h>`: the Swift function of the same name.
@_cdecl("AudioFileCreateWithURL")
public func cAudioFileCreateWithURL(_ inFileRef: OpaquePointer?, _ inFileType: AudioFileTypeID,
                             _ inFormat: UnsafePointer<AudioStreamBasicDescription>?, _ inFlags: UInt32,
                             _ outAudioFile: UnsafeMutablePointer<AudioFileID?>?) -> OSStatus {
    guard let path = path("AudioFileCreateWithURL", inFileRef) else { return kAudio_ParamError }
    guard let inFormat else { return nullArgument("AudioFileCreateWithURL", "inFormat") }
    guard let outAudioFile else { return nullArgument("AudioFileCreateWithURL", "outAudioFile") }
    return AudioFileCreateWithURL(path, inFileType, inFormat, AudioFileFlags(rawValue: inFlags), outAudioFile)
}

/// C's `AudioFileReadPackets`, declared and documented in `<AudioToolbox/AudioFile.h>`: the Swift function of the same name.
@_cdecl("AudioFileReadPackets")
public func cAudioFileReadPackets(_ inAudioFile: AudioFileID?, _ inUseCache: UInt8, _ outNumBytes: UnsafeMutablePointer<UInt32>?,
                           _ outPacketDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?,
                           _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>?,
                           _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileReadPackets", "inAudioFile") }
    guard let outNumBytes else { return nullArgument("AudioFileReadPackets", "outNumBytes") }
    guard let ioNumPackets else { return nullArgument("AudioFileReadPackets", "ioNumPackets") }
    return AudioFileReadPackets(inAudioFile, inUseCache != 0, outNumBytes, outPacketDescriptions, inStartingPacket,
                                ioNumPackets, outBuffer)
}

/// C's `AudioFileReadPacketData`, declared and documented in `<AudioToolbox/AudioFile.h>`: the Swift function of the same name.
@_cdecl("AudioFileReadPacketData")
public func cAudioFileReadPacketData(_ inAudioFile: AudioFileID?, _ inUseCache: UInt8, _ ioNumBytes: UnsafeMutablePointer<UInt32>?,
                              _ outPacketDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?,
                              _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>?,
                              _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileReadPacketData", "inAudioFile") }
    guard let ioNumBytes else { return nullArgument("AudioFileReadPacketData", "ioNumBytes") }
    guard let ioNumPackets else { return nullArgument("AudioFileReadPacketData", "ioNumPackets") }
    return AudioFileReadPacketData(inAudioFile, inUseCache != 0, ioNumBytes, outPacketDescriptions, inStartingPacket,
                                   ioNumPackets, outBuffer)
}

/// C's `AudioFileWritePackets`, declared and documented in `<AudioToolbox/AudioFile.h>`: the Swift function of the same name.
@_cdecl("AudioFileWritePackets")
public func cAudioFileWritePackets(_ inAudioFile: AudioFileID?, _ inUseCache: UInt8, _ inNumBytes: UInt32,
                            _ inPacketDescriptions: UnsafePointer<AudioStreamPacketDescription>?,
                            _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>?,
                            _ inBuffer: UnsafeRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileWritePackets", "inAudioFile") }
    guard let ioNumPackets else { return nullArgument("AudioFileWritePackets", "ioNumPackets") }
    guard let inBuffer else { return nullArgument("AudioFileWritePackets", "inBuffer") }
    return AudioFileWritePackets(inAudioFile, inUseCache != 0, inNumBytes, inPacketDescriptions, inStartingPacket,
                                 ioNumPackets, inBuffer)
}

/// C's `AudioFileReadBytes`, declared and documented in `<AudioToolbox/AudioFile.h>`: the Swift function of the same name.
@_cdecl("AudioFileReadBytes")
public func cAudioFileReadBytes(_ inAudioFile: AudioFileID?, _ inUseCache: UInt8, _ inStartingByte: Int64,
                         _ ioNumBytes: UnsafeMutablePointer<UInt32>?, _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileReadBytes", "inAudioFile") }
    guard let ioNumBytes else { return nullArgument("AudioFileReadBytes", "ioNumBytes") }
    guard let outBuffer else { return nullArgument("AudioFileReadBytes", "outBuffer") }
    return AudioFileReadBytes(inAudioFile, inUseCache != 0, inStartingByte, ioNumBytes, outBuffer)
}

/// C's `AudioFileWriteBytes`, declared and documented in `<AudioToolbox/AudioFile.h>`: the Swift function of the same name.
@_cdecl("AudioFileWriteBytes")
public func cAudioFileWriteBytes(_ inAudioFile: AudioFileID?, _ inUseCache: UInt8, _ inStartingByte: Int64,
                          _ ioNumBytes: UnsafeMutablePointer<UInt32>?, _ inBuffer: UnsafeRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileWriteBytes", "inAudioFile") }
    guard let ioNumBytes else { return nullArgument("AudioFileWriteBytes", "ioNumBytes") }
    guard let inBuffer else { return nullArgument("AudioFileWriteBytes", "inBuffer") }
    return AudioFileWriteBytes(inAudioFile, inUseCache != 0, inStartingByte, ioNumBytes, inBuffer)
}

/// C's `AudioFileGetProperty`, declared and documented in `<AudioToolbox/AudioFile.h>`: the Swift function of the same name.
@_cdecl("AudioFileGetProperty")
public func cAudioFileGetProperty(_ inAudioFile: AudioFileID?, _ inPropertyID: AudioFilePropertyID,
                           _ ioDataSize: UnsafeMutablePointer<UInt32>?, _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileGetProperty", "inAudioFile") }
    guard let ioDataSize else { return nullArgument("AudioFileGetProperty", "ioDataSize") }
    guard let outPropertyData else { return nullArgument("AudioFileGetProperty", "outPropertyData") }
    return AudioFileGetProperty(inAudioFile, inPropertyID, ioDataSize, outPropertyData)
}

/// C's `AudioFileGetPropertyInfo`, declared and documented in `<AudioToolbox/AudioFile.h>`: the Swift function of the same name.
@_cdecl("AudioFileGetPropertyInfo")
public func cAudioFileGetPropertyInfo(_ inAudioFile: AudioFileID?, _ inPropertyID: AudioFilePropertyID,
                               _ outDataSize: UnsafeMutablePointer<UInt32>?, _ isWritable: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileGetPropertyInfo", "inAudioFile") }
    return AudioFileGetPropertyInfo(inAudioFile, inPropertyID, outDataSize, isWritable)
}

/// C's `AudioFileSetProperty`, declared and documented in `<AudioToolbox/AudioFile.h>`: the Swift function of the same name.
@_cdecl("AudioFileSetProperty")
public func cAudioFileSetProperty(_ inAudioFile: AudioFileID?, _ inPropertyID: AudioFilePropertyID, _ inDataSize: UInt32,
                           _ inPropertyData: UnsafeRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileSetProperty", "inAudioFile") }
    guard let inPropertyData else { return nullArgument("AudioFileSetProperty", "inPropertyData") }
    return AudioFileSetProperty(inAudioFile, inPropertyID, inDataSize, inPropertyData)
}

/// C's `AudioFileClose`, declared and documented in `<AudioToolbox/AudioFile.h>`: the Swift function of the same name.
@_cdecl("AudioFileClose")
public func cAudioFileClose(_ inAudioFile: AudioFileID?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileClose", "inAudioFile") }
    return AudioFileClose(inAudioFile)
}

// MARK: Extended Audio File

/// C's `ExtAudioFileOpenURL`, declared and documented in `<AudioToolbox/ExtendedAudioFile.h>`: the Swift function of the same name.
@_cdecl("ExtAudioFileOpenURL")
public func cExtAudioFileOpenURL(_ inURL: OpaquePointer?, _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>?) -> OSStatus {
    guard let path = path("ExtAudioFileOpenURL", inURL) else { return kAudio_ParamError }
    guard let outExtAudioFile else { return nullArgument("ExtAudioFileOpenURL", "outExtAudioFile") }
    return ExtAudioFileOpenURL(path, outExtAudioFile)
}

/// C's `ExtAudioFileCreateWithURL`, declared and documented in `<AudioToolbox/ExtendedAudioFile.h>`: the Swift function of the same name.
@_cdecl("ExtAudioFileCreateWithURL")
public func cExtAudioFileCreateWithURL(_ inURL: OpaquePointer?, _ inFileType: AudioFileTypeID,
                                _ inStreamDesc: UnsafePointer<AudioStreamBasicDescription>?,
                                _ inChannelLayout: UnsafePointer<AudioChannelLayout>?, _ inFlags: UInt32,
                                _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>?) -> OSStatus {
    guard let path = path("ExtAudioFileCreateWithURL", inURL) else { return kAudio_ParamError }
    guard let inStreamDesc else { return nullArgument("ExtAudioFileCreateWithURL", "inStreamDesc") }
    guard let outExtAudioFile else { return nullArgument("ExtAudioFileCreateWithURL", "outExtAudioFile") }
    return ExtAudioFileCreateWithURL(path, inFileType, inStreamDesc, inChannelLayout, inFlags, outExtAudioFile)
}

/// C's `ExtAudioFileWrapAudioFileID`, declared and documented in `<AudioToolbox/ExtendedAudioFile.h>`: the Swift function of the same name.
@_cdecl("ExtAudioFileWrapAudioFileID")
public func cExtAudioFileWrapAudioFileID(_ inFileID: AudioFileID?, _ inForWriting: UInt8,
                                  _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>?) -> OSStatus {
    guard let inFileID else { return nullArgument("ExtAudioFileWrapAudioFileID", "inFileID") }
    guard let outExtAudioFile else { return nullArgument("ExtAudioFileWrapAudioFileID", "outExtAudioFile") }
    return ExtAudioFileWrapAudioFileID(inFileID, inForWriting != 0, outExtAudioFile)
}

/// C's `ExtAudioFileDispose`, declared and documented in `<AudioToolbox/ExtendedAudioFile.h>`: the Swift function of the same name.
@_cdecl("ExtAudioFileDispose")
public func cExtAudioFileDispose(_ inExtAudioFile: ExtAudioFileRef?) -> OSStatus { ExtAudioFileDispose(inExtAudioFile) }

/// C's `ExtAudioFileRead`, declared and documented in `<AudioToolbox/ExtendedAudioFile.h>`: the Swift function of the same name.
@_cdecl("ExtAudioFileRead")
public func cExtAudioFileRead(_ inExtAudioFile: ExtAudioFileRef?, _ ioNumberFrames: UnsafeMutablePointer<UInt32>?,
                       _ ioData: UnsafeMutablePointer<AudioBufferList>?) -> OSStatus {
    guard let ioNumberFrames else { return nullArgument("ExtAudioFileRead", "ioNumberFrames") }
    guard let ioData else { return nullArgument("ExtAudioFileRead", "ioData") }
    return ExtAudioFileRead(inExtAudioFile, ioNumberFrames, ioData)
}

/// C's `ExtAudioFileWrite`, declared and documented in `<AudioToolbox/ExtendedAudioFile.h>`: the Swift function of the same name.
@_cdecl("ExtAudioFileWrite")
public func cExtAudioFileWrite(_ inExtAudioFile: ExtAudioFileRef?, _ inNumberFrames: UInt32,
                        _ ioData: UnsafePointer<AudioBufferList>?) -> OSStatus {
    guard let ioData else { return nullArgument("ExtAudioFileWrite", "ioData") }
    return ExtAudioFileWrite(inExtAudioFile, inNumberFrames, ioData)
}

/// C's `ExtAudioFileWriteAsync`, declared and documented in `<AudioToolbox/ExtendedAudioFile.h>`: the Swift function of the same name.
@_cdecl("ExtAudioFileWriteAsync")
public func cExtAudioFileWriteAsync(_ inExtAudioFile: ExtAudioFileRef?, _ inNumberFrames: UInt32,
                             _ ioData: UnsafePointer<AudioBufferList>?) -> OSStatus {
    ExtAudioFileWriteAsync(inExtAudioFile, inNumberFrames, ioData)
}

/// C's `ExtAudioFileSeek`, declared and documented in `<AudioToolbox/ExtendedAudioFile.h>`: the Swift function of the same name.
@_cdecl("ExtAudioFileSeek")
public func cExtAudioFileSeek(_ inExtAudioFile: ExtAudioFileRef?, _ inFrameOffset: Int64) -> OSStatus {
    ExtAudioFileSeek(inExtAudioFile, inFrameOffset)
}

/// C's `ExtAudioFileTell`, declared and documented in `<AudioToolbox/ExtendedAudioFile.h>`: the Swift function of the same name.
@_cdecl("ExtAudioFileTell")
public func cExtAudioFileTell(_ inExtAudioFile: ExtAudioFileRef?, _ outFrameOffset: UnsafeMutablePointer<Int64>?) -> OSStatus {
    guard let outFrameOffset else { return nullArgument("ExtAudioFileTell", "outFrameOffset") }
    return ExtAudioFileTell(inExtAudioFile, outFrameOffset)
}

/// C's `ExtAudioFileGetPropertyInfo`, declared and documented in `<AudioToolbox/ExtendedAudioFile.h>`: the Swift function of the same name.
@_cdecl("ExtAudioFileGetPropertyInfo")
public func cExtAudioFileGetPropertyInfo(_ inExtAudioFile: ExtAudioFileRef?, _ inPropertyID: ExtAudioFilePropertyID,
                                  _ outSize: UnsafeMutablePointer<UInt32>?, _ outWritable: UnsafeMutablePointer<UInt8>?) -> OSStatus {
    withBoolean(outWritable) { ExtAudioFileGetPropertyInfo(inExtAudioFile, inPropertyID, outSize, $0) }
}

/// C's `ExtAudioFileGetProperty`, declared and documented in `<AudioToolbox/ExtendedAudioFile.h>`: the Swift function of the same name.
@_cdecl("ExtAudioFileGetProperty")
public func cExtAudioFileGetProperty(_ inExtAudioFile: ExtAudioFileRef?, _ inPropertyID: ExtAudioFilePropertyID,
                              _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>?,
                              _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioPropertyDataSize else { return nullArgument("ExtAudioFileGetProperty", "ioPropertyDataSize") }
    guard let outPropertyData else { return nullArgument("ExtAudioFileGetProperty", "outPropertyData") }
    return ExtAudioFileGetProperty(inExtAudioFile, inPropertyID, ioPropertyDataSize, outPropertyData)
}

/// C's `ExtAudioFileSetProperty`, declared and documented in `<AudioToolbox/ExtendedAudioFile.h>`: the Swift function of the same name.
@_cdecl("ExtAudioFileSetProperty")
public func cExtAudioFileSetProperty(_ inExtAudioFile: ExtAudioFileRef?, _ inPropertyID: ExtAudioFilePropertyID,
                              _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer?) -> OSStatus {
    guard let inPropertyData else { return nullArgument("ExtAudioFileSetProperty", "inPropertyData") }
    return ExtAudioFileSetProperty(inExtAudioFile, inPropertyID, inPropertyDataSize, inPropertyData)
}

// MARK: Audio File Stream

/// C's `AudioFileStreamOpen`, declared and documented in `<AudioToolbox/AudioFileStream.h>`: the Swift function of the same name.
@_cdecl("AudioFileStreamOpen")
public func cAudioFileStreamOpen(_ inClientData: UnsafeMutableRawPointer?,
                          _ inPropertyListenerProc: AudioFileStream_PropertyListenerProc?,
                          _ inPacketsProc: AudioFileStream_PacketsProc?, _ inFileTypeHint: AudioFileTypeID,
                          _ outAudioFileStream: UnsafeMutablePointer<AudioFileStreamID?>?) -> OSStatus {
    guard let inPropertyListenerProc else { return nullArgument("AudioFileStreamOpen", "inPropertyListenerProc") }
    guard let inPacketsProc else { return nullArgument("AudioFileStreamOpen", "inPacketsProc") }
    guard let outAudioFileStream else { return nullArgument("AudioFileStreamOpen", "outAudioFileStream") }
    return AudioFileStreamOpen(inClientData, inPropertyListenerProc, inPacketsProc, inFileTypeHint, outAudioFileStream)
}

/// C's `AudioFileStreamParseBytes`, declared and documented in `<AudioToolbox/AudioFileStream.h>`: the Swift function of the same name.
@_cdecl("AudioFileStreamParseBytes")
public func cAudioFileStreamParseBytes(_ inAudioFileStream: AudioFileStreamID?, _ inDataByteSize: UInt32, _ inData: UnsafeRawPointer?,
                                _ inFlags: UInt32) -> OSStatus {
    guard let inAudioFileStream else { return nullArgument("AudioFileStreamParseBytes", "inAudioFileStream") }
    return AudioFileStreamParseBytes(inAudioFileStream, inDataByteSize, inData, AudioFileStreamParseFlags(rawValue: inFlags))
}

/// C's `AudioFileStreamSeek`, declared and documented in `<AudioToolbox/AudioFileStream.h>`: the Swift function of the same name.
@_cdecl("AudioFileStreamSeek")
public func cAudioFileStreamSeek(_ inAudioFileStream: AudioFileStreamID?, _ inPacketOffset: Int64,
                          _ outDataByteOffset: UnsafeMutablePointer<Int64>?,
                          _ ioFlags: UnsafeMutablePointer<AudioFileStreamSeekFlags>?) -> OSStatus {
    guard let inAudioFileStream else { return nullArgument("AudioFileStreamSeek", "inAudioFileStream") }
    guard let outDataByteOffset else { return nullArgument("AudioFileStreamSeek", "outDataByteOffset") }
    guard let ioFlags else { return nullArgument("AudioFileStreamSeek", "ioFlags") }
    return AudioFileStreamSeek(inAudioFileStream, inPacketOffset, outDataByteOffset, ioFlags)
}

/// C's `AudioFileStreamGetPropertyInfo`, declared and documented in `<AudioToolbox/AudioFileStream.h>`: the Swift function of the same name.
@_cdecl("AudioFileStreamGetPropertyInfo")
public func cAudioFileStreamGetPropertyInfo(_ inAudioFileStream: AudioFileStreamID?, _ inPropertyID: AudioFileStreamPropertyID,
                                     _ outPropertyDataSize: UnsafeMutablePointer<UInt32>?,
                                     _ outWritable: UnsafeMutablePointer<UInt8>?) -> OSStatus {
    guard let inAudioFileStream else { return nullArgument("AudioFileStreamGetPropertyInfo", "inAudioFileStream") }
    return withBoolean(outWritable) { AudioFileStreamGetPropertyInfo(inAudioFileStream, inPropertyID, outPropertyDataSize, $0) }
}

/// C's `AudioFileStreamGetProperty`, declared and documented in `<AudioToolbox/AudioFileStream.h>`: the Swift function of the same name.
@_cdecl("AudioFileStreamGetProperty")
public func cAudioFileStreamGetProperty(_ inAudioFileStream: AudioFileStreamID?, _ inPropertyID: AudioFileStreamPropertyID,
                                 _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>?,
                                 _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inAudioFileStream else { return nullArgument("AudioFileStreamGetProperty", "inAudioFileStream") }
    guard let ioPropertyDataSize else { return nullArgument("AudioFileStreamGetProperty", "ioPropertyDataSize") }
    guard let outPropertyData else { return nullArgument("AudioFileStreamGetProperty", "outPropertyData") }
    return AudioFileStreamGetProperty(inAudioFileStream, inPropertyID, ioPropertyDataSize, outPropertyData)
}

/// C's `AudioFileStreamSetProperty`, declared and documented in `<AudioToolbox/AudioFileStream.h>`: the Swift function of the same name.
@_cdecl("AudioFileStreamSetProperty")
public func cAudioFileStreamSetProperty(_ inAudioFileStream: AudioFileStreamID?, _ inPropertyID: AudioFileStreamPropertyID,
                                 _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer?) -> OSStatus {
    guard let inAudioFileStream else { return nullArgument("AudioFileStreamSetProperty", "inAudioFileStream") }
    guard let inPropertyData else { return nullArgument("AudioFileStreamSetProperty", "inPropertyData") }
    return AudioFileStreamSetProperty(inAudioFileStream, inPropertyID, inPropertyDataSize, inPropertyData)
}

/// C's `AudioFileStreamClose`, declared and documented in `<AudioToolbox/AudioFileStream.h>`: the Swift function of the same name.
@_cdecl("AudioFileStreamClose")
public func cAudioFileStreamClose(_ inAudioFileStream: AudioFileStreamID?) -> OSStatus {
    guard let inAudioFileStream else { return nullArgument("AudioFileStreamClose", "inAudioFileStream") }
    return AudioFileStreamClose(inAudioFileStream)
}

// MARK: Audio Converter

/// C's `AudioConverterNew`, declared and documented in `<AudioToolbox/AudioConverter.h>`: the Swift function of the same name.
@_cdecl("AudioConverterNew")
public func cAudioConverterNew(_ inSourceFormat: UnsafePointer<AudioStreamBasicDescription>?,
                        _ inDestinationFormat: UnsafePointer<AudioStreamBasicDescription>?,
                        _ outAudioConverter: UnsafeMutablePointer<AudioConverterRef?>?) -> OSStatus {
    guard let inSourceFormat else { return nullArgument("AudioConverterNew", "inSourceFormat") }
    guard let inDestinationFormat else { return nullArgument("AudioConverterNew", "inDestinationFormat") }
    guard let outAudioConverter else { return nullArgument("AudioConverterNew", "outAudioConverter") }
    return AudioConverterNew(inSourceFormat, inDestinationFormat, outAudioConverter)
}

/// C's `AudioConverterDispose`, declared and documented in `<AudioToolbox/AudioConverter.h>`: the Swift function of the same name.
@_cdecl("AudioConverterDispose")
public func cAudioConverterDispose(_ inAudioConverter: AudioConverterRef?) -> OSStatus { AudioConverterDispose(inAudioConverter) }

/// C's `AudioConverterReset`, declared and documented in `<AudioToolbox/AudioConverter.h>`: the Swift function of the same name.
@_cdecl("AudioConverterReset")
public func cAudioConverterReset(_ inAudioConverter: AudioConverterRef?) -> OSStatus { AudioConverterReset(inAudioConverter) }

/// C's `AudioConverterGetPropertyInfo`, declared and documented in `<AudioToolbox/AudioConverter.h>`: the Swift function of the same name.
@_cdecl("AudioConverterGetPropertyInfo")
public func cAudioConverterGetPropertyInfo(_ inAudioConverter: AudioConverterRef?, _ inPropertyID: AudioConverterPropertyID,
                                    _ outSize: UnsafeMutablePointer<UInt32>?, _ outWritable: UnsafeMutablePointer<UInt8>?) -> OSStatus {
    withBoolean(outWritable) { AudioConverterGetPropertyInfo(inAudioConverter, inPropertyID, outSize, $0) }
}

/// C's `AudioConverterGetProperty`, declared and documented in `<AudioToolbox/AudioConverter.h>`: the Swift function of the same name.
@_cdecl("AudioConverterGetProperty")
public func cAudioConverterGetProperty(_ inAudioConverter: AudioConverterRef?, _ inPropertyID: AudioConverterPropertyID,
                                _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>?,
                                _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioPropertyDataSize else { return nullArgument("AudioConverterGetProperty", "ioPropertyDataSize") }
    guard let outPropertyData else { return nullArgument("AudioConverterGetProperty", "outPropertyData") }
    return AudioConverterGetProperty(inAudioConverter, inPropertyID, ioPropertyDataSize, outPropertyData)
}

/// C's `AudioConverterSetProperty`, declared and documented in `<AudioToolbox/AudioConverter.h>`: the Swift function of the same name.
@_cdecl("AudioConverterSetProperty")
public func cAudioConverterSetProperty(_ inAudioConverter: AudioConverterRef?, _ inPropertyID: AudioConverterPropertyID,
                                _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer?) -> OSStatus {
    guard let inPropertyData else { return nullArgument("AudioConverterSetProperty", "inPropertyData") }
    return AudioConverterSetProperty(inAudioConverter, inPropertyID, inPropertyDataSize, inPropertyData)
}

/// C's `AudioConverterConvertBuffer`, declared and documented in `<AudioToolbox/AudioConverter.h>`: the Swift function of the same name.
@_cdecl("AudioConverterConvertBuffer")
public func cAudioConverterConvertBuffer(_ inAudioConverter: AudioConverterRef?, _ inInputDataSize: UInt32,
                                  _ inInputData: UnsafeRawPointer?, _ ioOutputDataSize: UnsafeMutablePointer<UInt32>?,
                                  _ outOutputData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inInputData else { return nullArgument("AudioConverterConvertBuffer", "inInputData") }
    guard let ioOutputDataSize else { return nullArgument("AudioConverterConvertBuffer", "ioOutputDataSize") }
    guard let outOutputData else { return nullArgument("AudioConverterConvertBuffer", "outOutputData") }
    return AudioConverterConvertBuffer(inAudioConverter, inInputDataSize, inInputData, ioOutputDataSize, outOutputData)
}

/// C's `AudioConverterConvertComplexBuffer`, declared and documented in `<AudioToolbox/AudioConverter.h>`: the Swift function of the same name.
@_cdecl("AudioConverterConvertComplexBuffer")
public func cAudioConverterConvertComplexBuffer(_ inAudioConverter: AudioConverterRef?, _ inNumberPCMFrames: UInt32,
                                         _ inInputData: UnsafePointer<AudioBufferList>?,
                                         _ outOutputData: UnsafeMutablePointer<AudioBufferList>?) -> OSStatus {
    guard let inInputData else { return nullArgument("AudioConverterConvertComplexBuffer", "inInputData") }
    guard let outOutputData else { return nullArgument("AudioConverterConvertComplexBuffer", "outOutputData") }
    return AudioConverterConvertComplexBuffer(inAudioConverter, inNumberPCMFrames, inInputData, outOutputData)
}

/// C's `AudioConverterFillComplexBuffer`, declared and documented in `<AudioToolbox/AudioConverter.h>`: the Swift function of the same name.
@_cdecl("AudioConverterFillComplexBuffer")
public func cAudioConverterFillComplexBuffer(_ inAudioConverter: AudioConverterRef?,
                                      _ inInputDataProc: AudioConverterComplexInputDataProc?,
                                      _ inInputDataProcUserData: UnsafeMutableRawPointer?,
                                      _ ioOutputDataPacketSize: UnsafeMutablePointer<UInt32>?,
                                      _ outOutputData: UnsafeMutablePointer<AudioBufferList>?,
                                      _ outPacketDescription: UnsafeMutablePointer<AudioStreamPacketDescription>?) -> OSStatus {
    guard let inInputDataProc else { return nullArgument("AudioConverterFillComplexBuffer", "inInputDataProc") }
    guard let ioOutputDataPacketSize else { return nullArgument("AudioConverterFillComplexBuffer", "ioOutputDataPacketSize") }
    guard let outOutputData else { return nullArgument("AudioConverterFillComplexBuffer", "outOutputData") }
    return AudioConverterFillComplexBuffer(inAudioConverter, inInputDataProc, inInputDataProcUserData, ioOutputDataPacketSize,
                                           outOutputData, outPacketDescription)
}
