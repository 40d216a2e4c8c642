import AudioQueueCompat
import Foundation

// Audio Queue Services for C (include/AudioToolbox/AudioQueue.h): each function is the Swift
// implementation's, called with the C arguments. NULL where a pointer is required returns
// kAudio_ParamError with a message (Swift's signatures cannot receive NULL there).

/// Returns `kAudio_ParamError`, recording which argument was NULL.
func nullArgument(_ function: String, _ name: String) -> OSStatus {
    fail(kAudio_ParamError, "\(function): \(name) is NULL")
}

/// C's `AudioQueueNewOutput`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueNewOutput")
public func cAudioQueueNewOutput(_ inFormat: UnsafePointer<AudioStreamBasicDescription>?, _ inCallbackProc: AudioQueueOutputCallback?,
                          _ inUserData: UnsafeMutableRawPointer?, _ inCallbackRunLoop: OpaquePointer?,
                          _ inCallbackRunLoopMode: OpaquePointer?, _ inFlags: UInt32,
                          _ outAQ: UnsafeMutablePointer<AudioQueueRef?>?) -> OSStatus {
    guard let inFormat else { return nullArgument("AudioQueueNewOutput", "inFormat") }
    guard let inCallbackProc else { return nullArgument("AudioQueueNewOutput", "inCallbackProc") }
    guard let outAQ else { return nullArgument("AudioQueueNewOutput", "outAQ") }
    guard let (runLoop, mode) = runLoopArguments("AudioQueueNewOutput", inCallbackRunLoop, inCallbackRunLoopMode) else {
        return kAudio_ParamError
    }
    return AudioQueueNewOutput(inFormat, inCallbackProc, inUserData, runLoop, mode, inFlags, outAQ)
}

/// C's `AudioQueueNewInput`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueNewInput")
public func cAudioQueueNewInput(_ inFormat: UnsafePointer<AudioStreamBasicDescription>?, _ inCallbackProc: AudioQueueInputCallback?,
                         _ inUserData: UnsafeMutableRawPointer?, _ inCallbackRunLoop: OpaquePointer?,
                         _ inCallbackRunLoopMode: OpaquePointer?, _ inFlags: UInt32,
                         _ outAQ: UnsafeMutablePointer<AudioQueueRef?>?) -> OSStatus {
    guard let inFormat else { return nullArgument("AudioQueueNewInput", "inFormat") }
    guard let inCallbackProc else { return nullArgument("AudioQueueNewInput", "inCallbackProc") }
    guard let outAQ else { return nullArgument("AudioQueueNewInput", "outAQ") }
    guard let (runLoop, mode) = runLoopArguments("AudioQueueNewInput", inCallbackRunLoop, inCallbackRunLoopMode) else {
        return kAudio_ParamError
    }
    return AudioQueueNewInput(inFormat, inCallbackProc, inUserData, runLoop, mode, inFlags, outAQ)
}

/// The run loop and mode of a queue's creation: (nil, nil) for a NULL run loop; nil (with the
/// error recorded) for references that are not a run loop and a string.
private func runLoopArguments(_ function: String, _ runLoop: OpaquePointer?,
                              _ mode: OpaquePointer?) -> (CFRunLoop?, CFString?)? {
    guard runLoop != nil else { return (nil, nil) }
    guard let loop = cfObject(runLoop, as: CFRunLoop.self) else {
        fail(kAudio_ParamError, "\(function): inCallbackRunLoop is not a run loop (use CFRunLoopGetCurrent() or NULL)")
        return nil
    }
    guard mode != nil else { return (loop, kCFRunLoopCommonModes) }
    guard let name = cfObject(mode, as: CFString.self) else {
        fail(kAudio_ParamError, "\(function): inCallbackRunLoopMode is not a string (use kCFRunLoopCommonModes)")
        return nil
    }
    return (loop, name)
}

/// C's `AudioQueueDispose`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueDispose")
public func cAudioQueueDispose(_ inAQ: AudioQueueRef?, _ inImmediate: UInt8) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueDispose", "inAQ") }
    return AudioQueueDispose(inAQ, inImmediate != 0)
}

/// C's `AudioQueueAllocateBuffer`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueAllocateBuffer")
public func cAudioQueueAllocateBuffer(_ inAQ: AudioQueueRef?, _ inBufferByteSize: UInt32,
                               _ outBuffer: UnsafeMutablePointer<AudioQueueBufferRef?>?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueAllocateBuffer", "inAQ") }
    guard let outBuffer else { return nullArgument("AudioQueueAllocateBuffer", "outBuffer") }
    return AudioQueueAllocateBuffer(inAQ, inBufferByteSize, outBuffer)
}

