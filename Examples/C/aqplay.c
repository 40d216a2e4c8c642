// aqplay: plays an audio file through an audio queue, the way Apple's "Playing Audio" guide
// (Audio Queue Services Programming Guide) does it in C: a custom state structure, an output
// callback that reads packets with AudioFileReadPacketData, three primed buffers, callbacks on
// the current run loop, and CFRunLoopRunInMode until the callback says the file has ended.
//
//   cc aqplay.c $(pkg-config --cflags --libs lockstep-audiotoolbox) -o aqplay
//   ./aqplay FILE            (JACK_DEFAULT_SERVER chooses the server)
//
// It prints the packets it played and how many callbacks ran off the main thread (the thread
// whose run loop the queue was given): 0, as on Apple.
#include <AudioToolbox/AudioToolbox.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int kNumberBuffers = 3;

typedef struct AQPlayerState {
    AudioStreamBasicDescription mDataFormat;
    AudioQueueRef mQueue;
    AudioQueueBufferRef mBuffers[3];
    AudioFileID mAudioFile;
    UInt32 bufferByteSize;
    SInt64 mCurrentPacket;
    UInt32 mNumPacketsToRead;
    AudioStreamPacketDescription *mPacketDescs;
    bool mIsRunning;
    pthread_t mMainThread;
    int mOffThreadCallbacks;
} AQPlayerState;

static void check(OSStatus status, const char *what) {
    if (status == noErr) return;
#ifdef LOCKSTEP_AUDIOTOOLBOX
    fprintf(stderr, "aqplay: %s failed: %s\n", what, AudioQueueCompatLastErrorMessage());
#else
    fprintf(stderr, "aqplay: %s failed: %d\n", what, (int)status);
#endif
    exit(1);
}

static void HandleOutputBuffer(void *aqData, AudioQueueRef inAQ, AudioQueueBufferRef inBuffer) {
    AQPlayerState *pAqData = (AQPlayerState *)aqData;
    if (!pthread_equal(pthread_self(), pAqData->mMainThread)) pAqData->mOffThreadCallbacks++;
    if (pAqData->mIsRunning == 0) return;
    UInt32 numBytesReadFromFile = inBuffer->mAudioDataBytesCapacity;
    UInt32 numPackets = pAqData->mNumPacketsToRead;
    check(AudioFileReadPacketData(pAqData->mAudioFile, false, &numBytesReadFromFile, pAqData->mPacketDescs,
                                  pAqData->mCurrentPacket, &numPackets, inBuffer->mAudioData),
          "AudioFileReadPacketData");
    if (numPackets > 0) {
        inBuffer->mAudioDataByteSize = numBytesReadFromFile;
        check(AudioQueueEnqueueBuffer(inAQ, inBuffer, (pAqData->mPacketDescs ? numPackets : 0), pAqData->mPacketDescs),
              "AudioQueueEnqueueBuffer");
        pAqData->mCurrentPacket += numPackets;
    } else {
        check(AudioQueueStop(inAQ, false), "AudioQueueStop");
        pAqData->mIsRunning = false;
    }
}

