// Lockstep's C API: Apple's <CoreAudio/CoreAudioTypes.h> — the stream format, time stamp, buffer
// list and channel layout structures and the format constants. The structures are defined once,
// in CAudioQueueTypes.h, the header Lockstep's Swift layer (AudioQueueCompat) imports too.
#ifndef LOCKSTEP_COREAUDIOTYPES_H
#define LOCKSTEP_COREAUDIOTYPES_H

#include <CoreFoundation/CoreFoundation.h>
#include <CAudioQueueTypes.h>

LOCKSTEP_EXTERN_C_BEGIN

/// Identifies an audio data format ('lpcm', 'alac', …).
typedef UInt32 AudioFormatID;
/// Flags that describe an audio data format.
typedef UInt32 AudioFormatFlags;
/// Identifies a channel layout.
typedef UInt32 AudioChannelLayoutTag;

/// Format IDs, format flags, channel layout tags and the generic result codes, with Apple's values.
enum {
    /// A generic "bad argument" result (a nil pointer where one is needed, an unknown object).
    kAudio_ParamError = -50,
    /// Memory could not be allocated.
    kAudio_MemFullError = -108,
    /// Linear PCM.
    kAudioFormatLinearPCM = 0x6C70636D  /* 'lpcm' */,
    /// AAC (compressed: read, written and played as packets; decoded by FFmpeg).
    kAudioFormatMPEG4AAC = 0x61616320  /* 'aac ' */,
    /// Apple Lossless (compressed: read, written and played as packets).
    kAudioFormatAppleLossless = 0x616C6163  /* 'alac' */,
    /// IMA 4:1 ADPCM (compressed: read from CAF/AIFC, written to CAF, played).
    kAudioFormatAppleIMA4 = 0x696D6134  /* 'ima4' */,
    /// MPEG-1 Layer 3 (compressed: read and played as packets; not written).
    kAudioFormatMPEGLayer3 = 0x2E6D7033  /* '.mp3' */,
    /// FLAC (compressed: queues play its packets; FLAC files are read as linear PCM through
    /// libsndfile).
    kAudioFormatFLAC = 0x666C6163  /* 'flac' */,
    /// µ-law (queues play it; CAF files hold it).
    kAudioFormatULaw = 0x756C6177  /* 'ulaw' */,
    /// A-law (queues play it; CAF files hold it).
    kAudioFormatALaw = 0x616C6177  /* 'alaw' */,
    /// Samples are IEEE floats.
    kAudioFormatFlagIsFloat = 1,
    /// Samples are big-endian.
    kAudioFormatFlagIsBigEndian = 2,
    /// Integer samples are signed.
    kAudioFormatFlagIsSignedInteger = 4,
    /// Samples fill their bytes completely.
    kAudioFormatFlagIsPacked = 8,
    /// Unpacked samples sit in the high bits.
    kAudioFormatFlagIsAlignedHigh = 16,
    /// Channels are in separate buffers (queues reject this, as Apple's do).
    kAudioFormatFlagIsNonInterleaved = 32,
    /// The native byte order's flags: 0 on little-endian Linux.
    kAudioFormatFlagsNativeEndian = 0,
    /// Native-endian packed float.
    kAudioFormatFlagsNativeFloatPacked = 9,
    /// The linear PCM spelling of kAudioFormatFlagIsFloat.
    kLinearPCMFormatFlagIsFloat = 1,
    /// The linear PCM spelling of kAudioFormatFlagIsBigEndian.
    kLinearPCMFormatFlagIsBigEndian = 2,
    /// The linear PCM spelling of kAudioFormatFlagIsSignedInteger.
    kLinearPCMFormatFlagIsSignedInteger = 4,
    /// The linear PCM spelling of kAudioFormatFlagIsPacked.
    kLinearPCMFormatFlagIsPacked = 8,
    /// The linear PCM spelling of kAudioFormatFlagIsAlignedHigh.
    kLinearPCMFormatFlagIsAlignedHigh = 16,
    /// The linear PCM spelling of kAudioFormatFlagIsNonInterleaved.
    kLinearPCMFormatFlagIsNonInterleaved = 32,
    /// The samples must not be mixed (carried through unchanged).
    kAudioFormatFlagIsNonMixable = 64,
    /// The linear PCM spelling of kAudioFormatFlagIsNonMixable.
    kLinearPCMFormatFlagIsNonMixable = 64,
    /// Where the fixed-point fraction bit count sits in linear PCM flags (bits 7…12): flags >>
    /// kLinearPCMFormatFlagsSampleFractionShift & 0x3F is the number of fractional bits of fixed-point
    /// samples. Integer samples here have none (0); a format with fraction bits is refused ('fmt?').
    kLinearPCMFormatFlagsSampleFractionShift = 7,
    /// The bits of the fixed-point fraction bit count in linear PCM flags (0x3F << 7).
    kLinearPCMFormatFlagsSampleFractionMask = 8064,
    /// Apple Lossless from 16-bit source data (format flags of kAudioFormatAppleLossless, which is
    /// read, decoded and encoded through FFmpeg).
    kAppleLosslessFormatFlag_16BitSourceData = 1,
    /// Apple Lossless from 20-bit source data.
    kAppleLosslessFormatFlag_20BitSourceData = 2,
    /// Apple Lossless from 24-bit source data.
    kAppleLosslessFormatFlag_24BitSourceData = 3,
    /// Apple Lossless from 32-bit source data.
    kAppleLosslessFormatFlag_32BitSourceData = 4,
    /// The stream format is not supported (declared in AudioFormat.h): 'fmt?'.
    kAudioFormatUnsupportedDataFormatError = 1718449215,
    /// The layout is given by its channel descriptions.
    kAudioChannelLayoutTag_UseChannelDescriptions = 0,
    /// The layout is given by its bitmap.
    kAudioChannelLayoutTag_UseChannelBitmap = 65536,
    /// One channel.
    kAudioChannelLayoutTag_Mono = 6553601,
    /// Left, right.
    kAudioChannelLayoutTag_Stereo = 6619138,
    /// N channels with no particular meaning, in order; or the low 16 bits with this tag.
    kAudioChannelLayoutTag_DiscreteInOrder = 9633792,
};
// Above INT_MAX, so not enumerators (ISO C's enumerators are ints): constants of AudioFormatFlags.
/// Marks a format whose flags are all clear (an explicit "no flags").
#define kAudioFormatFlagsAreAllClear ((AudioFormatFlags)0x80000000u)
/// The linear PCM spelling of kAudioFormatFlagsAreAllClear.
#define kLinearPCMFormatFlagsAreAllClear ((AudioFormatFlags)0x80000000u)

LOCKSTEP_EXTERN_C_END

#endif
