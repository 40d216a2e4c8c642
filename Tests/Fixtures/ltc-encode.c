/* ltc-encode: the tests' reference LTC, made with libltc's encoder alone (not Lockstep's
 * LTCSignal): writes FRAMES frames of 25 fps LTC from HH:MM:SS:FF at 48000 Hz, 1920 samples a
 * frame, frame k from sample 1920 k, as raw mono 32-bit floats (the machine's byte order).
 * Usage: ltc-encode OUT.raw HH MM SS FF FRAMES
 */
#include <ltc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: ltc-encode OUT.raw HH MM SS FF FRAMES\n");
        return 64;
    }
    SMPTETimecode start;
    memset(&start, 0, sizeof start);
    strcpy(start.timezone, "+0000");
    start.hours = (unsigned char)atoi(argv[2]);
    start.mins = (unsigned char)atoi(argv[3]);
    start.secs = (unsigned char)atoi(argv[4]);
    start.frame = (unsigned char)atoi(argv[5]);
    const long frames = atol(argv[6]);
    LTCEncoder *encoder = ltc_encoder_create(48000, 25, LTC_TV_625_50, 0);
    if (!encoder) {
        fprintf(stderr, "ltc-encode: no encoder\n");
        return 1;
    }
    ltc_encoder_set_timecode(encoder, &start);
    FILE *file = fopen(argv[1], "wb");
    if (!file) {
        perror(argv[1]);
        return 1;
    }
    float samples[4096];
    for (long frame = 0; frame < frames; frame++) {
        ltc_encoder_encode_frame(encoder);
        ltcsnd_sample_t *bytes;
        const int count = ltc_encoder_get_bufferptr(encoder, &bytes, 1);
        if (count != 1920) {
            fprintf(stderr, "ltc-encode: frame %ld has %d samples, not 1920\n", frame, count);
            return 1;
        }
        for (int i = 0; i < count; i++) samples[i] = ((float)bytes[i] - 128.0f) / 127.0f;
        fwrite(samples, sizeof(float), (size_t)count, file);
        ltc_encoder_inc_timecode(encoder);
    }
    fclose(file);
    ltc_encoder_free(encoder);
    return 0;
}