/// C's `AudioQueueAllocateBufferWithPacketDescriptions`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueAllocateBufferWithPacketDescriptions")
public func cAudioQueueAllocateBufferWithPacketDescriptions(_ inAQ: AudioQueueRef?, _ inBufferByteSize: UInt32,
                                                     _ inNumberPacketDescriptions: UInt32,
                                                     _ outBuffer: UnsafeMutablePointer<AudioQueueBufferRef?>?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueAllocateBufferWithPacketDescriptions", "inAQ") }
    guard let outBuffer else { return nullArgument("AudioQueueAllocateBufferWithPacketDescriptions", "outBuffer") }
    return AudioQueueAllocateBufferWithPacketDescriptions(inAQ, inBufferByteSize, inNumberPacketDescriptions, outBuffer)
}

/// C's `AudioQueueFreeBuffer`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueFreeBuffer")
public func cAudioQueueFreeBuffer(_ inAQ: AudioQueueRef?, _ inBuffer: AudioQueueBufferRef?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueFreeBuffer", "inAQ") }
    guard let inBuffer else { return nullArgument("AudioQueueFreeBuffer", "inBuffer") }
    return AudioQueueFreeBuffer(inAQ, inBuffer)
}

/// C's `AudioQueueEnqueueBuffer`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueEnqueueBuffer")
public func cAudioQueueEnqueueBuffer(_ inAQ: AudioQueueRef?, _ inBuffer: AudioQueueBufferRef?, _ inNumPacketDescs: UInt32,
                              _ inPacketDescs: UnsafePointer<AudioStreamPacketDescription>?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueEnqueueBuffer", "inAQ") }
    guard let inBuffer else { return nullArgument("AudioQueueEnqueueBuffer", "inBuffer") }
    return AudioQueueEnqueueBuffer(inAQ, inBuffer, inNumPacketDescs, inPacketDescs)
}

/// C's `AudioQueueEnqueueBufferWithParameters`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueEnqueueBufferWithParameters")
public func cAudioQueueEnqueueBufferWithParameters(
    _ inAQ: AudioQueueRef?, _ inBuffer: AudioQueueBufferRef?, _ inNumPacketDescs: UInt32,
    _ inPacketDescs: UnsafePointer<AudioStreamPacketDescription>?, _ inTrimFramesAtStart: UInt32,
    _ inTrimFramesAtEnd: UInt32, _ inNumParamValues: UInt32, _ inParamValues: UnsafePointer<AudioQueueParameterEvent>?,
    _ inStartTime: UnsafePointer<AudioTimeStamp>?, _ outActualStartTime: UnsafeMutablePointer<AudioTimeStamp>?
) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueEnqueueBufferWithParameters", "inAQ") }
    guard let inBuffer else { return nullArgument("AudioQueueEnqueueBufferWithParameters", "inBuffer") }
    return AudioQueueEnqueueBufferWithParameters(inAQ, inBuffer, inNumPacketDescs, inPacketDescs, inTrimFramesAtStart,
                                                 inTrimFramesAtEnd, inNumParamValues, inParamValues, inStartTime,
                                                 outActualStartTime)
}

/// C's `AudioQueueStart`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueStart")
public func cAudioQueueStart(_ inAQ: AudioQueueRef?, _ inStartTime: UnsafePointer<AudioTimeStamp>?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueStart", "inAQ") }
    return AudioQueueStart(inAQ, inStartTime)
}

/// C's `AudioQueuePrime`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueuePrime")
public func cAudioQueuePrime(_ inAQ: AudioQueueRef?, _ inNumberOfFramesToPrepare: UInt32,
                      _ outNumberOfFramesPrepared: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueuePrime", "inAQ") }
    return AudioQueuePrime(inAQ, inNumberOfFramesToPrepare, outNumberOfFramesPrepared)
}

/// C's `AudioQueueStop`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueStop")
public func cAudioQueueStop(_ inAQ: AudioQueueRef?, _ inImmediate: UInt8) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueStop", "inAQ") }
    return AudioQueueStop(inAQ, inImmediate != 0)
}

/// C's `AudioQueuePause`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueuePause")
public func cAudioQueuePause(_ inAQ: AudioQueueRef?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueuePause", "inAQ") }
    return AudioQueuePause(inAQ)
}

/// C's `AudioQueueFlush`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueFlush")
public func cAudioQueueFlush(_ inAQ: AudioQueueRef?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueFlush", "inAQ") }
    return AudioQueueFlush(inAQ)
}

/// C's `AudioQueueReset`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueReset")
public func cAudioQueueReset(_ inAQ: AudioQueueRef?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueReset", "inAQ") }
    return AudioQueueReset(inAQ)
}

