// jack-load-monitor: samples a JACK server's DSP load and counts its xruns, for Scripts/bench.sh.
//
// Opens one passive client (no ports and no process callback: jackd2 then leaves it out of the
// process graph it measures, yet sends it xrun notifications), optionally waits until the
// clients under test are up (--wait-ports: a regular expression on port names, --wait-count
// ports matching it, with --wait-connected each connected somewhere), lets a warm-up pass, then
// samples jack_cpu_load() every --interval-ms for --seconds and prints one line of key=value
// pairs on standard output:
//
//   samples=200 mean=3.41 p50=3.30 p95=4.02 max=5.10 min=2.90 xruns=0 xruns_warmup=0 cpu=4.1 rt_cpu=3.2 rt_faults=0
//
// mean/p50/p95/max/min: jack_cpu_load() (percent of the period) over the window; xruns: xrun
// notifications during the window; xruns_warmup: during the warm-up; cpu / rt_cpu: the CPU time
// (user + system) the processes given with --pid used during the window, all their threads /
// only their realtime (SCHED_FIFO/RR) threads, in percent of one core; rt_faults: page faults
// (minor + major) their realtime threads took during the window (-1 without --pid).
//
// With --probe it only checks that the server answers (exit status 0) and exits.
//
// Exit status: 0; 2 the ports did not show up in time; 3 the server went away; 4 a --pid process
// exited before the end of the window; 64 bad arguments; 1 no client.
//
// Build: cc -O2 -o jack-load-monitor jack_load_monitor.c -ljack
#include <dirent.h>
#include <errno.h>
#include <jack/jack.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAX_PIDS 64

static atomic_int xruns;
static atomic_int shut_down;

static int on_xrun(void *arg) {
    (void)arg;
    atomic_fetch_add(&xruns, 1);
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

// Reads a /proc stat line: state, utime + stime (ticks), page faults (minor + major) and
// scheduling policy. Returns 0 on success.
static int read_stat(const char *path, char *state, long long *ticks, long long *faults, int *policy) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[4096];
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = 0;
    char *p = strrchr(line, ')');
    if (!p) return -1;
    // Fields after the command: 3 state, 10 minflt, 12 majflt, 14 utime, 15 stime, 41 policy.
    int field = 2;
    long long utime = 0, stime = 0, minflt = 0, majflt = 0;
    *policy = 0;
    for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " ")) {
        field++;
        if (field == 3) *state = tok[0];
        else if (field == 10) minflt = atoll(tok);
        else if (field == 12) majflt = atoll(tok);
        else if (field == 14) utime = atoll(tok);
        else if (field == 15) stime = atoll(tok);
        else if (field == 41) { *policy = atoi(tok); break; }
    }
    *ticks = utime + stime;
    *faults = minflt + majflt;
    return 0;
}

static int alive(pid_t pid) {
    char path[64], state = 0;
    long long ticks, faults;
    int policy;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    return read_stat(path, &state, &ticks, &faults, &policy) == 0 && state != 'Z' && state != 'X';
}

// CPU ticks of every thread of the processes: all threads, and the realtime ones; and the page
// faults of the realtime threads.
static void cpu_ticks(const pid_t *pids, int count, long long *all, long long *rt, long long *rt_faults) {
    *all = 0;
    *rt = 0;
    *rt_faults = 0;
    for (int i = 0; i < count; i++) {
        char dir[64];
        snprintf(dir, sizeof dir, "/proc/%d/task", (int)pids[i]);
        DIR *d = opendir(dir);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char path[400], state;
            long long ticks, faults;
            int policy;
            snprintf(path, sizeof path, "%s/%s/stat", dir, e->d_name);
            if (read_stat(path, &state, &ticks, &faults, &policy) != 0) continue;
            *all += ticks;
            if (policy == 1 || policy == 2) {   // SCHED_FIFO, SCHED_RR
                *rt += ticks;
                *rt_faults += faults;
            }
        }
        closedir(d);
    }
}

static int ports_ready(jack_client_t *client, const char *pattern, int count, int connected) {
    const char **ports = jack_get_ports(client, pattern, NULL, 0);
    if (!ports) return count <= 0;
    int n = 0;
    for (int i = 0; ports[i]; i++) {
        jack_port_t *port = jack_port_by_name(client, ports[i]);
        if (port && (!connected || jack_port_connected(port) > 0)) n++;
    }
    jack_free(ports);
    return n >= count;
}

static void usage(void) {
    fprintf(stderr,
            "usage: jack-load-monitor [--server NAME] [--name CLIENT] [--interval-ms MS] [--warmup S] [--seconds S]\n"
            "                         [--wait-ports REGEX [--wait-count N] [--wait-connected] [--wait-timeout S]]\n"
            "                         [--pid PID]... [--trace FILE]\n"
            "       jack-load-monitor --probe [--server NAME]\n");
}

