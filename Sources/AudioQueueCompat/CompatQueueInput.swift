import Lockstep

// The input side: recorded engine buffers are copied (or, at another rate than the device's,
// converted) into the queue's buffers and go to the user's input callback.
extension CompatQueue {
    /// The compressed formats input queues record into: Apple's (AAC, ALAC, IMA4, µ-law, a-law).
    /// MP3, FLAC and Opus are decoded by playback queues only.
    static let recordableCodecs: Set<CompressedFormat.Codec> = [.aac, .alac, .ima4, .ulaw, .alaw]

    /// Makes the encoder of an input queue of a compressed format, whose magic cookie the queue
    /// then reports (`kAudioQueueProperty_MagicCookie`) before recording starts, as on Apple.
    /// - Throws: `kAudioFormatUnsupportedDataFormatError` for a format input queues do not record
    ///   into, or that the encoder refuses.
    func prepareEncoding(_ format: CompressedFormat) throws(AudioQueueError) {
        guard Self.recordableCodecs.contains(format.codec) else {
            throw AudioQueueError(kAudioFormatUnsupportedDataFormatError, "input queues record into AAC, ALAC, IMA4, µ-law and a-law (as Apple's do), not \(fourCharCodeString(format.codec.formatID)); record one of those or linear PCM and encode it with ExtAudioFile")
        }
        let encoding = try InputPacketEncoding(format: format)
        state.withLock { state in
            state.encoding = encoding
            state.magicCookie = encoding.cookie
        }
    }

    /// A buffer of the queue filled by an ``InputRateConversion``, and what it was filled with.
    typealias ConvertedBuffer = (AudioQueueBufferRef, InputRateConversion.Fill)

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

    /// A recorded engine buffer at the device rate, for a queue at another rate: keep it until a
    /// buffer of the queue needs its audio, and fill what can be filled now. Called on the
    /// callback thread.
    func convertedInput(_ engineBuffer: QueueBuffer, start: Int64, frames: Int) {
        let input = state.withLock { (state) -> InputQueue? in
            guard state.disposal != .done, state.conversion != nil else { return state.input }
            state.recorded.append((engineBuffer, frames))
            return nil
        }
        // Not converting (any more): the buffer goes straight back to the engine queue.
        if let input { try? input.enqueue(engineBuffer) }
        pumpConversion()
    }

    /// Asks the callback thread to fill the queue's enqueued buffers from the recorded audio (after
    /// an enqueue): the buffer is filled at once, not at the next device cycle, and its callback
    /// is not called from inside the enqueue.
    func schedulePump(_ engine: Engine) {
        engine.performOnCallbackThread { [weak self] in self?.pumpConversion() }
    }

    /// Fills the queue's enqueued buffers, in order, converting recorded engine buffers only as
    /// their audio is needed, and delivers each full buffer (the last one of a stopped recording
    /// partly filled) — again and again while the callbacks enqueue buffers. Engine buffers whose
    /// audio is converted go back to the engine queue. Called on the callback thread.
    func pumpConversion() {
        while true {
            let (input, converted, filled) = state.withLock { (state) -> (InputQueue?, [QueueBuffer], [ConvertedBuffer]) in
                guard state.disposal != .done, let conversion = state.conversion, !conversion.discarding else {
                    return (nil, [], [])
                }
                var converted: [QueueBuffer] = []
                var filled: [ConvertedBuffer] = []
                if conversion.flushing {
                    // A stop is under way: the engine queue must reach its stop mark, so it gets
                    // every buffer back at once (what no buffer of the queue takes waits here).
                    for (buffer, frames) in state.recorded {
                        buffer.withFloatSamples { conversion.append($0.baseAddress!, frames: frames) }
                        converted.append(buffer)
                    }
                    state.recorded.removeAll()
                }
                while let item = state.enqueued.first {
                    if let fill = conversion.fill(item.buffer, final: false) {
                        state.enqueued.removeFirst()
                        state.buffers[item.buffer]?.isEnqueued = false
                        filled.append((item.buffer, fill))
                    } else if !state.recorded.isEmpty {
                        let (buffer, frames) = state.recorded.removeFirst()
                        buffer.withFloatSamples { conversion.append($0.baseAddress!, frames: frames) }
                        converted.append(buffer)
                    } else if conversion.ended, let fill = conversion.fill(item.buffer, final: true) {
                        state.enqueued.removeFirst()
                        state.buffers[item.buffer]?.isEnqueued = false
                        filled.append((item.buffer, fill))
                    } else {
                        break
                    }
                }
                return (state.input, converted, filled)
            }
            for buffer in converted { try? input?.enqueue(buffer) }
            reportEncoderFailures()
            if filled.isEmpty { break }
            deliverConverted(filled)
        }
        // A stop is over once the recording's last frame is delivered, or no buffer (and no
        // callback that could enqueue one) is left to take what remains.
        state.withLock { state in
            guard let conversion = state.conversion, conversion.flushing, conversion.ended else { return }
            if conversion.waitingFrames == 0 || (state.enqueued.isEmpty && state.inputCallbacksRunning == 0) {
                conversion.flushing = false
            }
        }
    }

