// What a controller's send costs this machine's kernel before any server code runs: the floor
// under the web and OSC GO latencies measured "from the send".
//
//   cc -O2 -o loopback-send Tests/Benchmarks/LoopbackSend/loopback_send.c -lpthread && ./loopback-send
//
// Each of 200 rounds sleeps 20 ms (as the GO tests space their sends, so caches are as cold) and
// times, on CLOCK_MONOTONIC:
//   tcp: from before a 16-byte write on a loopback TCP connection (TCP_NODELAY) to the moment a
//        reader thread blocked in epoll_wait has read it (the reader at SCHED_FIFO when allowed,
//        as `session run` promotes its web event loop);
//   udp: one 16-byte sendto of a datagram to a loopback UDP socket (its duration);
//   pipe: one 1-byte write to a pipe (its duration), and a getppid() (a bare system call).
// Prints p10 / p50 / p90 / p99 in microseconds for each.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { ROUNDS = 200 };

static unsigned long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ULL + (unsigned long long)t.tv_nsec;
}

static _Atomic unsigned long long read_at;
static int reader_fd;

static void *reader(void *unused) {
    (void)unused;
    struct sched_param param = {.sched_priority = 10};
    pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);  // best effort
    int poll_fd = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = reader_fd};
    epoll_ctl(poll_fd, EPOLL_CTL_ADD, reader_fd, &event);
    char buffer[256];
    for (;;) {
        struct epoll_event ready;
        if (epoll_wait(poll_fd, &ready, 1, -1) < 1) continue;
        if (read(reader_fd, buffer, sizeof buffer) <= 0) return NULL;
        atomic_store(&read_at, now_ns());
    }
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *name, double *values) {
    qsort(values, ROUNDS, sizeof values[0], compare);
    printf("%-44s p10 %6.1f  p50 %6.1f  p90 %6.1f  p99 %6.1f us\n", name, values[ROUNDS / 10], values[ROUNDS / 2],
           values[ROUNDS * 9 / 10], values[ROUNDS * 99 / 100]);
}

static void fail(const char *what) {
    perror(what);
    exit(1);
}

int main(void) {
    static double samples[ROUNDS];
    static const char message[16] = "{\"command\":\"go\"";
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;

    // TCP: send to the reader's read.
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 1) ||
        getsockname(listener, (struct sockaddr *)&address, &length))
        fail("tcp listener");
    int sender = socket(AF_INET, SOCK_STREAM, 0);
    if (sender < 0 || connect(sender, (struct sockaddr *)&address, sizeof address)) fail("tcp connect");
    if ((reader_fd = accept(listener, NULL, NULL)) < 0) fail("tcp accept");
    int one = 1;
    setsockopt(sender, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    pthread_t thread;
    if (pthread_create(&thread, NULL, reader, NULL)) fail("reader thread");
    usleep(100000);
    for (int i = 0; i < ROUNDS; i++) {
        usleep(20000);
        atomic_store(&read_at, 0);
        unsigned long long start = now_ns();
        if (write(sender, message, sizeof message) != (ssize_t)sizeof message) fail("tcp write");
        unsigned long long at;
        while ((at = atomic_load(&read_at)) == 0) {}
        samples[i] = (double)(at - start) / 1000;
    }
    report("tcp: write to the reader's read", samples);

    // UDP: one sendto.
    int receiver = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in datagram = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    length = sizeof datagram;
    if (receiver < 0 || bind(receiver, (struct sockaddr *)&datagram, sizeof datagram) ||
        getsockname(receiver, (struct sockaddr *)&datagram, &length))
        fail("udp receiver");
    int udp = socket(AF_INET, SOCK_DGRAM, 0);
    char buffer[64];
    for (int i = 0; i < ROUNDS; i++) {
        usleep(20000);
        unsigned long long start = now_ns();
        if (sendto(udp, message, sizeof message, 0, (struct sockaddr *)&datagram, sizeof datagram) < 0) fail("udp sendto");
        samples[i] = (double)(now_ns() - start) / 1000;
        if (recv(receiver, buffer, sizeof buffer, 0) < 0) fail("udp recv");
    }
    report("udp: one sendto", samples);

    // A pipe write, and a bare system call, for scale.
    int ends[2];
    if (pipe(ends)) fail("pipe");
    for (int i = 0; i < ROUNDS; i++) {
        usleep(20000);
        unsigned long long start = now_ns();
        if (write(ends[1], "x", 1) != 1) fail("pipe write");
        samples[i] = (double)(now_ns() - start) / 1000;
        if (read(ends[0], buffer, 1) != 1) fail("pipe read");
    }
    report("pipe: one write", samples);
    for (int i = 0; i < ROUNDS; i++) {
        usleep(20000);
        unsigned long long start = now_ns();
        (void)getppid();
        samples[i] = (double)(now_ns() - start) / 1000;
    }
    report("getppid()", samples);
    return 0;
}
