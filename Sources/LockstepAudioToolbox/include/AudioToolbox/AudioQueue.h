// Lockstep's C API: Apple's <AudioToolbox/AudioQueue.h> — Audio Queue Services on Lockstep's
// engine, playing and recording through JACK (or rendering offline).
//
// Every function is Lockstep's Swift implementation (module AudioQueueCompat) exported to C.
// Results are Apple's codes; AudioQueueCompatLastErrorMessage() says in words why the last call
// failed. Callbacks run on the run loop given at creation (inside CFRunLoopRun or
// CFRunLoopRunInMode on that run loop's thread), or, with NULL, on the queue's callback thread —
// never on JACK's realtime thread; blocks (clang -fblocks) on their dispatch queue. See
// Docs/CAPI.md for what differs from Apple.
#ifndef LOCKSTEP_AUDIOQUEUE_H
#define LOCKSTEP_AUDIOQUEUE_H

#include <CoreAudio/CoreAudioTypes.h>

// With blocks (clang -fblocks) and libdispatch's headers, the dispatch-queue functions too.
#if defined(__BLOCKS__) && defined(__has_include)
#if __has_include(<dispatch/dispatch.h>)
#include <dispatch/dispatch.h>
#define LOCKSTEP_AUDIOQUEUE_DISPATCH 1
#endif
#endif

LOCKSTEP_EXTERN_C_BEGIN

/// An audio queue (opaque). A reference stays valid until AudioQueueDispose; afterwards every
/// function given it returns kAudio_ParamError.
typedef struct OpaqueAudioQueue *AudioQueueRef;
/// A queue's timeline object (opaque).
typedef struct OpaqueAudioQueueTimeline *AudioQueueTimelineRef;
/// Identifies an audio queue property.
typedef UInt32 AudioQueuePropertyID;
/// Identifies an audio queue parameter.
typedef UInt32 AudioQueueParameterID;
/// A parameter value.
typedef Float32 AudioQueueParameterValue;
/// A pointer to an audio queue buffer (AudioQueueBuffer: see CAudioQueueTypes.h).
typedef AudioQueueBuffer *AudioQueueBufferRef;

/// Called with each buffer an output queue has finished with: refill and enqueue it.
typedef void (*AudioQueueOutputCallback)(void *inUserData, AudioQueueRef inAQ, AudioQueueBufferRef inBuffer);
/// Called with each buffer an input queue has filled. For linear PCM, `inNumberPacketDescriptions`
/// is the number of frames and `inPacketDescs` is NULL; `inStartTime->mSampleTime` is the
/// buffer's first frame in queue time.
typedef void (*AudioQueueInputCallback)(void *inUserData, AudioQueueRef inAQ, AudioQueueBufferRef inBuffer,
                                        const AudioTimeStamp *inStartTime, UInt32 inNumberPacketDescriptions,
                                        const AudioStreamPacketDescription *inPacketDescs);
/// Called when a listened-to property changes (kAudioQueueProperty_IsRunning, …).
typedef void (*AudioQueuePropertyListenerProc)(void *inUserData, AudioQueueRef inAQ, AudioQueuePropertyID inID);

/// Where one channel of a queue plays: a device (by UID: the JACK client's name, or "offline")
/// and a channel of it, counted from 1.
typedef struct AudioQueueChannelAssignment {
    /// The device's UID.
    CFStringRef mDeviceUID;
    /// The device channel, from 1.
    UInt32 mChannelNumber;
} AudioQueueChannelAssignment;

