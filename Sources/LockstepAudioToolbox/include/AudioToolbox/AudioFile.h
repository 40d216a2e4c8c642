// Lockstep's C API: Apple's <AudioToolbox/AudioFile.h>. Audio File Services: reading and writing audio files
// (WAV, AIFF, CAF, FLAC, … through libsndfile; MP3, AAC, ALAC, IMA4 packets through FFmpeg).
#ifndef LOCKSTEP_AUDIOFILE_H
#define LOCKSTEP_AUDIOFILE_H

#include <CoreAudio/CoreAudioTypes.h>

LOCKSTEP_EXTERN_C_BEGIN

/// An open audio file (opaque).
typedef struct OpaqueAudioFileID *AudioFileID;
/// A file type ('WAVE', 'AIFF', …).
typedef UInt32 AudioFileTypeID;
/// Identifies an audio file property.
typedef UInt32 AudioFilePropertyID;
/// How a file is opened: kAudioFileReadPermission (files open for reading only).
typedef SInt8 AudioFilePermissions;
/// Flags of AudioFileCreateWithURL (kAudioFileFlags_EraseFile).
typedef UInt32 AudioFileFlags;

/// Permissions, flags, file types, property IDs and result codes, with Apple's values.
enum {
    /// Read only.
    kAudioFileReadPermission = 1,
    /// Write only.
    kAudioFileWritePermission = 2,
    /// Read and write.
    kAudioFileReadWritePermission = 3,
    /// Replace a file that exists.
    kAudioFileFlags_EraseFile = 1,
    /// Don't page-align the audio data (ignored).
    kAudioFileFlags_DontPageAlignAudioData = 2,
    /// AIFF: big-endian integer PCM.
    kAudioFileAIFFType = 0x41494646  /* 'AIFF' */,
    /// AIFF-C: big-endian integer or float PCM.
    kAudioFileAIFCType = 0x41494643  /* 'AIFC' */,
    /// WAVE: little-endian PCM.
    kAudioFileWAVEType = 0x57415645  /* 'WAVE' */,
    /// Core Audio Format: PCM in either byte order.
    kAudioFileCAFType = 0x63616666  /* 'caff' */,
    /// FLAC, written from and read as 16- or 24-bit linear PCM (on Apple its data format is
    /// kAudioFormatFLAC).
    kAudioFileFLACType = 0x666C6163  /* 'flac' */,
    /// Wave64.
    kAudioFileWave64Type = 0x57363466  /* 'W64f' */,
    /// RF64.
    kAudioFileRF64Type = 0x52463634  /* 'RF64' */,
    /// MP3 (read only, as packets of 1152 frames).
    kAudioFileMP3Type = 0x4D504733  /* 'MPG3' */,
    /// The file type (AudioFileTypeID).
    kAudioFilePropertyFileFormat = 0x66666D74  /* 'ffmt' */,
    /// The audio data format (AudioStreamBasicDescription).
    kAudioFilePropertyDataFormat = 0x64666D74  /* 'dfmt' */,
    /// Packets of audio (UInt64).
    kAudioFilePropertyAudioDataPacketCount = 0x70636E74  /* 'pcnt' */,
    /// Bytes of audio (UInt64).
    kAudioFilePropertyAudioDataByteCount = 0x62636E74  /* 'bcnt' */,
    /// The largest packet in the file (UInt32).
    kAudioFilePropertyMaximumPacketSize = 0x70737A65  /* 'psze' */,
    /// The largest packet the format allows (UInt32).
    kAudioFilePropertyPacketSizeUpperBound = 0x706B7562  /* 'pkub' */,
    /// The magic cookie (bytes; linear PCM files have none: size 0).
    kAudioFilePropertyMagicCookieData = 0x6D676963  /* 'mgic' */,
    /// The channel layout (AudioChannelLayout, read-only here): mono, stereo, or N discrete channels in
    /// order — the order Lockstep reads them in (a layout stored in the file is not read).
    kAudioFilePropertyChannelLayout = 0x636D6170  /* 'cmap' */,
    /// The duration in seconds (Float64).
    kAudioFilePropertyEstimatedDuration = 0x65647572  /* 'edur' */,
    /// Something went wrong that no other code describes ('wht?').
    kAudioFileUnspecifiedError = 0x7768743F  /* 'wht?' */,
    /// The file type is not supported ('typ?').
    kAudioFileUnsupportedFileTypeError = 0x7479703F  /* 'typ?' */,
    /// The data format is not supported by the file type ('fmt?').
    kAudioFileUnsupportedDataFormatError = 0x666D743F  /* 'fmt?' */,
    /// The property is not supported ('pty?').
    kAudioFileUnsupportedPropertyError = 0x7074793F  /* 'pty?' */,
    /// The property size is wrong ('!siz').
    kAudioFileBadPropertySizeError = 0x2173697A  /* '!siz' */,
    /// The operation is not permitted ('prm?').
    kAudioFilePermissionsError = 0x70726D3F  /* 'prm?' */,
    /// The packet offset is invalid ('pck?').
    kAudioFileInvalidPacketOffsetError = 0x70636B3F  /* 'pck?' */,
    /// The file is malformed ('dta?').
    kAudioFileInvalidFileError = 0x6474613F  /* 'dta?' */,
    /// The operation is not supported ('op??').
    kAudioFileOperationNotSupportedError = 0x6F703F3F  /* 'op??' */,
    /// The file is closed (or was never opened) (-38).
    kAudioFileNotOpenError = -38,
    /// The end of the file was reached (-39).
    kAudioFileEndOfFileError = -39,
    /// The position is invalid (-40).
    kAudioFilePositionError = -40,
    /// The file does not exist (-43).
    kAudioFileFileNotFoundError = -43,
};

