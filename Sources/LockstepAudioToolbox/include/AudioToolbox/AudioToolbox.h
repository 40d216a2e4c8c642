// Lockstep's C API: Apple's <AudioToolbox/AudioToolbox.h> — every AudioToolbox header Lockstep
// provides: Audio Queue, Audio File, Extended Audio File, Audio File Stream and Audio Converter
// Services, with the Core Audio types and Core Foundation pieces they use.
//
//   cc prog.c $(pkg-config --cflags --libs lockstep-audiotoolbox)
//
// See Docs/CAPI.md (threads, run loops, and what differs from Apple).
#ifndef LOCKSTEP_AUDIOTOOLBOX_H
#define LOCKSTEP_AUDIOTOOLBOX_H

#include <CoreFoundation/CoreFoundation.h>
#include <CoreAudio/CoreAudioTypes.h>
#include <AudioToolbox/AudioQueue.h>
#include <AudioToolbox/AudioFile.h>
#include <AudioToolbox/ExtendedAudioFile.h>
#include <AudioToolbox/AudioFileStream.h>
#include <AudioToolbox/AudioConverter.h>

#endif
