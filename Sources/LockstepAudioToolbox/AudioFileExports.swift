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

@_cdecl("AudioFileOpenURL")
func cAudioFileOpenURL(_ inFileRef: OpaquePointer?, _ inPermissions: Int8, _ inFileTypeHint: AudioFileTypeID,
                       _ outAudioFile: UnsafeMutablePointer<AudioFileID?>?) -> OSStatus {
    guard let path = path("AudioFileOpenURL", inFileRef) else { return kAudio_ParamError }
    guard let outAudioFile else { return nullArgument("AudioFileOpenURL", "outAudioFile") }
    guard let permissions = AudioFilePermissions(rawValue: inPermissions) else {
        return fail(kAudioFilePermissionsError, "AudioFileOpenURL: permissions \(inPermissions) are not kAudioFileReadPermission (1), kAudioFileWritePermission (2) or kAudioFileReadWritePermission (3)")
    }
    return AudioFileOpenURL(path, permissions, inFileTypeHint, outAudioFile)
}

@_cdecl("AudioFileCreateWithURL")
func cAudioFileCreateWithURL(_ inFileRef: OpaquePointer?, _ inFileType: AudioFileTypeID,
                             _ inFormat: UnsafePointer<AudioStreamBasicDescription>?, _ inFlags: UInt32,
                             _ outAudioFile: UnsafeMutablePointer<AudioFileID?>?) -> OSStatus {
    guard let path = path("AudioFileCreateWithURL", inFileRef) else { return kAudio_ParamError }
    guard let inFormat else { return nullArgument("AudioFileCreateWithURL", "inFormat") }
    guard let outAudioFile else { return nullArgument("AudioFileCreateWithURL", "outAudioFile") }
    return AudioFileCreateWithURL(path, inFileType, inFormat, AudioFileFlags(rawValue: inFlags), outAudioFile)
}

@_cdecl("AudioFileReadPackets")
func cAudioFileReadPackets(_ inAudioFile: AudioFileID?, _ inUseCache: UInt8, _ outNumBytes: UnsafeMutablePointer<UInt32>?,
                           _ outPacketDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?,
                           _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>?,
                           _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileReadPackets", "inAudioFile") }
    guard let outNumBytes else { return nullArgument("AudioFileReadPackets", "outNumBytes") }
    guard let ioNumPackets else { return nullArgument("AudioFileReadPackets", "ioNumPackets") }
    return AudioFileReadPackets(inAudioFile, inUseCache != 0, outNumBytes, outPacketDescriptions, inStartingPacket,
                                ioNumPackets, outBuffer)
}

@_cdecl("AudioFileReadPacketData")
func cAudioFileReadPacketData(_ inAudioFile: AudioFileID?, _ inUseCache: UInt8, _ ioNumBytes: UnsafeMutablePointer<UInt32>?,
                              _ outPacketDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?,
                              _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>?,
                              _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileReadPacketData", "inAudioFile") }
    guard let ioNumBytes else { return nullArgument("AudioFileReadPacketData", "ioNumBytes") }
    guard let ioNumPackets else { return nullArgument("AudioFileReadPacketData", "ioNumPackets") }
    return AudioFileReadPacketData(inAudioFile, inUseCache != 0, ioNumBytes, outPacketDescriptions, inStartingPacket,
                                   ioNumPackets, outBuffer)
}

@_cdecl("AudioFileWritePackets")
func cAudioFileWritePackets(_ inAudioFile: AudioFileID?, _ inUseCache: UInt8, _ inNumBytes: UInt32,
                            _ inPacketDescriptions: UnsafePointer<AudioStreamPacketDescription>?,
                            _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>?,
                            _ inBuffer: UnsafeRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileWritePackets", "inAudioFile") }
    guard let ioNumPackets else { return nullArgument("AudioFileWritePackets", "ioNumPackets") }
    guard let inBuffer else { return nullArgument("AudioFileWritePackets", "inBuffer") }
    return AudioFileWritePackets(inAudioFile, inUseCache != 0, inNumBytes, inPacketDescriptions, inStartingPacket,
                                 ioNumPackets, inBuffer)
}

@_cdecl("AudioFileReadBytes")
func cAudioFileReadBytes(_ inAudioFile: AudioFileID?, _ inUseCache: UInt8, _ inStartingByte: Int64,
                         _ ioNumBytes: UnsafeMutablePointer<UInt32>?, _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileReadBytes", "inAudioFile") }
    guard let ioNumBytes else { return nullArgument("AudioFileReadBytes", "ioNumBytes") }
    guard let outBuffer else { return nullArgument("AudioFileReadBytes", "outBuffer") }
    return AudioFileReadBytes(inAudioFile, inUseCache != 0, inStartingByte, ioNumBytes, outBuffer)
}