/// Property IDs, parameter IDs, time-pitch and codec-policy values and result codes, with Apple's values.
enum {
    /// Whether the queue runs (read-only UInt32, listenable).
    kAudioQueueProperty_IsRunning = 0x6171726E  /* 'aqrn' */,
    /// The device's sample rate (read-only Float64).
    kAudioQueueDeviceProperty_SampleRate = 0x61717372  /* 'aqsr' */,
    /// The device's output (input, for an input queue) channel count (read-only UInt32).
    kAudioQueueDeviceProperty_NumberChannels = 0x61716463  /* 'aqdc' */,
    /// The device's UID (a CFString): on Linux the JACK client name, or offline.
    kAudioQueueProperty_CurrentDevice = 0x61716364  /* 'aqcd' */,
    /// The format's magic cookie (bytes; linear PCM has none: size 0).
    kAudioQueueProperty_MagicCookie = 0x61716D63  /* 'aqmc' */,
    /// The largest packet in bytes (read-only UInt32).
    kAudioQueueProperty_MaximumOutputPacketSize = 0x786F7073  /* 'xops' */,
    /// The queue's format (read-only AudioStreamBasicDescription).
    kAudioQueueProperty_StreamDescription = 0x61716674  /* 'aqft' */,
    /// The channel layout (AudioChannelLayout).
    kAudioQueueProperty_ChannelLayout = 0x6171636C  /* 'aqcl' */,
    /// Whether level metering is on (UInt32).
    kAudioQueueProperty_EnableLevelMetering = 0x61716D65  /* 'aqme' */,
    /// Levels, linear, one AudioQueueLevelMeterState per channel (read-only).
    kAudioQueueProperty_CurrentLevelMeter = 0x61716D76  /* 'aqmv' */,
    /// Levels in dBFS, one AudioQueueLevelMeterState per channel (read-only). Silence (a level at or
    /// below 10⁻⁶) reads −120 dB, the floor of Apple's own power meter (kMinDecibelsPower of PowerMeter
    /// in Apple's Core Audio utility sample code; Apple's reference does not state the queue's floor),
    /// never −∞.
    kAudioQueueProperty_CurrentLevelMeterDB = 0x61716D64  /* 'aqmd' */,
    /// How many frames (at the queue's rate) an output queue converts ahead of the device (UInt32, get
    /// and set; output queues only). A buffer is handed back to the output callback as soon as its
    /// audio is in this decode buffer — not when it has played — so small buffers are refilled long
    /// before the device needs them. Default 8192; 0 hands buffers back only once played.
    kAudioQueueProperty_DecodeBufferSizeFrames = 0x64636266  /* 'dcbf' */,
    /// The most recent error of the queue's format converter (read-only UInt32, listenable): a
    /// recording queue's encoder's last failure; otherwise 0 (noErr) — linear PCM conversion and
    /// decoding report their errors from the call that converts (enqueue).
    kAudioQueueProperty_ConverterError = 0x71637665  /* 'qcve' */,
    /// Whether the queue's time-pitch processor is on (UInt32). Lockstep has none: 0, and setting 1
    /// returns kAudioQueueErr_InvalidPropertyValue.
    kAudioQueueProperty_EnableTimePitch = 0x715F7470  /* 'q_tp' */,
    /// The time-pitch algorithm (UInt32, one of the kAudioQueueTimePitchAlgorithm_… values; default
    /// Spectral, as on macOS). Stored and reported; it has no effect, since time-pitch processing
    /// cannot be enabled.
    kAudioQueueProperty_TimePitchAlgorithm = 0x71747061  /* 'qtpa' */,
    /// Whether the time-pitch processor is bypassed (UInt32). Stored and reported; audio always
    /// bypasses it here.
    kAudioQueueProperty_TimePitchBypass = 0x71747062  /* 'qtpb' */,
    /// Spectral time-pitch processing.
    kAudioQueueTimePitchAlgorithm_Spectral = 0x73706563  /* 'spec' */,
    /// Time-domain time-pitch processing.
    kAudioQueueTimePitchAlgorithm_TimeDomain = 0x7469646F  /* 'tido' */,
    /// Varispeed (rate and pitch together).
    kAudioQueueTimePitchAlgorithm_Varispeed = 0x76737064  /* 'vspd' */,
    /// Low-quality, zero-latency time-pitch processing.
    kAudioQueueTimePitchAlgorithm_LowQualityZeroLatency = 0x6C717A6C  /* 'lqzl' */,
    /// Which codecs the queue may use (UInt32, a kAudioQueueHardwareCodecPolicy_… value; default 0).
    /// Every codec here is software: Default, UseSoftwareOnly, PreferSoftware and PreferHardware are
    /// accepted; UseHardwareOnly returns kAudioQueueErr_InvalidPropertyValue.
    kAudioQueueProperty_HardwareCodecPolicy = 0x61716370  /* 'aqcp' */,
    /// The system's choice.
    kAudioQueueHardwareCodecPolicy_Default = 0,
    /// Software codecs only.
    kAudioQueueHardwareCodecPolicy_UseSoftwareOnly = 1,
    /// Hardware codecs only (none exist here).
    kAudioQueueHardwareCodecPolicy_UseHardwareOnly = 2,
    /// Software codecs first.
    kAudioQueueHardwareCodecPolicy_PreferSoftware = 3,
    /// Hardware codecs first (software here, there being no hardware).
    kAudioQueueHardwareCodecPolicy_PreferHardware = 4,
    /// Which device channel each queue channel plays on (an array of AudioQueueChannelAssignment, one
    /// per queue channel). Queue channel *n* plays on device channel *n*: reading reports that, and
    /// setting accepts only that order on the queue's own device (another order, device or count
    /// returns kAudioQueueErr_InvalidPropertyValue).
    kAudioQueueProperty_ChannelAssignments = 0x61716361  /* 'aqca' */,
    /// Playback gain, 0…1 linear (default 1).
    kAudioQueueParam_Volume = 1,
    /// Playback rate, 0.5…2 on Apple with time-pitch processing. Lockstep has no time-pitch processor:
    /// reading gives 1, setting 1 does nothing, any other value returns
    /// kAudioQueueErr_InvalidParameter.
    kAudioQueueParam_PlayRate = 2,
    /// Pitch shift in cents, with time-pitch processing on Apple. Not provided: reading gives 0,
    /// setting 0 does nothing, any other value returns kAudioQueueErr_InvalidParameter.
    kAudioQueueParam_Pitch = 3,
    /// Seconds over which later Volume (and Pan) changes ramp, set or carried by a buffer; 0 (the
    /// default) ramps over 5 ms so changes never click.
    kAudioQueueParam_VolumeRampTime = 4,
    /// Pan, −1 (left) … 0 (centre) … 1 (right), for mono and stereo queues on a device of two or more
    /// channels: equal-power with unity at the centre (PanLaw), ramped like Volume. No effect on queues
    /// of more channels (as on Apple).
    kAudioQueueParam_Pan = 13,
    /// The buffer does not belong to the queue (-66687).
    kAudioQueueErr_InvalidBuffer = -66687,
    /// The buffer is empty (mAudioDataByteSize is 0) (-66686).
    kAudioQueueErr_BufferEmpty = -66686,
    /// The queue is being disposed of (-66685).
    kAudioQueueErr_DisposalPending = -66685,
    /// The property ID is invalid (-66684).
    kAudioQueueErr_InvalidProperty = -66684,
    /// The property size is invalid (-66683).
    kAudioQueueErr_InvalidPropertySize = -66683,
    /// The parameter ID (or value) is invalid (-66682).
    kAudioQueueErr_InvalidParameter = -66682,
    /// The queue cannot start (-66681).
    kAudioQueueErr_CannotStart = -66681,
    /// The device could not be found or used (-66680).
    kAudioQueueErr_InvalidDevice = -66680,
    /// The buffer cannot be freed while enqueued (-66679).
    kAudioQueueErr_BufferInQueue = -66679,
    /// The queue's run state does not allow the call (-66678).
    kAudioQueueErr_InvalidRunState = -66678,
    /// The call needs an output (or input) queue (-66677).
    kAudioQueueErr_InvalidQueueType = -66677,
    /// Permission denied (-66676; never returned here).
    kAudioQueueErr_Permissions = -66676,
    /// The property value is invalid (-66675).
    kAudioQueueErr_InvalidPropertyValue = -66675,
    /// Priming timed out (-66674; never returned here).
    kAudioQueueErr_PrimeTimedOut = -66674,
    /// No codec for the format (-66673; never returned here: formats without a codec return
    /// kAudioFormatUnsupportedDataFormatError).
    kAudioQueueErr_CodecNotFound = -66673,
    /// The codec cannot be accessed (-66672; never returned here).
    kAudioQueueErr_InvalidCodecAccess = -66672,
    /// The queue was invalidated (-66671; never returned here).
    kAudioQueueErr_QueueInvalidated = -66671,
    /// Too many processing taps (-66670; taps are not provided).
    kAudioQueueErr_TooManyTaps = -66670,
    /// Invalid tap context (-66669; taps are not provided).
    kAudioQueueErr_InvalidTapContext = -66669,
    /// Recording fell behind (-66668; here lost input is reported as a discontinuity).
    kAudioQueueErr_RecordUnderrun = -66668,
    /// Invalid tap type (-66667; taps are not provided).
    kAudioQueueErr_InvalidTapType = -66667,
    /// The buffer is already enqueued (-66666).
    kAudioQueueErr_BufferEnqueuedTwice = -66666,
    /// The queue cannot start yet (-66665; never returned here).
    kAudioQueueErr_CannotStartYet = -66665,
    /// Buffers cannot be enqueued during a reset (-66632).
    kAudioQueueErr_EnqueueDuringReset = -66632,
    /// The call needs (or forbids) offline rendering (-66626).
    kAudioQueueErr_InvalidOfflineMode = -66626,
};

