// aqplayback: plays an audio file with Apple's "Playing Audio" guide (Audio Queue Services
// Programming Guide), Listings 3-1 to 3-17, in their order and as written there, as far as C
// allows: the guide's code is C++ in two places (the struct's name used without `struct`, and
// DeriveBufferSize's `AudioStreamBasicDescription &ASBDesc`), marked "C:" where this file differs.
//
//   cc aqplayback.c $(pkg-config --cflags --libs lockstep-audiotoolbox) -o aqplayback
//   ./aqplayback FILE          (JACK_DEFAULT_SERVER chooses the server)
//
// The queue plays on the default device (the JACK client's out_1, out_2 ports, connected to the
// physical playback ports). Lines marked "Linux:" are additions; "Erratum:" marks where the guide's
// code, run as printed, would not play.
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Listing 3-1  A custom structure for a playback audio queue
#define kNumberBuffers 3    // C: the guide's `static const int`, which C does not take as an array size
typedef struct AQPlayerState {   // C: typedef, so that the guide's `AQPlayerState` names it
    AudioStreamBasicDescription   mDataFormat;
    AudioQueueRef                 mQueue;
    AudioQueueBufferRef           mBuffers[kNumberBuffers];
    AudioFileID                   mAudioFile;
    UInt32                        bufferByteSize;
    SInt64                        mCurrentPacket;
    UInt32                        mNumPacketsToRead;
    AudioStreamPacketDescription  *mPacketDescs;
    bool                          mIsRunning;
} AQPlayerState;

// Linux: the guide leaves error handling out; this reports a failure and its reason.
static void check(OSStatus status, const char *what) {
    if (status == noErr) return;
    fprintf(stderr, "aqplayback: %s failed: %s\n", what, AudioQueueCompatLastErrorMessage());
    exit(1);
}

// Listing 3-2  The playback audio queue callback declaration, and Listing 3-6 (a playback audio
// queue callback function) with Listings 3-3 (reading from a file into a buffer), 3-4 (enqueuing
// it) and 3-5 (stopping the queue) inside.
static void HandleOutputBuffer (
    void                 *aqData,
    AudioQueueRef        inAQ,
    AudioQueueBufferRef  inBuffer
) {
    (void)inAQ;
    AQPlayerState *pAqData = (AQPlayerState *) aqData;
    if (pAqData->mIsRunning == 0) return;
    // AudioFileReadPacketData, which Apple's headers give in place of the guide's deprecated
    // AudioFileReadPackets: the same arguments, the byte count set to the buffer's capacity.
    UInt32 numBytesReadFromFile = pAqData->bufferByteSize;
    UInt32 numPackets = pAqData->mNumPacketsToRead;
    check(AudioFileReadPacketData (
        pAqData->mAudioFile,
        false,
        &numBytesReadFromFile,
        pAqData->mPacketDescs,
        pAqData->mCurrentPacket,
        &numPackets,
        inBuffer->mAudioData
    ), "AudioFileReadPacketData");
    if (numPackets > 0) {
        inBuffer->mAudioDataByteSize = numBytesReadFromFile;
        check(AudioQueueEnqueueBuffer (
            pAqData->mQueue,
            inBuffer,
            (pAqData->mPacketDescs ? numPackets : 0),
            pAqData->mPacketDescs
        ), "AudioQueueEnqueueBuffer");
        pAqData->mCurrentPacket += numPackets;
    } else {
        check(AudioQueueStop (
            pAqData->mQueue,
            false
        ), "AudioQueueStop");
        pAqData->mIsRunning = false;
    }
}

// Listing 3-7  Deriving a playback audio queue buffer size
static void DeriveBufferSize (
    AudioStreamBasicDescription *ASBDesc,    // C: a pointer for the guide's reference
    UInt32                      maxPacketSize,
    Float64                     seconds,
    UInt32                      *outBufferSize,
    UInt32                      *outNumPacketsToRead
) {
    static const UInt32 maxBufferSize = 0x50000;
    static const UInt32 minBufferSize = 0x4000;

    if (ASBDesc->mFramesPerPacket != 0) {
        Float64 numPacketsForTime =
            ASBDesc->mSampleRate / ASBDesc->mFramesPerPacket * seconds;
        *outBufferSize = (UInt32)(numPacketsForTime * maxPacketSize);
    } else {
        *outBufferSize =
            maxBufferSize > maxPacketSize ?
                maxBufferSize : maxPacketSize;
    }

    if (
        *outBufferSize > maxBufferSize &&
        *outBufferSize > maxPacketSize
    )
        *outBufferSize = maxBufferSize;
    else {
        if (*outBufferSize < minBufferSize)
            *outBufferSize = minBufferSize;
    }

    *outNumPacketsToRead = *outBufferSize / maxPacketSize;
}

