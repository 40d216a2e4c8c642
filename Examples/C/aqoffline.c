// aqoffline: renders an audio file offline through an audio queue into a float WAV or CAF file,
// as Apple's AQOfflineRenderTest sample does: one buffer refilled by the callback (which flushes
// and stops the queue at the end of the file), AudioQueueSetOfflineRenderFormat, a first render of
// 0 frames, then AudioQueueOfflineRender in a loop until the callback has flushed; the rendered
// audio is written with ExtAudioFileWrite. No JACK server is needed.
//
//   cc aqoffline.c $(pkg-config --cflags --libs lockstep-audiotoolbox) -o aqoffline
//   ./aqoffline IN OUT.wav|OUT.caf
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct AQTestInfo {
    AudioFileID mAudioFile;
    AudioStreamBasicDescription mDataFormat;
    AudioQueueRef mQueue;
    AudioQueueBufferRef mBuffer;
    SInt64 mCurrentPacket;
    UInt32 mNumPacketsToRead;
    AudioStreamPacketDescription *mPacketDescs;
    bool mFlushed;
    bool mDone;
} AQTestInfo;

static void check(OSStatus status, const char *what) {
    if (status == noErr) return;
    fprintf(stderr, "aqoffline: %s failed: %s\n", what, AudioQueueCompatLastErrorMessage());
    exit(1);
}

static void AQTestBufferCallback(void *inUserData, AudioQueueRef inAQ, AudioQueueBufferRef inCompleteAQBuffer) {
    AQTestInfo *myInfo = (AQTestInfo *)inUserData;
    if (myInfo->mDone) return;
    UInt32 numBytes;
    UInt32 nPackets = myInfo->mNumPacketsToRead;
    check(AudioFileReadPackets(myInfo->mAudioFile, false, &numBytes, myInfo->mPacketDescs, myInfo->mCurrentPacket,
                               &nPackets, inCompleteAQBuffer->mAudioData),
          "AudioFileReadPackets");
    if (nPackets > 0) {
        inCompleteAQBuffer->mAudioDataByteSize = numBytes;
        check(AudioQueueEnqueueBuffer(inAQ, inCompleteAQBuffer, (myInfo->mPacketDescs ? nPackets : 0),
                                      myInfo->mPacketDescs),
              "AudioQueueEnqueueBuffer");
        myInfo->mCurrentPacket += nPackets;
    } else {
        if (!myInfo->mFlushed) {
            check(AudioQueueFlush(myInfo->mQueue), "AudioQueueFlush");
            myInfo->mFlushed = true;
        }
        check(AudioQueueStop(myInfo->mQueue, false), "AudioQueueStop");
        myInfo->mDone = true;
    }
}

