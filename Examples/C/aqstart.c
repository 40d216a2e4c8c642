// aqstart: starts a playback queue at a chosen device time — AudioQueueStart(queue, &startTime) —
// the way code that lines sounds up with a clock does: read the device's time, ask for a start
// half a second later (AudioQueueDeviceGetNearestStartTime), start there, and report the start as
// a host time (AudioQueueDeviceTranslateTime). The queue plays one buffer whose first frame is a
// click (0.5 on every channel) and whose other frames are silent.
//
//   cc aqstart.c $(pkg-config --cflags --libs lockstep-audiotoolbox) -o aqstart
//   ./aqstart [LEAD_SECONDS]
//
// Callbacks run on the queue's own thread (NULL run loop); the main thread waits for the
// is-running listener to report the stop.
#define _DEFAULT_SOURCE   // usleep, with -std=c99 too
#include <AudioToolbox/AudioToolbox.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int stopped = 0;

static void check(OSStatus status, const char *what) {
    if (status == noErr) return;
    fprintf(stderr, "aqstart: %s failed: %s\n", what, AudioQueueCompatLastErrorMessage());
    exit(1);
}

static void OutputCallback(void *userData, AudioQueueRef queue, AudioQueueBufferRef buffer) {
    (void)userData; (void)queue; (void)buffer;   // the one buffer is done: nothing more to play
}

static void RunningChanged(void *userData, AudioQueueRef queue, AudioQueuePropertyID property) {
    (void)userData;
    UInt32 running = 1, size = sizeof running;
    check(AudioQueueGetProperty(queue, property, &running, &size), "AudioQueueGetProperty(IsRunning)");
    if (running) return;
    pthread_mutex_lock(&lock);
    stopped = 1;
    pthread_cond_signal(&changed);
    pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv) {
    double lead = argc > 1 ? atof(argv[1]) : 0.5;
    AudioStreamBasicDescription format;
    memset(&format, 0, sizeof format);
    format.mSampleRate = 48000;
    format.mFormatID = kAudioFormatLinearPCM;
    format.mFormatFlags = kLinearPCMFormatFlagIsFloat | kLinearPCMFormatFlagIsPacked;
    format.mChannelsPerFrame = 2;
    format.mBitsPerChannel = 32;
    format.mFramesPerPacket = 1;
    format.mBytesPerFrame = format.mBytesPerPacket = 8;

    AudioQueueRef queue;
    check(AudioQueueNewOutput(&format, OutputCallback, NULL, NULL, NULL, 0, &queue), "AudioQueueNewOutput");
    check(AudioQueueAddPropertyListener(queue, kAudioQueueProperty_IsRunning, RunningChanged, NULL),
          "AudioQueueAddPropertyListener");

    const UInt32 frames = 4800;
    AudioQueueBufferRef buffer;
    check(AudioQueueAllocateBuffer(queue, frames * format.mBytesPerFrame, &buffer), "AudioQueueAllocateBuffer");
    Float32 *samples = (Float32 *)buffer->mAudioData;
    memset(samples, 0, frames * format.mBytesPerFrame);
    samples[0] = samples[1] = 0.5f;
    buffer->mAudioDataByteSize = frames * format.mBytesPerFrame;
    check(AudioQueueEnqueueBuffer(queue, buffer, 0, NULL), "AudioQueueEnqueueBuffer");

    // The device's time: valid once it runs (the first time call opens it).
    AudioTimeStamp now;
    for (int tries = 0;; tries++) {
        check(AudioQueueDeviceGetCurrentTime(queue, &now), "AudioQueueDeviceGetCurrentTime");
        if (now.mFlags & kAudioTimeStampSampleTimeValid) break;
        if (tries == 200) { fprintf(stderr, "aqstart: the device does not run\n"); return 1; }
        usleep(10000);
    }
    Float64 rate;
    UInt32 size = sizeof rate;
    check(AudioQueueGetProperty(queue, kAudioQueueDeviceProperty_SampleRate, &rate, &size),
          "AudioQueueGetProperty(SampleRate)");

    AudioTimeStamp start;
    memset(&start, 0, sizeof start);
    start.mSampleTime = now.mSampleTime + lead * rate;
    start.mFlags = kAudioTimeStampSampleTimeValid;
    check(AudioQueueDeviceGetNearestStartTime(queue, &start, 0), "AudioQueueDeviceGetNearestStartTime");
    AudioTimeStamp host;
    check(AudioQueueDeviceTranslateTime(queue, &start, &host), "AudioQueueDeviceTranslateTime");
    check(AudioQueueStart(queue, &start), "AudioQueueStart");
    check(AudioQueueStop(queue, false), "AudioQueueStop");   // stop once the buffer has played

    pthread_mutex_lock(&lock);
    while (!stopped) pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);

    check(AudioQueueDispose(queue, true), "AudioQueueDispose");
    printf("asked for device time %.0f, started at %.0f (host time %llu us)\n", now.mSampleTime + lead * rate,
           start.mSampleTime, (unsigned long long)host.mHostTime);
    return 0;
}