/// C's `AudioQueueGetParameter`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueGetParameter")
public func cAudioQueueGetParameter(_ inAQ: AudioQueueRef?, _ inParamID: AudioQueueParameterID,
                             _ outValue: UnsafeMutablePointer<AudioQueueParameterValue>?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueGetParameter", "inAQ") }
    guard let outValue else { return nullArgument("AudioQueueGetParameter", "outValue") }
    return AudioQueueGetParameter(inAQ, inParamID, outValue)
}

/// C's `AudioQueueSetParameter`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueSetParameter")
public func cAudioQueueSetParameter(_ inAQ: AudioQueueRef?, _ inParamID: AudioQueueParameterID,
                             _ inValue: AudioQueueParameterValue) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueSetParameter", "inAQ") }
    return AudioQueueSetParameter(inAQ, inParamID, inValue)
}

/// C's `AudioQueueGetProperty`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueGetProperty")
public func cAudioQueueGetProperty(_ inAQ: AudioQueueRef?, _ inID: AudioQueuePropertyID, _ outData: UnsafeMutableRawPointer?,
                            _ ioDataSize: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueGetProperty", "inAQ") }
    guard let outData else { return nullArgument("AudioQueueGetProperty", "outData") }
    guard let ioDataSize else { return nullArgument("AudioQueueGetProperty", "ioDataSize") }
    guard inID == kAudioQueueProperty_CurrentDevice else { return AudioQueueGetProperty(inAQ, inID, outData, ioDataSize) }
    // Swift assigns an initialized `CFString?`; C's variable is uninitialized: read into a Swift
    // variable and hand C a reference it owns (Apple's Copy rule for this property).
    var device: CFString?
    let status = withUnsafeMutablePointer(to: &device) { AudioQueueGetProperty(inAQ, inID, $0, ioDataSize) }
    if status == noErr { outData.storeBytes(of: device.map(cfCreated), as: OpaquePointer?.self) }
    return status
}

/// C's `AudioQueueSetProperty`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueSetProperty")
public func cAudioQueueSetProperty(_ inAQ: AudioQueueRef?, _ inID: AudioQueuePropertyID, _ inData: UnsafeRawPointer?,
                            _ inDataSize: UInt32) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueSetProperty", "inAQ") }
    guard let inData else { return nullArgument("AudioQueueSetProperty", "inData") }
    return AudioQueueSetProperty(inAQ, inID, inData, inDataSize)
}

/// C's `AudioQueueGetPropertySize`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueGetPropertySize")
public func cAudioQueueGetPropertySize(_ inAQ: AudioQueueRef?, _ inID: AudioQueuePropertyID,
                                _ outDataSize: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueGetPropertySize", "inAQ") }
    guard let outDataSize else { return nullArgument("AudioQueueGetPropertySize", "outDataSize") }
    return AudioQueueGetPropertySize(inAQ, inID, outDataSize)
}

/// C's `AudioQueueAddPropertyListener`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueAddPropertyListener")
public func cAudioQueueAddPropertyListener(_ inAQ: AudioQueueRef?, _ inID: AudioQueuePropertyID,
                                    _ inProc: AudioQueuePropertyListenerProc?, _ inUserData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueAddPropertyListener", "inAQ") }
    guard let inProc else { return nullArgument("AudioQueueAddPropertyListener", "inProc") }
    return AudioQueueAddPropertyListener(inAQ, inID, inProc, inUserData)
}

/// C's `AudioQueueRemovePropertyListener`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueRemovePropertyListener")
public func cAudioQueueRemovePropertyListener(_ inAQ: AudioQueueRef?, _ inID: AudioQueuePropertyID,
                                       _ inProc: AudioQueuePropertyListenerProc?, _ inUserData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueRemovePropertyListener", "inAQ") }
    guard let inProc else { return nullArgument("AudioQueueRemovePropertyListener", "inProc") }
    return AudioQueueRemovePropertyListener(inAQ, inID, inProc, inUserData)
}

/// C's `AudioQueueCreateTimeline`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueCreateTimeline")
public func cAudioQueueCreateTimeline(_ inAQ: AudioQueueRef?, _ outTimeline: UnsafeMutablePointer<AudioQueueTimelineRef?>?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueCreateTimeline", "inAQ") }
    guard let outTimeline else { return nullArgument("AudioQueueCreateTimeline", "outTimeline") }
    return AudioQueueCreateTimeline(inAQ, outTimeline)
}

/// C's `AudioQueueDisposeTimeline`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueDisposeTimeline")
public func cAudioQueueDisposeTimeline(_ inAQ: AudioQueueRef?, _ inTimeline: AudioQueueTimelineRef?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueDisposeTimeline", "inAQ") }
    guard let inTimeline else { return nullArgument("AudioQueueDisposeTimeline", "inTimeline") }
    return AudioQueueDisposeTimeline(inAQ, inTimeline)
}

