// jack-null-client: the cheapest possible playback client, for Scripts/bench.sh's reference row.
//
// Registers out_1 and out_2, connects them to the physical playback ports (as lockstep play and
// sndfile-jackplay do), and writes silence every cycle until SIGINT/SIGTERM or --seconds. Its DSP
// load is JACK's fixed cost of one more client in the graph (waking its thread, the context
// switches, the port mixing), whatever the client computes.
//
// With --busy-us N it also computes for N microseconds' worth of arithmetic every cycle (a fixed
// amount of work, calibrated at start, touching no memory): the reference for a client that keeps
// the realtime thread busy for that long. An xrun it suffers is the machine's (a stalled vCPU, an
// interrupt), not a cost of the audio it would have mixed. Bench part 5 runs it at lockstep's
// load to show how often the machine itself stalls a client that busy.
//
// Build: cc -O2 -o jack-null-client jack_null_client.c -ljack
#include <jack/jack.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static jack_port_t *ports[2];
static volatile sig_atomic_t stop;
static long busy_iterations;
static volatile float busy_sink;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// A dependent chain of multiply-adds: its time is its length, whatever the caches hold.
static void burn(long iterations) {
    float x = 1.0f;
    for (long i = 0; i < iterations; i++) x = x * 1.0000001f + 1e-7f;
    busy_sink = x;
}

static int process(jack_nframes_t frames, void *arg) {
    (void)arg;
    if (busy_iterations > 0) burn(busy_iterations);
    for (int c = 0; c < 2; c++) {
        float *buffer = jack_port_get_buffer(ports[c], frames);
        memset(buffer, 0, frames * sizeof(float));
    }
    return 0;
}

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv) {
    const char *name = "null-client";
    double seconds = 1e9, busy_us = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--name")) name = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--busy-us")) busy_us = atof(argv[i + 1]);
        else { fprintf(stderr, "usage: jack-null-client [--name CLIENT] [--seconds S] [--busy-us N]\n"); return 64; }
    }
    if (busy_us > 0) {
        // Calibrate: the fastest of five runs of a million iterations.
        double best = 1e9;
        for (int k = 0; k < 5; k++) {
            double t0 = now();
            burn(1000000);
            double t = now() - t0;
            if (t < best) best = t;
        }
        busy_iterations = (long)(busy_us * 1e-6 / best * 1e6);
    }
    jack_status_t status;
    jack_client_t *client = jack_client_open(name, JackNoStartServer, &status);
    if (!client) {
        fprintf(stderr, "jack-null-client: cannot open a client (status 0x%x)\n", status);
        return 1;
    }
    ports[0] = jack_port_register(client, "out_1", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    ports[1] = jack_port_register(client, "out_2", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    if (!ports[0] || !ports[1]) return 1;
    jack_set_process_callback(client, process, NULL);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (jack_activate(client) != 0) return 1;
    const char **physical = jack_get_ports(client, NULL, NULL, JackPortIsPhysical | JackPortIsInput);
    for (int c = 0; physical && c < 2 && physical[c]; c++) jack_connect(client, jack_port_name(ports[c]), physical[c]);
    if (physical) jack_free(physical);
    for (double t = 0; !stop && t < seconds; t += 0.05) usleep(50000);
    jack_client_close(client);
    return 0;
}
