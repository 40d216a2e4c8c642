import AudioQueueCompat
import Foundation

// Audio Queue Services' dispatch-queue functions for C (include/AudioToolbox/AudioQueue.h, with
// -fblocks): AudioQueueNewOutputWithDispatchQueue and AudioQueueNewInputWithDispatchQueue are
// macros of the header that call these with the program's own libdispatch functions.

/// The C block of `AudioQueueNewOutputWithDispatchQueue` (`AudioQueueOutputCallbackBlock`).
public typealias CAudioQueueOutputCallbackBlock = @convention(block) (AudioQueueRef, AudioQueueBufferRef) -> Void
/// The C block of `AudioQueueNewInputWithDispatchQueue` (`AudioQueueInputCallbackBlock`).
public typealias CAudioQueueInputCallbackBlock = @convention(block) (
    AudioQueueRef, AudioQueueBufferRef, UnsafePointer<AudioTimeStamp>, UInt32, UnsafePointer<AudioStreamPacketDescription>?) -> Void

/// The arguments every dispatch-queue function checks first, and the program's dispatch queue
/// (retained); nil, with the error recorded, if one is NULL. Not generic: Swift on Linux has no
/// type metadata for a C block type, so the blocks are checked by the callers.
private func dispatchArguments(_ function: String, _ functions: UnsafePointer<AudioQueueCompatDispatchFunctions>?,
                               _ outAQ: UnsafeMutablePointer<AudioQueueRef?>?,
                               _ inFormat: UnsafePointer<AudioStreamBasicDescription>?, _ queue: UnsafeMutableRawPointer?)
    -> (UnsafeMutablePointer<AudioQueueRef?>, UnsafePointer<AudioStreamBasicDescription>, CDispatchQueue)?
{
    let missing = functions == nil ? "the dispatch functions" : outAQ == nil ? "outAQ" : inFormat == nil ? "inFormat"
        : queue == nil ? "inCallbackDispatchQueue" : nil
    if let missing {
        _ = nullArgument(function, missing)
        return nil
    }
    return (outAQ!, inFormat!, CDispatchQueue(queue: queue!, functions: functions!.pointee))
}

/// C's `AudioQueueCompatNewOutputWithDispatchQueue`, declared and documented in
/// `<AudioToolbox/AudioQueue.h>` (whose `AudioQueueNewOutputWithDispatchQueue` calls it with the
/// program's libdispatch): Swift's `AudioQueueNewOutputWithDispatchQueue` on the program's queue.
@_cdecl("AudioQueueCompatNewOutputWithDispatchQueue")
public func cAudioQueueCompatNewOutputWithDispatchQueue(
    _ functions: UnsafePointer<AudioQueueCompatDispatchFunctions>?, _ outAQ: UnsafeMutablePointer<AudioQueueRef?>?,
    _ inFormat: UnsafePointer<AudioStreamBasicDescription>?, _ inFlags: UInt32, _ inCallbackDispatchQueue: UnsafeMutableRawPointer?,
    _ inCallbackBlock: CAudioQueueOutputCallbackBlock?
) -> OSStatus {
    let function = "AudioQueueNewOutputWithDispatchQueue"
    guard let (outAQ, inFormat, dispatch) = dispatchArguments(function, functions, outAQ, inFormat, inCallbackDispatchQueue) else {
        return kAudio_ParamError
    }
    guard let inCallbackBlock else { return nullArgument(function, "inCallbackBlock") }
    return AudioQueueNewOutputWithDispatchQueue(outAQ, inFormat, inFlags, dispatch) { inCallbackBlock($0, $1) }
}

/// C's `AudioQueueCompatNewInputWithDispatchQueue`, declared and documented in
/// `<AudioToolbox/AudioQueue.h>` (whose `AudioQueueNewInputWithDispatchQueue` calls it with the
/// program's libdispatch): Swift's `AudioQueueNewInputWithDispatchQueue` on the program's queue.
@_cdecl("AudioQueueCompatNewInputWithDispatchQueue")
public func cAudioQueueCompatNewInputWithDispatchQueue(
    _ functions: UnsafePointer<AudioQueueCompatDispatchFunctions>?, _ outAQ: UnsafeMutablePointer<AudioQueueRef?>?,
    _ inFormat: UnsafePointer<AudioStreamBasicDescription>?, _ inFlags: UInt32, _ inCallbackDispatchQueue: UnsafeMutableRawPointer?,
    _ inCallbackBlock: CAudioQueueInputCallbackBlock?
) -> OSStatus {
    let function = "AudioQueueNewInputWithDispatchQueue"
    guard let (outAQ, inFormat, dispatch) = dispatchArguments(function, functions, outAQ, inFormat, inCallbackDispatchQueue) else {
        return kAudio_ParamError
    }
    guard let inCallbackBlock else { return nullArgument(function, "inCallbackBlock") }
    return AudioQueueNewInputWithDispatchQueue(outAQ, inFormat, inFlags, dispatch) { inCallbackBlock($0, $1, $2, $3, $4) }
}