static void DeriveBufferSize(AudioStreamBasicDescription *ASBDesc, UInt32 maxPacketSize, Float64 seconds,
                             UInt32 *outBufferSize, UInt32 *outNumPacketsToRead) {
    static const UInt32 maxBufferSize = 0x50000;
    static const UInt32 minBufferSize = 0x4000;
    if (ASBDesc->mFramesPerPacket != 0) {
        Float64 numPacketsForTime = ASBDesc->mSampleRate / ASBDesc->mFramesPerPacket * seconds;
        *outBufferSize = (UInt32)(numPacketsForTime * maxPacketSize);
    } else {
        *outBufferSize = maxBufferSize > maxPacketSize ? maxBufferSize : maxPacketSize;
    }
    if (*outBufferSize > maxBufferSize && *outBufferSize > maxPacketSize)
        *outBufferSize = maxBufferSize;
    else if (*outBufferSize < minBufferSize)
        *outBufferSize = minBufferSize;
    *outNumPacketsToRead = *outBufferSize / maxPacketSize;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: aqplay FILE\n");
        return 2;
    }
    AQPlayerState aqData;
    memset(&aqData, 0, sizeof aqData);
    aqData.mMainThread = pthread_self();

    const char *filePath = argv[1];
    CFURLRef audioFileURL = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)filePath, strlen(filePath), false);
    check(AudioFileOpenURL(audioFileURL, kAudioFileReadPermission, 0, &aqData.mAudioFile), "AudioFileOpenURL");
    CFRelease(audioFileURL);

    UInt32 dataFormatSize = sizeof(aqData.mDataFormat);
    check(AudioFileGetProperty(aqData.mAudioFile, kAudioFilePropertyDataFormat, &dataFormatSize, &aqData.mDataFormat),
          "AudioFileGetProperty(DataFormat)");

    check(AudioQueueNewOutput(&aqData.mDataFormat, HandleOutputBuffer, &aqData, CFRunLoopGetCurrent(),
                              kCFRunLoopCommonModes, 0, &aqData.mQueue),
          "AudioQueueNewOutput");

    UInt32 maxPacketSize;
    UInt32 propertySize = sizeof(maxPacketSize);
    check(AudioFileGetProperty(aqData.mAudioFile, kAudioFilePropertyPacketSizeUpperBound, &propertySize, &maxPacketSize),
          "AudioFileGetProperty(PacketSizeUpperBound)");
    DeriveBufferSize(&aqData.mDataFormat, maxPacketSize, 0.5, &aqData.bufferByteSize, &aqData.mNumPacketsToRead);

    bool isFormatVBR = (aqData.mDataFormat.mBytesPerPacket == 0 || aqData.mDataFormat.mFramesPerPacket == 0);
    if (isFormatVBR)
        aqData.mPacketDescs =
            (AudioStreamPacketDescription *)malloc(aqData.mNumPacketsToRead * sizeof(AudioStreamPacketDescription));
    else
        aqData.mPacketDescs = NULL;

    UInt32 cookieSize = sizeof(UInt32);
    bool couldNotGetProperty =
        AudioFileGetPropertyInfo(aqData.mAudioFile, kAudioFilePropertyMagicCookieData, &cookieSize, NULL);
    if (!couldNotGetProperty && cookieSize) {
        char *magicCookie = (char *)malloc(cookieSize);
        check(AudioFileGetProperty(aqData.mAudioFile, kAudioFilePropertyMagicCookieData, &cookieSize, magicCookie),
              "AudioFileGetProperty(MagicCookieData)");
        check(AudioQueueSetProperty(aqData.mQueue, kAudioQueueProperty_MagicCookie, magicCookie, cookieSize),
              "AudioQueueSetProperty(MagicCookie)");
        free(magicCookie);
    }

    aqData.mCurrentPacket = 0;
    aqData.mIsRunning = true;
    for (int i = 0; i < kNumberBuffers; ++i) {
        check(AudioQueueAllocateBuffer(aqData.mQueue, aqData.bufferByteSize, &aqData.mBuffers[i]),
              "AudioQueueAllocateBuffer");
        HandleOutputBuffer(&aqData, aqData.mQueue, aqData.mBuffers[i]);
    }

    Float32 gain = 1.0;
    check(AudioQueueSetParameter(aqData.mQueue, kAudioQueueParam_Volume, gain), "AudioQueueSetParameter");

    check(AudioQueueStart(aqData.mQueue, NULL), "AudioQueueStart");
    do {
        CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.25, false);
    } while (aqData.mIsRunning);
    CFRunLoopRunInMode(kCFRunLoopDefaultMode, 1, false);

    check(AudioQueueDispose(aqData.mQueue, true), "AudioQueueDispose");
    check(AudioFileClose(aqData.mAudioFile), "AudioFileClose");
    free(aqData.mPacketDescs);
    printf("played %lld packets; %d callbacks off the run loop's thread\n", (long long)aqData.mCurrentPacket,
           aqData.mOffThreadCallbacks);
    return 0;
}
