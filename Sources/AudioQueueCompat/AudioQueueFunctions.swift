import Dispatch
import Lockstep

// Audio Queue Services' functions with Apple's names and Swift-imported signatures. Each looks up
// its queue (an unknown or disposed-of reference returns kAudio_ParamError), does the work on the
// Lockstep engine, and returns noErr or the documented result code;
// AudioQueueCompatLastErrorMessage() says why a call failed.

private func withQueue(_ ref: AudioQueueRef, _ body: (CompatQueue) throws(AudioQueueError) -> Void) -> OSStatus {
    status { () throws(AudioQueueError) in try body(try QueueRegistry.shared.queue(ref)) }
}

/// Creates a queue whose C callbacks run on `runLoop` (posted there), or on the callback thread
/// when nil.
private func newQueue(_ format: UnsafePointer<AudioStreamBasicDescription>, _ callback: CompatQueue.Callback,
                      _ userData: UnsafeMutableRawPointer?, _ flags: UInt32,
                      _ out: UnsafeMutablePointer<AudioQueueRef?>, runLoop: (CFRunLoop, CFString?)? = nil) -> OSStatus {
    status { () throws(AudioQueueError) in
        guard flags == 0 else { throw AudioQueueError(kAudio_ParamError, "inFlags is reserved and must be 0") }
        if let made = CompressedFormat.make(format.pointee) {
            let compressed = try made.get()
            let queue = CompatQueue(format: compressed.pcmLayout, compressed: compressed, callback: callback, userData: userData,
                                    runLoop: runLoop)
            if case .output = callback {} else if case .outputBlock = callback {} else {
                do throws(AudioQueueError) { try queue.prepareEncoding(compressed) } catch {
                    queue.detachRunLoopSource()
                    throw error
                }
            }
            QueueRegistry.shared.add(queue)
            out.pointee = queue.ref
            return
        }
        switch LinearPCMLayout.make(format.pointee) {
        case .failure(let error):
            throw error
        case .success(let layout):
            let queue = CompatQueue(format: layout, callback: callback, userData: userData, runLoop: runLoop)
            QueueRegistry.shared.add(queue)
            out.pointee = queue.ref
        }
    }
}

/// Creates a playback queue. The corresponding Apple function is `AudioQueueNewOutput`.
///
/// The queue plays linear PCM in `inFormat` (any rate: the engine converts; 16/24/32-bit integer
/// or 32/64-bit float, either byte order, interleaved). It connects to the default device
/// (``AudioQueueDefaultDevice``) when it first needs it — or renders offline after
/// ``AudioQueueSetOfflineRenderFormat(_:_:_:)``.
///
/// Callbacks and property listeners run as on Apple: with a run loop (`CFRunLoopGetCurrent()`),
/// on that run loop's thread while it runs in `inCallbackRunLoopMode` (nil: the common modes),
/// posted there by the queue's callback thread (see ``CFRunLoop``); with nil, on the queue's own
/// callback thread. Offline rendering runs them inside ``AudioQueueOfflineRender(_:_:_:_:)``.
/// The C API's `AudioQueueNewOutput` is this function.
/// - Returns: ``kAudioFormatUnsupportedDataFormatError`` for compressed, non-interleaved or
///   malformed formats; ``kAudio_ParamError`` if `inFlags` is not 0.
@discardableResult
public func AudioQueueNewOutput(_ inFormat: UnsafePointer<AudioStreamBasicDescription>,
                                _ inCallbackProc: AudioQueueOutputCallback, _ inUserData: UnsafeMutableRawPointer?,
                                _ inCallbackRunLoop: CFRunLoop?, _ inCallbackRunLoopMode: CFString?, _ inFlags: UInt32,
                                _ outAQ: UnsafeMutablePointer<AudioQueueRef?>) -> OSStatus {
    newQueue(inFormat, .output(inCallbackProc), inUserData, inFlags, outAQ,
             runLoop: inCallbackRunLoop.map { ($0, inCallbackRunLoopMode) })
}