    /// The recording stopped (the engine queue has delivered its last buffer): convert everything
    /// recorded, release the converter's tail, and deliver. Called on the callback thread.
    func endConversion() {
        let (input, converted) = state.withLock { (state) -> (InputQueue?, [QueueBuffer]) in
            guard state.disposal != .done, let conversion = state.conversion else { return (nil, []) }
            var converted: [QueueBuffer] = []
            for (buffer, frames) in state.recorded {
                buffer.withFloatSamples { conversion.append($0.baseAddress!, frames: frames) }
                converted.append(buffer)
            }
            state.recorded.removeAll()
            conversion.flush()
            return (state.input, converted)
        }
        for buffer in converted { try? input?.enqueue(buffer) }
        pumpConversion()
    }

    /// Reports what the encoder of a compressed recording failed to encode since the last call:
    /// the lost frames as the engine queue's lost frames (``InputQueue/lostFrames`` and an
    /// `overflow` discontinuity at the device time they were due), and a change of
    /// `kAudioQueueProperty_ConverterError` to its listeners, as on Apple. Callback thread.
    func reportEncoderFailures() {
        let report = state.withLock { (state) -> (InputQueue?, Int, Int64, [Listener])? in
            guard state.disposal != .done, let encoding = state.encoding, let conversion = state.conversion else { return nil }
            let failures = encoding.takeFailures()
            guard failures.count > 0 else { return nil }
            let ratio = conversion.deviceFramesPerFrame
            let frames = Int((Double(failures.frames) * ratio).rounded())
            let time = (state.inputOrigin ?? 0) + Int64(((Double(conversion.deliveredFrames) + Double(conversion.waitingFrames)) * ratio).rounded())
            return (state.input, frames, time, state.listeners.filter { $0.id == kAudioQueueProperty_ConverterError })
        }
        guard let (input, frames, time, listeners) = report else { return }
        if frames > 0 { input?.reportLostFrames(Int64(frames), at: time) }
        notify(listeners, kAudioQueueProperty_ConverterError)
    }

    /// A new run of an input queue that converts: what the last run left that no buffer took is
    /// dropped now — and reported (the engine queue's ``InputQueue/lostFrames`` and an `overflow`
    /// discontinuity), never silently.
    func beginConversionRun() {
        let (input, dropped, time) = state.withLock { (state) -> (InputQueue?, Int, Int64) in
            guard let conversion = state.conversion, conversion.ended else { return (nil, 0, 0) }
            let ratio = conversion.deviceFramesPerFrame
            let time = (state.inputOrigin ?? 0) + Int64((Double(conversion.deliveredFrames) * ratio).rounded())
            let dropped = conversion.beginRun()
            conversion.flushing = false
            return (state.input, Int((Double(dropped) * ratio).rounded()), time)
        }
        if dropped > 0 { input?.reportLostFrames(Int64(dropped), at: time) }
    }

