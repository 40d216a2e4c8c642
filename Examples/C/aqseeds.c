// aqseeds: the seed documents' own playback listings, in C. The Core Audio overview (seed 003)
// shows, and its Vietnamese copy (seed 004) repeats, Listing 1-7 "Creating an audio queue
// object" — a state structure, a callback reading packets with AudioFileReadPackets, and the
// AudioQueueNewOutput call on the current run loop — then Listing 1-8 "Setting the playback level
// directly" and Listing 1-9 "The AudioQueueLevelMeterState structure", the value of
// kAudioQueueProperty_CurrentLevelMeterDB. Here as written there, as far as C allows; lines the
// listings leave to the reader (opening the file, priming, running the run loop, reading the
// meters) are marked "Added:", and departures "C:".
//
//   cc aqseeds.c $(pkg-config --cflags --libs lockstep-audiotoolbox) -o aqseeds
//   ./aqseeds FILE           (JACK_DEFAULT_SERVER chooses the server)
//
// It prints the packets it played and the loudest peak the queue's meter read, in dB.
#include <AudioToolbox/AudioToolbox.h>
#include <stdbool.h>   // C: the listing's `bool`
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int kNumberBuffers = 3;
// Create a data structure to manage information needed by the audio queue
// C: a typedef, so the listing's `myAQStruct *` reads as written; CAStreamBasicDescription is a
// C++ class of Apple's sample code around the AudioStreamBasicDescription used here.
typedef struct myAQStruct {
    AudioFileID                     mAudioFile;
    AudioStreamBasicDescription     mDataFormat;
    AudioQueueRef                   mQueue;
    AudioQueueBufferRef             mBuffers[3];   // C: kNumberBuffers is not a constant expression
    SInt64                          mCurrentPacket;
    UInt32                          mNumPacketsToRead;
    AudioStreamPacketDescription    *mPacketDescs;
    bool                            mDone;
} myAQStruct;
// Define a playback audio queue callback function
static void AQTestBufferCallback(
    void                   *inUserData,
    AudioQueueRef          inAQ,
    AudioQueueBufferRef    inCompleteAQBuffer
) {
    myAQStruct *myInfo = (myAQStruct *)inUserData;
    if (myInfo->mDone) return;
    UInt32 numBytes;
    UInt32 nPackets = myInfo->mNumPacketsToRead;

    AudioFileReadPackets (
        myInfo->mAudioFile,
        false,
        &numBytes,
        myInfo->mPacketDescs,
        myInfo->mCurrentPacket,
        &nPackets,
        inCompleteAQBuffer->mAudioData
    );
    if (nPackets > 0) {
        inCompleteAQBuffer->mAudioDataByteSize = numBytes;
        AudioQueueEnqueueBuffer (
            inAQ,
            inCompleteAQBuffer,
            (myInfo->mPacketDescs ? nPackets : 0),
            myInfo->mPacketDescs
        );
        myInfo->mCurrentPacket += nPackets;
    } else {
        AudioQueueStop (
            myInfo->mQueue,
            false
        );
        myInfo->mDone = true;
    }
}

