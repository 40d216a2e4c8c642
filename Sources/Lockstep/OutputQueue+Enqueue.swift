import Dispatch
import Synchronization

/// Enqueueing buffers: conversion to the device's format and rate, start times, trims.
extension OutputQueue {
    /// Enqueues a filled buffer: Audio Queue's `AudioQueueEnqueueBuffer` and
    /// `AudioQueueEnqueueBufferWithParameters`.
    ///
    /// - Parameters:
    ///   - buffer: a buffer of this queue holding ``QueueBuffer/byteSize`` bytes of audio.
    ///   - startTime: when the buffer's first (untrimmed) frame plays, in queue sample time (frames
    ///     at the queue's rate since the queue started); nil to follow the previous buffer
    ///     gaplessly. Start times must ascend: a buffer may not start before the previous one ends.
    ///   - trimFramesAtStart: frames to skip at the start of the buffer.
    ///   - trimFramesAtEnd: frames to skip at the end.
    ///   - parameters: parameter values applied when the buffer starts playing (Volume, Pan, VolumeRampTime).
    /// - Returns: the queue sample time at which the buffer will start playing.
    /// - Throws: ``AudioQueueError/Code/invalidBuffer`` (not this queue's buffer),
    ///   ``AudioQueueError/Code/bufferEnqueuedTwice``, ``AudioQueueError/Code/bufferEmpty``,
    ///   ``AudioQueueError/Code/invalidParameter`` (bad trims, start time before the previous
    ///   buffer's end, bad parameter value), ``AudioQueueError/Code/disposalPending``.
    @discardableResult
    public func enqueue(_ buffer: QueueBuffer, startTime: Int64? = nil, trimFramesAtStart: Int = 0,
                        trimFramesAtEnd: Int = 0, parameters: [ParameterEvent] = []) throws(AudioQueueError) -> Int64
    {
        var volume = Float.nan
        var pan: Float?
        var rampFrames = -1
        for event in parameters {
            try Self.check(event.parameter, event.value)
            switch event.parameter {
            case .volume: volume = event.value
            case .pan: pan = event.value
            case .volumeRampTime: rampFrames = rampFrameCount(seconds: event.value)
            }
        }
        let result: Result<Int64, AudioQueueError> = state.withLock { state in
            if let error = state.pool.enqueueError(buffer) { return .failure(error) }
            guard buffer.byteSize > 0 else {
                return .failure(AudioQueueError(.bufferEmpty,
                    "buffer holds no audio (byteSize 0); fill it and set byteSize or frameCount before enqueueing"))
            }
            guard buffer.byteSize <= buffer.byteCapacity, buffer.byteSize % format.bytesPerFrame == 0 else {
                return .failure(AudioQueueError(.invalidParameter,
                    "buffer byteSize \(buffer.byteSize) is not a whole number of \(format.bytesPerFrame)-byte frames within its \(buffer.byteCapacity)-byte capacity"))
            }
            let frames = buffer.frameCount
            guard trimFramesAtStart >= 0, trimFramesAtEnd >= 0, trimFramesAtStart + trimFramesAtEnd < frames else {
                return .failure(AudioQueueError(.invalidParameter,
                    "trims (\(trimFramesAtStart) at start, \(trimFramesAtEnd) at end) must be non-negative and leave at least one of the buffer's \(frames) frames"))
            }
            var deviceStart: Int64? = nil
            if let startTime {
                guard startTime >= 0 else {
                    return .failure(AudioQueueError(.invalidParameter,
                        "start time \(startTime) is negative; queue sample time starts at 0"))
                }
                let start = toDevice(startTime)
                guard start >= state.nextStart else {
                    return .failure(AudioQueueError(.invalidParameter,
                        "start time \(startTime) is before the end of the previously enqueued audio (\(fromDevice(state.nextStart))); start times must ascend — use a later time or nil to follow gaplessly"))
                }
                deviceStart = start
            }
            let usable = frames - trimFramesAtStart - trimFramesAtEnd
            let source = UnsafeRawPointer(buffer.data) + trimFramesAtStart * format.bytesPerFrame
            let samples = usable * format.channelCount

            // A rate-converted stream that jumps in time: release the converter's tail first.
            if let start = deviceStart, start != state.nextStart, state.converterHasInput {
                if let error = enqueueConverterTail(&state) { return .failure(error) }
            }
            let segment = buffer.segment
            var produced: Int
            if let converter = state.converter {
                if state.scratch.count < samples { state.scratch = [Float](repeating: 0, count: samples) }
                produced = state.scratch.withUnsafeMutableBufferPointer { scratch in
                    PCMCodec.decode(source, format: format.sampleFormat, sampleCount: samples, into: scratch.baseAddress!)
                    return converter.process(scratch.baseAddress!, frames: usable, into: segment.pointee.samples,
                                             capacity: segment.pointee.capacityFrames)
                }
                state.converterHasInput = true
            } else if playsInPlace {
                // Already what the render thread mixes: it reads the buffer itself while enqueued.
                segment.pointee.samples = UnsafeMutableRawPointer(mutating: source).assumingMemoryBound(to: Float.self)
                produced = usable
            } else {
                PCMCodec.decode(source, format: format.sampleFormat, sampleCount: samples, into: segment.pointee.samples)
                produced = usable
            }
            let actualStart = deviceStart ?? state.nextStart
            segment.pointee.frameCount = produced
            segment.pointee.start = deviceStart ?? Segment.follow
            segment.pointee.volume = volume
            segment.pointee.panGains = pan.map(PanLaw.packed) ?? PanLaw.none
            segment.pointee.pan = pan ?? 0
            segment.pointee.rampFrames = rampFrames
            segment.pointee.started = false
            segment.pointee.truncatedFrames = 0
            guard renderState.pointee.commands.push(QueueCommand(kind: .enqueue, segment: segment, time: 0).message) else {
                return .failure(AudioQueueError(.invalidRunState,
                    "queue '\(name)' has too many pending commands; the device is not rendering"))
            }
            buffer.isEnqueued = true
            state.pendingFrames += produced
            state.nextStart = actualStart + Int64(produced)
            return .success(fromDevice(actualStart))
        }
        return try result.get()
    }