    func deliverConverted(_ filled: [ConvertedBuffer]) {
        let (engine, origin, ratio) = state.withLock {
            ($0.engine, $0.inputOrigin ?? 0, $0.conversion?.deviceFramesPerFrame ?? 1)
        }
        for (ref, fill) in filled {
            let device = origin + Int64((Double(fill.sampleTime) * ratio).rounded())
            deliverInput(ref, sampleTime: fill.sampleTime, hostTime: engine?.hostTime(forSampleTime: device) ?? 0,
                         packets: UInt32(fill.packets), descriptions: fill.descriptions)
        }
    }

    /// Calls the input callback (or block) with a filled buffer and, for a compressed format of
    /// variable packet size, its packet descriptions (valid during the call, as on Apple).
    func deliverInput(_ ref: AudioQueueBufferRef, sampleTime: Int64, hostTime: UInt64, packets: UInt32,
                      descriptions: [AudioStreamPacketDescription]? = nil) {
        var time = AudioTimeStamp()
        time.mSampleTime = Double(sampleTime)
        time.mHostTime = hostTime
        time.mRateScalar = 1
        time.mFlags = [.sampleHostTimeValid, .rateScalarValid]
        let queue = self.ref
        switch callback {
        case .input(let proc) where callbackRunLoop == nil:
            CallbackThread.run {
                withUnsafePointer(to: &time) { stamp in
                    guard let descriptions else { return proc(userData, queue, ref, stamp, packets, nil) }
                    descriptions.withUnsafeBufferPointer { proc(userData, queue, ref, stamp, packets, $0.baseAddress) }
                }
            }
        case .input(let proc):
            // On the queue's run loop: posted, as a block to its dispatch queue is.
            let stamp = time, userData = Unchecked(userData)
            let engine = state.withLock { (state) -> Engine? in
                guard state.conversion != nil, let engine = state.engine else { return nil }
                state.inputCallbacksRunning += 1
                return engine
            }
            runCallback { [self] in
                var time = stamp
                withUnsafePointer(to: &time) { stamp in
                    guard let descriptions else { return proc(userData.value, queue, ref, stamp, packets, nil) }
                    descriptions.withUnsafeBufferPointer { proc(userData.value, queue, ref, stamp, packets, $0.baseAddress) }
                }
                if let engine {
                    state.withLock { $0.inputCallbacksRunning -= 1 }
                    schedulePump(engine)
                }
            }
        case .inputBlock(let block, let dispatch):
            let stamp = time
            // While converting, a stop waits for blocks still to run (they may enqueue again), and
            // each one that returns lets the conversion fill what it enqueued.
            let engine = state.withLock { (state) -> Engine? in
                guard state.conversion != nil, let engine = state.engine else { return nil }
                state.inputCallbacksRunning += 1
                return engine
            }
            onDispatchQueue(dispatch) { [self] in
                var time = stamp
                withUnsafePointer(to: &time) { stamp in
                    guard let descriptions else { return block(queue, ref, stamp, packets, nil) }
                    descriptions.withUnsafeBufferPointer { block(queue, ref, stamp, packets, $0.baseAddress) }
                }
                if let engine {
                    state.withLock { $0.inputCallbacksRunning -= 1 }
                    schedulePump(engine)
                }
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
        let (empty, recorded) = state.withLock { (state) -> ([AudioQueueBufferRef], [QueueBuffer]) in
            state.conversion?.reset()
            let recorded = state.recorded.map(\.0)
            state.recorded.removeAll()
            let refs = state.enqueued.map(\.buffer)
            for ref in refs {
                state.buffers[ref]?.isEnqueued = false
                ref.pointee.mAudioDataByteSize = 0
            }
            state.enqueued.removeAll()
            return (refs, recorded)
        }
        for buffer in recorded { try? input.enqueue(buffer) }
        let time = state.withLock { $0.conversion.map { Int64($0.deliveredFrames) } ?? 0 }
        for ref in empty { deliverInput(ref, sampleTime: time, hostTime: 0, packets: 0) }
    }
}
