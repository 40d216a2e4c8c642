/* ltc-decode: the tests' independent LTC decoder. Reads one channel of an audio file
 * (libsndfile) through libltc's *decoder* and prints, per decoded frame:
 *   HH:MM:SS:FF DF OFF_START OFF_END REVERSE EDGE
 * DF is the frame's drop-frame bit; OFF_START and OFF_END are libltc's estimates of the frame's
 * first and last samples (within a couple of samples: the decoder times bits by a running
 * average); EDGE is the exact sample of the transition that ends the frame, the signal's sign
 * change nearest to OFF_END + 1 (-1 if none lies within 6 samples): the next frame's first sample.
 * Usage: ltc-decode FILE CHANNEL(from 0) SAMPLES_PER_FRAME
 */
#include <ltc.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>

/* The sign change (sample i with signal[i - 1] and signal[i] on either side of 0) nearest to
 * `around`, within 6 samples; -1 if none. */
static long long edge(const float *signal, long long count, long long around) {
    for (long long distance = 0; distance <= 6; distance++) {
        for (int side = -1; side <= 1; side += 2) {
            long long i = around + side * distance;
            if (i >= 1 && i < count && (signal[i - 1] < 0) != (signal[i] < 0)) return i;
        }
    }
    return -1;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: ltc-decode FILE CHANNEL SAMPLES_PER_FRAME\n");
        return 64;
    }
    SF_INFO info = {0};
    SNDFILE *file = sf_open(argv[1], SFM_READ, &info);
    if (!file) {
        fprintf(stderr, "ltc-decode: %s: %s\n", argv[1], sf_strerror(NULL));
        return 1;
    }
    const int channel = atoi(argv[2]);
    if (channel < 0 || channel >= info.channels) {
        fprintf(stderr, "ltc-decode: channel %d of %d\n", channel, info.channels);
        return 1;
    }
    float *all = malloc(sizeof(float) * info.channels * (size_t)info.frames);
    float *signal = malloc(sizeof(float) * (size_t)info.frames);
    const long long count = sf_readf_float(file, all, info.frames);
    for (long long i = 0; i < count; i++) signal[i] = all[i * info.channels + channel];
    sf_close(file);
    LTCDecoder *decoder = ltc_decoder_create(atoi(argv[3]), 64);
    LTCFrameExt frame;
    for (long long position = 0; position < count; position += 1024) {
        const long long block = count - position < 1024 ? count - position : 1024;
        ltc_decoder_write_float(decoder, signal + position, (size_t)block, position);
        while (ltc_decoder_read(decoder, &frame)) {
            SMPTETimecode time;
            ltc_frame_to_time(&time, &frame.ltc, 0);
            printf("%02d:%02d:%02d:%02d %d %lld %lld %d %lld\n", time.hours, time.mins, time.secs, time.frame,
                   (int)frame.ltc.dfbit, (long long)frame.off_start, (long long)frame.off_end, frame.reverse,
                   edge(signal, count, (long long)frame.off_end + 1));
        }
    }
    ltc_decoder_free(decoder);
    free(signal);
    free(all);
    return 0;
}
