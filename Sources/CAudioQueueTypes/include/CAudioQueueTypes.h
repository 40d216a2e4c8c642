// The C structures of Apple's Core Audio and Audio Queue headers (CoreAudioBaseTypes.h,
// AudioQueue.h) with Apple's names, field order and layout. They are C so that the Audio Queue
// callbacks — C function pointers taking these structures — can be declared with
// `@convention(c)` in Swift. `AudioQueueCompat` re-exports this module; nothing else imports it.
#ifndef LOCKSTEP_CAUDIOQUEUETYPES_H
#define LOCKSTEP_CAUDIOQUEUETYPES_H

#include <stdint.h>

// The same file is the C API's definition of these structures (<CoreAudio/CoreAudioTypes.h> and
// <AudioToolbox/AudioQueue.h> include it), so it also compiles with GCC and as C++. Imported into
// Swift (`__swift__`), the flag types are option sets; in C and C++ they are UInt32 with
// constants, as Apple's CF_OPTIONS spells them there (so `a | b` assigns in C++).
#if defined(__swift__)
#define LOCKSTEP_OPTIONS_BEGIN(name) typedef enum __attribute__((flag_enum, enum_extensibility(open))) name : uint32_t {
#define LOCKSTEP_OPTIONS_END(name) } name;
#else
#define LOCKSTEP_OPTIONS_BEGIN(name) typedef uint32_t name; enum {
#define LOCKSTEP_OPTIONS_END(name) };
#endif
#if !defined(__clang__)
#ifndef _Nullable
#define _Nullable
#endif
#endif

#if defined(__clang__)
#pragma clang assume_nonnull begin
#endif

/// The complete description of an audio stream's format (40 bytes). The corresponding Apple type
/// is `AudioStreamBasicDescription`.
typedef struct AudioStreamBasicDescription {
    /// Frames per second.
    double mSampleRate;
    /// The format, such as `kAudioFormatLinearPCM`.
    uint32_t mFormatID;
    /// Format-specific flags, such as `kLinearPCMFormatFlagIsSignedInteger`.
    uint32_t mFormatFlags;
    /// Bytes in one packet (linear PCM: `mBytesPerFrame`); 0 for variable-size packets.
    uint32_t mBytesPerPacket;
    /// Frames in one packet (1 for linear PCM).
    uint32_t mFramesPerPacket;
    /// Bytes in one frame, all channels.
    uint32_t mBytesPerFrame;
    /// Channels in one frame.
    uint32_t mChannelsPerFrame;
    /// Bits in one sample of one channel.
    uint32_t mBitsPerChannel;
    /// Padding; 0.
    uint32_t mReserved;
} AudioStreamBasicDescription;

/// An SMPTE time (unused by Lockstep; here for the layout of `AudioTimeStamp`). The corresponding
/// Apple type is `SMPTETime`.
typedef struct SMPTETime {
    /// Subframes.
    int16_t mSubframes;
    /// Subframes per frame.
    int16_t mSubframeDivisor;
    /// Total frames counted.
    uint32_t mCounter;
    /// The SMPTE type.
    uint32_t mType;
    /// SMPTE flags.
    uint32_t mFlags;
    /// Hours.
    int16_t mHours;
    /// Minutes.
    int16_t mMinutes;
    /// Seconds.
    int16_t mSeconds;
    /// Frames.
    int16_t mFrames;
} SMPTETime;

/// Which fields of an `AudioTimeStamp` are valid. The corresponding Apple type is
/// `AudioTimeStampFlags`: imported into Swift as an `OptionSet` (`.sampleTimeValid`, …), as
/// Apple's `CF_OPTIONS` type is.
LOCKSTEP_OPTIONS_BEGIN(AudioTimeStampFlags)
    /// Nothing is valid.
    kAudioTimeStampNothingValid = 0,
    /// `mSampleTime` is valid.
    kAudioTimeStampSampleTimeValid = (1U << 0),
    /// `mHostTime` is valid.
    kAudioTimeStampHostTimeValid = (1U << 1),
    /// `mRateScalar` is valid.
    kAudioTimeStampRateScalarValid = (1U << 2),
    /// `mWordClockTime` is valid.
    kAudioTimeStampWordClockTimeValid = (1U << 3),
    /// `mSMPTETime` is valid.
    kAudioTimeStampSMPTETimeValid = (1U << 4),
    /// Sample time and host time are valid.
    kAudioTimeStampSampleHostTimeValid = (kAudioTimeStampSampleTimeValid | kAudioTimeStampHostTimeValid)
