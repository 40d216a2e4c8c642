// aqrecord: records into an AIFF file with Apple's "Recording Audio" guide (Audio Queue Services
// Programming Guide), Listings 2-1 to 2-15, as written there — which is C++ (references, the
// UInt32(...) cast, struct names without `struct`): so this is the C++ example, compiled with c++.
//
//   c++ aqrecord.cpp $(pkg-config --cflags --libs lockstep-audiotoolbox) -o aqrecord
//   ./aqrecord OUT.aiff [SECONDS [RATE [BITS]]]   (default 3 s at 44100 Hz, 16-bit stereo, big-endian)
//
// The queue records the default device's inputs (the JACK client's in_1, in_2 ports, connected to
// the physical capture ports). Lines marked "Linux:" are the only additions to the listings.
#include <AudioToolbox/AudioToolbox.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>   // Linux: usleep, the "user interface thread" of Listing 2-14

// Listing 2-1  A custom structure for a recording audio queue
static const int kNumberBuffers = 3;
struct AQRecorderState {
    AudioStreamBasicDescription  mDataFormat;
    AudioQueueRef                mQueue;
    AudioQueueBufferRef          mBuffers[kNumberBuffers];
    AudioFileID                  mAudioFile;
    UInt32                       bufferByteSize;
    SInt64                       mCurrentPacket;
    bool                         mIsRunning;
};

// Linux: the guide leaves error handling out; this reports a failure and its reason.
static void check(OSStatus status, const char *what) {
    if (status == noErr) return;
    std::fprintf(stderr, "aqrecord: %s failed: %s\n", what, AudioQueueCompatLastErrorMessage());
    std::exit(1);
}

// Listing 2-5  A recording audio queue callback function
static void HandleInputBuffer (
    void                                 *aqData,
    AudioQueueRef                        inAQ,
    AudioQueueBufferRef                  inBuffer,
    const AudioTimeStamp                 *inStartTime,
    UInt32                               inNumPackets,
    const AudioStreamPacketDescription   *inPacketDesc
) {
    (void)inAQ; (void)inStartTime;
    AQRecorderState *pAqData = (AQRecorderState *) aqData;

    if (inNumPackets == 0 &&
          pAqData->mDataFormat.mBytesPerPacket != 0)
       inNumPackets =
           inBuffer->mAudioDataByteSize / pAqData->mDataFormat.mBytesPerPacket;

    if (AudioFileWritePackets (
            pAqData->mAudioFile,
            false,
            inBuffer->mAudioDataByteSize,
            inPacketDesc,
            pAqData->mCurrentPacket,
            &inNumPackets,
            inBuffer->mAudioData
        ) == noErr) {
            pAqData->mCurrentPacket += inNumPackets;
    }
   if (pAqData->mIsRunning == 0)
      return;

    AudioQueueEnqueueBuffer (
        pAqData->mQueue,
        inBuffer,
        0,
        NULL
    );
}

// Listing 2-6  Deriving a recording audio queue buffer size
void DeriveBufferSize (
    AudioQueueRef                audioQueue,
    AudioStreamBasicDescription  &ASBDescription,
    Float64                      seconds,
    UInt32                       *outBufferSize
) {
    static const int maxBufferSize = 0x50000;

    int maxPacketSize = ASBDescription.mBytesPerPacket;
    if (maxPacketSize == 0) {
        UInt32 maxVBRPacketSize = sizeof(maxPacketSize);
        AudioQueueGetProperty (
                audioQueue,
                kAudioQueueProperty_MaximumOutputPacketSize,
                &maxPacketSize,
                &maxVBRPacketSize
        );
    }

    Float64 numBytesForTime =
        ASBDescription.mSampleRate * maxPacketSize * seconds;
    *outBufferSize =
    UInt32 (numBytesForTime < maxBufferSize ?
        numBytesForTime : maxBufferSize);
}

