/// Something that happened to an ``OutputQueue``, as delivered by ``OutputQueue/events``.
public enum QueueEvent: Sendable {
    /// The queue really started playing (or resumed) at this device sample time.
    case started(sampleTime: Int64)
    /// The queue was paused at this device sample time.
    case paused(sampleTime: Int64)
    /// The queue really stopped at this device sample time.
    case stopped(sampleTime: Int64)
    /// The queue finished with a buffer (played, reset or stopped) and hands it back.
    case bufferCompleted(QueueBuffer)
    /// The timeline broke: an underrun of this queue or a device-level discontinuity.
    case discontinuity(Discontinuity)
    /// The queue was disposed of; no events follow.
    case disposed
}

/// The properties of an ``OutputQueue``, for ``OutputQueue/addPropertyListener(_:_:)``: Audio
/// Queue's property IDs.
public enum QueueProperty: String, Sendable, Hashable, CaseIterable {
    /// `kAudioQueueProperty_IsRunning`: whether the queue is running. Listeners fire when the
    /// queue really starts and stops on the device (not when `start()` is called).
    case isRunning
    /// `kAudioQueueProperty_StreamDescription`: the queue's format (read-only).
    case streamFormat
    /// `kAudioQueueDeviceProperty_SampleRate`: the device's sample rate.
    case deviceSampleRate
    /// `kAudioQueueDeviceProperty_NumberChannels`: the device's channel count.
    case deviceChannelCount
    /// `kAudioQueueProperty_CurrentDevice`: the device's name.
    case currentDevice
    /// `kAudioQueueProperty_EnableLevelMetering`: whether metering is on.
    case isLevelMeteringEnabled
    /// `kAudioQueueProperty_CurrentLevelMeter`: the current levels, linear (not listenable).
    case currentLevelMeter
    /// `kAudioQueueProperty_CurrentLevelMeterDB`: the current levels in dB (not listenable).
    case currentLevelMeterDB

    /// Whether listeners may be added for this property.
    public var isListenable: Bool {
        self != .currentLevelMeter && self != .currentLevelMeterDB
    }
}

/// A parameter that can be set on a queue or carried by a buffer: Audio Queue's parameter IDs.
public enum QueueParameter: UInt32, Sendable, Hashable, CaseIterable {
    /// `kAudioQueueParam_Volume`: playback gain, 0 (silent) … 1 (unity), linear.
    case volume = 1
    /// `kAudioQueueParam_VolumeRampTime`: seconds (≥ 0) over which later Volume changes ramp;
    /// 0 (the default) ramps over the engine's ``Engine/gainRampFrames`` (5 ms) so nothing clicks.
    case volumeRampTime = 4
    /// `kAudioQueueParam_Pan`: −1 (left) … 0 (centre, the default) … 1 (right), for mono and
    /// stereo queues on a device of two or more channels; see ``PanLaw``. No effect on queues of
    /// more than two channels (as on Apple) or a mono device.
    case pan = 13
}

/// A parameter value carried by an enqueued buffer and applied when that buffer starts playing:
/// Audio Queue's `AudioQueueParameterEvent`.
public struct ParameterEvent: Sendable, Hashable {
    /// The parameter to set.
    public var parameter: QueueParameter
    /// The value; for ``QueueParameter/volume``, 0…1; for ``QueueParameter/volumeRampTime``,
    /// seconds ≥ 0; for ``QueueParameter/pan``, −1…1.
    public var value: Float

    /// Creates a parameter event.
    public init(_ parameter: QueueParameter, _ value: Float) {
        self.parameter = parameter
        self.value = value
    }
}

/// Where a queue's callbacks (output callback, property listeners) run.
public enum CallbackExecutor: Sendable {
    /// The engine's callback thread (for an offline device, the thread that calls `render`).
    case engineThread
    /// A Dispatch queue of yours. With an offline device, callbacks are delivered synchronously
    /// (`sync`) before `render` returns, so don't render from that same queue.
    case dispatchQueue(DispatchQueueBox)
}

import Dispatch

/// Wraps a `DispatchQueue` for ``CallbackExecutor/dispatchQueue(_:)``.
public struct DispatchQueueBox: Sendable {
    /// The queue callbacks run on.
    public let queue: DispatchQueue
    /// Wraps `queue`.
    public init(_ queue: DispatchQueue) { self.queue = queue }
}

extension CallbackExecutor {
    /// Callbacks run on the given Dispatch queue.
    public static func queue(_ queue: DispatchQueue) -> CallbackExecutor { .dispatchQueue(DispatchQueueBox(queue)) }
}