LOCKSTEP_OPTIONS_END(AudioTimeStampFlags)

/// A point in time in several representations. The corresponding Apple type is `AudioTimeStamp`.
/// On Linux `mHostTime` counts microseconds (JACK's clock, or rendered audio offline).
typedef struct AudioTimeStamp {
    /// A sample frame time.
    double mSampleTime;
    /// A host time (µs on Linux; host ticks on Apple).
    uint64_t mHostTime;
    /// Actual over nominal host ticks per frame (1 here).
    double mRateScalar;
    /// A word clock time (unused).
    uint64_t mWordClockTime;
    /// An SMPTE time (unused).
    SMPTETime mSMPTETime;
    /// Which fields are valid (`.sampleTimeValid`, …).
    AudioTimeStampFlags mFlags;
    /// Padding.
    uint32_t mReserved;
} AudioTimeStamp;

/// One packet of a buffer of variable-size packets (linear PCM needs none). The corresponding
/// Apple type is `AudioStreamPacketDescription`.
typedef struct AudioStreamPacketDescription {
    /// The packet's byte offset in the buffer.
    int64_t mStartOffset;
    /// Frames in the packet (0: constant frames per packet).
    uint32_t mVariableFramesInPacket;
    /// The packet's size in bytes.
    uint32_t mDataByteSize;
} AudioStreamPacketDescription;

/// One channel's role in a layout (20 bytes). The corresponding Apple type is `AudioChannelDescription`.
typedef struct AudioChannelDescription {
    /// The channel label.
    uint32_t mChannelLabel;
    /// Flags for the coordinates.
    uint32_t mChannelFlags;
    /// Coordinates.
    float mCoordinates[3];
} AudioChannelDescription;

/// A channel layout with one inline description (C's variable-length array: allocate
/// 12 + 20 × n bytes for n). The corresponding Apple type is `AudioChannelLayout`.
typedef struct AudioChannelLayout {
    /// The layout tag (`kAudioChannelLayoutTag_Stereo`, …).
    uint32_t mChannelLayoutTag;
    /// The channel bitmap, for `kAudioChannelLayoutTag_UseChannelBitmap`.
    uint32_t mChannelBitmap;
    /// Descriptions that follow.
    uint32_t mNumberChannelDescriptions;
    /// The first description.
    AudioChannelDescription mChannelDescriptions[1];
} AudioChannelLayout;

/// One buffer of audio in an `AudioBufferList` (16 bytes). The corresponding Apple type is
/// `AudioBuffer`.
typedef struct AudioBuffer {
    /// Interleaved channels in the buffer (1 for each buffer of non-interleaved audio).
    uint32_t mNumberChannels;
    /// Bytes of audio in `mData`.
    uint32_t mDataByteSize;
    /// The audio.
    void * _Nullable mData;
} AudioBuffer;

/// A variable-length list of `AudioBuffer`s: C's `mBuffers[1]` stands for `mNumberBuffers` of
/// them (24 bytes with one; allocate `AudioBufferList.sizeInBytes(maximumBuffers:)` for more).
/// The corresponding Apple type is `AudioBufferList`.
typedef struct AudioBufferList {
    /// How many buffers follow.
    uint32_t mNumberBuffers;
    /// The first buffer; the others follow it in memory.
    AudioBuffer mBuffers[1];
} AudioBufferList;

/// How many frames a sample-rate converter needs before (leading) and after (trailing) the
/// frames it converts. The corresponding Apple type is `AudioConverterPrimeInfo`.
typedef struct AudioConverterPrimeInfo {
    /// Frames needed before the first converted frame.
    uint32_t leadingFrames;
    /// Frames needed after the last converted frame.
    uint32_t trailingFrames;
} AudioConverterPrimeInfo;

