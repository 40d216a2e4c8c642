import Lockstep

// Enqueueing: checking a buffer and its start time, trims and parameters, and handing it to the
// engine queue (bound) or keeping it in order until the queue binds.
extension CompatQueue {
    /// Enqueues a buffer; returns the queue time at which it starts playing (output queues).
    ///
    /// A buffer of a compressed format is decoded without the queue's lock (the callback thread,
    /// which every queue of the engine shares, never waits for a decode): enqueues of such a
    /// queue are serialised by ``CompatQueue/decodeOrder`` instead, so packets are decoded in the
    /// order they are enqueued.
    func enqueue(_ ref: AudioQueueBufferRef, packets: PacketList = PacketList(), startTime: AudioTimeStamp?, trimStart: UInt32, trimEnd: UInt32,
                 parameters: [AudioQueueParameterEvent], withParameters: Bool) throws(AudioQueueError) -> Int64 {
        guard isOutput, let compressed else {
            return try enqueueLocked(ref, decoded: nil, startTime: startTime, trimStart: trimStart, trimEnd: trimEnd,
                                     parameters: parameters, withParameters: withParameters)
        }
        return try decodeOrder.withLock { _ throws(AudioQueueError) -> Int64 in
            // What enqueueing checks first, and the decoder (made now if need be, with the cookie
            // set so far), under the lock; the decode outside it.
            let decoder = try state.withLock { (state) throws(AudioQueueError) -> PacketDecoder in
                try check(ref, withParameters: withParameters, &state)
                let bytes = Int(ref.pointee.mAudioDataByteSize)
                guard bytes > 0 else {
                    throw AudioQueueError(.bufferEmpty, "the buffer holds no audio (mAudioDataByteSize is 0); fill it and set mAudioDataByteSize before enqueueing")
                }
                guard bytes <= Int(ref.pointee.mAudioDataBytesCapacity) else {
                    throw AudioQueueError(.invalidParameter, "mAudioDataByteSize \(bytes) exceeds the buffer's \(ref.pointee.mAudioDataBytesCapacity)-byte capacity")
                }
                if let decoder = state.decoder { return decoder }
                let decoder = try PacketDecoder(format: compressed, cookie: state.magicCookie)
                state.decoder = decoder
                return decoder
            }
            let decoded = try decode(ref, packets: packets, format: compressed, decoder: decoder)
            return try enqueueLocked(ref, decoded: decoded, startTime: startTime, trimStart: trimStart, trimEnd: trimEnd,
                                     parameters: parameters, withParameters: withParameters)
        }
    }

    /// Checks that `ref` can be enqueued now: the queue's own, not enqueued, no reset handing
    /// buffers back, parameters only on an output queue. Called with `state` locked.
    private func check(_ ref: AudioQueueBufferRef, withParameters: Bool, _ state: inout State) throws(AudioQueueError) {
        try state.checkDisposal()
        guard let record = state.buffers[ref] else {
            throw AudioQueueError(.invalidBuffer, "the buffer does not belong to this queue (or was freed); enqueue buffers the queue allocated")
        }
        if withParameters && !isOutput {
            throw AudioQueueError(.invalidQueueType, "AudioQueueEnqueueBufferWithParameters is for playback queues; input queues take AudioQueueEnqueueBuffer")
        }
        guard !record.isEnqueued else {
            throw AudioQueueError(.bufferEnqueuedTwice, "the buffer is already enqueued; wait for the callback to hand it back")
        }
        guard state.resetting.isEmpty else {
            throw AudioQueueError(.enqueueDuringReset, "the queue is being reset (AudioQueueReset or AudioQueueStop(true)) and is still handing back \(state.resetting.count) buffers; enqueue after the reset")
        }
    }

