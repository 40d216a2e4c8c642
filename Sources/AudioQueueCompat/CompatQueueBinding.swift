import Lockstep
import LockstepFiles

// Binding: joining an engine queue (of the default device or a private offline one) when the
// device is first needed, handing over what was enqueued so far, and letting go of it again.
extension CompatQueue {
    /// Binds to an engine queue if not bound yet. Called with `state` locked.
    func bind(_ state: inout State) throws(AudioQueueError) {
        if state.isBound { return }
        let engine: Engine
        if let offlineLayout = state.offlineLayout {
            let (offlineEngine, device) = try makeOfflineEngine(offlineLayout)
            engine = offlineEngine
            state.offlineDevice = device
        } else {
            engine = try DefaultDevice.shared.engine()
        }
        if isOutput {
            let queue = try engine.makeOutputQueue(format: layout.format) { [self] _, buffer in outputDone(buffer) }
            _ = try queue.addPropertyListener(.isRunning) { [self] queue, _ in runningChanged(queue.isRunning) }
            queue.addEventHandler { [self] _, event in
                if case .stopped(let time) = event { self.state.withLock { $0.outputStoppedAt = time } }
            }
            // Apple's timing: a buffer that arrives late plays in full and the timeline slides.
            queue.lateBufferPolicy = .playInFull
            // Ramp time first: the Volume and Pan set before binding take effect at once anyway.
            for parameter in [QueueParameter.volumeRampTime, .volume, .pan] {
                if let value = state.parameters[parameter] { try queue.setParameter(parameter, to: value) }
            }
            queue.isLevelMeteringEnabled = state.metering
            state.output = queue
        } else {
            guard engine.device.inputChannelCount >= layout.format.channelCount else {
                throw AudioQueueError(.invalidDevice,
                    "the device '\(engine.device.name)' has \(engine.device.inputChannelCount) inputs but the queue records \(layout.format.channelCount) channels; choose a device with more inputs (AudioQueueSetDefaultDevice)")
            }
            let queue: InputQueue
            if layout.format.sampleRate != engine.sampleRate || state.encoding != nil {
                let conversion = try InputRateConversion(layout: layout, deviceRate: engine.sampleRate,
                                                         factory: engine.rateConverterFactory ?? SoxrRateConverter.factory,
                                                         encoding: state.encoding)
                queue = try engine.makeInputQueue(format: conversion.internalFormat) { [self] _, buffer, start, frames in
                    convertedInput(buffer, start: start, frames: frames)
                }
                for _ in 0..<8 {
                    try queue.enqueue(try queue.allocateBuffer(frameCapacity: conversion.internalBufferFrames))
                }
                state.conversion = conversion
            } else {
                queue = try engine.makeInputQueue(format: layout.format) { [self] _, buffer, start, frames in
                    inputFilled(buffer, start: start, frames: frames)
                }
            }
            _ = try queue.addPropertyListener(.isRunning) { [self] queue, _ in runningChanged(queue.isRunning) }
            queue.addEventHandler { [self] _, event in
                if case .started(let time) = event {
                    self.state.withLock { state in if state.inputOrigin == nil { state.inputOrigin = time } }
                }
            }
            queue.isLevelMeteringEnabled = state.metering
            state.input = queue
        }
        state.engine = engine
        // The device tells the engine when its rate changes (JACK's sample-rate callback): that is
        // when kAudioQueueDeviceProperty_SampleRate listeners hear of it.
        state.rateHandler = engine.addDiscontinuityHandler { [weak self] discontinuity in
            if discontinuity.kind == .sampleRateChange { self?.notifyListeners(kAudioQueueDeviceProperty_SampleRate) }
        }
        for record in state.buffers.values { try attachEngineBuffer(record, state) }
        let replay = state.enqueued
        for (index, item) in replay.enumerated() {
            do {
                _ = try submit(item, &state)
            } catch {
                // The rest stay with the caller: hand them back as not enqueued.
                for rest in replay[index...] { state.buffers[rest.buffer]?.isEnqueued = false }
                state.enqueued.removeLast(replay.count - index)
                throw error
            }
        }
    }

