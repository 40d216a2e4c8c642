// jack-load-monitor: samples a JACK server's DSP load and counts its xruns, for Scripts/bench.sh.
//
// Opens one passive client (no ports and no process callback, so it adds nothing to the graph
// it measures, yet receives xrun notifications), optionally waits for a port to appear (and be connected), lets a
// warm-up pass, then samples jack_cpu_load() every --interval-ms for --seconds and prints one
// line of key=value pairs on standard output:
//
//   samples=200 mean=3.41 p50=3.30 p95=4.02 max=5.10 min=2.90 xruns=0 xruns_warmup=0 max_xrun_delay_us=0.0
//
// mean/p50/p95/max/min: jack_cpu_load() (percent) over the window; xruns: xrun notifications
// during the window; xruns_warmup: during the warm-up. Exit status: 0, 2 (the port never showed
// up), 3 (the server went away), 64 (bad arguments), 1 (cannot open a client).
//
// Build: cc -O2 -o jack-load-monitor jack_load_monitor.c -ljack
#include <errno.h>
#include <jack/jack.h>
#include <jack/statistics.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_int xruns;
static atomic_int shut_down;
static _Atomic float max_delay_us;
static jack_client_t *client;

static int on_xrun(void *arg) {
    (void)arg;
    atomic_fetch_add(&xruns, 1);
    float delay = jack_get_xrun_delayed_usecs(client);
    if (delay > atomic_load(&max_delay_us)) atomic_store(&max_delay_us, delay);
    return 0;
}

static void on_shutdown(void *arg) {
    (void)arg;
    atomic_store(&shut_down, 1);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t) {
    double d = t - now_s();
    if (d <= 0) return;
    struct timespec ts = {(time_t)d, (long)((d - (time_t)d) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static int compare(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void usage(void) {
    fprintf(stderr,
            "usage: jack-load-monitor [--server NAME] [--name CLIENT] [--interval-ms MS] [--warmup S]\n"
            "                         [--seconds S] [--wait-port PORT] [--wait-connected] [--wait-timeout S]\n"
            "                         [--trace FILE]\n");
}

int main(int argc, char **argv) {
    const char *server = NULL, *name = "load-monitor", *wait_port = NULL, *trace_path = NULL;
    double interval_ms = 100, warmup = 2, seconds = 20, wait_timeout = 120;
    int wait_connected = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--wait-connected")) { wait_connected = 1; continue; }
        if (!v) { usage(); return 64; }
        if (!strcmp(a, "--server")) server = v;
        else if (!strcmp(a, "--name")) name = v;
        else if (!strcmp(a, "--interval-ms")) interval_ms = atof(v);
        else if (!strcmp(a, "--warmup")) warmup = atof(v);
        else if (!strcmp(a, "--seconds")) seconds = atof(v);
        else if (!strcmp(a, "--wait-port")) wait_port = v;
        else if (!strcmp(a, "--wait-timeout")) wait_timeout = atof(v);
        else if (!strcmp(a, "--trace")) trace_path = v;
        else { usage(); return 64; }
        i++;
    }
    if (interval_ms <= 0 || seconds <= 0 || warmup < 0) { usage(); return 64; }

    jack_status_t status;
    jack_options_t options = JackNoStartServer | JackUseExactName;
    if (server) options |= JackServerName;
    client = server ? jack_client_open(name, options, &status, server) : jack_client_open(name, options, &status);
    if (!client) {
        fprintf(stderr, "jack-load-monitor: cannot open client '%s' on server '%s' (status 0x%x)\n", name,
                server ? server : "(default)", status);
        return 1;
    }
    jack_set_xrun_callback(client, on_xrun, NULL);
    jack_on_shutdown(client, on_shutdown, NULL);
    // Xrun notifications reach active clients only. A client without a process callback is not
    // "realtime" for jackd2: activating it puts nothing in the process graph.
    if (jack_activate(client) != 0) {
        fprintf(stderr, "jack-load-monitor: cannot activate client '%s'\n", name);
        jack_client_close(client);
        return 1;
    }

    if (wait_port) {
        double deadline = now_s() + wait_timeout;
        for (;;) {
            jack_port_t *port = jack_port_by_name(client, wait_port);
            if (port && (!wait_connected || jack_port_connected(port) > 0)) break;
            if (atomic_load(&shut_down)) { jack_client_close(client); return 3; }
            if (now_s() > deadline) {
                fprintf(stderr, "jack-load-monitor: port '%s' did not appear%s within %.0f s\n", wait_port,
                        wait_connected ? " connected" : "", wait_timeout);
                jack_client_close(client);
                return 2;
            }
            sleep_until(now_s() + 0.005);
        }
    }

    double start = now_s();
    sleep_until(start + warmup);
    int warmup_xruns = atomic_exchange(&xruns, 0);
    atomic_store(&max_delay_us, 0);

    size_t capacity = (size_t)(seconds * 1000 / interval_ms) + 2, count = 0;
    float *samples = calloc(capacity, sizeof(float));
    FILE *trace = trace_path ? fopen(trace_path, "w") : NULL;
    double t0 = now_s(), next = t0;
    while (count < capacity) {
        next += interval_ms / 1000;
        if (next > t0 + seconds + 1e-6) break;
        sleep_until(next);
        if (atomic_load(&shut_down)) {
            fprintf(stderr, "jack-load-monitor: the server went away\n");
            return 3;
        }
        samples[count] = jack_cpu_load(client);
        if (trace) fprintf(trace, "%.3f %.3f %d\n", now_s() - t0, samples[count], atomic_load(&xruns));
        count++;
    }
    int window_xruns = atomic_load(&xruns);
    float delay = atomic_load(&max_delay_us);
    if (trace) fclose(trace);
    jack_client_close(client);

    if (count == 0) return 1;
    double sum = 0;
    for (size_t i = 0; i < count; i++) sum += samples[i];
    qsort(samples, count, sizeof(float), compare);
    size_t p50 = (count - 1) / 2, p95 = (size_t)((count - 1) * 0.95 + 0.5);
    printf("samples=%zu mean=%.2f p50=%.2f p95=%.2f max=%.2f min=%.2f xruns=%d xruns_warmup=%d max_xrun_delay_us=%.1f\n",
           count, sum / count, samples[p50], samples[p95], samples[count - 1], samples[0], window_xruns,
           warmup_xruns, delay);
    free(samples);
    return 0;
}