@_cdecl("AudioFileWriteBytes")
func cAudioFileWriteBytes(_ inAudioFile: AudioFileID?, _ inUseCache: UInt8, _ inStartingByte: Int64,
                          _ ioNumBytes: UnsafeMutablePointer<UInt32>?, _ inBuffer: UnsafeRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileWriteBytes", "inAudioFile") }
    guard let ioNumBytes else { return nullArgument("AudioFileWriteBytes", "ioNumBytes") }
    guard let inBuffer else { return nullArgument("AudioFileWriteBytes", "inBuffer") }
    return AudioFileWriteBytes(inAudioFile, inUseCache != 0, inStartingByte, ioNumBytes, inBuffer)
}

@_cdecl("AudioFileGetProperty")
func cAudioFileGetProperty(_ inAudioFile: AudioFileID?, _ inPropertyID: AudioFilePropertyID,
                           _ ioDataSize: UnsafeMutablePointer<UInt32>?, _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileGetProperty", "inAudioFile") }
    guard let ioDataSize else { return nullArgument("AudioFileGetProperty", "ioDataSize") }
    guard let outPropertyData else { return nullArgument("AudioFileGetProperty", "outPropertyData") }
    return AudioFileGetProperty(inAudioFile, inPropertyID, ioDataSize, outPropertyData)
}

@_cdecl("AudioFileGetPropertyInfo")
func cAudioFileGetPropertyInfo(_ inAudioFile: AudioFileID?, _ inPropertyID: AudioFilePropertyID,
                               _ outDataSize: UnsafeMutablePointer<UInt32>?, _ isWritable: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileGetPropertyInfo", "inAudioFile") }
    return AudioFileGetPropertyInfo(inAudioFile, inPropertyID, outDataSize, isWritable)
}

@_cdecl("AudioFileSetProperty")
func cAudioFileSetProperty(_ inAudioFile: AudioFileID?, _ inPropertyID: AudioFilePropertyID, _ inDataSize: UInt32,
                           _ inPropertyData: UnsafeRawPointer?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileSetProperty", "inAudioFile") }
    guard let inPropertyData else { return nullArgument("AudioFileSetProperty", "inPropertyData") }
    return AudioFileSetProperty(inAudioFile, inPropertyID, inDataSize, inPropertyData)
}

@_cdecl("AudioFileClose")
func cAudioFileClose(_ inAudioFile: AudioFileID?) -> OSStatus {
    guard let inAudioFile else { return nullArgument("AudioFileClose", "inAudioFile") }
    return AudioFileClose(inAudioFile)
}

// MARK: Extended Audio File

@_cdecl("ExtAudioFileOpenURL")
func cExtAudioFileOpenURL(_ inURL: OpaquePointer?, _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>?) -> OSStatus {
    guard let path = path("ExtAudioFileOpenURL", inURL) else { return kAudio_ParamError }
    guard let outExtAudioFile else { return nullArgument("ExtAudioFileOpenURL", "outExtAudioFile") }
    return ExtAudioFileOpenURL(path, outExtAudioFile)
}

@_cdecl("ExtAudioFileCreateWithURL")
func cExtAudioFileCreateWithURL(_ inURL: OpaquePointer?, _ inFileType: AudioFileTypeID,
                                _ inStreamDesc: UnsafePointer<AudioStreamBasicDescription>?,
                                _ inChannelLayout: UnsafePointer<AudioChannelLayout>?, _ inFlags: UInt32,
                                _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>?) -> OSStatus {
    guard let path = path("ExtAudioFileCreateWithURL", inURL) else { return kAudio_ParamError }
    guard let inStreamDesc else { return nullArgument("ExtAudioFileCreateWithURL", "inStreamDesc") }
    guard let outExtAudioFile else { return nullArgument("ExtAudioFileCreateWithURL", "outExtAudioFile") }
    return ExtAudioFileCreateWithURL(path, inFileType, inStreamDesc, inChannelLayout, inFlags, outExtAudioFile)
}