// MARK: Creating and disposing of queues

/// Creates a playback queue for `inFormat` (linear PCM at any rate, or a compressed format the
/// queue decodes: AAC, ALAC, MP3, IMA4, FLAC, µ-law, A-law). Callbacks run on `inCallbackRunLoop`
/// in `inCallbackRunLoopMode` (NULL mode: kCFRunLoopCommonModes), or on the queue's own callback
/// thread when `inCallbackRunLoop` is NULL. `inFlags` must be 0.
OSStatus AudioQueueNewOutput(const AudioStreamBasicDescription *inFormat, AudioQueueOutputCallback inCallbackProc,
                             void *inUserData, CFRunLoopRef inCallbackRunLoop, CFStringRef inCallbackRunLoopMode,
                             UInt32 inFlags, AudioQueueRef *outAQ);
/// Creates a recording queue for `inFormat` (linear PCM at any rate — another rate than the
/// device's is converted — or AAC, ALAC, IMA4, µ-law, A-law, encoded as it records). Callbacks
/// run as for AudioQueueNewOutput.
OSStatus AudioQueueNewInput(const AudioStreamBasicDescription *inFormat, AudioQueueInputCallback inCallbackProc,
                            void *inUserData, CFRunLoopRef inCallbackRunLoop, CFStringRef inCallbackRunLoopMode,
                            UInt32 inFlags, AudioQueueRef *outAQ);
