import Lockstep

// Audio Queue Services' types and constants (AudioQueue.h) with Apple's names and values.

/// An audio queue: an opaque reference. The corresponding Apple type is `AudioQueueRef`.
///
/// A reference stays valid until ``AudioQueueDispose(_:_:)``; afterwards every function given it
/// returns ``kAudio_ParamError`` (on Apple the behaviour is undefined).
public typealias AudioQueueRef = OpaquePointer

/// A queue's timeline object. The corresponding Apple type is `AudioQueueTimelineRef`.
public typealias AudioQueueTimelineRef = OpaquePointer

/// Identifies an audio queue property. The corresponding Apple type is `AudioQueuePropertyID`.
public typealias AudioQueuePropertyID = UInt32
/// Identifies an audio queue parameter. The corresponding Apple type is `AudioQueueParameterID`.
public typealias AudioQueueParameterID = UInt32
/// A parameter value. The corresponding Apple type is `AudioQueueParameterValue`.
public typealias AudioQueueParameterValue = Float32

/// A pointer to an audio queue buffer. The corresponding Apple type is `AudioQueueBufferRef`.
public typealias AudioQueueBufferRef = UnsafeMutablePointer<AudioQueueBuffer>

// MARK: - Callbacks

/// Called with each buffer an output queue has finished with. The corresponding Apple type is
/// `AudioQueueOutputCallback`. Runs on the engine's callback thread (for an offline queue: inside
/// ``AudioQueueOfflineRender(_:_:_:_:)``), never on the realtime thread.
public typealias AudioQueueOutputCallback = @convention(c) (
    _ inUserData: UnsafeMutableRawPointer?, _ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef) -> Void

/// Called with each buffer an input queue has filled. The corresponding Apple type is
/// `AudioQueueInputCallback`. For linear PCM, `inNumberPacketDescriptions` is the number of
/// packets (frames) in the buffer and `inPacketDescs` is nil; `inStartTime.mSampleTime` is the
/// buffer's first frame in queue time (0 at the queue's first recorded frame).
public typealias AudioQueueInputCallback = @convention(c) (
    _ inUserData: UnsafeMutableRawPointer?, _ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef,
    _ inStartTime: UnsafePointer<AudioTimeStamp>, _ inNumberPacketDescriptions: UInt32,
    _ inPacketDescs: UnsafePointer<AudioStreamPacketDescription>?) -> Void

/// Called when a property changes. The corresponding Apple type is `AudioQueuePropertyListenerProc`.
public typealias AudioQueuePropertyListenerProc = @convention(c) (
    _ inUserData: UnsafeMutableRawPointer?, _ inAQ: AudioQueueRef, _ inID: AudioQueuePropertyID) -> Void

/// Called on a dispatch queue with each buffer an output queue has finished with. The
/// corresponding Apple type is `AudioQueueOutputCallbackBlock`.
public typealias AudioQueueOutputCallbackBlock = (_ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef) -> Void

/// Called on a dispatch queue with each buffer an input queue has filled. The corresponding Apple
/// type is `AudioQueueInputCallbackBlock`.
public typealias AudioQueueInputCallbackBlock = (
    _ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef, _ inStartTime: UnsafePointer<AudioTimeStamp>,
    _ inNumberPacketDescriptions: UInt32, _ inPacketDescs: UnsafePointer<AudioStreamPacketDescription>?) -> Void

// MARK: - Property IDs

