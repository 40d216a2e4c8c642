// Lockstep's C API: Apple's <CoreAudioTypes/CoreAudioTypes.h> (the newer spelling of
// <CoreAudio/CoreAudioTypes.h>): the same declarations.
#include <CoreAudio/CoreAudioTypes.h>