/// Disposes of a queue and its buffers: at once (`inImmediate`, no more callbacks — not even those
/// already posted to its run loop), or after a running playback queue has played what is enqueued.
OSStatus AudioQueueDispose(AudioQueueRef inAQ, Boolean inImmediate);

// MARK: Buffers

/// Allocates a buffer of `inBufferByteSize` bytes, owned by the queue.
OSStatus AudioQueueAllocateBuffer(AudioQueueRef inAQ, UInt32 inBufferByteSize, AudioQueueBufferRef *outBuffer);
/// Allocates a buffer with room for `inNumberPacketDescriptions` packet descriptions (compressed formats).
OSStatus AudioQueueAllocateBufferWithPacketDescriptions(AudioQueueRef inAQ, UInt32 inBufferByteSize,
                                                        UInt32 inNumberPacketDescriptions, AudioQueueBufferRef *outBuffer);
/// Frees a buffer that is not enqueued.
OSStatus AudioQueueFreeBuffer(AudioQueueRef inAQ, AudioQueueBufferRef inBuffer);
/// Enqueues a buffer: filled, for playback (its bytes are copied now); to be filled, for recording.
OSStatus AudioQueueEnqueueBuffer(AudioQueueRef inAQ, AudioQueueBufferRef inBuffer, UInt32 inNumPacketDescs,
                                 const AudioStreamPacketDescription *inPacketDescs);
/// Enqueues a playback buffer with a start time (queue sample time), trims and parameter values
/// (Volume, VolumeRampTime, Pan); `outActualStartTime` receives the time it plays at.
OSStatus AudioQueueEnqueueBufferWithParameters(AudioQueueRef inAQ, AudioQueueBufferRef inBuffer, UInt32 inNumPacketDescs,
                                               const AudioStreamPacketDescription *inPacketDescs,
                                               UInt32 inTrimFramesAtStart, UInt32 inTrimFramesAtEnd,
                                               UInt32 inNumParamValues, const AudioQueueParameterEvent *inParamValues,
                                               const AudioTimeStamp *inStartTime, AudioTimeStamp *outActualStartTime);

// MARK: Running

