import Dispatch
import Synchronization

/// Volume, gain, pan and their ramps; level metering.
extension OutputQueue {
    /// The Volume parameter (`kAudioQueueParam_Volume`), 0…1, linear: the value in effect (set
    /// directly or by the last started buffer's parameter event).
    public var volume: Float { Float(bitPattern: renderState.pointee.effectiveVolumeBits.load(ordering: .relaxed)) }

    /// Sets the Volume parameter, 0…1; the change is ramped over 5 ms so it never clicks.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` outside 0…1.
    public func setVolume(_ volume: Float) throws(AudioQueueError) {
        try setParameter(.volume, to: volume)
    }

    /// Reads a parameter: Audio Queue's `AudioQueueGetParameter`. The value in effect: set
    /// directly or by the last started buffer's parameter event.
    public func parameter(_ parameter: QueueParameter) -> Float {
        switch parameter {
        case .volume: volume
        case .volumeRampTime: Float(Double(renderState.pointee.effectiveRampFrames.load(ordering: .relaxed)) / deviceSampleRate)
        case .pan: Float(bitPattern: renderState.pointee.effectivePanBits.load(ordering: .relaxed))
        }
    }

    /// Checks a parameter value: Volume 0…1, VolumeRampTime ≥ 0 seconds, Pan −1…1.
    public static func check(_ parameter: QueueParameter, _ value: Float) throws(AudioQueueError) {
        switch parameter {
        case .volume:
            guard value.isFinite, (0...1).contains(value) else {
                throw AudioQueueError(.invalidParameter, "volume \(value) is out of range; use 0…1")
            }
        case .volumeRampTime:
            guard value.isFinite, value >= 0, value <= 3600 else {
                throw AudioQueueError(.invalidParameter, "volume ramp time \(value) s is out of range; use 0…3600 seconds (0: the 5 ms anti-click ramp)")
            }
        case .pan:
            guard value.isFinite, (-1...1).contains(value) else {
                throw AudioQueueError(.invalidParameter, "pan \(value) is out of range; use -1 (left) … 1 (right)")
            }
        }
    }

    /// A ramp time in seconds as device frames (0 stays 0: the engine's default ramp).
    func rampFrameCount(seconds: Float) -> Int {
        seconds == 0 ? 0 : max(1, Int((Double(seconds) * deviceSampleRate).rounded()))
    }

    /// Sets a parameter, effective immediately: Audio Queue's `AudioQueueSetParameter`. Volume and
    /// Pan changes ramp over the Volume ramp time (``QueueParameter/volumeRampTime``; by default
    /// the engine's 5 ms) so they never click; a new ramp time applies to later changes.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` for a value out of range.
    public func setParameter(_ parameter: QueueParameter, to value: Float) throws(AudioQueueError) {
        try Self.check(parameter, value)
        try checkStartable()
        switch parameter {
        case .volume:
            state.withLock { state in
                state.volume = value
                renderState.pointee.userVolumeBits.store(value.bitPattern, ordering: .relaxed)
                renderState.pointee.volumeGeneration.wrappingAdd(1, ordering: .releasing)
                if !state.isRunning { renderState.pointee.effectiveVolumeBits.store(value.bitPattern, ordering: .relaxed) }
            }
        case .volumeRampTime:
            let frames = rampFrameCount(seconds: value)
            state.withLock { _ in
                renderState.pointee.userRampFrames.store(frames, ordering: .relaxed)
                renderState.pointee.rampGeneration.wrappingAdd(1, ordering: .releasing)
                renderState.pointee.effectiveRampFrames.store(frames, ordering: .relaxed)
            }
        case .pan:
            state.withLock { _ in
                renderState.pointee.userPanGains.store(PanLaw.packed(value), ordering: .relaxed)
                renderState.pointee.panGeneration.wrappingAdd(1, ordering: .releasing)
                renderState.pointee.effectivePanBits.store(value.bitPattern, ordering: .relaxed)
            }
        }
    }

    /// The queue's gain in the mixer, in dB (−∞…+12), applied on top of Volume.
    public var mixerGainDB: Double { state.withLock { $0.mixerGainDB } }

    /// Sets the queue's mixer gain in dB (−∞ for silence … +12); ramped over 5 ms.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` above +12 dB or for NaN.
    public func setMixerGain(decibels: Double) throws(AudioQueueError) {
        guard !decibels.isNaN, decibels <= 12 else {
            throw AudioQueueError(.invalidParameter, "mixer gain \(decibels) dB is out of range; use -inf…+12 dB")
        }
        state.withLock { state in
            state.mixerGainDB = decibels
            renderState.pointee.mixerGainBits.store(Float(Decibels.toLinear(decibels)).bitPattern, ordering: .relaxed)
        }
    }

    // MARK: - Metering

    /// Whether level metering is on (`kAudioQueueProperty_EnableLevelMetering`). Off by default.
    public var isLevelMeteringEnabled: Bool {
        get { renderState.pointee.meteringEnabled.load(ordering: .relaxed) }
        set {
            let old = renderState.pointee.meteringEnabled.exchange(newValue, ordering: .relaxed)
            if old != newValue { notifyListeners(.isLevelMeteringEnabled) }
        }
    }

    /// The level per queue channel over the most recent window (≈50 ms), linear
    /// (`kAudioQueueProperty_CurrentLevelMeter`); post-gain.
    /// - Throws: ``AudioQueueError/Code/invalidProperty`` when metering is off.
    public func currentLevelMeter() throws(AudioQueueError) -> [ChannelLevel] {
        guard isLevelMeteringEnabled else {
            throw AudioQueueError(.invalidProperty, "level metering is off on queue '\(name)'; set isLevelMeteringEnabled = true first")
        }
        return renderState.pointee.meter.read()
    }

    /// The level per queue channel over the most recent window with the window's place on the
    /// device timeline (its first sample time and length); linear, post-gain.
    /// - Throws: ``AudioQueueError/Code/invalidProperty`` when metering is off.
    public func currentLevelReading() throws(AudioQueueError) -> LevelReading {
        guard isLevelMeteringEnabled else {
            throw AudioQueueError(.invalidProperty, "level metering is off on queue '\(name)'; set isLevelMeteringEnabled = true first")
        }
        return renderState.pointee.meter.reading()
    }

    /// The largest peak per queue channel (linear, post-gain) since metering was enabled or
    /// ``resetPeakHold()`` was called; metered windows only.
    public var peakHold: [Float] { renderState.pointee.meter.readHold() }

    /// Starts a new ``peakHold``.
    public func resetPeakHold() { renderState.pointee.meter.resetHold() }

    /// The same levels in dBFS (`kAudioQueueProperty_CurrentLevelMeterDB`).
    public func currentLevelMeterDB() throws(AudioQueueError) -> [ChannelLevel] {
        try currentLevelMeter().map(\.decibels)
    }
}