/// Whether the queue runs (read-only `UInt32`, listenable). The corresponding Apple constant is
/// `kAudioQueueProperty_IsRunning` (`'aqrn'`).
public let kAudioQueueProperty_IsRunning = fourCharCode("aqrn")
/// The device's sample rate (read-only `Float64`). The corresponding Apple constant is
/// `kAudioQueueDeviceProperty_SampleRate` (`'aqsr'`).
public let kAudioQueueDeviceProperty_SampleRate = fourCharCode("aqsr")
/// The device's output (input, for an input queue) channel count (read-only `UInt32`). The
/// corresponding Apple constant is `kAudioQueueDeviceProperty_NumberChannels` (`'aqdc'`).
public let kAudioQueueDeviceProperty_NumberChannels = fourCharCode("aqdc")
/// The device's UID (a ``CFString``): on Linux the JACK client name, or `offline`. The
/// corresponding Apple constant is `kAudioQueueProperty_CurrentDevice` (`'aqcd'`).
public let kAudioQueueProperty_CurrentDevice = fourCharCode("aqcd")
/// The format's magic cookie (bytes; linear PCM has none: size 0). The corresponding Apple
/// constant is `kAudioQueueProperty_MagicCookie` (`'aqmc'`).
public let kAudioQueueProperty_MagicCookie = fourCharCode("aqmc")
/// The largest packet in bytes (read-only `UInt32`). The corresponding Apple constant is
/// `kAudioQueueProperty_MaximumOutputPacketSize` (`'xops'`).
public let kAudioQueueProperty_MaximumOutputPacketSize = fourCharCode("xops")
/// The queue's format (read-only ``AudioStreamBasicDescription``). The corresponding Apple
/// constant is `kAudioQueueProperty_StreamDescription` (`'aqft'`).
public let kAudioQueueProperty_StreamDescription = fourCharCode("aqft")
/// The channel layout (``AudioChannelLayout``). The corresponding Apple constant is
/// `kAudioQueueProperty_ChannelLayout` (`'aqcl'`).
public let kAudioQueueProperty_ChannelLayout = fourCharCode("aqcl")
/// Whether level metering is on (`UInt32`). The corresponding Apple constant is
/// `kAudioQueueProperty_EnableLevelMetering` (`'aqme'`).
public let kAudioQueueProperty_EnableLevelMetering = fourCharCode("aqme")
/// Levels, linear, one ``AudioQueueLevelMeterState`` per channel (read-only). The corresponding
/// Apple constant is `kAudioQueueProperty_CurrentLevelMeter` (`'aqmv'`).
public let kAudioQueueProperty_CurrentLevelMeter = fourCharCode("aqmv")
/// Levels in dBFS, one ``AudioQueueLevelMeterState`` per channel (read-only). Silence (a level
/// at or below 10⁻⁶) reads −120 dB, the floor of Apple's own power meter (`kMinDecibelsPower` of
/// `PowerMeter` in Apple's Core Audio utility sample code; Apple's reference does not state the
/// queue's floor), never −∞. The corresponding Apple constant is
/// `kAudioQueueProperty_CurrentLevelMeterDB` (`'aqmd'`).
public let kAudioQueueProperty_CurrentLevelMeterDB = fourCharCode("aqmd")
/// How many frames (at the queue's rate) an output queue converts ahead of the device (`UInt32`,
/// get and set; output queues only). A buffer is handed back to the output callback as soon as
/// its audio is in this decode buffer — not when it has played — so small buffers are refilled
/// long before the device needs them. Default 8192; 0 hands buffers back only once played. The
/// corresponding Apple constant is `kAudioQueueProperty_DecodeBufferSizeFrames` (`'dcbf'`).
public let kAudioQueueProperty_DecodeBufferSizeFrames = fourCharCode("dcbf")
/// The most recent error of the queue's format converter (read-only `UInt32`, listenable): a
/// recording queue's encoder's last failure; otherwise 0 (`noErr`) — linear PCM conversion and
/// decoding report their errors from the call that converts (enqueue). The corresponding Apple
/// constant is `kAudioQueueProperty_ConverterError` (`'qcve'`).
public let kAudioQueueProperty_ConverterError = fourCharCode("qcve")
/// Whether the queue's time-pitch processor is on (`UInt32`). Lockstep has none: 0, and setting
/// 1 returns ``kAudioQueueErr_InvalidPropertyValue``. The corresponding Apple constant is
/// `kAudioQueueProperty_EnableTimePitch` (`'q_tp'`).
public let kAudioQueueProperty_EnableTimePitch = fourCharCode("q_tp")
/// The time-pitch algorithm (`UInt32`, one of the `kAudioQueueTimePitchAlgorithm_…` values;
/// default Spectral, as on macOS). Stored and reported; it has no effect, since time-pitch
/// processing cannot be enabled. The corresponding Apple constant is
/// `kAudioQueueProperty_TimePitchAlgorithm` (`'qtpa'`).
public let kAudioQueueProperty_TimePitchAlgorithm = fourCharCode("qtpa")
/// Whether the time-pitch processor is bypassed (`UInt32`). Stored and reported; audio always
/// bypasses it here. The corresponding Apple constant is `kAudioQueueProperty_TimePitchBypass` (`'qtpb'`).
public let kAudioQueueProperty_TimePitchBypass = fourCharCode("qtpb")
/// Spectral time-pitch processing. The corresponding Apple constant is `kAudioQueueTimePitchAlgorithm_Spectral` (`'spec'`).
public let kAudioQueueTimePitchAlgorithm_Spectral = fourCharCode("spec")
/// Time-domain time-pitch processing. The corresponding Apple constant is `kAudioQueueTimePitchAlgorithm_TimeDomain` (`'tido'`).
public let kAudioQueueTimePitchAlgorithm_TimeDomain = fourCharCode("tido")
/// Varispeed (rate and pitch together). The corresponding Apple constant is `kAudioQueueTimePitchAlgorithm_Varispeed` (`'vspd'`).
public let kAudioQueueTimePitchAlgorithm_Varispeed = fourCharCode("vspd")
/// Low-quality, zero-latency time-pitch processing. The corresponding Apple constant is
/// `kAudioQueueTimePitchAlgorithm_LowQualityZeroLatency` (`'lqzl'`).
public let kAudioQueueTimePitchAlgorithm_LowQualityZeroLatency = fourCharCode("lqzl")
/// Which codecs the queue may use (`UInt32`, a `kAudioQueueHardwareCodecPolicy_…` value; default
/// 0). Every codec here is software: Default, UseSoftwareOnly, PreferSoftware and PreferHardware
/// are accepted; UseHardwareOnly returns ``kAudioQueueErr_InvalidPropertyValue``. The
/// corresponding Apple constant is `kAudioQueueProperty_HardwareCodecPolicy` (`'aqcp'`).
public let kAudioQueueProperty_HardwareCodecPolicy = fourCharCode("aqcp")
/// The system's choice. The corresponding Apple constant is `kAudioQueueHardwareCodecPolicy_Default` (0).
public let kAudioQueueHardwareCodecPolicy_Default: UInt32 = 0
/// Software codecs only. The corresponding Apple constant is `kAudioQueueHardwareCodecPolicy_UseSoftwareOnly` (1).
public let kAudioQueueHardwareCodecPolicy_UseSoftwareOnly: UInt32 = 1
/// Hardware codecs only (none exist here). The corresponding Apple constant is `kAudioQueueHardwareCodecPolicy_UseHardwareOnly` (2).
public let kAudioQueueHardwareCodecPolicy_UseHardwareOnly: UInt32 = 2
/// Software codecs first. The corresponding Apple constant is `kAudioQueueHardwareCodecPolicy_PreferSoftware` (3).
public let kAudioQueueHardwareCodecPolicy_PreferSoftware: UInt32 = 3
/// Hardware codecs first (software here, there being no hardware). The corresponding Apple
/// constant is `kAudioQueueHardwareCodecPolicy_PreferHardware` (4).
public let kAudioQueueHardwareCodecPolicy_PreferHardware: UInt32 = 4
/// Which device channel each queue channel plays on (an array of
/// ``AudioQueueChannelAssignment``, one per queue channel). Queue channel *n* plays on device
/// channel *n*: reading reports that, and setting accepts only that order on the queue's own
/// device (another order, device or count returns ``kAudioQueueErr_InvalidPropertyValue``). The
/// corresponding Apple constant is `kAudioQueueProperty_ChannelAssignments` (`'aqca'`).
public let kAudioQueueProperty_ChannelAssignments = fourCharCode("aqca")

