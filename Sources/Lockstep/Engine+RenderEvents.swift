import Dispatch
import Foundation
import Synchronization

/// Events from the render thread, handled on the callback thread.
extension Engine {
    func inputQueue(atSlot slot: Int32) -> InputQueue? {
        guard slot >= 0, Int(slot) < Self.maximumInputQueues else { return nil }
        return state.withLock { $0.inputQueues[Int(slot)] }
    }

    /// The input queues the engine holds (not yet disposed of).
    public var inputQueues: [InputQueue] { state.withLock { $0.inputQueues.compactMap { $0 } } }

    /// Creates an input (recording) queue: Audio Queue's `AudioQueueNewInput`.
    ///
    /// - Parameters:
    ///   - format: the format of the buffers the queue fills: the device's sample rate, 1…64
    ///     channels, any sample format.
    ///   - name: a name for reports.
    ///   - source: what to record: the device's input (default) or the engine's own mix.
    ///   - channelMap: the device input (or mix) channel (0-based) for each queue channel; default
    ///     `0..<channels`.
    ///   - ringSeconds: how much captured audio the queue holds while your callback is late
    ///     (default 10 s); beyond that frames are lost — and reported.
    ///   - callbackExecutor: where the input callback and listeners run.
    ///   - callback: receives each filled buffer, the device sample time of its first frame and
    ///     its frame count; write it away, then enqueue the buffer again.
    /// - Throws: ``AudioQueueError/Code/unsupportedFormat`` for a format the queue can't fill
    ///   (another rate than the device's); ``AudioQueueError/Code/invalidParameter`` for a bad
    ///   channel map or when the engine holds ``maximumInputQueues`` already.
    public func makeInputQueue(format: StreamFormat, name: String? = nil, source: InputSource = .deviceInput,
                               channelMap: [Int]? = nil,
                               ringSeconds: Double = 10, callbackExecutor: CallbackExecutor = .engineThread,
                               callback: @escaping @Sendable (InputQueue, QueueBuffer, _ startTime: Int64, _ frameCount: Int) -> Void)
        throws(AudioQueueError) -> InputQueue
    {
        try format.validate()
        guard format.sampleRate == device.sampleRate else {
            throw AudioQueueError(.unsupportedFormat,
                "input queues record at the device's rate (\(device.sampleRate) Hz), not \(format.sampleRate) Hz; convert the file afterwards")
        }
        let map = channelMap ?? Array(0..<format.channelCount)
        guard map.count == format.channelCount, map.allSatisfy({ $0 >= 0 && $0 < StreamFormat.maximumChannelCount }) else {
            throw AudioQueueError(.invalidParameter,
                "channel map \(map) must name one device input channel (0…\(StreamFormat.maximumChannelCount - 1)) for each of the \(format.channelCount) queue channels")
        }
        guard ringSeconds.isFinite, ringSeconds >= 0.1, ringSeconds <= 600 else {
            throw AudioQueueError(.invalidParameter, "ring of \(ringSeconds) s is out of range; use 0.1…600 s")
        }
        let result: Result<InputQueue, AudioQueueError> = state.withLock { state in
            guard let slot = state.inputQueues.firstIndex(where: { $0 == nil }) else {
                return .failure(AudioQueueError(.invalidParameter, "the engine already holds \(Self.maximumInputQueues) input queues; dispose of one"))
            }
            let renderState = UnsafeMutablePointer<InputRenderState>.allocate(capacity: 1)
            renderState.initialize(to: InputRenderState(slot: Int32(slot), channelCount: format.channelCount, channelMap: map,
                                                        ringFrames: Int(ringSeconds * device.sampleRate),
                                                        meterWindow: Self.meterWindow(device.sampleRate),
                                                        capturesOutput: source == .mix))
            let queue = InputQueue(engine: self, name: name ?? "input-\(slot + 1)", format: format, slot: Int32(slot),
                                   renderState: renderState, callbackExecutor: callbackExecutor, callback: callback)
            guard core.engineCommands.pointee.push(EngineCommand(kind: .addInputQueue, slot: Int32(slot), state: nil,
                                                                 input: renderState).message) else {
                return .failure(AudioQueueError(.invalidRunState, "too many queue changes are waiting for the device to render; start the device"))
            }
            state.inputQueues[slot] = queue
            return .success(queue)
        }
        return try result.get()
    }

    func queue(atSlot slot: Int32) -> OutputQueue? {
        guard slot >= 0, Int(slot) < maximumQueues else { return nil }
        return state.withLock { $0.queues[Int(slot)] }
    }

    func handle(_ event: RenderEvent) {
        switch event.kind {
        case .deviceDiscontinuity:
            let (queues, names) = queuesAndNames
            let kind = Discontinuity.Kind(code: event.value)
            let discontinuity = Discontinuity(kind: kind, sampleTime: event.sampleTime, length: event.length,
                                              queues: names, detail: Double(event.detail))
            record(discontinuity)
            for queue in queues {
                queue.deliverDiscontinuity(discontinuity)
                if kind == .sampleRateChange { queue.notifyListeners(.deviceSampleRate) }
            }
        case .inputStarted, .inputPaused, .inputStopped, .inputOverflow:
            inputQueue(atSlot: event.slot)?.handle(event)
        case .inputRemoved:
            guard let queue = inputQueue(atSlot: event.slot) else { return }
            queue.releaseAll()
            state.withLock { $0.inputQueues[Int(event.slot)] = nil }
        case .queueRemoved:
            guard let queue = queue(atSlot: event.slot) else { return }
            if let outputs = queue.takeDirectOutputs() { device.releaseDirectOutputs(outputs) }
            queue.releaseAll()
            state.withLock { $0.queues[Int(event.slot)] = nil }
        default:
            queue(atSlot: event.slot)?.handle(event)
        }
    }
}