/// Starts or resumes; `inStartTime` is a device time (mSampleTime, or mHostTime if only that is
/// valid), NULL for as soon as possible. Opens the JACK device if needed
/// (kAudioQueueErr_InvalidDevice without a JACK server).
OSStatus AudioQueueStart(AudioQueueRef inAQ, const AudioTimeStamp *inStartTime);
/// Prepares enqueued buffers (they are converted when enqueued: reports the frames enqueued).
OSStatus AudioQueuePrime(AudioQueueRef inAQ, UInt32 inNumberOfFramesToPrepare, UInt32 *outNumberOfFramesPrepared);
/// Stops: at once (`inImmediate`; returns once the stop's buffers are handed back — those for a
/// run loop are posted to it), or after what is enqueued has played or recorded.
OSStatus AudioQueueStop(AudioQueueRef inAQ, Boolean inImmediate);
/// Pauses; AudioQueueStart resumes.
OSStatus AudioQueuePause(AudioQueueRef inAQ);
/// Makes sure everything enqueued is played, including what a rate converter holds back.
OSStatus AudioQueueFlush(AudioQueueRef inAQ);
/// Hands every enqueued buffer back through the callback without stopping.
OSStatus AudioQueueReset(AudioQueueRef inAQ);

// MARK: Parameters and properties

/// Reads a parameter (Volume, VolumeRampTime, Pan; PlayRate 1 and Pitch 0).
OSStatus AudioQueueGetParameter(AudioQueueRef inAQ, AudioQueueParameterID inParamID, AudioQueueParameterValue *outValue);
/// Sets a parameter now (ramped so it never clicks).
OSStatus AudioQueueSetParameter(AudioQueueRef inAQ, AudioQueueParameterID inParamID, AudioQueueParameterValue inValue);
/// Reads a property into `outData` (at most `*ioDataSize` bytes; on return the size written).
/// kAudioQueueProperty_CurrentDevice gives a new CFStringRef: release it with CFRelease.
OSStatus AudioQueueGetProperty(AudioQueueRef inAQ, AudioQueuePropertyID inID, void *outData, UInt32 *ioDataSize);
/// Sets a property.
OSStatus AudioQueueSetProperty(AudioQueueRef inAQ, AudioQueuePropertyID inID, const void *inData, UInt32 inDataSize);
/// The size of a property's value.
OSStatus AudioQueueGetPropertySize(AudioQueueRef inAQ, AudioQueuePropertyID inID, UInt32 *outDataSize);
/// Calls `inProc` whenever the property changes (on the queue's run loop, or its callback thread).
OSStatus AudioQueueAddPropertyListener(AudioQueueRef inAQ, AudioQueuePropertyID inID, AudioQueuePropertyListenerProc inProc,
                                       void *inUserData);
/// Removes a listener added with the same ID, function and user data.
OSStatus AudioQueueRemovePropertyListener(AudioQueueRef inAQ, AudioQueuePropertyID inID,
                                          AudioQueuePropertyListenerProc inProc, void *inUserData);

// MARK: Time

/// Creates a timeline that reports discontinuities (output queues).
OSStatus AudioQueueCreateTimeline(AudioQueueRef inAQ, AudioQueueTimelineRef *outTimeline);
/// Disposes of a timeline.
OSStatus AudioQueueDisposeTimeline(AudioQueueRef inAQ, AudioQueueTimelineRef inTimeline);
/// The queue's time: mSampleTime in frames since it started; with a timeline,
/// `*outTimelineDiscontinuity` says whether a discontinuity happened since the last call.
OSStatus AudioQueueGetCurrentTime(AudioQueueRef inAQ, AudioQueueTimelineRef inTimeline, AudioTimeStamp *outTimeStamp,
                                  Boolean *outTimelineDiscontinuity);
/// The device's current time (only mHostTime, in microseconds, while the device is stopped).
OSStatus AudioQueueDeviceGetCurrentTime(AudioQueueRef inAQ, AudioTimeStamp *outTimeStamp);
/// The earliest device time at or after the requested one at which a start is honoured exactly.
OSStatus AudioQueueDeviceGetNearestStartTime(AudioQueueRef inAQ, AudioTimeStamp *ioRequestedStartTime, UInt32 inFlags);
/// Converts a device time between sample time and host time.
OSStatus AudioQueueDeviceTranslateTime(AudioQueueRef inAQ, const AudioTimeStamp *inTime, AudioTimeStamp *outTime);

// MARK: Offline rendering

/// Switches a playback queue to offline rendering in `inFormat` (linear PCM), or back with NULL.
OSStatus AudioQueueSetOfflineRenderFormat(AudioQueueRef inAQ, const AudioStreamBasicDescription *inFormat,
                                          const AudioChannelLayout *inLayout);
/// Renders the next `inNumberFrames` frames into `ioBuffer`; the callbacks they cause run before
/// it returns, on the calling thread.
OSStatus AudioQueueOfflineRender(AudioQueueRef inAQ, const AudioTimeStamp *inTimestamp, AudioQueueBufferRef ioBuffer,
                                 UInt32 inNumberFrames);