int main(int argc, char **argv) {
    const char *server = NULL, *name = "load-monitor", *wait_ports = NULL, *trace_path = NULL;
    double interval_ms = 100, warmup = 2, seconds = 20, wait_timeout = 120;
    int wait_connected = 0, wait_count = 1, npids = 0, probe = 0;
    pid_t pids[MAX_PIDS];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--wait-connected")) { wait_connected = 1; continue; }
        if (!strcmp(a, "--probe")) { probe = 1; continue; }
        if (!v) { usage(); return 64; }
        if (!strcmp(a, "--server")) server = v;
        else if (!strcmp(a, "--name")) name = v;
        else if (!strcmp(a, "--interval-ms")) interval_ms = atof(v);
        else if (!strcmp(a, "--warmup")) warmup = atof(v);
        else if (!strcmp(a, "--seconds")) seconds = atof(v);
        else if (!strcmp(a, "--wait-ports")) wait_ports = v;
        else if (!strcmp(a, "--wait-count")) wait_count = atoi(v);
        else if (!strcmp(a, "--wait-timeout")) wait_timeout = atof(v);
        else if (!strcmp(a, "--trace")) trace_path = v;
        else if (!strcmp(a, "--pid") && npids < MAX_PIDS) pids[npids++] = (pid_t)atoi(v);
        else { usage(); return 64; }
        i++;
    }
    if (interval_ms <= 0 || seconds <= 0 || warmup < 0) { usage(); return 64; }

    jack_status_t status;
    jack_options_t options = JackNoStartServer | JackUseExactName;
    if (server) options |= JackServerName;
    jack_client_t *client = server ? jack_client_open(name, options, &status, server)
                                   : jack_client_open(name, options, &status);
    if (!client) {
        if (!probe) {
            fprintf(stderr, "jack-load-monitor: cannot open client '%s' on server '%s' (status 0x%x)\n", name,
                    server ? server : "(default)", status);
        }
        return 1;
    }
    if (probe) {
        jack_client_close(client);
        return 0;
    }
    // The server's frame clock as the monitor starts (right after the client it watches was
    // spawned): the bench measures a client's start-up against it.
    jack_nframes_t start_frame = jack_frame_time(client);
    jack_set_xrun_callback(client, on_xrun, NULL);
    jack_on_shutdown(client, on_shutdown, NULL);
    // Xrun notifications reach active clients only. A client without a process callback is not
    // "realtime" for jackd2: activating it puts nothing in the process graph.
    if (jack_activate(client) != 0) {
        fprintf(stderr, "jack-load-monitor: cannot activate client '%s'\n", name);
        jack_client_close(client);
        return 1;
    }

    int result = 0;
    if (wait_ports) {
        double deadline = now_s() + wait_timeout;
        while (!ports_ready(client, wait_ports, wait_count, wait_connected)) {
            if (atomic_load(&shut_down)) { result = 3; break; }
            for (int i = 0; i < npids; i++) {
                if (!alive(pids[i])) {
                    fprintf(stderr, "jack-load-monitor: process %d exited before its ports showed up\n", (int)pids[i]);
                    result = 4;
                }
            }
            if (result) break;
            if (now_s() > deadline) {
                fprintf(stderr, "jack-load-monitor: %d ports matching '%s' did not show up%s within %.0f s\n",
                        wait_count, wait_ports, wait_connected ? " connected" : "", wait_timeout);
                result = 2;
                break;
            }
            sleep_until(now_s() + 0.01);
        }
        if (result) { jack_client_close(client); return result; }
    }

    sleep_until(now_s() + warmup);
    int warmup_xruns = atomic_exchange(&xruns, 0);

    size_t capacity = (size_t)(seconds * 1000 / interval_ms) + 2, count = 0;
    float *samples = calloc(capacity, sizeof(float));
    FILE *trace = trace_path ? fopen(trace_path, "w") : NULL;
    long long all0, rt0, all1, rt1, faults0, faults1;
    cpu_ticks(pids, npids, &all0, &rt0, &faults0);
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
    cpu_ticks(pids, npids, &all1, &rt1, &faults1);
    double elapsed = now_s() - t0;
    int window_xruns = atomic_load(&xruns);
    for (int i = 0; i < npids; i++) {
        if (!alive(pids[i])) {
            fprintf(stderr, "jack-load-monitor: process %d exited during the window\n", (int)pids[i]);
            result = 4;
        }
    }
    if (trace) fclose(trace);
    jack_client_close(client);
    if (count == 0) return 1;

    double sum = 0, hz = (double)sysconf(_SC_CLK_TCK);
    for (size_t i = 0; i < count; i++) sum += samples[i];
    qsort(samples, count, sizeof(float), compare);
    size_t p50 = (count - 1) / 2, p95 = (size_t)((count - 1) * 0.95 + 0.5);
    double cpu = npids ? (all1 - all0) / hz / elapsed * 100 : -1;
    double rt_cpu = npids ? (rt1 - rt0) / hz / elapsed * 100 : -1;
    printf("samples=%zu mean=%.2f p50=%.2f p95=%.2f max=%.2f min=%.2f xruns=%d xruns_warmup=%d cpu=%.1f rt_cpu=%.1f "
           "rt_faults=%lld start_frame=%u\n",
           count, sum / count, samples[p50], samples[p95], samples[count - 1], samples[0], window_xruns,
           warmup_xruns, cpu, rt_cpu, npids ? faults1 - faults0 : -1LL, (unsigned)start_frame);
    free(samples);
    return result;
}