/// Creates a recording queue. The corresponding Apple function is `AudioQueueNewInput`.
///
/// The queue records the default device's inputs (JACK: the client's `in_N` ports) in
/// `inFormat`: its sample encoding and byte order, and its rate — another rate than the device's
/// is converted (libsoxr) on the callback thread. Callbacks and listeners run on
/// `inCallbackRunLoop`'s thread, or on the queue's callback thread when it is nil, as for
/// ``AudioQueueNewOutput(_:_:_:_:_:_:_:)``. The C API's `AudioQueueNewInput` is this function.
/// - Returns: ``kAudioFormatUnsupportedDataFormatError`` for formats a queue cannot record;
///   ``kAudio_ParamError`` if `inFlags` is not 0.
@discardableResult
public func AudioQueueNewInput(_ inFormat: UnsafePointer<AudioStreamBasicDescription>,
                               _ inCallbackProc: AudioQueueInputCallback, _ inUserData: UnsafeMutableRawPointer?,
                               _ inCallbackRunLoop: CFRunLoop?, _ inCallbackRunLoopMode: CFString?, _ inFlags: UInt32,
                               _ outAQ: UnsafeMutablePointer<AudioQueueRef?>) -> OSStatus {
    newQueue(inFormat, .input(inCallbackProc), inUserData, inFlags, outAQ,
             runLoop: inCallbackRunLoop.map { ($0, inCallbackRunLoopMode) })
}

/// Creates a playback queue whose callback is a block run on `inCallbackDispatchQueue`. The
/// corresponding Apple function is `AudioQueueNewOutputWithDispatchQueue`.
///
/// The block runs asynchronously on the dispatch queue (synchronously, before the render returns,
/// for an offline device — so don't render from that same dispatch queue). Otherwise as
/// ``AudioQueueNewOutput(_:_:_:_:_:_:_:)``.
@discardableResult
public func AudioQueueNewOutputWithDispatchQueue(_ outAQ: UnsafeMutablePointer<AudioQueueRef?>,
                                                 _ inFormat: UnsafePointer<AudioStreamBasicDescription>, _ inFlags: UInt32,
                                                 _ inCallbackDispatchQueue: DispatchQueue,
                                                 _ inCallbackBlock: @escaping AudioQueueOutputCallbackBlock) -> OSStatus {
    newQueue(inFormat, .outputBlock(inCallbackBlock, inCallbackDispatchQueue), nil, inFlags, outAQ)
}

/// Creates a recording queue whose callback is a block run on `inCallbackDispatchQueue`. The
/// corresponding Apple function is `AudioQueueNewInputWithDispatchQueue`; see
/// ``AudioQueueNewOutputWithDispatchQueue(_:_:_:_:_:)`` for how the block is run.
@discardableResult
public func AudioQueueNewInputWithDispatchQueue(_ outAQ: UnsafeMutablePointer<AudioQueueRef?>,
                                                _ inFormat: UnsafePointer<AudioStreamBasicDescription>, _ inFlags: UInt32,
                                                _ inCallbackDispatchQueue: DispatchQueue,
                                                _ inCallbackBlock: @escaping AudioQueueInputCallbackBlock) -> OSStatus {
    newQueue(inFormat, .inputBlock(inCallbackBlock, inCallbackDispatchQueue), nil, inFlags, outAQ)
}

/// ``AudioQueueNewOutputWithDispatchQueue(_:_:_:_:_:)`` on any ``CallbackDispatchQueue``: the C
/// API's, whose queue is a C program's `dispatch_queue_t`.
package func AudioQueueNewOutputWithDispatchQueue(_ outAQ: UnsafeMutablePointer<AudioQueueRef?>,
                                                  _ inFormat: UnsafePointer<AudioStreamBasicDescription>, _ inFlags: UInt32,
                                                  _ inCallbackDispatchQueue: any CallbackDispatchQueue,
                                                  _ inCallbackBlock: @escaping AudioQueueOutputCallbackBlock) -> OSStatus {
    newQueue(inFormat, .outputBlock(inCallbackBlock, inCallbackDispatchQueue), nil, inFlags, outAQ)
}