// MARK: Lockstep additions

/// Why the most recent failing Audio Queue, Audio File, Extended Audio File, Audio File Stream or
/// Audio Converter call (on any thread) failed, with its result code, or NULL if none has failed.
/// Linux addition. The text belongs to the calling thread and stays valid until its next call of
/// this function.
const char *AudioQueueCompatLastErrorMessage(void);

// MARK: Dispatch queues and blocks (clang -fblocks, with libdispatch's headers: Docs/CAPI.md)

#ifdef LOCKSTEP_AUDIOQUEUE_DISPATCH
/// Called on the queue's dispatch queue with each buffer an output queue has finished with.
typedef void (^AudioQueueOutputCallbackBlock)(AudioQueueRef inAQ, AudioQueueBufferRef inBuffer);
/// Called on the queue's dispatch queue with each buffer an input queue has filled.
typedef void (^AudioQueueInputCallbackBlock)(AudioQueueRef inAQ, AudioQueueBufferRef inBuffer,
                                             const AudioTimeStamp *inStartTime, UInt32 inNumberPacketDescriptions,
                                             const AudioStreamPacketDescription *inPacketDescs);

/// AudioQueueNewOutputWithDispatchQueue with the calling program's libdispatch functions (the
/// macro below passes them): creates a playback queue whose callback is `inCallbackBlock`, run on
/// `inCallbackDispatchQueue` (retained while the queue lives) — asynchronously, or, for offline
/// rendering, before AudioQueueOfflineRender returns. Otherwise as AudioQueueNewOutput.
OSStatus AudioQueueCompatNewOutputWithDispatchQueue(const AudioQueueCompatDispatchFunctions *inDispatch, AudioQueueRef *outAQ,
                                                    const AudioStreamBasicDescription *inFormat, UInt32 inFlags,
                                                    dispatch_queue_t inCallbackDispatchQueue,
                                                    AudioQueueOutputCallbackBlock inCallbackBlock);
/// AudioQueueNewInputWithDispatchQueue with the calling program's libdispatch functions: creates
/// a recording queue whose callback is `inCallbackBlock`, run on `inCallbackDispatchQueue`.
OSStatus AudioQueueCompatNewInputWithDispatchQueue(const AudioQueueCompatDispatchFunctions *inDispatch, AudioQueueRef *outAQ,
                                                   const AudioStreamBasicDescription *inFormat, UInt32 inFlags,
                                                   dispatch_queue_t inCallbackDispatchQueue,
                                                   AudioQueueInputCallbackBlock inCallbackBlock);

// The program's libdispatch, compiled into the program: the library has a libdispatch of its own
// inside, which must not work on the program's queues.
static inline void LockstepDispatchAsync(void *queue, void *context, void (*work)(void *)) {
    dispatch_async_f((dispatch_queue_t)queue, context, work);
}
static inline void LockstepDispatchSync(void *queue, void *context, void (*work)(void *)) {
    dispatch_sync_f((dispatch_queue_t)queue, context, work);
}
static inline void LockstepDispatchRetain(void *queue) { dispatch_retain((dispatch_queue_t)queue); }
static inline void LockstepDispatchRelease(void *queue) { dispatch_release((dispatch_queue_t)queue); }
static inline const AudioQueueCompatDispatchFunctions *LockstepDispatchFunctions(void) {
    static const AudioQueueCompatDispatchFunctions functions = {
        LockstepDispatchAsync, LockstepDispatchSync, LockstepDispatchRetain, LockstepDispatchRelease};
    return &functions;
}

/// Apple's AudioQueueNewOutputWithDispatchQueue(outAQ, inFormat, inFlags, inCallbackDispatchQueue,
/// inCallbackBlock).
#define AudioQueueNewOutputWithDispatchQueue(...) AudioQueueCompatNewOutputWithDispatchQueue(LockstepDispatchFunctions(), __VA_ARGS__)
/// Apple's AudioQueueNewInputWithDispatchQueue(outAQ, inFormat, inFlags, inCallbackDispatchQueue,
/// inCallbackBlock).
#define AudioQueueNewInputWithDispatchQueue(...) AudioQueueCompatNewInputWithDispatchQueue(LockstepDispatchFunctions(), __VA_ARGS__)
#endif

LOCKSTEP_EXTERN_C_END

#endif
