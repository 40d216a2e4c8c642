// Lockstep's C API: Apple's <AudioToolbox/ExtendedAudioFile.h>. Extended Audio File Services: files read and written in
// a client format (linear PCM), converted to and from the file's own.
#ifndef LOCKSTEP_EXTENDEDAUDIOFILE_H
#define LOCKSTEP_EXTENDEDAUDIOFILE_H

#include <CoreAudio/CoreAudioTypes.h>
#include <AudioToolbox/AudioFile.h>

LOCKSTEP_EXTERN_C_BEGIN

/// An extended audio file (opaque).
typedef struct OpaqueExtAudioFile *ExtAudioFileRef;
/// Identifies an extended audio file property.
typedef UInt32 ExtAudioFilePropertyID;

/// Property IDs and result codes, with Apple's values.
enum {
    /// The file's data format (read-only AudioStreamBasicDescription): linear PCM as the file layer
    /// reads it (FLAC as 16/24-bit PCM, lossy files as 32-bit float).
    kExtAudioFileProperty_FileDataFormat = 0x66666D74  /* 'ffmt' */,
    /// The file's channel layout (AudioChannelLayout): the one given to ExtAudioFileCreateWithURL or
    /// mono/stereo/discrete-in-order; settable on a new file before any audio (its channel count must
    /// match). It is not written into the file.
    kExtAudioFileProperty_FileChannelLayout = 0x66636C6F  /* 'fclo' */,
    /// The format you read and write (AudioStreamBasicDescription, any linear PCM; default the file's).
    /// Sample encoding, byte order, interleaving, channel count (the converter's channel map) and rate
    /// (libsoxr) are converted.
    kExtAudioFileProperty_ClientDataFormat = 0x63666D74  /* 'cfmt' */,
    /// The client's channel layout (AudioChannelLayout, its channel count must match the client
    /// format's); stored and reported — channels are mapped by the converter's
    /// kAudioConverterChannelMap.
    kExtAudioFileProperty_ClientChannelLayout = 0x63636C6F  /* 'cclo' */,
    /// The codec manufacturer (not provided: kExtAudioFileError_InvalidProperty).
    kExtAudioFileProperty_CodecManufacturer = 0x636D616E  /* 'cman' */,
    /// The converter between file and client format (read-only AudioConverterRef): set its properties
    /// (kAudioConverterChannelMap, quality) with AudioConverterSetProperty; they apply at once. A new
    /// client format makes a new converter.
    kExtAudioFileProperty_AudioConverter = 0x61636E76  /* 'acnv' */,
    /// The underlying audio file (read-only AudioFileID; read its properties, but don't close it:
    /// ExtAudioFileDispose does).
    kExtAudioFileProperty_AudioFile = 0x6166696C  /* 'afil' */,
    /// The file's largest packet in bytes (read-only UInt32).
    kExtAudioFileProperty_FileMaxPacketSize = 0x666D7073  /* 'fmps' */,
    /// The client format's largest packet in bytes, per buffer (read-only UInt32).
    kExtAudioFileProperty_ClientMaxPacketSize = 0x636D7073  /* 'cmps' */,
    /// The file's length in frames of the file's format (read-only SInt64; for a file being written,
    /// the frames written so far).
    kExtAudioFileProperty_FileLengthFrames = 0x2366726D  /* '#frm' */,
    /// The converter's configuration (a pointer-sized property list, usually NULL): setting it is
    /// accepted — converter properties already apply at once — and reading it gives NULL.
    kExtAudioFileProperty_ConverterConfig = 0x61636366  /* 'accf' */,
    /// The bytes of file data read or written at a time (UInt32, default 32 768).
    kExtAudioFileProperty_IOBufferSizeBytes = 0x696F6273  /* 'iobs' */,
    /// Your own I/O buffer (not provided: kExtAudioFileError_InvalidProperty).
    kExtAudioFileProperty_IOBuffer = 0x696F6266  /* 'iobf' */,
    /// The packet table of a compressed file (not provided: kExtAudioFileError_InvalidProperty).
    kExtAudioFileProperty_PacketTable = 0x78707469  /* 'xpti' */,
    /// The property is unknown, read-only or not provided (-66561).
    kExtAudioFileError_InvalidProperty = -66561,
    /// The property value has the wrong size (-66562).
    kExtAudioFileError_InvalidPropertySize = -66562,
    /// The client format is not linear PCM (-66563).
    kExtAudioFileError_NonPCMClientFormat = -66563,
    /// A channel layout's channel count does not match its format (-66564).
    kExtAudioFileError_InvalidChannelMap = -66564,
    /// The call does not fit the file's state: reading a file being written, writing one being read,
    /// setting the file's layout after audio was written (-66565).
    kExtAudioFileError_InvalidOperationOrder = -66565,
    /// The data format is invalid (-66566).
    kExtAudioFileError_InvalidDataFormat = -66566,
    /// The largest packet size is unknown (-66567; not returned for linear PCM).
    kExtAudioFileError_MaxPacketSizeUnknown = -66567,
    /// A seek outside the file, or any seek but to the end of a file being written (-66568).
    kExtAudioFileError_InvalidSeek = -66568,
    /// One ExtAudioFileWriteAsync call gave more than 65 536 frames (-66569).
    kExtAudioFileError_AsyncWriteTooLarge = -66569,
    /// The asynchronous writer fell 65 536 frames behind; that call's frames were not written (-66570).
    kExtAudioFileError_AsyncWriteBufferOverflow = -66570,
};

