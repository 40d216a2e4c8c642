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
    /// Input channels (0 for a device without inputs).
    var inputChannelCount: Int { get }
    /// The most frames one render cycle may ask for.
    var maximumFramesPerCycle: Int { get }
    /// The frames of one render cycle now (JACK's period); ``maximumFramesPerCycle`` for a device
    /// whose cycles vary.
    var periodFrames: Int { get }
    /// Whether the device renders on demand on the caller's thread rather than from a realtime
    /// thread of its own.
    var isOffline: Bool { get }
    /// How the engine delivers callbacks and events for this device: inline after each render
    /// (offline devices), or on the engine's callback thread, which the device wakes after each
    /// cycle. By default, inline for an offline device.
    var callbackDelivery: CallbackDelivery { get }
    /// Whether the device is running (rendering, or ready to render on demand).
    var isRunning: Bool { get }
    /// Frames between the moment a frame reaching the device's inputs was heard at its source and
    /// the device sample time at which it is captured (JACK: the capture latency of the ports
    /// connected to the inputs, the channels aligned to the largest). 0 by default.
    var captureLatency: Int { get }
    /// Frames between the device sample time a frame is rendered at and the moment it is heard at
    /// the outputs' far end (JACK: the playback latency of the connected ports, the outputs
    /// aligned to the largest when compensation is on). 0 by default.
    var playbackLatency: Int { get }

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

    /// Creates outputs of the device's own for one queue (JACK: ports `<name>_1…<name>_N`), whose
    /// buffers the device refreshes before every render. Devices without such outputs throw
    /// ``AudioQueueError/Code/invalidDevice`` (the default).
    func makeDirectOutputs(name: String, channelCount: Int) throws(AudioQueueError) -> DirectOutputs
    /// Releases outputs made by ``makeDirectOutputs(name:channelCount:)``, once the render path no
    /// longer uses them.
    func releaseDirectOutputs(_ outputs: DirectOutputs)
}

/// How an engine delivers its queues' callbacks and events (see ``AudioDevice/callbackDelivery``).
public enum CallbackDelivery: Sendable, Hashable {
    /// On the thread that renders, when the device calls ``DeviceRenderer/deliverPendingEvents()``
    /// after each render; Dispatch-queue callbacks run synchronously, so everything a render
    /// caused has been delivered when it returns.
    case inline
    /// On the engine's callback thread, which the device wakes after each cycle that left it
    /// something with ``DeviceRenderer/wakeCallbackThread()`` (realtime-safe); without wakes it
    /// looks every 20 ms.
    case callbackThread
}

extension AudioDevice {
    /// ``maximumFramesPerCycle``, for a device whose cycles vary (an offline device renders what
    /// it is asked).
    public var periodFrames: Int { maximumFramesPerCycle }

    /// By default inline for an offline device, the engine's callback thread otherwise.
    public var callbackDelivery: CallbackDelivery { isOffline ? .inline : .callbackThread }

    /// By default a device has no inputs.
    public var inputChannelCount: Int { 0 }

    /// By default a device has no capture latency.
    public var captureLatency: Int { 0 }

    /// By default a device has no playback latency.
    public var playbackLatency: Int { 0 }

    /// By default a device has no outputs of its own per queue.
    public func makeDirectOutputs(name: String, channelCount: Int) throws(AudioQueueError) -> DirectOutputs {
        throw AudioQueueError(.invalidDevice, "device '\(self.name)' has no per-queue outputs; use a JACK device for per-queue ports")
    }

    /// By default there is nothing to release.
    public func releaseDirectOutputs(_ outputs: DirectOutputs) {}
}

/// Outputs a device provides for one queue alone (for JACK, one port per queue channel), so the
/// queue can be routed on its own besides being mixed into the master outputs.
///
/// The device owns the object and, before each render, points ``buffers`` at this cycle's memory
/// (each at least the cycle's frames long, zeroed) or at nil; the render path adds the queue's
/// post-gain audio there.
public final class DirectOutputs: @unchecked Sendable {
    /// Outputs, one per queue channel.
    public let channelCount: Int
    /// The device's names for the outputs (JACK: full port names).
    public let names: [String]
    /// This cycle's buffers, one per channel; written by the device on its render thread.
    public let buffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    /// Anything the device needs to keep with the outputs (its port handles, say).
    public let context: (any Sendable)?

    /// Creates outputs with `channelCount` buffer pointers, all nil.
    public init(channelCount: Int, names: [String], context: (any Sendable)? = nil) {
        self.channelCount = channelCount
        self.names = names
        self.context = context
        buffers = .allocate(capacity: max(1, channelCount))
        buffers.initialize(repeating: nil, count: max(1, channelCount))
    }

    deinit { buffers.deallocate() }
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
    #if LOCKSTEP_REALTIME_CHECKS && !LOCKSTEP_UNOPTIMIZED
    @_noAllocation @_noLocks
    public func render(frames: Int, sampleTime: Int64, output: UnsafePointer<UnsafeMutablePointer<Float>>) {
        core.render(frames: frames, sampleTime: sampleTime, input: nil, output: output)
    }
    #else
    public func render(frames: Int, sampleTime: Int64, output: UnsafePointer<UnsafeMutablePointer<Float>>) {
        core.render(frames: frames, sampleTime: sampleTime, input: nil, output: output)
    }
    #endif