/// ``AudioQueueNewInputWithDispatchQueue(_:_:_:_:_:)`` on any ``CallbackDispatchQueue``: the C
/// API's, whose queue is a C program's `dispatch_queue_t`.
package func AudioQueueNewInputWithDispatchQueue(_ outAQ: UnsafeMutablePointer<AudioQueueRef?>,
                                                 _ inFormat: UnsafePointer<AudioStreamBasicDescription>, _ inFlags: UInt32,
                                                 _ inCallbackDispatchQueue: any CallbackDispatchQueue,
                                                 _ inCallbackBlock: @escaping AudioQueueInputCallbackBlock) -> OSStatus {
    newQueue(inFormat, .inputBlock(inCallbackBlock, inCallbackDispatchQueue), nil, inFlags, outAQ)
}

/// Disposes of a queue and its buffers. The corresponding Apple function is `AudioQueueDispose`.
///
/// `true`: at once, no more callbacks. `false`: a running playback queue first plays what is
/// enqueued (with callbacks); meanwhile calls return ``kAudioQueueErr_DisposalPending``.
@discardableResult
public func AudioQueueDispose(_ inAQ: AudioQueueRef, _ inImmediate: Bool) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in
        if try queue.dispose(immediately: inImmediate) { QueueRegistry.shared.remove(queue) }
    }
}

/// Allocates a buffer of `inBufferByteSize` bytes. The corresponding Apple function is
/// `AudioQueueAllocateBuffer`.
/// - Returns: ``kAudioQueueErr_DisposalPending``, ``kAudioQueueErr_InvalidParameter`` above 1 GiB.
@discardableResult
public func AudioQueueAllocateBuffer(_ inAQ: AudioQueueRef, _ inBufferByteSize: UInt32,
                                     _ outBuffer: UnsafeMutablePointer<AudioQueueBufferRef?>) -> OSStatus {
    AudioQueueAllocateBufferWithPacketDescriptions(inAQ, inBufferByteSize, 0, outBuffer)
}

/// Allocates a buffer with room for packet descriptions (linear PCM needs none). The
/// corresponding Apple function is `AudioQueueAllocateBufferWithPacketDescriptions`.
@discardableResult
public func AudioQueueAllocateBufferWithPacketDescriptions(_ inAQ: AudioQueueRef, _ inBufferByteSize: UInt32,
                                                           _ inNumberPacketDescriptions: UInt32,
                                                           _ outBuffer: UnsafeMutablePointer<AudioQueueBufferRef?>) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in
        outBuffer.pointee = try queue.allocateBuffer(byteSize: inBufferByteSize, packetDescriptions: inNumberPacketDescriptions)
    }
}

/// Frees a buffer. The corresponding Apple function is `AudioQueueFreeBuffer`.
/// - Returns: ``kAudioQueueErr_InvalidBuffer`` (not this queue's), ``kAudioQueueErr_BufferInQueue``
///   (still enqueued).
@discardableResult
public func AudioQueueFreeBuffer(_ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.freeBuffer(inBuffer) }
}