/// Opens a file for reading.
OSStatus ExtAudioFileOpenURL(CFURLRef inURL, ExtAudioFileRef *outExtAudioFile);
/// Creates a file of `inFileType` in `inStreamDesc` (kAudioFileFlags_EraseFile in `inFlags` replaces one).
OSStatus ExtAudioFileCreateWithURL(CFURLRef inURL, AudioFileTypeID inFileType, const AudioStreamBasicDescription *inStreamDesc,
                                   const AudioChannelLayout *inChannelLayout, UInt32 inFlags,
                                   ExtAudioFileRef *outExtAudioFile);
/// Wraps an open AudioFileID (which stays yours to close after ExtAudioFileDispose).
OSStatus ExtAudioFileWrapAudioFileID(AudioFileID inFileID, Boolean inForWriting, ExtAudioFileRef *outExtAudioFile);
/// Closes the file (completing a written one).
OSStatus ExtAudioFileDispose(ExtAudioFileRef inExtAudioFile);
/// Reads at most `*ioNumberFrames` frames in the client format; on return the frames read (0 at the end).
OSStatus ExtAudioFileRead(ExtAudioFileRef inExtAudioFile, UInt32 *ioNumberFrames, AudioBufferList *ioData);
/// Writes `inNumberFrames` frames in the client format.
OSStatus ExtAudioFileWrite(ExtAudioFileRef inExtAudioFile, UInt32 inNumberFrames, const AudioBufferList *ioData);
/// Writes frames on a writer thread (callable from an audio callback); NULL `ioData` with 0
/// frames sets up the writer.
OSStatus ExtAudioFileWriteAsync(ExtAudioFileRef inExtAudioFile, UInt32 inNumberFrames, const AudioBufferList *ioData);
/// Moves the read position to a frame (client rate).
OSStatus ExtAudioFileSeek(ExtAudioFileRef inExtAudioFile, SInt64 inFrameOffset);
/// The read or write position in frames (client rate).
OSStatus ExtAudioFileTell(ExtAudioFileRef inExtAudioFile, SInt64 *outFrameOffset);
/// A property's size and whether it can be set.
OSStatus ExtAudioFileGetPropertyInfo(ExtAudioFileRef inExtAudioFile, ExtAudioFilePropertyID inPropertyID, UInt32 *outSize,
                                     Boolean *outWritable);
/// Reads a property.
OSStatus ExtAudioFileGetProperty(ExtAudioFileRef inExtAudioFile, ExtAudioFilePropertyID inPropertyID,
                                 UInt32 *ioPropertyDataSize, void *outPropertyData);
/// Sets a property (kExtAudioFileProperty_ClientDataFormat, …).
OSStatus ExtAudioFileSetProperty(ExtAudioFileRef inExtAudioFile, ExtAudioFilePropertyID inPropertyID,
                                 UInt32 inPropertyDataSize, const void *inPropertyData);

LOCKSTEP_EXTERN_C_END

#endif
