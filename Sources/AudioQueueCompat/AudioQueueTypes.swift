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
/// Levels in dBFS, one ``AudioQueueLevelMeterState`` per channel (read-only). The corresponding
/// Apple constant is `kAudioQueueProperty_CurrentLevelMeterDB` (`'aqmd'`).
public let kAudioQueueProperty_CurrentLevelMeterDB = fourCharCode("aqmd")
/// How many frames (at the queue's rate) an output queue converts ahead of the device (`UInt32`,
/// get and set; output queues only). A buffer is handed back to the output callback as soon as
/// its audio is in this decode buffer — not when it has played — so small buffers are refilled
/// long before the device needs them. Default 8192; 0 hands buffers back only once played. The
/// corresponding Apple constant is `kAudioQueueProperty_DecodeBufferSizeFrames` (`'dcbf'`).
public let kAudioQueueProperty_DecodeBufferSizeFrames = fourCharCode("dcbf")

// MARK: - Parameter IDs

/// Playback gain, 0…1 linear (default 1). The corresponding Apple constant is `kAudioQueueParam_Volume`.
public let kAudioQueueParam_Volume: AudioQueueParameterID = 1
/// Playback rate (not supported here: ``kAudioQueueErr_InvalidParameter``). The corresponding Apple constant is `kAudioQueueParam_PlayRate`.
public let kAudioQueueParam_PlayRate: AudioQueueParameterID = 2
/// Pitch (not supported here: ``kAudioQueueErr_InvalidParameter``). The corresponding Apple constant is `kAudioQueueParam_Pitch`.
public let kAudioQueueParam_Pitch: AudioQueueParameterID = 3
/// Volume ramp time (not supported here: ramps are always 5 ms). The corresponding Apple constant is `kAudioQueueParam_VolumeRampTime`.
public let kAudioQueueParam_VolumeRampTime: AudioQueueParameterID = 4
/// Pan (not supported here: ``kAudioQueueErr_InvalidParameter``). The corresponding Apple constant is `kAudioQueueParam_Pan`.
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
/// No codec for the format (-66673; here compressed formats return ``kAudioFormatUnsupportedDataFormatError``). The corresponding Apple constant is `kAudioQueueErr_CodecNotFound`.
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