/// Enqueues a buffer: filled, for playback; to be filled, for recording. The corresponding Apple
/// function is `AudioQueueEnqueueBuffer`.
///
/// Copies `mAudioDataByteSize` bytes into the engine (byte-swapping big-endian formats) on the
/// calling thread. Packet descriptions are ignored for linear PCM. A queue of a compressed format
/// decodes the buffer's packets here, on the calling thread (never the realtime one), into the
/// decode buffer ahead of the device: `inPacketDescs` (or, when NULL, the buffer's own
/// `mPacketDescriptions`) say where each packet is; formats of constant packet size (IMA4,
/// µ-law, a-law) need none. Trims count decoded frames.
/// - Returns: ``kAudioQueueErr_InvalidBuffer``, ``kAudioQueueErr_BufferEnqueuedTwice``,
///   ``kAudioQueueErr_BufferEmpty`` (playback, size 0), ``kAudioQueueErr_InvalidParameter``
///   (size not whole frames or above capacity), ``kAudioQueueErr_DisposalPending``; compressed:
///   ``kAudio_ParamError`` (descriptions missing or outside the data),
///   ``kAudioFormatUnsupportedDataFormatError`` (a packet the codec cannot decode, or ALAC without
///   its magic cookie).
@discardableResult
public func AudioQueueEnqueueBuffer(_ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef, _ inNumPacketDescs: UInt32,
                                    _ inPacketDescs: UnsafePointer<AudioStreamPacketDescription>?) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in
        _ = try queue.enqueue(inBuffer, packets: PacketList(count: inNumPacketDescs, descriptions: inPacketDescs),
                              startTime: nil, trimStart: 0, trimEnd: 0, parameters: [], withParameters: false)
    }
}

/// Enqueues a playback buffer with a start time, trims and parameter values. The corresponding
/// Apple function is `AudioQueueEnqueueBufferWithParameters`.
///
/// `inStartTime.mSampleTime` is queue time (frames since the queue started); start times must
/// ascend. Queues started at one device time with buffers at one queue time play in sample sync.
/// - Returns: as ``AudioQueueEnqueueBuffer(_:_:_:_:)``, plus ``kAudioQueueErr_InvalidQueueType``
///   for input queues and ``kAudioQueueErr_InvalidParameter`` for trims that leave no frame, a
///   start time before the previous buffer's end, or a parameter other than Volume in 0…1.
@discardableResult
public func AudioQueueEnqueueBufferWithParameters(
    _ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef, _ inNumPacketDescs: UInt32,
    _ inPacketDescs: UnsafePointer<AudioStreamPacketDescription>?, _ inTrimFramesAtStart: UInt32,
    _ inTrimFramesAtEnd: UInt32, _ inNumParamValues: UInt32, _ inParamValues: UnsafePointer<AudioQueueParameterEvent>?,
    _ inStartTime: UnsafePointer<AudioTimeStamp>?, _ outActualStartTime: UnsafeMutablePointer<AudioTimeStamp>?
) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in
        if inNumParamValues > 0 && inParamValues == nil {
            throw AudioQueueError(kAudio_ParamError, "inNumParamValues is \(inNumParamValues) but inParamValues is NULL")
        }
        let parameters = inParamValues.map { Array(UnsafeBufferPointer(start: $0, count: Int(inNumParamValues))) } ?? []
        let start = try queue.enqueue(inBuffer, packets: PacketList(count: inNumPacketDescs, descriptions: inPacketDescs),
                                      startTime: inStartTime?.pointee, trimStart: inTrimFramesAtStart,
                                      trimEnd: inTrimFramesAtEnd, parameters: parameters, withParameters: true)
        if let outActualStartTime {
            var stamp = AudioTimeStamp()
            stamp.mSampleTime = Double(start)
            stamp.mFlags = .sampleTimeValid
            outActualStartTime.pointee = stamp
        }
    }
}

/// Starts (or resumes) playing or recording. The corresponding Apple function is `AudioQueueStart`.
///
/// `inStartTime` is a device time (`mSampleTime`, or `mHostTime` if only that is valid); NULL
/// starts with the next rendered frame. Starts the device if needed.
/// - Returns: ``kAudioQueueErr_InvalidDevice`` when the default device cannot be opened (no JACK
///   server), ``kAudioQueueErr_CannotStart``, ``kAudioFormatUnsupportedDataFormatError`` for a
///   rate the converter cannot handle.
@discardableResult
public func AudioQueueStart(_ inAQ: AudioQueueRef, _ inStartTime: UnsafePointer<AudioTimeStamp>?) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.start(inStartTime?.pointee) }
}