@_cdecl("ExtAudioFileWrapAudioFileID")
func cExtAudioFileWrapAudioFileID(_ inFileID: AudioFileID?, _ inForWriting: UInt8,
                                  _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>?) -> OSStatus {
    guard let inFileID else { return nullArgument("ExtAudioFileWrapAudioFileID", "inFileID") }
    guard let outExtAudioFile else { return nullArgument("ExtAudioFileWrapAudioFileID", "outExtAudioFile") }
    return ExtAudioFileWrapAudioFileID(inFileID, inForWriting != 0, outExtAudioFile)
}

@_cdecl("ExtAudioFileDispose")
func cExtAudioFileDispose(_ inExtAudioFile: ExtAudioFileRef?) -> OSStatus { ExtAudioFileDispose(inExtAudioFile) }

@_cdecl("ExtAudioFileRead")
func cExtAudioFileRead(_ inExtAudioFile: ExtAudioFileRef?, _ ioNumberFrames: UnsafeMutablePointer<UInt32>?,
                       _ ioData: UnsafeMutablePointer<AudioBufferList>?) -> OSStatus {
    guard let ioNumberFrames else { return nullArgument("ExtAudioFileRead", "ioNumberFrames") }
    guard let ioData else { return nullArgument("ExtAudioFileRead", "ioData") }
    return ExtAudioFileRead(inExtAudioFile, ioNumberFrames, ioData)
}

@_cdecl("ExtAudioFileWrite")
func cExtAudioFileWrite(_ inExtAudioFile: ExtAudioFileRef?, _ inNumberFrames: UInt32,
                        _ ioData: UnsafePointer<AudioBufferList>?) -> OSStatus {
    guard let ioData else { return nullArgument("ExtAudioFileWrite", "ioData") }
    return ExtAudioFileWrite(inExtAudioFile, inNumberFrames, ioData)
}

@_cdecl("ExtAudioFileWriteAsync")
func cExtAudioFileWriteAsync(_ inExtAudioFile: ExtAudioFileRef?, _ inNumberFrames: UInt32,
                             _ ioData: UnsafePointer<AudioBufferList>?) -> OSStatus {
    ExtAudioFileWriteAsync(inExtAudioFile, inNumberFrames, ioData)
}

@_cdecl("ExtAudioFileSeek")
func cExtAudioFileSeek(_ inExtAudioFile: ExtAudioFileRef?, _ inFrameOffset: Int64) -> OSStatus {
    ExtAudioFileSeek(inExtAudioFile, inFrameOffset)
}

@_cdecl("ExtAudioFileTell")
func cExtAudioFileTell(_ inExtAudioFile: ExtAudioFileRef?, _ outFrameOffset: UnsafeMutablePointer<Int64>?) -> OSStatus {
    guard let outFrameOffset else { return nullArgument("ExtAudioFileTell", "outFrameOffset") }
    return ExtAudioFileTell(inExtAudioFile, outFrameOffset)
}

@_cdecl("ExtAudioFileGetPropertyInfo")
func cExtAudioFileGetPropertyInfo(_ inExtAudioFile: ExtAudioFileRef?, _ inPropertyID: ExtAudioFilePropertyID,
                                  _ outSize: UnsafeMutablePointer<UInt32>?, _ outWritable: UnsafeMutablePointer<UInt8>?) -> OSStatus {
    withBoolean(outWritable) { ExtAudioFileGetPropertyInfo(inExtAudioFile, inPropertyID, outSize, $0) }
}

@_cdecl("ExtAudioFileGetProperty")
func cExtAudioFileGetProperty(_ inExtAudioFile: ExtAudioFileRef?, _ inPropertyID: ExtAudioFilePropertyID,
                              _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>?,
                              _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioPropertyDataSize else { return nullArgument("ExtAudioFileGetProperty", "ioPropertyDataSize") }
    guard let outPropertyData else { return nullArgument("ExtAudioFileGetProperty", "outPropertyData") }
    return ExtAudioFileGetProperty(inExtAudioFile, inPropertyID, ioPropertyDataSize, outPropertyData)
}

@_cdecl("ExtAudioFileSetProperty")
func cExtAudioFileSetProperty(_ inExtAudioFile: ExtAudioFileRef?, _ inPropertyID: ExtAudioFilePropertyID,
                              _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer?) -> OSStatus {
    guard let inPropertyData else { return nullArgument("ExtAudioFileSetProperty", "inPropertyData") }
    return ExtAudioFileSetProperty(inExtAudioFile, inPropertyID, inPropertyDataSize, inPropertyData)
}

// MARK: Audio File Stream