/// An audio queue buffer. The corresponding Apple type is `AudioQueueBuffer`. Write `mAudioData`
/// and set `mAudioDataByteSize` before enqueueing on a playback queue; the queue owns the memory.
typedef struct AudioQueueBuffer {
    /// The size of `mAudioData` in bytes, fixed at allocation.
    const uint32_t mAudioDataBytesCapacity;
    /// The audio data; its address never changes.
    void * const mAudioData;
    /// Valid bytes in `mAudioData`: set by you for playback, by the queue for recording.
    uint32_t mAudioDataByteSize;
    /// Your own pointer.
    void * _Nullable mUserData;
    /// Room for packet descriptions.
    const uint32_t mPacketDescriptionCapacity;
    /// The packet descriptions, or NULL.
    AudioStreamPacketDescription * const _Nullable mPacketDescriptions;
    /// Valid packet descriptions.
    uint32_t mPacketDescriptionCount;
} AudioQueueBuffer;

/// One channel's level. The corresponding Apple type is `AudioQueueLevelMeterState`.
typedef struct AudioQueueLevelMeterState {
    /// The average (RMS) power over the last ≈50 ms: linear 0…1, or dBFS.
    float mAveragePower;
    /// The peak power over the last ≈50 ms: linear 0…1, or dBFS.
    float mPeakPower;
} AudioQueueLevelMeterState;

/// A parameter value carried by an enqueued buffer. The corresponding Apple type is
/// `AudioQueueParameterEvent`.
typedef struct AudioQueueParameterEvent {
    /// The parameter (`kAudioQueueParam_Volume`).
    uint32_t mID;
    /// The value.
    float mValue;
} AudioQueueParameterEvent;

/// The functions of a C program's libdispatch that the C API runs block callbacks with, on a
/// `dispatch_queue_t` of that program (`queue`): `dispatch_async_f`, `dispatch_sync_f`,
/// `dispatch_retain` and `dispatch_release`. Lockstep addition: `<AudioToolbox/AudioQueue.h>` fills
/// it in inside the program, so that the library (which has its own libdispatch inside) uses the
/// program's.
typedef struct AudioQueueCompatDispatchFunctions {
    /// Runs `work(context)` on `queue` asynchronously.
    void (*dispatchAsync)(void *queue, void * _Nullable context, void (*work)(void * _Nullable context));
    /// Runs `work(context)` on `queue` and returns once it has run.
    void (*dispatchSync)(void *queue, void * _Nullable context, void (*work)(void * _Nullable context));
    /// Retains `queue` (while an audio queue uses it).
    void (*retainQueue)(void *queue);
    /// Releases `queue`.
    void (*releaseQueue)(void *queue);
} AudioQueueCompatDispatchFunctions;

/// Flags of a property an audio file stream reports. The corresponding Apple type is
/// `AudioFileStreamPropertyFlags` (imported as an option set: `.propertyIsCached`, `.cacheProperty`).
LOCKSTEP_OPTIONS_BEGIN(AudioFileStreamPropertyFlags)
    /// The stream keeps the property's value: it can be read later.
    kAudioFileStreamPropertyFlag_PropertyIsCached = 1,
    /// Set by the listener to ask that the value be kept.
    kAudioFileStreamPropertyFlag_CacheProperty = 2
LOCKSTEP_OPTIONS_END(AudioFileStreamPropertyFlags)

/// Flags of `AudioFileStreamParseBytes`. The corresponding Apple type is `AudioFileStreamParseFlags`.
LOCKSTEP_OPTIONS_BEGIN(AudioFileStreamParseFlags)
    /// The bytes do not follow the previous ones (after a seek, or data lost).
    kAudioFileStreamParseFlag_Discontinuity = 1
LOCKSTEP_OPTIONS_END(AudioFileStreamParseFlags)

/// Flags of `AudioFileStreamSeek`. The corresponding Apple type is `AudioFileStreamSeekFlags`.
LOCKSTEP_OPTIONS_BEGIN(AudioFileStreamSeekFlags)
    /// The byte offset returned is an estimate.
    kAudioFileStreamSeekFlag_OffsetIsEstimated = 1
LOCKSTEP_OPTIONS_END(AudioFileStreamSeekFlags)

#if defined(__clang__)
#pragma clang assume_nonnull end
#endif

#endif