/// Prepares enqueued buffers for playback. The corresponding Apple function is `AudioQueuePrime`.
///
/// Buffers are converted when enqueued, so this reports the frames enqueued and returns at once.
/// - Returns: ``kAudioQueueErr_InvalidQueueType`` for input queues.
@discardableResult
public func AudioQueuePrime(_ inAQ: AudioQueueRef, _ inNumberOfFramesToPrepare: UInt32,
                            _ outNumberOfFramesPrepared: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in
        let prepared = try queue.prime(frames: inNumberOfFramesToPrepare)
        outNumberOfFramesPrepared?.pointee = prepared
    }
}

/// Makes sure everything enqueued is played, including what a rate converter holds back. The
/// corresponding Apple function is `AudioQueueFlush`.
@discardableResult
public func AudioQueueFlush(_ inAQ: AudioQueueRef) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.flush() }
}

/// Stops playing or recording. The corresponding Apple function is `AudioQueueStop`.
///
/// `true`: stops now and, as on Apple, returns only once the stop's callbacks have run (every
/// enqueued playback buffer handed back; the last recorded buffer delivered) — except when called
/// from a callback or on an offline device. `false`: the queue plays or records what is enqueued,
/// then stops; the is-running listener says when.
@discardableResult
public func AudioQueueStop(_ inAQ: AudioQueueRef, _ inImmediate: Bool) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.stop(immediately: inImmediate) }
}

/// Pauses; ``AudioQueueStart(_:_:)`` resumes. The corresponding Apple function is `AudioQueuePause`.
@discardableResult
public func AudioQueuePause(_ inAQ: AudioQueueRef) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.pause() }
}

/// Hands every enqueued buffer back through the callback without stopping. The corresponding
/// Apple function is `AudioQueueReset`.
@discardableResult
public func AudioQueueReset(_ inAQ: AudioQueueRef) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.reset() }
}

/// Reads a parameter (``kAudioQueueParam_Volume``). The corresponding Apple function is
/// `AudioQueueGetParameter`.
/// - Returns: ``kAudioQueueErr_InvalidParameter`` for other IDs; ``kAudioQueueErr_InvalidQueueType``
///   for input queues.
@discardableResult
public func AudioQueueGetParameter(_ inAQ: AudioQueueRef, _ inParamID: AudioQueueParameterID,
                                   _ outValue: UnsafeMutablePointer<AudioQueueParameterValue>) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in outValue.pointee = try queue.parameter(inParamID) }
}

/// Sets a parameter at once (ramped over 5 ms). The corresponding Apple function is
/// `AudioQueueSetParameter`.
/// - Returns: ``kAudioQueueErr_InvalidParameter`` for other IDs or a volume outside 0…1;
///   ``kAudioQueueErr_InvalidQueueType`` for input queues.
@discardableResult
public func AudioQueueSetParameter(_ inAQ: AudioQueueRef, _ inParamID: AudioQueueParameterID,
                                   _ inValue: AudioQueueParameterValue) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.setParameter(inParamID, inValue) }
}

/// Reads a property into `outData` (at most `ioDataSize` bytes; on return the size written). The
/// corresponding Apple function is `AudioQueueGetProperty`.
/// - Returns: ``kAudioQueueErr_InvalidProperty`` for unknown IDs (and the meters while metering is
///   off), ``kAudioQueueErr_InvalidPropertySize`` when `ioDataSize` is too small.
@discardableResult
public func AudioQueueGetProperty(_ inAQ: AudioQueueRef, _ inID: AudioQueuePropertyID, _ outData: UnsafeMutableRawPointer,
                                  _ ioDataSize: UnsafeMutablePointer<UInt32>) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.property(inID, outData, &ioDataSize.pointee) }
}