@_cdecl("AudioFileStreamOpen")
func cAudioFileStreamOpen(_ inClientData: UnsafeMutableRawPointer?,
                          _ inPropertyListenerProc: AudioFileStream_PropertyListenerProc?,
                          _ inPacketsProc: AudioFileStream_PacketsProc?, _ inFileTypeHint: AudioFileTypeID,
                          _ outAudioFileStream: UnsafeMutablePointer<AudioFileStreamID?>?) -> OSStatus {
    guard let inPropertyListenerProc else { return nullArgument("AudioFileStreamOpen", "inPropertyListenerProc") }
    guard let inPacketsProc else { return nullArgument("AudioFileStreamOpen", "inPacketsProc") }
    guard let outAudioFileStream else { return nullArgument("AudioFileStreamOpen", "outAudioFileStream") }
    return AudioFileStreamOpen(inClientData, inPropertyListenerProc, inPacketsProc, inFileTypeHint, outAudioFileStream)
}

@_cdecl("AudioFileStreamParseBytes")
func cAudioFileStreamParseBytes(_ inAudioFileStream: AudioFileStreamID?, _ inDataByteSize: UInt32, _ inData: UnsafeRawPointer?,
                                _ inFlags: UInt32) -> OSStatus {
    guard let inAudioFileStream else { return nullArgument("AudioFileStreamParseBytes", "inAudioFileStream") }
    return AudioFileStreamParseBytes(inAudioFileStream, inDataByteSize, inData, AudioFileStreamParseFlags(rawValue: inFlags))
}

@_cdecl("AudioFileStreamSeek")
func cAudioFileStreamSeek(_ inAudioFileStream: AudioFileStreamID?, _ inPacketOffset: Int64,
                          _ outDataByteOffset: UnsafeMutablePointer<Int64>?,
                          _ ioFlags: UnsafeMutablePointer<AudioFileStreamSeekFlags>?) -> OSStatus {
    guard let inAudioFileStream else { return nullArgument("AudioFileStreamSeek", "inAudioFileStream") }
    guard let outDataByteOffset else { return nullArgument("AudioFileStreamSeek", "outDataByteOffset") }
    guard let ioFlags else { return nullArgument("AudioFileStreamSeek", "ioFlags") }
    return AudioFileStreamSeek(inAudioFileStream, inPacketOffset, outDataByteOffset, ioFlags)
}

@_cdecl("AudioFileStreamGetPropertyInfo")
func cAudioFileStreamGetPropertyInfo(_ inAudioFileStream: AudioFileStreamID?, _ inPropertyID: AudioFileStreamPropertyID,
                                     _ outPropertyDataSize: UnsafeMutablePointer<UInt32>?,
                                     _ outWritable: UnsafeMutablePointer<UInt8>?) -> OSStatus {
    guard let inAudioFileStream else { return nullArgument("AudioFileStreamGetPropertyInfo", "inAudioFileStream") }
    return withBoolean(outWritable) { AudioFileStreamGetPropertyInfo(inAudioFileStream, inPropertyID, outPropertyDataSize, $0) }
}

@_cdecl("AudioFileStreamGetProperty")
func cAudioFileStreamGetProperty(_ inAudioFileStream: AudioFileStreamID?, _ inPropertyID: AudioFileStreamPropertyID,
                                 _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>?,
                                 _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inAudioFileStream else { return nullArgument("AudioFileStreamGetProperty", "inAudioFileStream") }
    guard let ioPropertyDataSize else { return nullArgument("AudioFileStreamGetProperty", "ioPropertyDataSize") }
    guard let outPropertyData else { return nullArgument("AudioFileStreamGetProperty", "outPropertyData") }
    return AudioFileStreamGetProperty(inAudioFileStream, inPropertyID, ioPropertyDataSize, outPropertyData)
}

@_cdecl("AudioFileStreamSetProperty")
func cAudioFileStreamSetProperty(_ inAudioFileStream: AudioFileStreamID?, _ inPropertyID: AudioFileStreamPropertyID,
                                 _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer?) -> OSStatus {
    guard let inAudioFileStream else { return nullArgument("AudioFileStreamSetProperty", "inAudioFileStream") }
    guard let inPropertyData else { return nullArgument("AudioFileStreamSetProperty", "inPropertyData") }
    return AudioFileStreamSetProperty(inAudioFileStream, inPropertyID, inPropertyDataSize, inPropertyData)
}

@_cdecl("AudioFileStreamClose")
func cAudioFileStreamClose(_ inAudioFileStream: AudioFileStreamID?) -> OSStatus {
    guard let inAudioFileStream else { return nullArgument("AudioFileStreamClose", "inAudioFileStream") }
    return AudioFileStreamClose(inAudioFileStream)
}