    /// Enqueues with `state` locked: `decoded` holds a compressed buffer's PCM (decoded before).
    private func enqueueLocked(_ ref: AudioQueueBufferRef, decoded: [Float]?, startTime: AudioTimeStamp?, trimStart: UInt32, trimEnd: UInt32,
                               parameters: [AudioQueueParameterEvent], withParameters: Bool) throws(AudioQueueError) -> Int64 {
        try state.withLock { (state) throws(AudioQueueError) -> Int64 in
            try check(ref, withParameters: withParameters, &state)
            guard let record = state.buffers[ref] else { return 0 }
            guard isOutput else {
                if let encoding = state.encoding, Int(ref.pointee.mAudioDataBytesCapacity) < encoding.maximumPacketSize {
                    throw AudioQueueError(.invalidBuffer, "a \(ref.pointee.mAudioDataBytesCapacity)-byte buffer cannot hold a \(fourCharCodeString(encoding.format.codec.formatID)) packet (up to \(encoding.maximumPacketSize) bytes); size buffers with kAudioQueueProperty_MaximumOutputPacketSize")
                }
                let item = Enqueue(buffer: ref, startTime: nil, trimStart: 0, trimEnd: 0, parameters: [])
                if state.isBound { _ = try submit(item, &state) }
                state.enqueued.append(item)
                record.isEnqueued = true
                // Converted audio may be waiting: the callback thread fills the buffer now.
                if state.conversion != nil, let engine = state.engine { schedulePump(engine) }
                return 0
            }
            let bytes = Int(ref.pointee.mAudioDataByteSize)
            guard bytes > 0 else {
                throw AudioQueueError(.bufferEmpty, "the buffer holds no audio (mAudioDataByteSize is 0); fill it and set mAudioDataByteSize before enqueueing")
            }
            if decoded == nil && (bytes > Int(ref.pointee.mAudioDataBytesCapacity) || bytes % layout.bytesPerFrame != 0) {
                throw AudioQueueError(.invalidParameter, "mAudioDataByteSize \(bytes) must be a whole number of \(layout.bytesPerFrame)-byte frames within the buffer's \(ref.pointee.mAudioDataBytesCapacity)-byte capacity")
            }
            var events: [ParameterEvent] = []
            for event in parameters {
                guard let parameter = try engineParameter(event.mID, settingTo: event.mValue) else { continue }
                try OutputQueue.check(parameter, event.mValue)
                events.append(ParameterEvent(parameter, event.mValue))
            }
            let start = try queueTime(startTime, state)
            let item = Enqueue(buffer: ref, startTime: start, trimStart: Int(trimStart), trimEnd: Int(trimEnd), parameters: events,
                               decoded: decoded)
            let actual: Int64
            if state.isBound {
                actual = try submit(item, &state)
            } else {
                let frames = item.frames(layout)
                guard Int(trimStart) + Int(trimEnd) < frames else {
                    throw AudioQueueError(.invalidParameter, "trims (\(trimStart) at start, \(trimEnd) at end) must leave at least one of the buffer's \(frames) frames")
                }
                if let start, start < state.pendingEnd {
                    throw AudioQueueError(.invalidParameter, "start time \(start) is before the end of the previously enqueued audio (\(state.pendingEnd)); start times must ascend — use a later time or NULL to follow gaplessly")
                }
                actual = start ?? state.pendingEnd
                state.pendingEnd = actual + Int64(frames - Int(trimStart) - Int(trimEnd))
            }
            state.enqueued.append(item)
            record.isEnqueued = true
            return actual
        }
    }

    /// Decodes a buffer's packets (on the enqueuing thread) into 32-bit float PCM, with the
    /// queue's decoder. Called with ``CompatQueue/decodeOrder`` held, `state` not.
    private func decode(_ ref: AudioQueueBufferRef, packets: PacketList, format: CompressedFormat,
                        decoder: PacketDecoder) throws(AudioQueueError) -> [Float] {
        var descriptions = packets.descriptions
        var count = Int(packets.count)
        if descriptions == nil, let own = ref.pointee.mPacketDescriptions, ref.pointee.mPacketDescriptionCount > 0 {
            descriptions = UnsafePointer(own)
            count = Int(ref.pointee.mPacketDescriptionCount)
        }
        if descriptions == nil, format.bytesPerPacket > 0 { count = Int(ref.pointee.mAudioDataByteSize) / format.bytesPerPacket }
        let ranges = try PacketRanges.make(bytes: Int(ref.pointee.mAudioDataByteSize), count: count, descriptions: descriptions, format: format)
        var output: [Float] = []
        output.reserveCapacity(ranges.count * max(format.framesPerPacket, 1) * format.channelCount)
        let data = UnsafeRawPointer(ref.pointee.mAudioData)
        for range in ranges {
            _ = try decoder.decode(UnsafeRawBufferPointer(start: data + range.lowerBound, count: range.count), into: &output,
                                          status: kAudioFormatUnsupportedDataFormatError)
        }
        guard !output.isEmpty else {
            throw AudioQueueError(.bufferEmpty, "the buffer's \(ranges.count) packets decode to no audio; enqueue whole packets with their descriptions")
        }
        return output
    }

    /// The queue sample time a buffer start time stands for (nil: follow gaplessly). Called with
    /// `state` locked.
    private func queueTime(_ stamp: AudioTimeStamp?, _ state: State) throws(AudioQueueError) -> Int64? {
        guard let stamp else { return nil }
        if stamp.mFlags.contains(.sampleTimeValid) || !stamp.mFlags.contains(.hostTimeValid) {
            guard stamp.mSampleTime.isFinite, stamp.mSampleTime >= 0 else {
                throw AudioQueueError(.invalidParameter, "start time \(stamp.mSampleTime) is negative or not a number; queue sample time starts at 0")
            }
            return Int64(stamp.mSampleTime.rounded())
        }
        guard let output = state.output, let engine = state.engine else {
            throw AudioQueueError(.invalidRunState, "a host-time start needs a running queue; give mSampleTime (queue time) instead")
        }
        let device = engine.sampleTime(forHostTime: stamp.mHostTime)
        return max(0, try output.queueTime(forDeviceSampleTime: device))
    }
}