/// Sets a property. The corresponding Apple function is `AudioQueueSetProperty`.
/// - Returns: ``kAudioQueueErr_InvalidProperty`` for unknown or read-only IDs,
///   ``kAudioQueueErr_InvalidPropertySize`` for a wrong size, ``kAudioQueueErr_InvalidPropertyValue``
///   for a channel layout whose channel count differs from the format's.
@discardableResult
public func AudioQueueSetProperty(_ inAQ: AudioQueueRef, _ inID: AudioQueuePropertyID, _ inData: UnsafeRawPointer,
                                  _ inDataSize: UInt32) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.setProperty(inID, inData, inDataSize) }
}

/// The size of a property's value. The corresponding Apple function is `AudioQueueGetPropertySize`.
/// - Returns: ``kAudioQueueErr_InvalidProperty`` for unknown IDs.
@discardableResult
public func AudioQueueGetPropertySize(_ inAQ: AudioQueueRef, _ inID: AudioQueuePropertyID,
                                      _ outDataSize: UnsafeMutablePointer<UInt32>) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in outDataSize.pointee = try queue.propertySize(inID) }
}

/// Calls `inProc` (on the callback thread) whenever the property changes — for
/// ``kAudioQueueProperty_IsRunning``, when the queue really starts and stops. The corresponding
/// Apple function is `AudioQueueAddPropertyListener`.
/// - Returns: ``kAudioQueueErr_InvalidProperty`` for unknown IDs and the level meters.
@discardableResult
public func AudioQueueAddPropertyListener(_ inAQ: AudioQueueRef, _ inID: AudioQueuePropertyID,
                                          _ inProc: AudioQueuePropertyListenerProc,
                                          _ inUserData: UnsafeMutableRawPointer?) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.addListener(inID, inProc, inUserData) }
}

/// Removes a listener added with the same ID, function and user data. The corresponding Apple
/// function is `AudioQueueRemovePropertyListener`.
/// - Returns: ``kAudio_ParamError`` when no such listener is registered.
@discardableResult
public func AudioQueueRemovePropertyListener(_ inAQ: AudioQueueRef, _ inID: AudioQueuePropertyID,
                                             _ inProc: AudioQueuePropertyListenerProc,
                                             _ inUserData: UnsafeMutableRawPointer?) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.removeListener(inID, inProc, inUserData) }
}

/// Creates a timeline that reports discontinuities. The corresponding Apple function is
/// `AudioQueueCreateTimeline`.
/// - Returns: ``kAudioQueueErr_InvalidQueueType`` for input queues.
@discardableResult
public func AudioQueueCreateTimeline(_ inAQ: AudioQueueRef, _ outTimeline: UnsafeMutablePointer<AudioQueueTimelineRef?>) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in outTimeline.pointee = try queue.makeTimeline() }
}

/// Disposes of a timeline. The corresponding Apple function is `AudioQueueDisposeTimeline`.
/// - Returns: ``kAudio_ParamError`` for a timeline of another queue.
@discardableResult
public func AudioQueueDisposeTimeline(_ inAQ: AudioQueueRef, _ inTimeline: AudioQueueTimelineRef) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.disposeTimeline(inTimeline) }
}

/// The queue's current time: `mSampleTime` in frames since it started (pauses excluded). The
/// corresponding Apple function is `AudioQueueGetCurrentTime`.
///
/// With a timeline, `outTimelineDiscontinuity` says whether an underrun, xrun or device change
/// happened since the last call.
@discardableResult
public func AudioQueueGetCurrentTime(_ inAQ: AudioQueueRef, _ inTimeline: AudioQueueTimelineRef?,
                                     _ outTimeStamp: UnsafeMutablePointer<AudioTimeStamp>?,
                                     _ outTimelineDiscontinuity: UnsafeMutablePointer<DarwinBoolean>?) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in
        let (stamp, discontinuity) = try queue.currentTime(timeline: inTimeline)
        outTimeStamp?.pointee = stamp
        outTimelineDiscontinuity?.pointee = DarwinBoolean(discontinuity)
    }
}