// MARK: Audio Converter

@_cdecl("AudioConverterNew")
func cAudioConverterNew(_ inSourceFormat: UnsafePointer<AudioStreamBasicDescription>?,
                        _ inDestinationFormat: UnsafePointer<AudioStreamBasicDescription>?,
                        _ outAudioConverter: UnsafeMutablePointer<AudioConverterRef?>?) -> OSStatus {
    guard let inSourceFormat else { return nullArgument("AudioConverterNew", "inSourceFormat") }
    guard let inDestinationFormat else { return nullArgument("AudioConverterNew", "inDestinationFormat") }
    guard let outAudioConverter else { return nullArgument("AudioConverterNew", "outAudioConverter") }
    return AudioConverterNew(inSourceFormat, inDestinationFormat, outAudioConverter)
}

@_cdecl("AudioConverterDispose")
func cAudioConverterDispose(_ inAudioConverter: AudioConverterRef?) -> OSStatus { AudioConverterDispose(inAudioConverter) }

@_cdecl("AudioConverterReset")
func cAudioConverterReset(_ inAudioConverter: AudioConverterRef?) -> OSStatus { AudioConverterReset(inAudioConverter) }

@_cdecl("AudioConverterGetPropertyInfo")
func cAudioConverterGetPropertyInfo(_ inAudioConverter: AudioConverterRef?, _ inPropertyID: AudioConverterPropertyID,
                                    _ outSize: UnsafeMutablePointer<UInt32>?, _ outWritable: UnsafeMutablePointer<UInt8>?) -> OSStatus {
    withBoolean(outWritable) { AudioConverterGetPropertyInfo(inAudioConverter, inPropertyID, outSize, $0) }
}

@_cdecl("AudioConverterGetProperty")
func cAudioConverterGetProperty(_ inAudioConverter: AudioConverterRef?, _ inPropertyID: AudioConverterPropertyID,
                                _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>?,
                                _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioPropertyDataSize else { return nullArgument("AudioConverterGetProperty", "ioPropertyDataSize") }
    guard let outPropertyData else { return nullArgument("AudioConverterGetProperty", "outPropertyData") }
    return AudioConverterGetProperty(inAudioConverter, inPropertyID, ioPropertyDataSize, outPropertyData)
}

@_cdecl("AudioConverterSetProperty")
func cAudioConverterSetProperty(_ inAudioConverter: AudioConverterRef?, _ inPropertyID: AudioConverterPropertyID,
                                _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer?) -> OSStatus {
    guard let inPropertyData else { return nullArgument("AudioConverterSetProperty", "inPropertyData") }
    return AudioConverterSetProperty(inAudioConverter, inPropertyID, inPropertyDataSize, inPropertyData)
}

@_cdecl("AudioConverterConvertBuffer")
func cAudioConverterConvertBuffer(_ inAudioConverter: AudioConverterRef?, _ inInputDataSize: UInt32,
                                  _ inInputData: UnsafeRawPointer?, _ ioOutputDataSize: UnsafeMutablePointer<UInt32>?,
                                  _ outOutputData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inInputData else { return nullArgument("AudioConverterConvertBuffer", "inInputData") }
    guard let ioOutputDataSize else { return nullArgument("AudioConverterConvertBuffer", "ioOutputDataSize") }
    guard let outOutputData else { return nullArgument("AudioConverterConvertBuffer", "outOutputData") }
    return AudioConverterConvertBuffer(inAudioConverter, inInputDataSize, inInputData, ioOutputDataSize, outOutputData)
}

@_cdecl("AudioConverterConvertComplexBuffer")
func cAudioConverterConvertComplexBuffer(_ inAudioConverter: AudioConverterRef?, _ inNumberPCMFrames: UInt32,
                                         _ inInputData: UnsafePointer<AudioBufferList>?,
                                         _ outOutputData: UnsafeMutablePointer<AudioBufferList>?) -> OSStatus {
    guard let inInputData else { return nullArgument("AudioConverterConvertComplexBuffer", "inInputData") }
    guard let outOutputData else { return nullArgument("AudioConverterConvertComplexBuffer", "outOutputData") }
    return AudioConverterConvertComplexBuffer(inAudioConverter, inNumberPCMFrames, inInputData, outOutputData)
}

@_cdecl("AudioConverterFillComplexBuffer")
func cAudioConverterFillComplexBuffer(_ inAudioConverter: AudioConverterRef?,
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