/// Where one channel of a queue plays: a device (by UID — here the JACK client's name, or
/// `offline`) and a channel of it, counted from 1. The corresponding Apple type is
/// `AudioQueueChannelAssignment` (16 bytes, as Apple's Swift import).
public struct AudioQueueChannelAssignment: @unchecked Sendable {
    /// The device's UID.
    public var mDeviceUID: Unmanaged<CFString>
    /// The device channel, from 1.
    public var mChannelNumber: UInt32
    /// Creates an assignment.
    public init(mDeviceUID: Unmanaged<CFString>, mChannelNumber: UInt32) {
        self.mDeviceUID = mDeviceUID
        self.mChannelNumber = mChannelNumber
    }
}

// MARK: - Parameter IDs

/// Playback gain, 0…1 linear (default 1). The corresponding Apple constant is `kAudioQueueParam_Volume`.
public let kAudioQueueParam_Volume: AudioQueueParameterID = 1
/// Playback rate, 0.5…2 on Apple with time-pitch processing. Lockstep has no time-pitch
/// processor: reading gives 1, setting 1 does nothing, any other value returns
/// ``kAudioQueueErr_InvalidParameter``. The corresponding Apple constant is `kAudioQueueParam_PlayRate`.
public let kAudioQueueParam_PlayRate: AudioQueueParameterID = 2
/// Pitch shift in cents, with time-pitch processing on Apple. Not provided: reading gives 0,
/// setting 0 does nothing, any other value returns ``kAudioQueueErr_InvalidParameter``. The
/// corresponding Apple constant is `kAudioQueueParam_Pitch`.
public let kAudioQueueParam_Pitch: AudioQueueParameterID = 3
/// Seconds over which later Volume (and Pan) changes ramp, set or carried by a buffer; 0 (the
/// default) ramps over 5 ms so changes never click. The corresponding Apple constant is
/// `kAudioQueueParam_VolumeRampTime`.
public let kAudioQueueParam_VolumeRampTime: AudioQueueParameterID = 4
/// Pan, −1 (left) … 0 (centre) … 1 (right), for mono and stereo queues on a device of two or more
/// channels: equal-power with unity at the centre (``PanLaw``), ramped like Volume. No effect on
/// queues of more channels (as on Apple). The corresponding Apple constant is `kAudioQueueParam_Pan`.
public let kAudioQueueParam_Pan: AudioQueueParameterID = 13