/// C's `AudioQueueGetCurrentTime`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueGetCurrentTime")
public func cAudioQueueGetCurrentTime(_ inAQ: AudioQueueRef?, _ inTimeline: AudioQueueTimelineRef?,
                               _ outTimeStamp: UnsafeMutablePointer<AudioTimeStamp>?,
                               _ outTimelineDiscontinuity: UnsafeMutablePointer<UInt8>?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueGetCurrentTime", "inAQ") }
    guard let outTimelineDiscontinuity else { return AudioQueueGetCurrentTime(inAQ, inTimeline, outTimeStamp, nil) }
    var discontinuity = DarwinBoolean(false)
    let status = AudioQueueGetCurrentTime(inAQ, inTimeline, outTimeStamp, &discontinuity)
    if status == noErr { outTimelineDiscontinuity.pointee = discontinuity.rawValue }
    return status
}

/// C's `AudioQueueDeviceGetCurrentTime`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueDeviceGetCurrentTime")
public func cAudioQueueDeviceGetCurrentTime(_ inAQ: AudioQueueRef?, _ outTimeStamp: UnsafeMutablePointer<AudioTimeStamp>?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueDeviceGetCurrentTime", "inAQ") }
    guard let outTimeStamp else { return nullArgument("AudioQueueDeviceGetCurrentTime", "outTimeStamp") }
    return AudioQueueDeviceGetCurrentTime(inAQ, outTimeStamp)
}

/// C's `AudioQueueDeviceGetNearestStartTime`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueDeviceGetNearestStartTime")
public func cAudioQueueDeviceGetNearestStartTime(_ inAQ: AudioQueueRef?, _ ioRequestedStartTime: UnsafeMutablePointer<AudioTimeStamp>?,
                                          _ inFlags: UInt32) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueDeviceGetNearestStartTime", "inAQ") }
    guard let ioRequestedStartTime else { return nullArgument("AudioQueueDeviceGetNearestStartTime", "ioRequestedStartTime") }
    return AudioQueueDeviceGetNearestStartTime(inAQ, ioRequestedStartTime, inFlags)
}

/// C's `AudioQueueDeviceTranslateTime`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueDeviceTranslateTime")
public func cAudioQueueDeviceTranslateTime(_ inAQ: AudioQueueRef?, _ inTime: UnsafePointer<AudioTimeStamp>?,
                                    _ outTime: UnsafeMutablePointer<AudioTimeStamp>?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueDeviceTranslateTime", "inAQ") }
    guard let inTime else { return nullArgument("AudioQueueDeviceTranslateTime", "inTime") }
    guard let outTime else { return nullArgument("AudioQueueDeviceTranslateTime", "outTime") }
    return AudioQueueDeviceTranslateTime(inAQ, inTime, outTime)
}

/// C's `AudioQueueSetOfflineRenderFormat`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueSetOfflineRenderFormat")
public func cAudioQueueSetOfflineRenderFormat(_ inAQ: AudioQueueRef?, _ inFormat: UnsafePointer<AudioStreamBasicDescription>?,
                                       _ inLayout: UnsafePointer<AudioChannelLayout>?) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueSetOfflineRenderFormat", "inAQ") }
    return AudioQueueSetOfflineRenderFormat(inAQ, inFormat, inLayout)
}

/// C's `AudioQueueOfflineRender`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueOfflineRender")
public func cAudioQueueOfflineRender(_ inAQ: AudioQueueRef?, _ inTimestamp: UnsafePointer<AudioTimeStamp>?,
                              _ ioBuffer: AudioQueueBufferRef?, _ inNumberFrames: UInt32) -> OSStatus {
    guard let inAQ else { return nullArgument("AudioQueueOfflineRender", "inAQ") }
    guard let inTimestamp else { return nullArgument("AudioQueueOfflineRender", "inTimestamp") }
    guard let ioBuffer else { return nullArgument("AudioQueueOfflineRender", "ioBuffer") }
    return AudioQueueOfflineRender(inAQ, inTimestamp, ioBuffer, inNumberFrames)
}

/// The calling thread's copy of the last error message, freed when replaced or when the thread ends.
nonisolated(unsafe) private var messageKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { free($0) }
    return key
}()

/// C's `AudioQueueCompatLastErrorMessage`, declared and documented in `<AudioToolbox/AudioQueue.h>`: the Swift function of the same name.
@_cdecl("AudioQueueCompatLastErrorMessage")
public func cAudioQueueCompatLastErrorMessage() -> UnsafePointer<CChar>? {
    free(pthread_getspecific(messageKey))
    pthread_setspecific(messageKey, nil)
    guard let message = AudioQueueCompatLastErrorMessage(), let copy = strdup(message) else { return nil }
    pthread_setspecific(messageKey, copy)
    return UnsafePointer(copy)
}