    /// Lets go of the engine queue (disposing of it at once, no callbacks); enqueued buffers go
    /// back to pending. Called with `state` locked.
    func unbind(_ state: inout State) {
        dropEngineQueue(&state)
        for record in state.buffers.values { record.engineBuffer = nil }
        state.pendingEnd = 0
        for item in state.enqueued {
            let frames = Int64(item.frames(layout))
            state.pendingEnd = (item.startTime ?? state.pendingEnd) + frames - Int64(item.trimStart + item.trimEnd)
        }
    }

    /// Hands one enqueued buffer to the engine queue. Called with `state` locked, while bound.
    func submit(_ item: Enqueue, _ state: inout State) throws(AudioQueueError) -> Int64 {
        if state.conversion != nil { return 0 }    // stays in `enqueued` until the conversion fills it
        if let input = state.input {
            guard let record = state.buffers[item.buffer], let engineBuffer = record.engineBuffer else {
                throw AudioQueueError(.invalidBuffer, "the buffer does not belong to this queue")
            }
            try input.enqueue(engineBuffer)
            return 0
        }
        guard let output = state.output else { return 0 }
        let bytes = item.frames(layout) * layout.bytesPerFrame
        let engineBuffer = try spareEngineBuffer(bytes: max(bytes, Int(item.buffer.pointee.mAudioDataBytesCapacity)), output, &state)
        if let decoded = item.decoded {
            decoded.withUnsafeBytes { engineBuffer.data.copyMemory(from: $0.baseAddress!, byteCount: bytes) }
        } else {
            layout.convertByteOrder(from: item.buffer.pointee.mAudioData, to: engineBuffer.data, byteCount: bytes)
        }
        engineBuffer.byteSize = bytes
        let parameters = item.parameters
        let start: Int64
        do {
            start = try output.enqueue(engineBuffer, startTime: item.startTime, trimFramesAtStart: item.trimStart,
                                       trimFramesAtEnd: item.trimEnd, parameters: parameters)
        } catch {
            state.spare.append(engineBuffer)
            throw error
        }
        let frames = bytes / layout.bytesPerFrame
        let end = start + Int64(frames - Int(item.trimStart) - Int(item.trimEnd))
        state.inFlight.append(InFlight(engineBuffer: engineBuffer, frames: frames, buffer: item.buffer, end: end))
        // Its audio is converted and in the engine queue: the buffer may go back to the callback
        // now (on the callback thread), if the decode buffer has room. (Offline, buffers go back
        // at the start of a render: ``releaseForOfflineRender(frames:)``.)
        if let engine = state.engine, state.offlineLayout == nil {
            engine.performOnCallbackThread { [weak self] in
                self?.releaseDecoded()
                self?.startIfDecodedAhead()
            }
        }
        return start
    }

    /// An engine buffer of at least `bytes` bytes for the next enqueue of an output queue: a spare
    /// one, or a new one. Called with `state` locked.
    private func spareEngineBuffer(bytes: Int, _ output: OutputQueue, _ state: inout State) throws(AudioQueueError) -> QueueBuffer {
        if let index = state.spare.firstIndex(where: { $0.byteCapacity >= bytes }) {
            return state.spare.remove(at: index)
        }
        return try output.allocateBuffer(byteCapacity: max(bytes, layout.bytesPerFrame))
    }

    /// Disposes of the engine queue at once (no more callbacks; a no-op if it is already going)
    /// and forgets it and its engine. That breaks the cycle engine queue → callback → self: the
    /// engine lets go of its queue, and so of self, once the render thread has. Called with `state` locked.
    func dropEngineQueue(_ state: inout State) {
        try? state.output?.dispose(immediately: true)
        try? state.input?.dispose(immediately: true)
        if let token = state.rateHandler { state.engine?.removeDiscontinuityHandler(token) }
        state.rateHandler = nil
        state.output = nil
        state.input = nil
        state.engine = nil
        state.offlineDevice = nil
        state.conversion = nil
        state.recorded.removeAll()
        state.inFlight.removeAll()
        state.spare.removeAll()
        state.timelines.removeAll()
    }
}