static void CalculateBytesForTime(AudioStreamBasicDescription *inDesc, UInt32 inMaxPacketSize, Float64 inSeconds,
                                  UInt32 *outBufferSize, UInt32 *outNumPackets) {
    static const UInt32 maxBufferSize = 0x10000;
    static const UInt32 minBufferSize = 0x4000;
    if (inDesc->mFramesPerPacket) {
        Float64 numPacketsForTime = inDesc->mSampleRate / inDesc->mFramesPerPacket * inSeconds;
        *outBufferSize = (UInt32)numPacketsForTime * inMaxPacketSize;
    } else {
        *outBufferSize = maxBufferSize > inMaxPacketSize ? maxBufferSize : inMaxPacketSize;
    }
    if (*outBufferSize > maxBufferSize && *outBufferSize > inMaxPacketSize)
        *outBufferSize = maxBufferSize;
    else if (*outBufferSize < minBufferSize)
        *outBufferSize = minBufferSize;
    *outNumPackets = *outBufferSize / inMaxPacketSize;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: aqoffline IN OUT.wav|OUT.caf\n");
        return 2;
    }
    AQTestInfo myInfo;
    memset(&myInfo, 0, sizeof myInfo);

    CFStringRef inPath = CFStringCreateWithCString(NULL, argv[1], kCFStringEncodingUTF8);
    CFURLRef sourceURL = CFURLCreateWithFileSystemPath(NULL, inPath, kCFURLPOSIXPathStyle, false);
    CFRelease(inPath);
    check(AudioFileOpenURL(sourceURL, kAudioFileReadPermission, 0, &myInfo.mAudioFile), "AudioFileOpenURL");
    CFRelease(sourceURL);
    UInt32 size = sizeof(myInfo.mDataFormat);
    check(AudioFileGetProperty(myInfo.mAudioFile, kAudioFilePropertyDataFormat, &size, &myInfo.mDataFormat),
          "AudioFileGetProperty(DataFormat)");

    check(AudioQueueNewOutput(&myInfo.mDataFormat, AQTestBufferCallback, &myInfo, CFRunLoopGetCurrent(),
                              kCFRunLoopCommonModes, 0, &myInfo.mQueue),
          "AudioQueueNewOutput");

    UInt32 bufferByteSize, maxPacketSize;
    size = sizeof(maxPacketSize);
    check(AudioFileGetProperty(myInfo.mAudioFile, kAudioFilePropertyPacketSizeUpperBound, &size, &maxPacketSize),
          "AudioFileGetProperty(PacketSizeUpperBound)");
    CalculateBytesForTime(&myInfo.mDataFormat, maxPacketSize, 1.0, &bufferByteSize, &myInfo.mNumPacketsToRead);
    bool isFormatVBR = (myInfo.mDataFormat.mBytesPerPacket == 0 || myInfo.mDataFormat.mFramesPerPacket == 0);
    if (isFormatVBR)
        myInfo.mPacketDescs = (AudioStreamPacketDescription *)malloc(sizeof(AudioStreamPacketDescription) *
                                                                     myInfo.mNumPacketsToRead);

    // The magic cookie, if the file has one (ALAC, AAC).
    size = sizeof(UInt32);
    OSStatus result = AudioFileGetPropertyInfo(myInfo.mAudioFile, kAudioFilePropertyMagicCookieData, &size, NULL);
    if (!result && size) {
        char *cookie = (char *)malloc(size);
        check(AudioFileGetProperty(myInfo.mAudioFile, kAudioFilePropertyMagicCookieData, &size, cookie),
              "get cookie from file");
        check(AudioQueueSetProperty(myInfo.mQueue, kAudioQueueProperty_MagicCookie, cookie, size), "set cookie on queue");
        free(cookie);
    }
    check(AudioQueueAllocateBuffer(myInfo.mQueue, bufferByteSize, &myInfo.mBuffer), "AudioQueueAllocateBuffer");

    // The capture format: 32-bit float, interleaved, at the file's rate.
    AudioStreamBasicDescription captureFormat;
    memset(&captureFormat, 0, sizeof captureFormat);
    captureFormat.mSampleRate = myInfo.mDataFormat.mSampleRate;
    captureFormat.mFormatID = kAudioFormatLinearPCM;
    captureFormat.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
    captureFormat.mChannelsPerFrame = myInfo.mDataFormat.mChannelsPerFrame;
    captureFormat.mBitsPerChannel = 32;
    captureFormat.mFramesPerPacket = 1;
    captureFormat.mBytesPerFrame = captureFormat.mBytesPerPacket = 4 * captureFormat.mChannelsPerFrame;
    check(AudioQueueSetOfflineRenderFormat(myInfo.mQueue, &captureFormat, NULL), "AudioQueueSetOfflineRenderFormat");

    const char *outPath = argv[2];
    size_t length = strlen(outPath);
    AudioFileTypeID outType = (length > 4 && strcmp(outPath + length - 4, ".caf") == 0) ? kAudioFileCAFType : kAudioFileWAVEType;
    CFURLRef destinationURL = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)outPath, (CFIndex)length, false);
    ExtAudioFileRef captureFile;
    check(ExtAudioFileCreateWithURL(destinationURL, outType, &captureFormat, NULL, kAudioFileFlags_EraseFile, &captureFile),
          "ExtAudioFileCreateWithURL");
    CFRelease(destinationURL);
    check(ExtAudioFileSetProperty(captureFile, kExtAudioFileProperty_ClientDataFormat, sizeof(captureFormat), &captureFormat),
          "ExtAudioFileSetProperty(ClientDataFormat)");

    UInt32 captureFrames = bufferByteSize / 2 / captureFormat.mBytesPerFrame;
    AudioQueueBufferRef captureBuffer;
    check(AudioQueueAllocateBuffer(myInfo.mQueue, captureFrames * captureFormat.mBytesPerFrame, &captureBuffer),
          "AudioQueueAllocateBuffer(capture)");
    AudioBufferList captureABL;
    captureABL.mNumberBuffers = 1;
    captureABL.mBuffers[0].mNumberChannels = captureFormat.mChannelsPerFrame;
    captureABL.mBuffers[0].mData = captureBuffer->mAudioData;

    check(AudioQueueStart(myInfo.mQueue, NULL), "AudioQueueStart");
    AudioTimeStamp ts;
    memset(&ts, 0, sizeof ts);
    ts.mFlags = kAudioTimeStampSampleTimeValid;
    ts.mSampleTime = 0;
    // Once with 0 frames, then prime the queue by calling the callback.
    check(AudioQueueOfflineRender(myInfo.mQueue, &ts, captureBuffer, 0), "AudioQueueOfflineRender");
    AQTestBufferCallback(&myInfo, myInfo.mQueue, myInfo.mBuffer);

    SInt64 written = 0;
    while (true) {
        UInt32 reqFrames = captureFrames;
        check(AudioQueueOfflineRender(myInfo.mQueue, &ts, captureBuffer, reqFrames), "AudioQueueOfflineRender");
        captureABL.mBuffers[0].mData = captureBuffer->mAudioData;
        captureABL.mBuffers[0].mDataByteSize = captureBuffer->mAudioDataByteSize;
        UInt32 writeFrames = captureABL.mBuffers[0].mDataByteSize / captureFormat.mBytesPerFrame;
        check(ExtAudioFileWrite(captureFile, writeFrames, &captureABL), "ExtAudioFileWrite");
        written += writeFrames;
        if (myInfo.mFlushed) break;
        ts.mSampleTime += writeFrames;
    }

    check(AudioQueueDispose(myInfo.mQueue, true), "AudioQueueDispose");
    check(AudioFileClose(myInfo.mAudioFile), "AudioFileClose");
    check(ExtAudioFileDispose(captureFile), "ExtAudioFileDispose");
    free(myInfo.mPacketDescs);
    printf("rendered %lld frames offline\n", (long long)written);
    return 0;
}