    /// Captures `frames` frames of device input (`input`: one pointer per device input channel,
    /// ``inputChannelCount`` of them; nil records silence) into the running input queues, then
    /// renders the mix into `output` — one device cycle, both directions on one sample time.
    ///
    /// Realtime-safe: never allocates, locks, logs or waits.
    #if LOCKSTEP_REALTIME_CHECKS && !LOCKSTEP_UNOPTIMIZED
    @_noAllocation @_noLocks
    public func render(frames: Int, sampleTime: Int64, input: UnsafePointer<UnsafeMutablePointer<Float>>?,
                       output: UnsafePointer<UnsafeMutablePointer<Float>>) {
        core.render(frames: frames, sampleTime: sampleTime, input: input, output: output)
    }
    #else
    public func render(frames: Int, sampleTime: Int64, input: UnsafePointer<UnsafeMutablePointer<Float>>?,
                       output: UnsafePointer<UnsafeMutablePointer<Float>>) {
        core.render(frames: frames, sampleTime: sampleTime, input: input, output: output)
    }
    #endif

    /// Device input channels the engine captures from.
    public var inputChannelCount: Int { core.inputChannelCount }

    /// Whether a helper thread can share this engine's render cycles: an engine of more than 256
    /// queues renders its queues in chunks of 128 slots, which the device's thread and one helper
    /// claim between them (the mix is the same sum either way, chunk by chunk in order).
    public var canShareRendering: Bool { core.lanes != nil }

    /// The helper's loop, for a thread the device creates at its render thread's realtime
    /// priority on a machine with a second core: waits to be woken by a render and renders its
    /// share of the cycle, until ``stopRenderHelper()``. Returns at once when
    /// ``canShareRendering`` is false. Start at most one helper per engine, and join it before
    /// the device lets go of the engine.
    ///
    /// The render thread never waits for a helper that has not started a chunk, so a helper
    /// that is late, or absent, only means the render thread renders more itself. It does spin
    /// on a chunk the helper has started, so the helper must not be preempted by ordinary
    /// threads: give it realtime priority, or no helper at all.
    public func runRenderHelper() { core.helperLane()?.runHelper() }

    /// Makes ``runRenderHelper()`` return (soon; then join its thread). Call once.
    public func stopRenderHelper() { core.stopHelper() }

    /// Reports a device-level discontinuity from any thread, including the realtime thread.
    ///
    /// `sampleTime` is the device sample time it happened at (measure it on the render thread:
    /// it is the best time there is), `length` its length in frames (see
    /// ``Discontinuity/length``), `detail` is kind-specific (xrun delay µs, new rate, new period
    /// size, freewheel 1/0). Realtime-safe (the work is done by a `@_noAllocation @_noLocks` core
    /// function).
    @inline(__always)
    public func reportDiscontinuity(_ kind: Discontinuity.Kind, sampleTime: Int64, length: Int64 = 0, detail: Int64) {
        core.reportDeviceDiscontinuity(kind: kind.code, sampleTime: sampleTime, length: length, detail: detail)
    }

    /// Tells the engine, from the render thread before it renders the cycle at `sampleTime`, that
    /// the device now runs at `rate`: a `sampleRateChange` discontinuity is reported there, and
    /// every queue stops on that sample rather than play audio prepared for the old rate at the
    /// wrong pitch (``OutputQueue/stopError`` says why; create queues again to play on).
    ///
    /// Realtime-safe.
    public func reportSampleRateChange(sampleTime: Int64, rate: Int) {
        core.stopForRateChange(at: sampleTime, rate: Int64(rate))
    }

    /// Wakes the engine's callback thread when the last render left it something to deliver:
    /// events (buffers played, starts, stops, discontinuities), input queues' audio, or a thread
    /// waiting on deliveries. Call it from the render thread after each cycle (devices with
    /// ``CallbackDelivery/callbackThread``).
    ///
    /// Realtime-safe: three atomic loads, then at most one semaphore post, skipped when a wake is
    /// already pending; it never allocates, locks or blocks. A cycle that leaves nothing makes no
    /// system call: a wake costs the render thread a futex wake and, on a virtual machine, the
    /// other core's wake-up (a quarter of `play`'s process thread among eight stems).
    @inline(__always)
    public func wakeCallbackThread() {
        if core.hasDeliveries { pump.wake() }
    }

    /// Delivers pending callbacks and events on the calling thread. Offline devices call this
    /// after each render; never call it from a realtime thread.
    public func deliverPendingEvents() {
        pump.drain()
    }

    /// Reports a device-level discontinuity from a thread that is *not* the render thread (JACK's
    /// notification thread, say). Not realtime-safe (it takes a lock), but never waits for the
    /// render thread.
    public func reportDiscontinuityFromNotificationThread(_ kind: Discontinuity.Kind, sampleTime: Int64,
                                                         length: Int64 = 0, detail: Double) {
        pump.engine?.deviceDiscontinuity(kind, sampleTime: sampleTime, length: length, detail: detail)
    }

    /// Tells the engine that the device has stopped rendering for good (its server went away, say):
    /// every queue stops at `sampleTime` and hands its buffers back, is-running listeners fire,
    /// and `error` becomes the engine's ``Engine/deviceError``.
    ///
    /// Call it from any thread except the render thread, and only once the device guarantees
    /// that its render thread will not call ``render(frames:sampleTime:output:)`` again.
    public func deviceStopped(at sampleTime: Int64, error: AudioQueueError) {
        guard let engine = pump.engine else { return }
        engine.deviceDidStop(at: sampleTime, error: error)
    }
}
