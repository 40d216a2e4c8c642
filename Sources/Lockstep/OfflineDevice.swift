import Synchronization

/// A device that renders on demand, as fast as the CPU allows: for offline rendering (bouncing to
/// a file) and for deterministic, sample-exact tests.
///
/// Create it with the offline render format (Audio Queue's `AudioQueueSetOfflineRenderFormat`),
/// give it to an ``Engine``, then call ``render(frames:into:)`` repeatedly (Audio Queue's
/// `AudioQueueOfflineRender`). Each call renders the next `frames` frames of the timeline through
/// exactly the render path a live device uses, then delivers the callbacks the render caused, on
/// the calling thread, before returning — so buffers refilled in callbacks are there for the
/// next call.
///
/// Not for concurrent use: call `render` from one thread at a time.
public final class OfflineDevice: AudioDevice, @unchecked Sendable {
    /// The format ``render(frames:into:)`` writes: rate, channels and sample encoding.
    public let format: StreamFormat
    /// The device name.
    public let name: String
    /// The most frames one ``render(frames:into:)`` call renders.
    public let maximumFramesPerCycle: Int

    /// Input channels (recorded by input queues); their audio comes from ``inputProvider``.
    public let inputChannelCount: Int

    /// Fills the input for each render: called with the device sample time of the first frame,
    /// the frame count and one pointer per input channel (each that many frames, zeroed). Nil
    /// leaves the input silent.
    public typealias InputProvider = @Sendable (_ sampleTime: Int64, _ frames: Int,
                                                _ channels: UnsafePointer<UnsafeMutablePointer<Float>>) -> Void

    /// Where the device's input comes from; see ``InputProvider``.
    public var inputProvider: InputProvider?

    private var renderer: DeviceRenderer?
    private let inputPlanar: UnsafeMutablePointer<Float>
    private let inputPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let planar: UnsafeMutablePointer<Float>
    private let channelPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let interleaved: UnsafeMutablePointer<Float>
    private let nextSampleTime = Atomic<Int64>(0)

    /// Creates an offline device.
    ///
    /// - Parameters:
    ///   - format: the rendered format; any rate, 1…64 channels, any sample format.
    ///   - maximumFramesPerRender: the largest `frames` one render call accepts (default 4096).
    ///   - name: the device's name.
    /// - Throws: ``AudioQueueError/Code/unsupportedFormat`` for an invalid format,
    ///   ``AudioQueueError/Code/invalidParameter`` for a non-positive maximum.
    public init(format: StreamFormat, maximumFramesPerRender: Int = 4096, name: String = "offline",
                inputChannelCount: Int = 0, inputProvider: InputProvider? = nil)
        throws(AudioQueueError)
    {
        guard (0...StreamFormat.maximumChannelCount).contains(inputChannelCount) else {
            throw AudioQueueError(.invalidParameter, "input channel count \(inputChannelCount) is out of range; use 0…\(StreamFormat.maximumChannelCount)")
        }
        // Everything is validated before anything is allocated: a failed init leaks nothing.
        try format.validate()
        guard maximumFramesPerRender > 0, maximumFramesPerRender <= 1 << 20 else {
            throw AudioQueueError(.invalidParameter,
                "maximumFramesPerRender \(maximumFramesPerRender) is out of range; use 1…1048576")
        }
        self.inputChannelCount = inputChannelCount
        self.inputProvider = inputProvider
        let inputs = max(1, inputChannelCount)
        inputPlanar = .allocate(capacity: inputs * maximumFramesPerRender)
        inputPlanar.initialize(repeating: 0, count: inputs * maximumFramesPerRender)
        inputPointers = .allocate(capacity: inputs)
        for c in 0..<inputs { (inputPointers + c).initialize(to: inputPlanar + c * maximumFramesPerRender) }
        self.format = format
        self.name = name
        maximumFramesPerCycle = maximumFramesPerRender
        let channels = format.channelCount
        planar = .allocate(capacity: channels * maximumFramesPerRender)
        planar.initialize(repeating: 0, count: channels * maximumFramesPerRender)
        channelPointers = .allocate(capacity: channels)
        for c in 0..<channels { (channelPointers + c).initialize(to: planar + c * maximumFramesPerRender) }
        interleaved = .allocate(capacity: channels * maximumFramesPerRender)
        interleaved.initialize(repeating: 0, count: channels * maximumFramesPerRender)
    }

    deinit {
        inputPlanar.deallocate()
        inputPointers.deallocate()
        planar.deallocate()
        channelPointers.deallocate()
        interleaved.deallocate()
    }

    /// The render format's sample rate.
    public var sampleRate: Double { format.sampleRate }
    /// The render format's channel count.
    public var channelCount: Int { format.channelCount }
    /// Always true: an offline device renders on the caller's thread.
    public var isOffline: Bool { true }
    /// Inline: everything a render caused is delivered before ``render(frames:into:)`` returns.
    public var callbackDelivery: CallbackDelivery { .inline }
    /// Always true: an offline device is ready to render once attached.
    public var isRunning: Bool { renderer != nil }

