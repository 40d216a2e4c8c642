// aqmeter: a level meter on a recording queue, as voice-recorder tutorials write one: an input
// queue whose callback re-enqueues each buffer, kAudioQueueProperty_EnableLevelMetering on, and
// the peak and average power of each channel read with kAudioQueueProperty_CurrentLevelMeterDB
// every tenth of a second while the main thread runs its run loop (the queue's callbacks run
// there: it was created with CFRunLoopGetCurrent()).
//
//   cc aqmeter.c $(pkg-config --cflags --libs lockstep-audiotoolbox) -o aqmeter
//   ./aqmeter [SECONDS]
#include <AudioToolbox/AudioToolbox.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Recorder {
    AudioQueueRef queue;
    long buffers;
    long offThread;
    pthread_t mainThread;
} Recorder;

static void check(OSStatus status, const char *what) {
    if (status == noErr) return;
    fprintf(stderr, "aqmeter: %s failed: %s\n", what, AudioQueueCompatLastErrorMessage());
    exit(1);
}

static void AudioInputCallback(void *inUserData, AudioQueueRef inAQ, AudioQueueBufferRef inBuffer,
                               const AudioTimeStamp *inStartTime, UInt32 inNumberPacketDescriptions,
                               const AudioStreamPacketDescription *inPacketDescs) {
    (void)inStartTime; (void)inNumberPacketDescriptions; (void)inPacketDescs;
    Recorder *recorder = (Recorder *)inUserData;
    recorder->buffers++;
    if (!pthread_equal(pthread_self(), recorder->mainThread)) recorder->offThread++;
    AudioQueueEnqueueBuffer(inAQ, inBuffer, 0, NULL);
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1;
    Recorder recorder;
    memset(&recorder, 0, sizeof recorder);
    recorder.mainThread = pthread_self();

    AudioStreamBasicDescription format;
    memset(&format, 0, sizeof format);
    format.mSampleRate = 48000;
    format.mFormatID = kAudioFormatLinearPCM;
    format.mFormatFlags = kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked;
    format.mChannelsPerFrame = 2;
    format.mBitsPerChannel = 16;
    format.mFramesPerPacket = 1;
    format.mBytesPerFrame = format.mBytesPerPacket = 4;

    check(AudioQueueNewInput(&format, AudioInputCallback, &recorder, CFRunLoopGetCurrent(), kCFRunLoopCommonModes, 0,
                             &recorder.queue),
          "AudioQueueNewInput");
    for (int i = 0; i < 3; i++) {
        AudioQueueBufferRef buffer;
        check(AudioQueueAllocateBuffer(recorder.queue, 4800 * format.mBytesPerFrame, &buffer), "AudioQueueAllocateBuffer");
        check(AudioQueueEnqueueBuffer(recorder.queue, buffer, 0, NULL), "AudioQueueEnqueueBuffer");
    }
    UInt32 on = 1;
    check(AudioQueueSetProperty(recorder.queue, kAudioQueueProperty_EnableLevelMetering, &on, sizeof on),
          "AudioQueueSetProperty(EnableLevelMetering)");
    check(AudioQueueStart(recorder.queue, NULL), "AudioQueueStart");

    int reads = (int)(seconds * 10);
    for (int i = 0; i < reads; i++) {
        CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.1, false);
        AudioQueueLevelMeterState levels[2];
        UInt32 size = sizeof levels;
        check(AudioQueueGetProperty(recorder.queue, kAudioQueueProperty_CurrentLevelMeterDB, levels, &size),
              "AudioQueueGetProperty(CurrentLevelMeterDB)");
        printf("level peak=%.2f/%.2f average=%.2f/%.2f dB\n", levels[0].mPeakPower, levels[1].mPeakPower,
               levels[0].mAveragePower, levels[1].mAveragePower);
        fflush(stdout);
    }
    check(AudioQueueStop(recorder.queue, true), "AudioQueueStop");
    check(AudioQueueDispose(recorder.queue, true), "AudioQueueDispose");
    printf("%ld buffers recorded; %ld callbacks off the run loop's thread\n", recorder.buffers, recorder.offThread);
    return 0;
}