// MARK: - Result codes

/// The buffer does not belong to the queue (-66687). The corresponding Apple constant is `kAudioQueueErr_InvalidBuffer`.
public let kAudioQueueErr_InvalidBuffer = AudioQueueError.Code.invalidBuffer.rawValue
/// The buffer is empty (`mAudioDataByteSize` is 0) (-66686). The corresponding Apple constant is `kAudioQueueErr_BufferEmpty`.
public let kAudioQueueErr_BufferEmpty = AudioQueueError.Code.bufferEmpty.rawValue
/// The queue is being disposed of (-66685). The corresponding Apple constant is `kAudioQueueErr_DisposalPending`.
public let kAudioQueueErr_DisposalPending = AudioQueueError.Code.disposalPending.rawValue
/// The property ID is invalid (-66684). The corresponding Apple constant is `kAudioQueueErr_InvalidProperty`.
public let kAudioQueueErr_InvalidProperty = AudioQueueError.Code.invalidProperty.rawValue
/// The property size is invalid (-66683). The corresponding Apple constant is `kAudioQueueErr_InvalidPropertySize`.
public let kAudioQueueErr_InvalidPropertySize = AudioQueueError.Code.invalidPropertySize.rawValue
/// The parameter ID (or value) is invalid (-66682). The corresponding Apple constant is `kAudioQueueErr_InvalidParameter`.
public let kAudioQueueErr_InvalidParameter = AudioQueueError.Code.invalidParameter.rawValue
/// The queue cannot start (-66681). The corresponding Apple constant is `kAudioQueueErr_CannotStart`.
public let kAudioQueueErr_CannotStart = AudioQueueError.Code.cannotStart.rawValue
/// The device could not be found or used (-66680). The corresponding Apple constant is `kAudioQueueErr_InvalidDevice`.
public let kAudioQueueErr_InvalidDevice = AudioQueueError.Code.invalidDevice.rawValue
/// The buffer cannot be freed while enqueued (-66679). The corresponding Apple constant is `kAudioQueueErr_BufferInQueue`.
public let kAudioQueueErr_BufferInQueue = AudioQueueError.Code.bufferInQueue.rawValue
/// The queue's run state does not allow the call (-66678). The corresponding Apple constant is `kAudioQueueErr_InvalidRunState`.
public let kAudioQueueErr_InvalidRunState = AudioQueueError.Code.invalidRunState.rawValue
/// The call needs an output (or input) queue (-66677). The corresponding Apple constant is `kAudioQueueErr_InvalidQueueType`.
public let kAudioQueueErr_InvalidQueueType = AudioQueueError.Code.invalidQueueType.rawValue
/// Permission denied (-66676; never returned here). The corresponding Apple constant is `kAudioQueueErr_Permissions`.
public let kAudioQueueErr_Permissions: OSStatus = -66676
/// The property value is invalid (-66675). The corresponding Apple constant is `kAudioQueueErr_InvalidPropertyValue`.
public let kAudioQueueErr_InvalidPropertyValue: OSStatus = -66675
/// Priming timed out (-66674; never returned here). The corresponding Apple constant is `kAudioQueueErr_PrimeTimedOut`.
public let kAudioQueueErr_PrimeTimedOut: OSStatus = -66674
/// No codec for the format (-66673; never returned here: formats without a codec return ``kAudioFormatUnsupportedDataFormatError``). The corresponding Apple constant is `kAudioQueueErr_CodecNotFound`.
public let kAudioQueueErr_CodecNotFound: OSStatus = -66673
/// The codec cannot be accessed (-66672; never returned here). The corresponding Apple constant is `kAudioQueueErr_InvalidCodecAccess`.
public let kAudioQueueErr_InvalidCodecAccess: OSStatus = -66672
/// The queue was invalidated (-66671; never returned here). The corresponding Apple constant is `kAudioQueueErr_QueueInvalidated`.
public let kAudioQueueErr_QueueInvalidated: OSStatus = -66671
/// Too many processing taps (-66670; taps are not provided). The corresponding Apple constant is `kAudioQueueErr_TooManyTaps`.
public let kAudioQueueErr_TooManyTaps: OSStatus = -66670
/// Invalid tap context (-66669; taps are not provided). The corresponding Apple constant is `kAudioQueueErr_InvalidTapContext`.
public let kAudioQueueErr_InvalidTapContext: OSStatus = -66669
/// Recording fell behind (-66668; here lost input is reported as a discontinuity). The corresponding Apple constant is `kAudioQueueErr_RecordUnderrun`.
public let kAudioQueueErr_RecordUnderrun: OSStatus = -66668
/// Invalid tap type (-66667; taps are not provided). The corresponding Apple constant is `kAudioQueueErr_InvalidTapType`.
public let kAudioQueueErr_InvalidTapType: OSStatus = -66667
/// The buffer is already enqueued (-66666). The corresponding Apple constant is `kAudioQueueErr_BufferEnqueuedTwice`.
public let kAudioQueueErr_BufferEnqueuedTwice = AudioQueueError.Code.bufferEnqueuedTwice.rawValue
/// The queue cannot start yet (-66665; never returned here). The corresponding Apple constant is `kAudioQueueErr_CannotStartYet`.
public let kAudioQueueErr_CannotStartYet: OSStatus = -66665
/// Buffers cannot be enqueued during a reset (-66632). The corresponding Apple constant is `kAudioQueueErr_EnqueueDuringReset`.
public let kAudioQueueErr_EnqueueDuringReset = AudioQueueError.Code.enqueueDuringReset.rawValue
/// The call needs (or forbids) offline rendering (-66626). The corresponding Apple constant is `kAudioQueueErr_InvalidOfflineMode`.
public let kAudioQueueErr_InvalidOfflineMode = AudioQueueError.Code.invalidOfflineMode.rawValue
