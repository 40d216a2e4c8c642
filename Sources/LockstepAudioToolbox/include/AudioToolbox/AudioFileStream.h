// Lockstep's C API: Apple's <AudioToolbox/AudioFileStream.h>. Audio File Stream Services: parsing audio files that
// arrive in pieces (network streams) into packets.
#ifndef LOCKSTEP_AUDIOFILESTREAM_H
#define LOCKSTEP_AUDIOFILESTREAM_H

#include <CoreAudio/CoreAudioTypes.h>
#include <AudioToolbox/AudioFile.h>

LOCKSTEP_EXTERN_C_BEGIN

/// A file stream parser (opaque).
typedef struct OpaqueAudioFileStreamID *AudioFileStreamID;
/// Identifies a file stream property.
typedef UInt32 AudioFileStreamPropertyID;

/// Called when the parser finds a property's value (on the thread of AudioFileStreamParseBytes).
typedef void (*AudioFileStream_PropertyListenerProc)(void *inClientData, AudioFileStreamID inAudioFileStream,
                                                     AudioFileStreamPropertyID inPropertyID,
                                                     AudioFileStreamPropertyFlags *ioFlags);
/// Called with packets the parser found; the bytes are valid only during the call.
typedef void (*AudioFileStream_PacketsProc)(void *inClientData, UInt32 inNumberBytes, UInt32 inNumberPackets,
                                            const void *inInputData, AudioStreamPacketDescription *inPacketDescriptions);

/// Property IDs and result codes, with Apple's values.
enum {
    /// The parser has what it needs to produce packets (UInt32, 1).
    kAudioFileStreamProperty_ReadyToProducePackets = 0x72656479  /* 'redy' */,
    /// The file type (AudioFileTypeID).
    kAudioFileStreamProperty_FileFormat = 0x66666D74  /* 'ffmt' */,
    /// The data format (AudioStreamBasicDescription).
    kAudioFileStreamProperty_DataFormat = 0x64666D74  /* 'dfmt' */,
    /// The magic cookie (bytes; AAC: an ES descriptor made from the ADTS header).
    kAudioFileStreamProperty_MagicCookieData = 0x6D676963  /* 'mgic' */,
    /// Bytes of audio (UInt64), when a header (MP3's Xing) says.
    kAudioFileStreamProperty_AudioDataByteCount = 0x62636E74  /* 'bcnt' */,
    /// Packets of audio (UInt64), when a header (MP3's Xing) says.
    kAudioFileStreamProperty_AudioDataPacketCount = 0x70636E74  /* 'pcnt' */,
    /// The largest packet parsed so far (UInt32).
    kAudioFileStreamProperty_MaximumPacketSize = 0x70737A65  /* 'psze' */,
    /// The byte offset of the first audio packet in the stream (Int64).
    kAudioFileStreamProperty_DataOffset = 0x646F6666  /* 'doff' */,
    /// The largest packet the format allows (UInt32).
    kAudioFileStreamProperty_PacketSizeUpperBound = 0x706B7562  /* 'pkub' */,
    /// Priming and remainder frames (AudioFilePacketTableInfo), from MP3's LAME header.
    kAudioFileStreamProperty_PacketTableInfo = 0x706E666F  /* 'pnfo' */,
    /// Average bytes per packet (Float64).
    kAudioFileStreamProperty_AverageBytesPerPacket = 0x61627070  /* 'abpp' */,
    /// The bit rate (UInt32, bits per second; MP3: the last frame header's).
    kAudioFileStreamProperty_BitRate = 0x62726174  /* 'brat' */,
    /// The stream's file type is not supported ('typ?').
    kAudioFileStreamError_UnsupportedFileType = 0x7479703F  /* 'typ?' */,
    /// The data format is not supported ('fmt?').
    kAudioFileStreamError_UnsupportedDataFormat = 0x666D743F  /* 'fmt?' */,
    /// The property is not supported ('pty?').
    kAudioFileStreamError_UnsupportedProperty = 0x7074793F  /* 'pty?' */,
    /// The property size is wrong ('!siz').
    kAudioFileStreamError_BadPropertySize = 0x2173697A  /* '!siz' */,
    /// The stream cannot do this yet: parse until ReadyToProducePackets ('optm').
    kAudioFileStreamError_NotOptimized = 0x6F70746D  /* 'optm' */,
    /// The packet offset is invalid ('pck?').
    kAudioFileStreamError_InvalidPacketOffset = 0x70636B3F  /* 'pck?' */,
    /// The stream is malformed ('dta?').
    kAudioFileStreamError_InvalidFile = 0x6474613F  /* 'dta?' */,
    /// The property's value is not known (yet) ('unk?').
    kAudioFileStreamError_ValueUnknown = 0x756E6B3F  /* 'unk?' */,
    /// More data is needed ('more').
    kAudioFileStreamError_DataUnavailable = 0x6D6F7265  /* 'more' */,
    /// The operation is not allowed ('nope').
    kAudioFileStreamError_IllegalOperation = 0x6E6F7065  /* 'nope' */,
    /// Something went wrong that no other code describes ('wht?').
    kAudioFileStreamError_UnspecifiedError = 0x7768743F  /* 'wht?' */,
    /// The parser cannot recover from the discontinuity ('dsc!').
    kAudioFileStreamError_DiscontinuityCantRecover = 0x64736321  /* 'dsc!' */,
};

/// Opens a parser; `inFileTypeHint` may be 0.
OSStatus AudioFileStreamOpen(void *inClientData, AudioFileStream_PropertyListenerProc inPropertyListenerProc,
                             AudioFileStream_PacketsProc inPacketsProc, AudioFileTypeID inFileTypeHint,
                             AudioFileStreamID *outAudioFileStream);
/// Parses the next bytes of the stream, calling the listener and packets procs.
OSStatus AudioFileStreamParseBytes(AudioFileStreamID inAudioFileStream, UInt32 inDataByteSize, const void *inData,
                                   AudioFileStreamParseFlags inFlags);
/// The byte offset of a packet, for seeking the stream.
OSStatus AudioFileStreamSeek(AudioFileStreamID inAudioFileStream, SInt64 inPacketOffset, SInt64 *outDataByteOffset,
                             AudioFileStreamSeekFlags *ioFlags);
/// A property's size and whether it can be set.
OSStatus AudioFileStreamGetPropertyInfo(AudioFileStreamID inAudioFileStream, AudioFileStreamPropertyID inPropertyID,
                                        UInt32 *outPropertyDataSize, Boolean *outWritable);
/// Reads a property.
OSStatus AudioFileStreamGetProperty(AudioFileStreamID inAudioFileStream, AudioFileStreamPropertyID inPropertyID,
                                    UInt32 *ioPropertyDataSize, void *outPropertyData);
/// Sets a property.
OSStatus AudioFileStreamSetProperty(AudioFileStreamID inAudioFileStream, AudioFileStreamPropertyID inPropertyID,
                                    UInt32 inPropertyDataSize, const void *inPropertyData);
/// Closes the parser.
OSStatus AudioFileStreamClose(AudioFileStreamID inAudioFileStream);

LOCKSTEP_EXTERN_C_END

#endif
