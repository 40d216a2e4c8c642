import CJack
import Foundation
import Lockstep
import Synchronization

/// The clock: device sample time, host time and JACK frame time.
extension JACKDevice {
    /// The device time now: JACK's current frame time mapped to the device timeline, and
    /// `jack_get_time`.
    public func currentTime() -> DeviceTimeStamp {
        let rt = realtime
        if rt.pointee.isShutDown.load(ordering: .acquiring) {
            let last = max(0, rt.pointee.cycleStart.load(ordering: .acquiring))
            return DeviceTimeStamp(sampleTime: last, hostTime: 0)
        }
        let now = jack_get_time()
        guard let frame32 = withClient({ jack_frame_time($0) }) else {
            return DeviceTimeStamp(sampleTime: max(0, rt.pointee.cycleStart.load(ordering: .acquiring)), hostTime: now)
        }
        guard let cycle = rt.pointee.clock() else {
            return DeviceTimeStamp(sampleTime: Int64(frame32), hostTime: now)
        }
        let delta = Int64(Int32(bitPattern: frame32 &- UInt32(truncatingIfNeeded: cycle.jackFrame)))
        // Trust JACK's estimate only near the last cycle (some servers answer oddly between
        // cycles); otherwise extrapolate from the last cycle with the host clock.
        let period = Int64(max(1, cycle.period))
        if delta < 0 || delta > 8 * period + Int64(sampleRate / 10) {
            let elapsed = now > cycle.hostTime ? Double(now - cycle.hostTime) * sampleRate / 1_000_000 : 0
            return DeviceTimeStamp(sampleTime: cycle.sampleTime + min(Int64(elapsed), 8 * period), hostTime: now)
        }
        return DeviceTimeStamp(sampleTime: cycle.sampleTime + delta, hostTime: now)
    }

    /// The device sample time at which the latest cycle whose callback has begun starts (nil
    /// before the first cycle): read from the device's own counter, not from JACK's estimate of
    /// the time. Its samples are computed or being computed, so a change posted now lands at
    /// `latestCycleStart + period` or later.
    public var latestCycleStart: Int64? { realtime.pointee.clock()?.sampleTime }

    /// The first cycle whose callback has not begun and will not begin for at least half a
    /// period: a change posted now reaches it in time, so a start there lands on its exact frame.
    ///
    /// The cycle under way (or last rendered) began at the device's latest cycle start `F`; the
    /// next callback begins at `F + period`. While JACK's clock says that is more than half a
    /// period away, the earliest start is `F + period` (0.5 to 1 period from now); later in the
    /// period it is `F + 2 × period` (1 to 1.5 periods). Callers that compute before they post
    /// (``Lockstep/Engine``'s group starts, the session player's edits) check afterwards that no
    /// cycle began meanwhile, and compute again if one did.
    public func nearestStartTime(atOrAfter sampleTime: Int64) -> Int64 {
        guard let cycle = realtime.pointee.clock() else {
            return max(sampleTime, currentTime().sampleTime + 2 * Int64(max(1, periodFrames)))
        }
        let period = Int64(max(1, cycle.period))
        let next = cycle.sampleTime + period
        let now = currentTime().sampleTime
        return max(sampleTime, now < next - period / 2 ? next : next + period)
    }

    /// JACK's estimate of when `sampleTime` is (or was) at the start of its cycle, through the
    /// current mapping of device time to JACK frame time.
    public func hostTime(forSampleTime sampleTime: Int64) -> UInt64 {
        let frame = realtime.pointee.jackFrame(forDeviceTime: sampleTime)
        return withClient { jack_frames_to_time($0, frame) } ?? 0
    }

    /// JACK's estimate of the device sample time at `hostTime`.
    public func sampleTime(forHostTime hostTime: UInt64) -> Int64 {
        guard let frame = withClient({ jack_time_to_frames($0, hostTime) }) else { return currentTime().sampleTime }
        return realtime.pointee.deviceTime(forJACKFrame: frame)
    }

    /// The JACK frame time (`jack_frame_time`'s clock, 32 bits as JACK's API takes it) of a device
    /// sample time, by the current mapping: for times exchanged with other JACK clients (MIDI
    /// event times, transport, `jack_capture` recordings).
    ///
    /// The device timeline counts the frames really rendered; JACK's frame clock jumps against it
    /// (jackd2 moves it by new − old period at every period change, reported as a
    /// ``Lockstep/Discontinuity/Kind/clockJump``), so the mapping is exact for times near the
    /// current cycle and shifts by each jump's length.
    public func jackFrameTime(forSampleTime sampleTime: Int64) -> UInt32 {
        realtime.pointee.jackFrame(forDeviceTime: sampleTime)
    }

    /// The device sample time of a JACK frame time near the current cycle (the inverse of
    /// ``jackFrameTime(forSampleTime:)``).
    public func sampleTime(forJACKFrameTime frame: UInt32) -> Int64 {
        realtime.pointee.deviceTime(forJACKFrame: frame)
    }

    /// JACK's frame time minus the device sample time: 0 until JACK's clock first jumps against
    /// the frames rendered, then the sum of the jumps.
    public var jackFrameOffset: Int64 {
        guard let cycle = realtime.pointee.clock() else { return 0 }
        return cycle.jackFrame - cycle.sampleTime
    }
}

/// The wall clock, by the device's own cycles.
extension JACKDevice {
    /// The wall-clock time (seconds since 1970) at which device sample `sampleTime` plays (the
    /// start of its cycle plus its place in it), by a loop on the process callbacks' own times and
    /// the frames really played — not JACK's estimate, so it holds for a server on a clock of its
    /// own. Steered (``enableSteering()``), the device's sample time runs at the steering ratio,
    /// and its samples sound ``steeringDelay`` later. Nil before the first cycle.
    public func wallClock(forSampleTime sampleTime: Int64) -> Double? {
        guard let cycle = realtime.pointee.wallClock() else { return nil }
        return cycle.time + Double(sampleTime - cycle.sampleTime) * cycle.secondsPerFrame / steeringRatio
    }
}