/// Opens an audio file for reading (`inPermissions` kAudioFileReadPermission; `inFileTypeHint` is
/// ignored: the file's contents say what it is).
OSStatus AudioFileOpenURL(CFURLRef inFileRef, AudioFilePermissions inPermissions, AudioFileTypeID inFileTypeHint,
                          AudioFileID *outAudioFile);
/// Creates a file of `inFileType` for writing `inFormat`; an existing file is replaced only with
/// kAudioFileFlags_EraseFile.
OSStatus AudioFileCreateWithURL(CFURLRef inFileRef, AudioFileTypeID inFileType, const AudioStreamBasicDescription *inFormat,
                                AudioFileFlags inFlags, AudioFileID *outAudioFile);
/// Reads packets from `inStartingPacket` (deprecated on Apple; as AudioFileReadPacketData with no
/// byte limit). At the end of the file `*ioNumPackets` becomes 0 and the result is noErr.
OSStatus AudioFileReadPackets(AudioFileID inAudioFile, Boolean inUseCache, UInt32 *outNumBytes,
                              AudioStreamPacketDescription *outPacketDescriptions, SInt64 inStartingPacket,
                              UInt32 *ioNumPackets, void *outBuffer);
/// Reads at most `*ioNumPackets` packets and `*ioNumBytes` bytes from `inStartingPacket`; on return
/// both say what was read (0 packets at the end of the file). Packet descriptions for variable-size
/// formats go to `outPacketDescriptions`.
OSStatus AudioFileReadPacketData(AudioFileID inAudioFile, Boolean inUseCache, UInt32 *ioNumBytes,
                                 AudioStreamPacketDescription *outPacketDescriptions, SInt64 inStartingPacket,
                                 UInt32 *ioNumPackets, void *outBuffer);
/// Writes `*ioNumPackets` packets (`inNumBytes` bytes) at `inStartingPacket`.
OSStatus AudioFileWritePackets(AudioFileID inAudioFile, Boolean inUseCache, UInt32 inNumBytes,
                               const AudioStreamPacketDescription *inPacketDescriptions, SInt64 inStartingPacket,
                               UInt32 *ioNumPackets, const void *inBuffer);
/// Reads bytes of audio data from `inStartingByte`.
OSStatus AudioFileReadBytes(AudioFileID inAudioFile, Boolean inUseCache, SInt64 inStartingByte, UInt32 *ioNumBytes,
                            void *outBuffer);
/// Writes bytes of audio data at `inStartingByte`.
OSStatus AudioFileWriteBytes(AudioFileID inAudioFile, Boolean inUseCache, SInt64 inStartingByte, UInt32 *ioNumBytes,
                             const void *inBuffer);
/// Reads a property (at most `*ioDataSize` bytes; on return the size written).
OSStatus AudioFileGetProperty(AudioFileID inAudioFile, AudioFilePropertyID inPropertyID, UInt32 *ioDataSize,
                              void *outPropertyData);
/// A property's size and whether it can be set (either pointer may be NULL).
OSStatus AudioFileGetPropertyInfo(AudioFileID inAudioFile, AudioFilePropertyID inPropertyID, UInt32 *outDataSize,
                                  UInt32 *isWritable);
/// Sets a property (the magic cookie, the channel layout).
OSStatus AudioFileSetProperty(AudioFileID inAudioFile, AudioFilePropertyID inPropertyID, UInt32 inDataSize,
                              const void *inPropertyData);
/// Closes the file, completing its header when it was written.
OSStatus AudioFileClose(AudioFileID inAudioFile);

LOCKSTEP_EXTERN_C_END

#endif
