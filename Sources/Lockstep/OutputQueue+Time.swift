import Dispatch
import Synchronization

/// Queue time, device time and timelines.
extension OutputQueue {
    /// Creates a timeline that reports discontinuities: Audio Queue's `AudioQueueCreateTimeline`.
    public func makeTimeline() throws(AudioQueueError) -> Timeline {
        try checkStartable()
        let timeline = Timeline(queue: self, seen: renderState.pointee.discontinuityCount.load(ordering: .acquiring))
        state.withLock { _ = $0.timelines.insert(ObjectIdentifier(timeline)) }
        return timeline
    }

    /// Disposes of a timeline: Audio Queue's `AudioQueueDisposeTimeline`.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` for a timeline of another queue.
    public func disposeTimeline(_ timeline: Timeline) throws(AudioQueueError) {
        let removed = state.withLock { $0.timelines.remove(ObjectIdentifier(timeline)) != nil }
        if !removed {
            throw AudioQueueError(.invalidParameter, "timeline does not belong to queue '\(name)' (or was disposed of)")
        }
    }

    /// The current queue time: Audio Queue's `AudioQueueGetCurrentTime`.
    ///
    /// - Parameter timeline: a timeline of this queue; its discontinuity flag is reported and
    ///   cleared. Nil reports no discontinuity.
    /// - Returns: the queue sample time (frames at the queue's rate since it started, pauses
    ///   excluded), the device sample time and host time it corresponds to, and whether a
    ///   discontinuity happened since the timeline was last read.
    public func currentTime(timeline: Timeline? = nil) throws(AudioQueueError) -> QueueTimeStamp {
        if let timeline {
            let known = state.withLock { $0.timelines.contains(ObjectIdentifier(timeline)) }
            guard known, timeline.queue === self else {
                throw AudioQueueError(.invalidParameter, "timeline does not belong to queue '\(name)' (or was disposed of)")
            }
        }
        guard let engine else {
            throw AudioQueueError(.invalidDevice, "queue '\(name)' has lost its engine")
        }
        let snapshot = clockSnapshot()
        var queueFrames = snapshot.queueTime
        let now = engine.device.currentTime()
        if snapshot.runState == .running, now.sampleTime > snapshot.deviceTime {
            queueFrames += now.sampleTime - snapshot.deviceTime
        }
        var discontinuity = false
        if let timeline {
            let count = renderState.pointee.discontinuityCount.load(ordering: .acquiring)
            discontinuity = timeline.exchangeSeen(count) != count
        }
        return QueueTimeStamp(sampleTime: fromDevice(queueFrames), deviceSampleTime: now.sampleTime,
                              hostTime: now.hostTime, discontinuity: discontinuity)
    }

    struct ClockSnapshot { var queueTime: Int64; var deviceTime: Int64; var runState: RenderRunState }

    func clockSnapshot() -> ClockSnapshot {
        let r = renderState
        return r.pointee.clockLock.read {
            ClockSnapshot(queueTime: r.pointee.publishedQueueTime.load(ordering: .relaxed),
                          deviceTime: r.pointee.publishedDeviceTime.load(ordering: .relaxed),
                          runState: RenderRunState(rawValue: r.pointee.publishedRunState.load(ordering: .relaxed)) ?? .stopped)
        }
    }

    func currentQueueDeviceFrames() -> Int64 {
        let snapshot = clockSnapshot()
        var frames = snapshot.queueTime
        if snapshot.runState == .running, let now = engine?.device.currentTime().sampleTime, now > snapshot.deviceTime {
            frames += now - snapshot.deviceTime
        }
        return frames
    }

    /// The device sample time at which queue sample time `queueTime` plays (or played), given the
    /// queue keeps running without pause: part of Audio Queue's `AudioQueueDeviceTranslateTime`.
    /// - Throws: ``AudioQueueError/Code/invalidRunState`` unless the queue is running.
    public func deviceSampleTime(forQueueTime queueTime: Int64) throws(AudioQueueError) -> Int64 {
        let snapshot = clockSnapshot()
        guard snapshot.runState == .running else {
            throw AudioQueueError(.invalidRunState, "queue '\(name)' is not running; queue time maps to device time only while it runs")
        }
        return snapshot.deviceTime - snapshot.queueTime + toDevice(queueTime)
    }

    /// The queue sample time that plays at device sample time `sampleTime` (inverse of
    /// ``deviceSampleTime(forQueueTime:)``).
    public func queueTime(forDeviceSampleTime sampleTime: Int64) throws(AudioQueueError) -> Int64 {
        let snapshot = clockSnapshot()
        guard snapshot.runState == .running else {
            throw AudioQueueError(.invalidRunState, "queue '\(name)' is not running; device time maps to queue time only while it runs")
        }
        return fromDevice(sampleTime - snapshot.deviceTime + snapshot.queueTime)
    }
}