int main(int argc, char **argv) {
    // Linux: the file to play, from the command line.
    if (argc != 2) {
        fprintf(stderr, "usage: aqplayback FILE\n");
        return 2;
    }
    const char *filePath = argv[1];

    // Listing 3-8  Opening an audio file for playback
    CFURLRef audioFileURL =
        CFURLCreateFromFileSystemRepresentation (
            NULL,
            (const UInt8 *) filePath,
            strlen (filePath),
            false
        );
    AQPlayerState aqData;
    memset(&aqData, 0, sizeof aqData);   // Linux: no field left uninitialized
    OSStatus result =
        AudioFileOpenURL (
            audioFileURL,
            kAudioFileReadPermission,    // the guide's fsRdPerm: Carbon's name for the same 1
            0,
            &aqData.mAudioFile
        );
    CFRelease (audioFileURL);
    check(result, "AudioFileOpenURL");

    // Listing 3-9  Obtaining a file's audio data format
    UInt32 dataFormatSize = sizeof (aqData.mDataFormat);
    check(AudioFileGetProperty (
        aqData.mAudioFile,
        kAudioFilePropertyDataFormat,
        &dataFormatSize,
        &aqData.mDataFormat
    ), "AudioFileGetProperty(DataFormat)");

    // Listing 3-10  Creating a playback audio queue
    check(AudioQueueNewOutput (
        &aqData.mDataFormat,
        HandleOutputBuffer,
        &aqData,
        CFRunLoopGetCurrent (),
        kCFRunLoopCommonModes,
        0,
        &aqData.mQueue
    ), "AudioQueueNewOutput");

    // Listing 3-11  Setting playback audio queue buffer size and number of packets to read
    UInt32 maxPacketSize;
    UInt32 propertySize = sizeof (maxPacketSize);
    check(AudioFileGetProperty (
        aqData.mAudioFile,
        kAudioFilePropertyPacketSizeUpperBound,
        &propertySize,
        &maxPacketSize
    ), "AudioFileGetProperty(PacketSizeUpperBound)");

    DeriveBufferSize (
        &aqData.mDataFormat,    // C: its address, for the guide's reference
        maxPacketSize,
        0.5,
        &aqData.bufferByteSize,
        &aqData.mNumPacketsToRead
    );

    // Listing 3-12  Allocating memory for a packet descriptions array
    bool isFormatVBR = (
        aqData.mDataFormat.mBytesPerPacket == 0 ||
        aqData.mDataFormat.mFramesPerPacket == 0
    );

    if (isFormatVBR) {
        aqData.mPacketDescs =
          (AudioStreamPacketDescription*) malloc (
            aqData.mNumPacketsToRead * sizeof (AudioStreamPacketDescription)
          );
    } else {
        aqData.mPacketDescs = NULL;
    }

    // Listing 3-13  Setting a magic cookie for a playback audio queue
    UInt32 cookieSize = sizeof (UInt32);
    bool couldNotGetProperty =
        AudioFileGetPropertyInfo (
            aqData.mAudioFile,
            kAudioFilePropertyMagicCookieData,
            &cookieSize,
            NULL
        );

    if (!couldNotGetProperty && cookieSize) {
        char* magicCookie =
            (char *) malloc (cookieSize);

        check(AudioFileGetProperty (
            aqData.mAudioFile,
            kAudioFilePropertyMagicCookieData,
            &cookieSize,
            magicCookie
        ), "AudioFileGetProperty(MagicCookieData)");

        check(AudioQueueSetProperty (
            aqData.mQueue,
            kAudioQueueProperty_MagicCookie,
            magicCookie,
            cookieSize
        ), "AudioQueueSetProperty(MagicCookie)");

        free (magicCookie);
    }

    // Listing 3-14  Allocating and priming audio queue buffers for playback
    aqData.mCurrentPacket = 0;
    // Erratum: the guide sets mIsRunning only in Listing 3-16, after priming; the callback returns
    // at once while it is false, so its primed buffers would stay empty and nothing would play.
    aqData.mIsRunning = true;

    for (int i = 0; i < kNumberBuffers; ++i) {
        check(AudioQueueAllocateBuffer (
            aqData.mQueue,
            aqData.bufferByteSize,
            &aqData.mBuffers[i]
        ), "AudioQueueAllocateBuffer");

        HandleOutputBuffer (
            &aqData,
            aqData.mQueue,
            aqData.mBuffers[i]
        );
    }

    // Listing 3-15  Setting an audio queue's playback gain
    Float32 gain = 1.0;
        // Optionally, allow user to override gain setting here
    check(AudioQueueSetParameter (
        aqData.mQueue,
        kAudioQueueParam_Volume,
        gain
    ), "AudioQueueSetParameter");

    // Listing 3-16  Starting and running an audio queue
    aqData.mIsRunning = true;

    check(AudioQueueStart (
        aqData.mQueue,
        NULL
    ), "AudioQueueStart");

    do {
        CFRunLoopRunInMode (
            kCFRunLoopDefaultMode,
            0.25,
            false
        );
    } while (aqData.mIsRunning);

    CFRunLoopRunInMode (
        kCFRunLoopDefaultMode,
        1,
        false
    );

    // Listing 3-17  Cleaning up after playing
    check(AudioQueueDispose (
        aqData.mQueue,
        true
    ), "AudioQueueDispose");

    check(AudioFileClose (aqData.mAudioFile), "AudioFileClose");

    free (aqData.mPacketDescs);

    // Linux: what was played, for the tests.
    printf("played %lld packets\n", (long long)aqData.mCurrentPacket);
    return 0;
}