    /// Called by the engine.
    public func attach(_ renderer: DeviceRenderer) throws(AudioQueueError) {
        guard self.renderer == nil else {
            throw AudioQueueError(.invalidDevice, "offline device '\(name)' already belongs to an engine; create one device per engine")
        }
        self.renderer = renderer
    }

    /// Forgets the engine; later renders throw ``AudioQueueError/Code/invalidDevice``.
    public func detach() {
        renderer = nil
    }

    /// Does nothing: an offline device is always ready.
    public func start() throws(AudioQueueError) {}
    /// Does nothing.
    public func stop() {}

    /// The next frame to be rendered.
    public func currentTime() -> DeviceTimeStamp {
        let t = nextSampleTime.load(ordering: .acquiring)
        return DeviceTimeStamp(sampleTime: t, hostTime: hostTime(forSampleTime: t))
    }

    /// Any time from the next frame to be rendered on can be honoured exactly.
    public func nearestStartTime(atOrAfter sampleTime: Int64) -> Int64 {
        max(sampleTime, nextSampleTime.load(ordering: .acquiring))
    }

    /// Virtual host time: the sample time in microseconds at the render rate.
    public func hostTime(forSampleTime sampleTime: Int64) -> UInt64 {
        UInt64(max(0, (Double(sampleTime) * 1_000_000 / format.sampleRate).rounded()))
    }

    /// The inverse of ``hostTime(forSampleTime:)``.
    public func sampleTime(forHostTime hostTime: UInt64) -> Int64 {
        Int64((Double(hostTime) * format.sampleRate / 1_000_000).rounded())
    }

    /// Renders the next `frames` frames into `destination` (interleaved, in ``format``) and
    /// delivers the callbacks the render caused before returning.
    ///
    /// - Parameter destination: at least `frames × format.bytesPerFrame` bytes.
    /// - Returns: the time stamp of the first rendered frame.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` if `frames` is out of range or the
    ///   destination too small; ``AudioQueueError/Code/invalidDevice`` if no engine uses the device.
    @discardableResult
    public func render(frames: Int, into destination: UnsafeMutableRawBufferPointer) throws(AudioQueueError)
        -> DeviceTimeStamp
    {
        guard let renderer else {
            throw AudioQueueError(.invalidDevice, "offline device '\(name)' has no engine (none was created, or it was released); create an Engine with it and keep it alive")
        }
        guard frames > 0, frames <= maximumFramesPerCycle else {
            throw AudioQueueError(.invalidParameter,
                "frames \(frames) is out of range; render 1…\(maximumFramesPerCycle) frames per call")
        }
        guard destination.count >= frames * format.bytesPerFrame, let base = destination.baseAddress else {
            throw AudioQueueError(.invalidParameter,
                "destination holds \(destination.count) bytes but \(frames) frames of \(format) need \(frames * format.bytesPerFrame)")
        }
        let start = renderPlanar(renderer, frames: frames)
        let channels = format.channelCount
        // Float output is interleaved straight into the destination; other formats via a scratch.
        let direct = format.sampleFormat == .float32 && Int(bitPattern: base) % MemoryLayout<Float>.alignment == 0
        let target = direct ? base.bindMemory(to: Float.self, capacity: frames * channels) : interleaved
        for c in 0..<channels {
            let source = planar + c * maximumFramesPerCycle
            var p = target + c
            for i in 0..<frames {
                p.pointee = source[i]
                p += channels
            }
        }
        if !direct {
            PCMCodec.encode(interleaved, sampleCount: frames * channels, format: format.sampleFormat, into: base)
        }
        renderer.deliverPendingEvents()
        return start
    }

    /// Renders the next `frames` frames and returns them as interleaved floats (whatever
    /// ``format``'s sample format), delivering callbacks before returning.
    public func renderFloat(frames: Int) throws(AudioQueueError) -> [Float] {
        guard let renderer else {
            throw AudioQueueError(.invalidDevice, "offline device '\(name)' has no engine (none was created, or it was released); create an Engine with it and keep it alive")
        }
        guard frames > 0, frames <= maximumFramesPerCycle else {
            throw AudioQueueError(.invalidParameter,
                "frames \(frames) is out of range; render 1…\(maximumFramesPerCycle) frames per call")
        }
        _ = renderPlanar(renderer, frames: frames)
        let channels = format.channelCount
        var result = [Float](repeating: 0, count: frames * channels)
        for c in 0..<channels {
            let source = planar + c * maximumFramesPerCycle
            for i in 0..<frames { result[i * channels + c] = source[i] }
        }
        renderer.deliverPendingEvents()
        return result
    }

    private func renderPlanar(_ renderer: DeviceRenderer, frames: Int) -> DeviceTimeStamp {
        let t = nextSampleTime.load(ordering: .relaxed)
        if inputChannelCount > 0 {
            for c in 0..<inputChannelCount { inputPointers[c].update(repeating: 0, count: frames) }
            inputProvider?(t, frames, inputPointers)
            renderer.render(frames: frames, sampleTime: t, input: inputPointers, output: channelPointers)
        } else {
            renderer.render(frames: frames, sampleTime: t, output: channelPointers)
        }
        nextSampleTime.store(t + Int64(frames), ordering: .releasing)
        return DeviceTimeStamp(sampleTime: t, hostTime: hostTime(forSampleTime: t))
    }
}