    /// Flushes the converter's held frames into an internal segment that follows gaplessly.
    func enqueueConverterTail(_ state: inout UserState) -> AudioQueueError? {
        guard let converter = state.converter, state.converterHasInput else { return nil }
        state.converterHasInput = false
        let capacity = converter.maximumLatencyFrames + 16
        let segment = Segment.allocate(capacityFrames: capacity, channelCount: format.channelCount, owner: nil)
        let produced = converter.flush(into: segment.pointee.samples, capacity: capacity)
        converter.reset()
        guard produced > 0 else { Segment.free(segment); return nil }
        segment.pointee.frameCount = produced
        segment.pointee.start = Segment.follow
        guard renderState.pointee.commands.push(QueueCommand(kind: .enqueue, segment: segment, time: 0).message) else {
            Segment.free(segment)
            return AudioQueueError(.invalidRunState, "queue '\(name)' has too many pending commands; the device is not rendering")
        }
        state.internalSegments.insert(segment)
        state.pendingFrames += produced
        state.nextStart += Int64(produced)
        return nil
    }

    /// What the queue does with a buffer that arrives late, after an underrun: skip its late
    /// part to stay aligned (``LateBufferPolicy/skipToStayAligned``, the default) or play it in
    /// full and let the queue's timeline slide (``LateBufferPolicy/playInFull``, Apple's
    /// behaviour). The underrun is reported either way. Takes effect from the next render cycle.
    ///
    /// Thread safety: any thread except the realtime thread.
    public var lateBufferPolicy: LateBufferPolicy {
        get { renderState.pointee.playsLateInFull.load(ordering: .relaxed) ? .playInFull : .skipToStayAligned }
        set { renderState.pointee.playsLateInFull.store(newValue == .playInFull, ordering: .relaxed) }
    }

    /// Frames of the queue's audio skipped because the device's clock skipped them while the
    /// queue ran (an xrun, which the device reports with its length): under
    /// ``LateBufferPolicy/skipToStayAligned`` the queue keeps every later sample on the time it
    /// was scheduled for; under ``LateBufferPolicy/playInFull`` nothing is skipped and this
    /// stays 0.
    ///
    /// Thread safety: any thread.
    public var skippedFrames: Int64 { renderState.pointee.skippedFrames.load(ordering: .relaxed) }

    /// Queue frames that ``truncate(at:)`` calls reached too late to cut, summed: a truncation
    /// applies at the start of the next render cycle, and when the queue has played past its time
    /// by then, it cuts where the queue is instead. 0 while every cut was in time.
    ///
    /// Thread safety: any thread.
    public var lateCutFrames: Int64 { renderState.pointee.lateCutFrames.load(ordering: .relaxed) }

    /// Whether enqueued buffers play from their own memory: float samples at the device's rate
    /// need no conversion, so the render thread reads the buffer while it is enqueued (Audio
    /// Queue's rule: its contents are the queue's until the callback hands it back).
    var playsInPlace: Bool { ratio == 1 && format.sampleFormat == .float32 }

    func toDevice(_ queueTime: Int64) -> Int64 {
        ratio == 1 ? queueTime : Int64((Double(queueTime) * ratio).rounded())
    }

    func fromDevice(_ deviceFrames: Int64) -> Int64 {
        ratio == 1 ? deviceFrames : Int64((Double(deviceFrames) / ratio).rounded())
    }
}