// Listing 2-7  Setting a magic cookie for an audio file
OSStatus SetMagicCookieForFile (
    AudioQueueRef inQueue,
    AudioFileID   inFile
) {
    OSStatus result = noErr;
    UInt32 cookieSize;

    if (
            AudioQueueGetPropertySize (
                inQueue,
                kAudioQueueProperty_MagicCookie,
                &cookieSize
            ) == noErr
    ) {
        char* magicCookie =
            (char *) malloc (cookieSize);
        if (
                AudioQueueGetProperty (
                    inQueue,
                    kAudioQueueProperty_MagicCookie,
                    magicCookie,
                    &cookieSize
                ) == noErr
        )
            result =    AudioFileSetProperty (
                            inFile,
                            kAudioFilePropertyMagicCookieData,
                            cookieSize,
                            magicCookie
                        );
        free (magicCookie);
    }
    return result;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 5) {
        std::fprintf(stderr, "usage: aqrecord OUT.aiff [SECONDS [RATE [BITS]]]\n");
        return 2;
    }
    const char *filePath = argv[1];
    double seconds = argc > 2 ? std::atof(argv[2]) : 3;

    // Listing 2-8  Specifying an audio queue's audio data format
    AQRecorderState aqData;
    std::memset(&aqData, 0, sizeof aqData);   // Linux: the listing leaves the other fields to chance

    aqData.mDataFormat.mFormatID         = kAudioFormatLinearPCM;
    aqData.mDataFormat.mSampleRate       = argc > 3 ? std::atof(argv[3]) : 44100.0;
    aqData.mDataFormat.mChannelsPerFrame = 2;
    aqData.mDataFormat.mBitsPerChannel   = argc > 4 ? std::atoi(argv[4]) : 16;   // Linux: BITS (16 in the listing)
    aqData.mDataFormat.mBytesPerPacket   =
       aqData.mDataFormat.mBytesPerFrame =
          aqData.mDataFormat.mChannelsPerFrame * (aqData.mDataFormat.mBitsPerChannel / 8);   // sizeof (SInt16) for 16
    aqData.mDataFormat.mFramesPerPacket  = 1;

    AudioFileTypeID fileType             = kAudioFileAIFFType;
    aqData.mDataFormat.mFormatFlags =
        kLinearPCMFormatFlagIsBigEndian
        | kLinearPCMFormatFlagIsSignedInteger
        | kLinearPCMFormatFlagIsPacked;

    // Listing 2-9  Creating a recording audio queue
    check(AudioQueueNewInput (
        &aqData.mDataFormat,
        HandleInputBuffer,
        &aqData,
        NULL,
        kCFRunLoopCommonModes,
        0,
        &aqData.mQueue
    ), "AudioQueueNewInput");

    // Listing 2-10  Getting the audio format from an audio queue
    UInt32 dataFormatSize = sizeof (aqData.mDataFormat);

    check(AudioQueueGetProperty (
        aqData.mQueue,
        kAudioQueueProperty_StreamDescription,
        &aqData.mDataFormat,
        &dataFormatSize
    ), "AudioQueueGetProperty(StreamDescription)");

    // Listing 2-11  Creating an audio file for recording
    CFURLRef audioFileURL =
        CFURLCreateFromFileSystemRepresentation (
            NULL,
            (const UInt8 *) filePath,
            strlen (filePath),
            false
        );

    check(AudioFileCreateWithURL (
        audioFileURL,
        fileType,
        &aqData.mDataFormat,
        kAudioFileFlags_EraseFile,
        &aqData.mAudioFile
    ), "AudioFileCreateWithURL");
    CFRelease (audioFileURL);   // Linux: the listing keeps it; the Create rule says release it

    // Listing 2-12  Setting an audio queue buffer size
    DeriveBufferSize (
        aqData.mQueue,
        aqData.mDataFormat,
        0.5,
        &aqData.bufferByteSize
    );

    // Listing 2-13  Preparing a set of audio queue buffers
    for (int i = 0; i < kNumberBuffers; ++i) {
        check(AudioQueueAllocateBuffer (
            aqData.mQueue,
            aqData.bufferByteSize,
            &aqData.mBuffers[i]
        ), "AudioQueueAllocateBuffer");

        check(AudioQueueEnqueueBuffer (
            aqData.mQueue,
            aqData.mBuffers[i],
            0,
            NULL
        ), "AudioQueueEnqueueBuffer");
    }

    SetMagicCookieForFile (aqData.mQueue, aqData.mAudioFile);

    // Listing 2-14  Recording audio
    aqData.mCurrentPacket = 0;
    aqData.mIsRunning = true;

    check(AudioQueueStart (
        aqData.mQueue,
        NULL
    ), "AudioQueueStart");
    // Wait, on user interface thread, until user stops the recording
    usleep ((useconds_t) (seconds * 1e6));   // Linux: the "user" stops after SECONDS
    check(AudioQueueStop (
        aqData.mQueue,
        true
    ), "AudioQueueStop");

    aqData.mIsRunning = false;

    SetMagicCookieForFile (aqData.mQueue, aqData.mAudioFile);

    // Listing 2-15  Cleaning up after recording
    AudioQueueDispose (
        aqData.mQueue,
        true
    );

    AudioFileClose (aqData.mAudioFile);

    std::printf("recorded %lld packets\n", (long long) aqData.mCurrentPacket);
    return 0;
}