/// The device's current time (only `mHostTime` is valid while the device is stopped). The
/// corresponding Apple function is `AudioQueueDeviceGetCurrentTime`.
@discardableResult
public func AudioQueueDeviceGetCurrentTime(_ inAQ: AudioQueueRef, _ outTimeStamp: UnsafeMutablePointer<AudioTimeStamp>) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in outTimeStamp.pointee = try queue.deviceCurrentTime() }
}

/// The earliest device time at or after the requested one at which a start is honoured on that
/// exact frame. The corresponding Apple function is `AudioQueueDeviceGetNearestStartTime`.
/// - Returns: ``kAudioQueueErr_InvalidRunState`` when the device is not running.
@discardableResult
public func AudioQueueDeviceGetNearestStartTime(_ inAQ: AudioQueueRef,
                                                _ ioRequestedStartTime: UnsafeMutablePointer<AudioTimeStamp>,
                                                _ inFlags: UInt32) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.nearestStartTime(&ioRequestedStartTime.pointee) }
}

/// Converts a device time between sample time and host time. The corresponding Apple function
/// is `AudioQueueDeviceTranslateTime`.
/// - Returns: ``kAudioQueueErr_InvalidRunState`` when the device is not running;
///   ``kAudio_ParamError`` when `inTime` has neither time valid.
@discardableResult
public func AudioQueueDeviceTranslateTime(_ inAQ: AudioQueueRef, _ inTime: UnsafePointer<AudioTimeStamp>,
                                          _ outTime: UnsafeMutablePointer<AudioTimeStamp>) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in outTime.pointee = try queue.translate(inTime.pointee) }
}

/// Switches a playback queue to offline rendering in `inFormat` (linear PCM), or back to the
/// device with NULL. The corresponding Apple function is `AudioQueueSetOfflineRenderFormat`.
///
/// An offline queue renders alone, on a private engine and ``OfflineDevice``, only when
/// ``AudioQueueOfflineRender(_:_:_:_:)`` asks; buffers enqueued before the switch carry over.
/// - Returns: ``kAudioQueueErr_InvalidQueueType`` (input queue), ``kAudioQueueErr_InvalidRunState``
///   (running), ``kAudioFormatUnsupportedDataFormatError`` (not linear PCM).
@discardableResult
public func AudioQueueSetOfflineRenderFormat(_ inAQ: AudioQueueRef, _ inFormat: UnsafePointer<AudioStreamBasicDescription>?,
                                             _ inLayout: UnsafePointer<AudioChannelLayout>?) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.setOfflineRenderFormat(inFormat?.pointee, inLayout) }
}

/// Renders the next `inNumberFrames` frames of an offline queue into `ioBuffer` (in the offline
/// format) and delivers the callbacks they cause before returning. The corresponding Apple
/// function is `AudioQueueOfflineRender`.
///
/// `inTimestamp.mSampleTime` is the render position: a time ahead of the last rendered frame
/// renders and discards the gap; 0 frames does nothing.
/// - Returns: ``kAudioQueueErr_InvalidOfflineMode`` (not offline), ``kAudioQueueErr_InvalidBuffer``
///   (not this queue's), ``kAudioQueueErr_InvalidParameter`` (frames do not fit the buffer).
@discardableResult
public func AudioQueueOfflineRender(_ inAQ: AudioQueueRef, _ inTimestamp: UnsafePointer<AudioTimeStamp>,
                                    _ ioBuffer: AudioQueueBufferRef, _ inNumberFrames: UInt32) -> OSStatus {
    withQueue(inAQ) { queue throws(AudioQueueError) in try queue.offlineRender(inTimestamp.pointee, into: ioBuffer, frames: inNumberFrames) }
}
