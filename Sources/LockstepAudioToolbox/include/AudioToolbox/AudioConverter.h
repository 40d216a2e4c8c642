// Lockstep's C API: Apple's <AudioToolbox/AudioConverter.h>. Audio Converter Services: converting between linear PCM
// formats and rates (libsoxr), and decoding compressed packets.
#ifndef LOCKSTEP_AUDIOCONVERTER_H
#define LOCKSTEP_AUDIOCONVERTER_H

#include <CoreAudio/CoreAudioTypes.h>

LOCKSTEP_EXTERN_C_BEGIN

/// A converter (opaque).
typedef struct OpaqueAudioConverter *AudioConverterRef;
/// Identifies a converter property.
typedef UInt32 AudioConverterPropertyID;

/// Called by AudioConverterFillComplexBuffer for more input: set `*ioNumberDataPackets` and
/// `ioData`'s buffers (0 packets: the input has ended); return noErr or an error to stop.
typedef OSStatus (*AudioConverterComplexInputDataProc)(AudioConverterRef inAudioConverter, UInt32 *ioNumberDataPackets,
                                                       AudioBufferList *ioData,
                                                       AudioStreamPacketDescription **outDataPacketDescription,
                                                       void *inUserData);

/// Property IDs, quality and prime values and result codes, with Apple's values.
enum {
    /// The smallest input buffer in bytes: one source packet (read-only UInt32).
    kAudioConverterPropertyMinimumInputBufferSize = 0x6D696273  /* 'mibs' */,
    /// The smallest output buffer in bytes: one destination packet (read-only UInt32).
    kAudioConverterPropertyMinimumOutputBufferSize = 0x6D6F6273  /* 'mobs' */,
    /// The largest input packet in bytes (read-only UInt32).
    kAudioConverterPropertyMaximumInputPacketSize = 0x78697073  /* 'xips' */,
    /// The largest output packet in bytes (read-only UInt32).
    kAudioConverterPropertyMaximumOutputPacketSize = 0x786F7073  /* 'xops' */,
    /// Given an output size in bytes (passed in the value), the input bytes it needs (UInt32).
    kAudioConverterPropertyCalculateInputBufferSize = 0x63696273  /* 'cibs' */,
    /// Given an input size in bytes (passed in the value), the output bytes it makes (UInt32).
    kAudioConverterPropertyCalculateOutputBufferSize = 0x636F6273  /* 'cobs' */,
    /// The sample-rate converter's quality (UInt32, a kAudioConverterQuality_… value; default High).
    /// Max uses libsoxr's very-high-quality recipe, the others its high-quality one; a change restarts
    /// the stream.
    kAudioConverterSampleRateConverterQuality = 0x73726371  /* 'srcq' */,
    /// The sample-rate converter's complexity (UInt32: Linear, Normal or Mastering; stored — libsoxr's
    /// filter is the same for all).
    kAudioConverterSampleRateConverterComplexity = 0x73726361  /* 'srca' */,
    /// How the converter primes (UInt32). Output here is always latency-compensated and of exact
    /// length, as with kConverterPrimeMethod_Normal: that is the value, and the only one accepted.
    kAudioConverterPrimeMethod = 0x70726D6D  /* 'prmm' */,
    /// Frames the converter needs before and after the audio (read-only AudioConverterPrimeInfo): 0 and
    /// 0, since it compensates its own latency.
    kAudioConverterPrimeInfo = 0x7072696D  /* 'prim' */,
    /// For each output channel, the input channel it takes (from 0) or −1 for silence ([SInt32], one
    /// per output channel). Default: the first min(inputs, outputs) channels in order, as Apple's; [0,
    /// 0] plays mono on both sides of stereo.
    kAudioConverterChannelMap = 0x63686D70  /* 'chmp' */,
    /// The input format (read-only AudioStreamBasicDescription).
    kAudioConverterCurrentInputStreamDescription = 0x61636964  /* 'acid' */,
    /// The output format (read-only AudioStreamBasicDescription).
    kAudioConverterCurrentOutputStreamDescription = 0x61636F64  /* 'acod' */,
    /// Maximum sample-rate converter quality (libsoxr very high).
    kAudioConverterQuality_Max = 127,
    /// High quality, the default (libsoxr high).
    kAudioConverterQuality_High = 96,
    /// Medium quality (libsoxr high here).
    kAudioConverterQuality_Medium = 64,
    /// Low quality (libsoxr high here).
    kAudioConverterQuality_Low = 32,
    /// Minimum quality (libsoxr high here).
    kAudioConverterQuality_Min = 0,
    /// Linear-interpolation complexity.
    kAudioConverterSampleRateConverterComplexity_Linear = 0x6C696E65  /* 'line' */,
    /// Normal complexity, the default.
    kAudioConverterSampleRateConverterComplexity_Normal = 0x6E6F726D  /* 'norm' */,
    /// Mastering complexity.
    kAudioConverterSampleRateConverterComplexity_Mastering = 0x62617473  /* 'bats' */,
    /// Prime with leading and trailing input.
    kConverterPrimeMethod_Pre = 0,
    /// Prime with trailing input only: the output lines up with the input (what happens here).
    kConverterPrimeMethod_Normal = 1,
    /// No priming.
    kConverterPrimeMethod_None = 2,
    /// The format is not supported — not linear PCM, or a linear PCM variant not handled ('fmt?').
    kAudioConverterErr_FormatNotSupported = 0x666D743F  /* 'fmt?' */,
    /// The operation is not supported — such as converting rates with AudioConverterConvertBuffer
    /// ('op??').
    kAudioConverterErr_OperationNotSupported = 0x6F703F3F  /* 'op??' */,
    /// The property is not supported ('prop').
    kAudioConverterErr_PropertyNotSupported = 0x70726F70  /* 'prop' */,
    /// The input size is not a whole number of frames ('insz').
    kAudioConverterErr_InvalidInputSize = 0x696E737A  /* 'insz' */,
    /// The output size is not a whole number of frames, or too small ('otsz').
    kAudioConverterErr_InvalidOutputSize = 0x6F74737A  /* 'otsz' */,
    /// Something went wrong that no other code describes ('what').
    kAudioConverterErr_UnspecifiedError = 0x77686174  /* 'what' */,
    /// The property value has the wrong size ('!siz').
    kAudioConverterErr_BadPropertySizeError = 0x2173697A  /* '!siz' */,
    /// Packet descriptions are needed (never for linear PCM) ('!pkd').
    kAudioConverterErr_RequiresPacketDescriptionsError = 0x21706B64  /* '!pkd' */,
    /// The input rate is not a positive number ('!isr').
    kAudioConverterErr_InputSampleRateOutOfRange = 0x21697372  /* '!isr' */,
    /// The output rate is not a positive number, or more than 256 times the input's (or less than
    /// 1/256) ('!osr').
    kAudioConverterErr_OutputSampleRateOutOfRange = 0x216F7372  /* '!osr' */,
};

