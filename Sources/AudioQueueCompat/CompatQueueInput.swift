import Lockstep

// The input side: recorded engine buffers are copied (or, at another rate than the device's,
// converted) into the queue's buffers and go to the user's input callback.
extension CompatQueue {
    /// A buffer of the queue filled by an ``InputRateConversion``: the buffer, its queue sample
    /// time and its frame count.
    typealias ConvertedBuffer = (AudioQueueBufferRef, Int64, Int)

    /// A recorded engine buffer at the queue's rate: copy it into the queue's buffer and deliver
    /// that. Called on the callback thread.
    func inputFilled(_ engineBuffer: QueueBuffer, start: Int64, frames: Int) {
        guard let ref = takeBack(engineBuffer) else { return }
        let (origin, engine) = state.withLock { ($0.inputOrigin ?? start, $0.engine) }
        let bytes = min(frames * layout.bytesPerFrame, Int(ref.pointee.mAudioDataBytesCapacity))
        layout.convertByteOrder(from: engineBuffer.data, to: ref.pointee.mAudioData, byteCount: bytes)
        ref.pointee.mAudioDataByteSize = UInt32(bytes)
        deliverInput(ref, sampleTime: start - origin, hostTime: engine?.hostTime(forSampleTime: start) ?? 0,
                     packets: UInt32(bytes / layout.bytesPerFrame))
    }

    /// A recorded engine buffer at the device rate, for a queue at another rate: convert it, hand
    /// it back to the engine, and deliver every buffer of the queue that is now full.
    func convertedInput(_ engineBuffer: QueueBuffer, start: Int64, frames: Int) {
        let (input, filled) = state.withLock { (state) -> (InputQueue?, [ConvertedBuffer]) in
            guard state.disposal != .done, let conversion = state.conversion else { return (nil, []) }
            engineBuffer.withFloatSamples { conversion.append($0.baseAddress!, frames: frames) }
            return (state.input, fillConverted(final: false, &state))
        }
        try? input?.enqueue(engineBuffer)
        deliverConverted(filled)
    }

    /// Fills the queue's enqueued buffers, in order, from the converted audio. Called with `state` locked.
    func fillConverted(final: Bool, _ state: inout State) -> [ConvertedBuffer] {
        guard let conversion = state.conversion else { return [] }
        var filled: [ConvertedBuffer] = []
        while let item = state.enqueued.first, let (time, frames) = conversion.fill(item.buffer, final: final) {
            state.enqueued.removeFirst()
            state.buffers[item.buffer]?.isEnqueued = false
            filled.append((item.buffer, time, frames))
        }
        return filled
    }

    func deliverConverted(_ filled: [ConvertedBuffer]) {
        let (engine, origin, ratio) = state.withLock {
            ($0.engine, $0.inputOrigin ?? 0, $0.conversion?.deviceFramesPerFrame ?? 1)
        }
        for (ref, time, frames) in filled {
            let device = origin + Int64((Double(time) * ratio).rounded())
            deliverInput(ref, sampleTime: time, hostTime: engine?.hostTime(forSampleTime: device) ?? 0, packets: UInt32(frames))
        }
    }

    /// Calls the input callback (or block) with a filled buffer.
    func deliverInput(_ ref: AudioQueueBufferRef, sampleTime: Int64, hostTime: UInt64, packets: UInt32) {
        var time = AudioTimeStamp()
        time.mSampleTime = Double(sampleTime)
        time.mHostTime = hostTime
        time.mRateScalar = 1
        time.mFlags = kAudioTimeStampSampleHostTimeValid | kAudioTimeStampRateScalarValid
        let queue = self.ref
        switch callback {
        case .input(let proc):
            CallbackThread.run { withUnsafePointer(to: &time) { proc(userData, queue, ref, $0, packets, nil) } }
        case .inputBlock(let block, let dispatch):
            let stamp = time
            onDispatchQueue(dispatch) {
                var time = stamp
                withUnsafePointer(to: &time) { block(queue, ref, $0, packets, nil) }
            }
        case .output, .outputBlock:
            break
        }
    }

    /// Reset of an input queue that converts: drop what was recorded, hand every buffer back empty.
    func resetConversion(_ input: InputQueue) throws(AudioQueueError) {
        state.withLock { $0.conversion?.discarding = true }
        defer { state.withLock { $0.conversion?.discarding = false } }
        try input.reset()
        let empty = state.withLock { (state) -> [AudioQueueBufferRef] in
            state.conversion?.reset()
            let refs = state.enqueued.map(\.buffer)
            for ref in refs {
                state.buffers[ref]?.isEnqueued = false
                ref.pointee.mAudioDataByteSize = 0
            }
            state.enqueued.removeAll()
            return refs
        }
        let time = state.withLock { $0.conversion.map { Int64($0.deliveredFrames) } ?? 0 }
        for ref in empty { deliverInput(ref, sampleTime: time, hostTime: 0, packets: 0) }
    }
}