// Added: stop at the first error, saying which call failed.
static void check(OSStatus status, const char *what) {
    if (status == noErr) return;
    fprintf(stderr, "aqseeds: %s failed: %d\n", what, (int)status);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: aqseeds FILE\n");
        return 2;
    }
    myAQStruct myInfo;
    memset(&myInfo, 0, sizeof myInfo);

    // Added: the file, its format, and how many packets a buffer of half a second holds.
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)argv[1], strlen(argv[1]), false);
    check(AudioFileOpenURL(url, kAudioFileReadPermission, 0, &myInfo.mAudioFile), "AudioFileOpenURL");
    CFRelease(url);
    UInt32 size = sizeof(myInfo.mDataFormat);
    check(AudioFileGetProperty(myInfo.mAudioFile, kAudioFilePropertyDataFormat, &size, &myInfo.mDataFormat),
          "AudioFileGetProperty(DataFormat)");
    UInt32 maxPacketSize;
    size = sizeof(maxPacketSize);
    check(AudioFileGetProperty(myInfo.mAudioFile, kAudioFilePropertyPacketSizeUpperBound, &size, &maxPacketSize),
          "AudioFileGetProperty(PacketSizeUpperBound)");
    UInt32 framesPerPacket = myInfo.mDataFormat.mFramesPerPacket ? myInfo.mDataFormat.mFramesPerPacket : 1;
    myInfo.mNumPacketsToRead = (UInt32)(myInfo.mDataFormat.mSampleRate / 2 / framesPerPacket);
    if (myInfo.mDataFormat.mBytesPerPacket == 0 || myInfo.mDataFormat.mFramesPerPacket == 0)
        myInfo.mPacketDescs = malloc(myInfo.mNumPacketsToRead * sizeof(AudioStreamPacketDescription));

    // Instantiate an audio queue object
    check(AudioQueueNewOutput (
        &myInfo.mDataFormat,
        AQTestBufferCallback,
        &myInfo,
        CFRunLoopGetCurrent(),
        kCFRunLoopCommonModes,
        0,
        &myInfo.mQueue
    ), "AudioQueueNewOutput");

    // Listing 1-8  Setting the playback level directly
    // C: the listing's `myAQstruct.audioQueueObject` is this program's `myInfo.mQueue`.
    Float32 volume = 1;
    check(AudioQueueSetParameter (
        myInfo.mQueue,
        kAudioQueueParam_Volume,
        volume
    ), "AudioQueueSetParameter");

    // Added: metering on (kAudioQueueProperty_CurrentLevelMeterDB is read below), the buffers
    // primed by the callback, the queue started, and the run loop run until the callback is done.
    UInt32 on = 1;
    check(AudioQueueSetProperty(myInfo.mQueue, kAudioQueueProperty_EnableLevelMetering, &on, sizeof on),
          "AudioQueueSetProperty(EnableLevelMetering)");
    for (int i = 0; i < kNumberBuffers; ++i) {
        check(AudioQueueAllocateBuffer(myInfo.mQueue, maxPacketSize * myInfo.mNumPacketsToRead, &myInfo.mBuffers[i]),
              "AudioQueueAllocateBuffer");
        AQTestBufferCallback(&myInfo, myInfo.mQueue, myInfo.mBuffers[i]);
    }
    check(AudioQueueStart(myInfo.mQueue, NULL), "AudioQueueStart");

    // Listing 1-9  The AudioQueueLevelMeterState structure: one per channel, read while it plays.
    UInt32 channels = myInfo.mDataFormat.mChannelsPerFrame;
    AudioQueueLevelMeterState *levels = calloc(channels, sizeof(AudioQueueLevelMeterState));
    // Added: the callback is done once the last packets are enqueued; the queue plays them, then
    // stops (AudioQueueStop(…, false)) — the meters are read until it has.
    Float32 loudest = -120;
    UInt32 running = 1;
    do {
        CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.05, false);
        UInt32 levelsSize = channels * (UInt32)sizeof(AudioQueueLevelMeterState);
        check(AudioQueueGetProperty(myInfo.mQueue, kAudioQueueProperty_CurrentLevelMeterDB, levels, &levelsSize),
              "AudioQueueGetProperty(CurrentLevelMeterDB)");
        for (UInt32 c = 0; c < channels; ++c)
            if (levels[c].mPeakPower > loudest) loudest = levels[c].mPeakPower;
        UInt32 runningSize = sizeof running;
        check(AudioQueueGetProperty(myInfo.mQueue, kAudioQueueProperty_IsRunning, &running, &runningSize),
              "AudioQueueGetProperty(IsRunning)");
    } while (!myInfo.mDone || running);

    check(AudioQueueDispose(myInfo.mQueue, true), "AudioQueueDispose");
    check(AudioFileClose(myInfo.mAudioFile), "AudioFileClose");
    free(myInfo.mPacketDescs);
    free(levels);
    printf("played %lld packets; loudest peak %.1f dB\n", (long long)myInfo.mCurrentPacket, loudest);
    return 0;
}
