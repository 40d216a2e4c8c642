/// A point on the device timeline: a device sample time and the host time it corresponds to.
public struct DeviceTimeStamp: Sendable, Hashable {
    /// Frames since the device (and engine) started; never wraps.
    public var sampleTime: Int64
    /// Host time in microseconds (for JACK, `jack_get_time`'s clock; for an offline device,
    /// `sampleTime / sampleRate` seconds expressed in microseconds).
    public var hostTime: UInt64

    /// Creates a time stamp.
    public init(sampleTime: Int64, hostTime: UInt64) {
        self.sampleTime = sampleTime
        self.hostTime = hostTime
    }
}

/// The clock and the pull: something that calls the engine's render path and owns the timeline.
///
/// `OfflineDevice` (here) renders on demand, as fast as asked; `JACKDevice` (in `LockstepJACK`)
/// renders from JACK's process callback. Nothing above the device knows which one runs.
public protocol AudioDevice: AnyObject, Sendable {
    /// A name for the device, such as a JACK client name (`kAudioQueueProperty_CurrentDevice`).
    var name: String { get }
    /// Frames per second.
    var sampleRate: Double { get }
    /// Output channels.
    var channelCount: Int { get }
    /// The most frames one render cycle may ask for.
    var maximumFramesPerCycle: Int { get }
    /// Whether the device renders on demand on the caller's thread (callbacks are then delivered
    /// synchronously after each render) rather than from a realtime thread of its own.
    var isOffline: Bool { get }
    /// Whether the device is running (rendering, or ready to render on demand).
    var isRunning: Bool { get }

    /// Connects the device to an engine's render path. Called once, by the engine.
    func attach(_ renderer: DeviceRenderer) throws(AudioQueueError)
    /// Stops rendering for good and forgets the engine's render path; called by the engine when it
    /// goes away. After it returns the device must never call the renderer again.
    func detach()
    /// Starts the device if it isn't running. Idempotent.
    func start() throws(AudioQueueError)
    /// Stops the device. Idempotent.
    func stop()

    /// The device time now (for a live device: interpolated within the current cycle).
    func currentTime() -> DeviceTimeStamp
    /// The earliest sample time at or after `sampleTime` at which a start can be honoured exactly.
    func nearestStartTime(atOrAfter sampleTime: Int64) -> Int64
    /// The host time (µs) at which `sampleTime` is (or was, or will be) rendered.
    func hostTime(forSampleTime sampleTime: Int64) -> UInt64
    /// The sample time rendered at `hostTime` (µs).
    func sampleTime(forHostTime hostTime: UInt64) -> Int64
}

/// The engine's render entry point as handed to a device.
///
/// A trivial value (pointers only): copying it never retains. Its methods marked realtime-safe
/// may be called from a realtime thread.
public struct DeviceRenderer: @unchecked Sendable {
    let core: RenderCore
    unowned(unsafe) let pump: EventPump

    /// Device channels the engine mixes into.
    public var channelCount: Int { core.channelCount }
    /// The largest `frames` a render call may pass.
    public var maximumFrames: Int { core.maximumFrames }

    /// Renders `frames` frames of the mix starting at device sample time `sampleTime` into
    /// `output` (one pointer per device channel, each at least `frames` floats).
    ///
    /// Realtime-safe: never allocates, locks, logs or waits (release builds check this with
    /// `@_noAllocation @_noLocks`).
    #if LOCKSTEP_REALTIME_CHECKS
    @_noAllocation @_noLocks
    public func render(frames: Int, sampleTime: Int64, output: UnsafePointer<UnsafeMutablePointer<Float>>) {
        core.render(frames: frames, sampleTime: sampleTime, output: output)
    }
    #else
    public func render(frames: Int, sampleTime: Int64, output: UnsafePointer<UnsafeMutablePointer<Float>>) {
        core.render(frames: frames, sampleTime: sampleTime, output: output)
    }
    #endif

    /// Reports a device-level discontinuity from any thread, including the realtime thread.
    ///
    /// `detail` is kind-specific (xrun delay µs, new rate, new period size, freewheel 1/0).
    /// Realtime-safe (the work is done by a `@_noAllocation @_noLocks` core function).
    @inline(__always)
    public func reportDiscontinuity(_ kind: Discontinuity.Kind, sampleTime: Int64, detail: Int64) {
        core.reportDeviceDiscontinuity(kind: kind.code, sampleTime: sampleTime, detail: detail)
    }

    /// Delivers pending callbacks and events on the calling thread. Offline devices call this
    /// after each render; never call it from a realtime thread.
    public func deliverPendingEvents() {
        pump.drain()
    }
}
