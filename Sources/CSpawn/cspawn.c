#define _GNU_SOURCE
#include "cspawn.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Everything below runs in forked children of a multithreaded process: async-signal-safe calls
   only (no malloc, no stdio). */

static void sleep_ms(int ms) {
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

/* Moves `fd` to at least `minimum` (close-on-exec as asked), closing the original. */
static int move_up(int fd, int minimum, int cloexec) {
    if (fd < 0) return -1;
    int moved = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, minimum);
    close(fd);
    return moved;
}

/* The server itself: bound to the keeper by SIGKILL (it never outlives it), default signal
   dispositions and an empty mask (ignored signals survive exec), output on `output_fd`. */
static void exec_child(const char *path, char *const argv[], char *const envp[], int output_fd, pid_t keeper) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(127);
    if (getppid() != keeper) _exit(127);
    int input = open("/dev/null", O_RDONLY);
    if (input >= 0) dup2(input, 0);
    if (output_fd >= 0) {
        dup2(output_fd, 1);
        dup2(output_fd, 2);
    }
    /* No descriptor of lockstep's (or the keeper's) reaches the server. */
    close_range(3, ~0U, 0);
    struct sigaction standard;
    standard.sa_handler = SIG_DFL;
    standard.sa_flags = 0;
    sigemptyset(&standard.sa_mask);
    for (int signal_number = 1; signal_number < 32; signal_number++) {
        if (signal_number != SIGKILL && signal_number != SIGSTOP) sigaction(signal_number, &standard, NULL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(path, argv, envp);
    _exit(127);
}

/* Ends the keeper with the server's own end: its exit status, or its signal as 128 + signal. */
static void exit_like(int status) {
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) _exit(128 + WTERMSIG(status));
    _exit(127);
}

/* Waits up to `ms` for the server to end; returns 1 (and its status) when it did. */
static int wait_for(pid_t child, int signals, int ms, int *status) {
    for (int waited = 0;; waited += 50) {
        if (waitpid(child, status, WNOHANG) == child) return 1;
        if (waited >= ms) return 0;
        struct pollfd p = {signals, POLLIN, 0};
        if (poll(&p, 1, 50) > 0) {
            struct signalfd_siginfo info;
            (void)!read(signals, &info, sizeof info);
        }
    }
}

static void keep(const char *path, char *const argv[], char *const envp[], int output_fd, int watch, int report,
                 int settle_ms) {
    setpgid(0, 0);
    /* Keep only the pipes and the log; everything else of lockstep's is closed. */
    watch = move_up(watch, 1000, 1);
    report = move_up(report, 1000, 1);
    if (output_fd >= 0) output_fd = fcntl(output_fd, F_DUPFD_CLOEXEC, 1000);
    close_range(3, 999, 0);
    sigset_t handled;
    sigemptyset(&handled);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGINT);
    sigaddset(&handled, SIGHUP);
    sigaddset(&handled, SIGQUIT);
    sigaddset(&handled, SIGCHLD);
    sigprocmask(SIG_BLOCK, &handled, NULL);
    int signals = signalfd(-1, &handled, SFD_CLOEXEC);
    if (signals < 0) _exit(127);
    pid_t keeper = getpid();
    pid_t child = fork();
    if (child < 0) _exit(127);
    if (child == 0) exec_child(path, argv, envp, output_fd, keeper);
    (void)!write(report, &child, sizeof child);
    close(report);
    int status = 0;
    for (;;) {
        struct pollfd p[2] = {{watch, POLLIN, 0}, {signals, POLLIN, 0}};
        if (poll(p, 2, -1) < 0) continue;
        if (p[1].revents & POLLIN) {
            struct signalfd_siginfo info;
            if (read(signals, &info, sizeof info) == sizeof info && info.ssi_signo != SIGCHLD) kill(child, (int)info.ssi_signo);
            if (waitpid(child, &status, WNOHANG) == child) exit_like(status);
        }
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            /* Lockstep is gone, however it went. Let the server notice its dead client first (a
               server stopped while it removes one leaves its sockets behind), then stop it. */
            if (wait_for(child, signals, settle_ms, &status)) exit_like(status);
            kill(child, SIGTERM);
            if (wait_for(child, signals, 5000, &status)) exit_like(status);
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            exit_like(status);
        }
    }
}

pid_t lockstep_spawn_kept(const char *path, char *const argv[], char *const envp[], int output_fd, int settle_ms,
                          pid_t *server) {
    int watch[2], report[2];
    if (pipe2(watch, O_CLOEXEC) != 0) return -1;
    if (pipe2(report, O_CLOEXEC) != 0) {
        close(watch[0]);
        close(watch[1]);
        return -1;
    }
    pid_t keeper = fork();
    if (keeper == 0) {
        close(watch[1]);
        close(report[0]);
        keep(path, argv, envp, output_fd, watch[0], report[1], settle_ms);
    }
    int saved = errno;
    close(watch[0]);
    close(report[1]);
    if (keeper < 0) {
        close(watch[1]);
        close(report[0]);
        errno = saved;
        return -1;
    }
    /* The write end stays open, unused, until this process ends: its closing is the keeper's news. */
    pid_t child = -1;
    ssize_t got;
    do { got = read(report[0], &child, sizeof child); } while (got < 0 && errno == EINTR);
    close(report[0]);
    *server = got == (ssize_t)sizeof child ? child : -1;
    return keeper;
}
