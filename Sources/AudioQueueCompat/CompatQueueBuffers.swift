import Lockstep

// The buffer table: the queue's `AudioQueueBuffer`s (memory of this layer, allocated and freed
// here), each with its engine buffer while bound and whether it is enqueued.
extension CompatQueue {
    /// One buffer of the queue: its C struct, the engine buffer that carries its audio while the
    /// queue is bound, and whether it is enqueued. Guarded by the queue's `state`.
    final class BufferRecord {
        let ref: AudioQueueBufferRef
        var engineBuffer: QueueBuffer?
        var isEnqueued = false
        init(ref: AudioQueueBufferRef) { self.ref = ref }
    }

    /// Frees a buffer's struct, audio data and packet descriptions (none of it is used after).
    static func deallocate(_ ref: AudioQueueBufferRef) {
        ref.pointee.mAudioData.deallocate()
        ref.pointee.mPacketDescriptions?.deallocate()
        ref.deinitialize(count: 1)
        ref.deallocate()
    }

    /// Gives a buffer an engine buffer of its capacity, while the queue is bound and records no
    /// conversion. Called with `state` locked.
    func attachEngineBuffer(_ record: BufferRecord, _ state: State) throws(AudioQueueError) {
        if state.conversion != nil { return }      // the queue's buffers are filled by the conversion
        if isOutput { return }                     // output queues carry audio in pooled engine buffers
        let capacity = max(Int(record.ref.pointee.mAudioDataBytesCapacity), layout.bytesPerFrame)
        let buffer: QueueBuffer
        if let output = state.output {
            buffer = try output.allocateBuffer(byteCapacity: capacity)
        } else if let input = state.input {
            buffer = try input.allocateBuffer(byteCapacity: capacity)
        } else { return }
        buffer.userData = UnsafeMutableRawPointer(record.ref)
        record.engineBuffer = buffer
    }

    /// The buffer of the queue an engine buffer carried, marked as no longer enqueued; nil once
    /// the queue is disposed of. Called on the callback thread (or the offline render thread).
    func takeBack(_ engineBuffer: QueueBuffer) -> AudioQueueBufferRef? {
        guard let raw = engineBuffer.userData else { return nil }
        let ref = raw.assumingMemoryBound(to: AudioQueueBuffer.self)
        let known = state.withLock { state in
            guard state.disposal != .done, let record = state.buffers[ref] else { return false }
            record.isEnqueued = false
            if let index = state.enqueued.firstIndex(where: { $0.buffer == ref }) { state.enqueued.remove(at: index) }
            return true
        }
        return known ? ref : nil
    }

    func allocateBuffer(byteSize: UInt32, packetDescriptions: UInt32) throws(AudioQueueError) -> AudioQueueBufferRef {
        guard byteSize <= 1 << 30 else {
            throw AudioQueueError(.invalidParameter, "buffer size \(byteSize) bytes is out of range; allocate at most 1 GiB")
        }
        guard packetDescriptions <= 1 << 20 else {
            throw AudioQueueError(.invalidParameter, "\(packetDescriptions) packet descriptions are too many; linear PCM needs none")
        }
        return try state.withLock { (state) throws(AudioQueueError) -> AudioQueueBufferRef in
            try state.checkDisposal()
            let data = UnsafeMutableRawPointer.allocate(byteCount: max(Int(byteSize), 1), alignment: 16)
            data.initializeMemory(as: UInt8.self, repeating: 0, count: max(Int(byteSize), 1))
            var descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?
            if packetDescriptions > 0 {
                descriptions = .allocate(capacity: Int(packetDescriptions))
                descriptions?.initialize(repeating: AudioStreamPacketDescription(), count: Int(packetDescriptions))
            }
            let ref = AudioQueueBufferRef.allocate(capacity: 1)
            ref.initialize(to: AudioQueueBuffer(mAudioDataBytesCapacity: byteSize, mAudioData: data, mAudioDataByteSize: 0,
                                                mUserData: nil, mPacketDescriptionCapacity: packetDescriptions,
                                                mPacketDescriptions: descriptions, mPacketDescriptionCount: 0))
            let record = BufferRecord(ref: ref)
            do throws(AudioQueueError) {
                try attachEngineBuffer(record, state)
            } catch {
                Self.deallocate(ref)
                throw error
            }
            state.buffers[ref] = record
            return ref
        }
    }

    func freeBuffer(_ ref: AudioQueueBufferRef) throws(AudioQueueError) {
        try state.withLock { (state) throws(AudioQueueError) in
            try state.checkDisposal()
            guard let record = state.buffers[ref] else {
                throw AudioQueueError(.invalidBuffer, "the buffer does not belong to this queue (or was freed)")
            }
            guard !record.isEnqueued else {
                throw AudioQueueError(.bufferInQueue, "the buffer is enqueued; free it after the queue hands it back (its callback), or after AudioQueueStop/AudioQueueReset")
            }
            if let engineBuffer = record.engineBuffer {
                let (output, input) = (state.output, state.input)
                if let output { try output.freeBuffer(engineBuffer) } else if let input { try input.freeBuffer(engineBuffer) }
            }
            state.buffers[ref] = nil
            Self.deallocate(ref)
        }
    }
}
