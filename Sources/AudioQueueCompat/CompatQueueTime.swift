import Lockstep

// Time: timelines, the queue's current time, the device's current time, and the device
// functions that find start times and translate between sample and host time.
extension CompatQueue {
    func makeTimeline() throws(AudioQueueError) -> AudioQueueTimelineRef {
        try state.withLock { (state) throws(AudioQueueError) -> AudioQueueTimelineRef in
            try state.checkDisposal()
            try requireOutput("AudioQueueCreateTimeline")
            try bind(&state)
            guard let output = state.output else { throw AudioQueueError(.invalidDevice, "the queue has no device") }
            let timeline = try output.makeTimeline()
            let key = AudioQueueTimelineRef(Unmanaged.passUnretained(timeline).toOpaque())
            state.timelines[key] = timeline
            return key
        }
    }

    func disposeTimeline(_ key: AudioQueueTimelineRef) throws(AudioQueueError) {
        try state.withLock { (state) throws(AudioQueueError) in
            try state.checkDisposal()
            guard let timeline = state.timelines.removeValue(forKey: key), let output = state.output else {
                throw AudioQueueError(kAudio_ParamError, "the timeline does not belong to this queue (or was disposed of)")
            }
            try output.disposeTimeline(timeline)
        }
    }

    func currentTime(timeline key: AudioQueueTimelineRef?) throws(AudioQueueError) -> (AudioTimeStamp, Bool) {
        let (output, input, engine, timeline, origin) = try state.withLock { (state) throws(AudioQueueError) in
            try state.checkDisposal()
            try bind(&state)
            var timeline: Timeline?
            if let key {
                guard let known = state.timelines[key] else {
                    throw AudioQueueError(kAudio_ParamError, "the timeline does not belong to this queue (or was disposed of)")
                }
                timeline = known
            }
            return (state.output, state.input, state.engine, timeline, state.inputOrigin)
        }
        var stamp = AudioTimeStamp()
        stamp.mRateScalar = 1
        stamp.mFlags = [.sampleHostTimeValid, .rateScalarValid]
        if let output {
            let now = try output.currentTime(timeline: timeline)
            stamp.mSampleTime = Double(now.sampleTime)
            stamp.mHostTime = now.hostTime
            return (stamp, now.discontinuity)
        }
        guard let engine else { return (stamp, false) }
        let now = engine.currentTime()
        stamp.mSampleTime = (input?.isRunning ?? false) ? Double(max(0, now.sampleTime - (origin ?? now.sampleTime))) : 0
        stamp.mHostTime = now.hostTime
        return (stamp, false)
    }

    private func boundEngine() throws(AudioQueueError) -> Engine {
        try state.withLock { (state) throws(AudioQueueError) -> Engine in
            try state.checkDisposal()
            try bind(&state)
            guard let engine = state.engine else { throw AudioQueueError(.invalidDevice, "the queue has no device") }
            return engine
        }
    }

    func deviceCurrentTime() throws(AudioQueueError) -> AudioTimeStamp {
        let engine = try boundEngine()
        let now = engine.currentTime()
        var stamp = AudioTimeStamp()
        stamp.mHostTime = now.hostTime
        stamp.mFlags = .hostTimeValid
        if engine.device.isRunning {
            stamp.mSampleTime = Double(now.sampleTime)
            stamp.mRateScalar = 1
            stamp.mFlags.formUnion([.sampleTimeValid, .rateScalarValid])
        }
        return stamp
    }

    private func runningDevice(_ function: String) throws(AudioQueueError) -> Engine {
        let engine = try boundEngine()
        guard engine.device.isRunning else {
            throw AudioQueueError(.invalidRunState, "\(function) needs the device running; '\(engine.device.name)' is not")
        }
        return engine
    }

    private func deviceSampleTime(_ stamp: AudioTimeStamp, _ engine: Engine) throws(AudioQueueError) -> Int64 {
        if stamp.mFlags.contains(.sampleTimeValid) {
            guard stamp.mSampleTime.isFinite else { throw AudioQueueError(kAudio_ParamError, "mSampleTime is not a number") }
            return Int64(stamp.mSampleTime.rounded())
        }
        if stamp.mFlags.contains(.hostTimeValid) { return engine.sampleTime(forHostTime: stamp.mHostTime) }
        throw AudioQueueError(kAudio_ParamError, "the time stamp has neither kAudioTimeStampSampleTimeValid nor kAudioTimeStampHostTimeValid set")
    }

    func nearestStartTime(_ stamp: inout AudioTimeStamp) throws(AudioQueueError) {
        let engine = try runningDevice("AudioQueueDeviceGetNearestStartTime")
        let sample = engine.nearestStartTime(atOrAfter: try deviceSampleTime(stamp, engine))
        stamp.mSampleTime = Double(sample)
        stamp.mHostTime = engine.hostTime(forSampleTime: sample)
        stamp.mRateScalar = 1
        stamp.mFlags = [.sampleHostTimeValid, .rateScalarValid]
    }

    func translate(_ stamp: AudioTimeStamp) throws(AudioQueueError) -> AudioTimeStamp {
        let engine = try runningDevice("AudioQueueDeviceTranslateTime")
        let sample = try deviceSampleTime(stamp, engine)
        var out = AudioTimeStamp()
        out.mSampleTime = stamp.mFlags.contains(.sampleTimeValid) ? stamp.mSampleTime : Double(sample)
        out.mHostTime = stamp.mFlags.contains(.hostTimeValid) ? stamp.mHostTime : engine.hostTime(forSampleTime: sample)
        out.mRateScalar = 1
        out.mFlags = [.sampleHostTimeValid, .rateScalarValid]
        return out
    }
}
