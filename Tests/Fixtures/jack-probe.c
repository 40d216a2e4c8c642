/* jack-probe: the tests' independent position probe. A JACK client of its own on SERVER that
 * reads PORT (a source port) and, for every cycle of SECONDS, prints
 *   USECS SERVER_USECS VALUE
 * USECS is when the probe's callback began, on the probe's own monotonic clock; SERVER_USECS the
 * cycle's start as the server has it (jack_get_cycle_times: smooth, but on the server's clock,
 * which may not be the probe's); VALUE the cycle's first sample read from PORT. The callback runs
 * after the clients it reads from, so USECS is late by their work; a line through the least late
 * callbacks against SERVER_USECS gives each cycle's start on the probe's clock. Two probes on one
 * machine share that clock, so they say what each server played at the same moment.
 * Usage: jack-probe SERVER PORT SECONDS
 */
#include <jack/jack.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXIMUM_CYCLES 1000000

static jack_client_t *client;
static jack_port_t *input;
static jack_time_t *times;
static jack_time_t *server_times;
static float *values;
static volatile long count;

static int process(jack_nframes_t nframes, void *argument) {
    (void)argument;
    struct timespec now;
    jack_nframes_t current;
    jack_time_t current_usecs, next_usecs;
    float period_usecs;
    if (count >= MAXIMUM_CYCLES) return 0;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (jack_get_cycle_times(client, &current, &current_usecs, &next_usecs, &period_usecs) != 0) return 0;
    const float *buffer = jack_port_get_buffer(input, nframes);
    times[count] = (jack_time_t)now.tv_sec * 1000000 + (jack_time_t)now.tv_nsec / 1000;
    server_times[count] = current_usecs;
    values[count] = buffer[0];
    count++;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: jack-probe SERVER PORT SECONDS\n");
        return 64;
    }
    times = calloc(MAXIMUM_CYCLES, sizeof *times);
    server_times = calloc(MAXIMUM_CYCLES, sizeof *server_times);
    values = calloc(MAXIMUM_CYCLES, sizeof *values);
    if (!times || !server_times || !values) return 1;
    char name[64];
    snprintf(name, sizeof name, "probe-%d", (int)getpid());
    jack_status_t status;
    client = jack_client_open(name, JackServerName | JackNoStartServer, &status, argv[1]);
    if (!client) {
        fprintf(stderr, "jack-probe: cannot open a client on %s (status 0x%x)\n", argv[1], status);
        return 1;
    }
    input = jack_port_register(client, "in", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    if (!input || jack_set_process_callback(client, process, NULL) != 0 || jack_activate(client) != 0) {
        fprintf(stderr, "jack-probe: cannot set up the client\n");
        return 1;
    }
    if (jack_connect(client, argv[2], jack_port_name(input)) != 0) {
        fprintf(stderr, "jack-probe: cannot connect %s\n", argv[2]);
        return 1;
    }
    double seconds = atof(argv[3]);
    usleep((useconds_t)(seconds * 1e6));
    jack_deactivate(client);
    jack_client_close(client);
    for (long i = 0; i < count; i++) printf("%llu %llu %.9g\n", (unsigned long long)times[i], (unsigned long long)server_times[i], values[i]);
    return 0;
}