/// Creates a converter from `inSourceFormat` to `inDestinationFormat`.
OSStatus AudioConverterNew(const AudioStreamBasicDescription *inSourceFormat,
                           const AudioStreamBasicDescription *inDestinationFormat, AudioConverterRef *outAudioConverter);
/// Disposes of a converter.
OSStatus AudioConverterDispose(AudioConverterRef inAudioConverter);
/// Forgets buffered input (after a seek).
OSStatus AudioConverterReset(AudioConverterRef inAudioConverter);
/// A property's size and whether it can be set.
OSStatus AudioConverterGetPropertyInfo(AudioConverterRef inAudioConverter, AudioConverterPropertyID inPropertyID,
                                       UInt32 *outSize, Boolean *outWritable);
/// Reads a property.
OSStatus AudioConverterGetProperty(AudioConverterRef inAudioConverter, AudioConverterPropertyID inPropertyID,
                                   UInt32 *ioPropertyDataSize, void *outPropertyData);
/// Sets a property.
OSStatus AudioConverterSetProperty(AudioConverterRef inAudioConverter, AudioConverterPropertyID inPropertyID,
                                   UInt32 inPropertyDataSize, const void *inPropertyData);
/// Converts one buffer of linear PCM at the same rate.
OSStatus AudioConverterConvertBuffer(AudioConverterRef inAudioConverter, UInt32 inInputDataSize, const void *inInputData,
                                     UInt32 *ioOutputDataSize, void *outOutputData);
/// Converts `inNumberPCMFrames` frames of linear PCM at the same rate.
OSStatus AudioConverterConvertComplexBuffer(AudioConverterRef inAudioConverter, UInt32 inNumberPCMFrames,
                                            const AudioBufferList *inInputData, AudioBufferList *outOutputData);
/// Fills `outOutputData` with up to `*ioOutputDataPacketSize` packets, pulling input from `inInputDataProc`.
OSStatus AudioConverterFillComplexBuffer(AudioConverterRef inAudioConverter, AudioConverterComplexInputDataProc inInputDataProc,
                                         void *inInputDataProcUserData, UInt32 *ioOutputDataPacketSize,
                                         AudioBufferList *outOutputData, AudioStreamPacketDescription *outPacketDescription);

LOCKSTEP_EXTERN_C_END

#endif
