#define _GNU_SOURCE
#include "cspawn.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

pid_t lockstep_spawn_bound(const char *path, char *const argv[], char *const envp[], int output_fd, int death_signal) {
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) return pid;
    /* The child: only async-signal-safe calls from here on. */
    if (prctl(PR_SET_PDEATHSIG, death_signal) != 0) _exit(127);
    if (getppid() != parent) _exit(0);           /* the parent died before prctl */
    setpgid(0, 0);
    int input = open("/dev/null", O_RDONLY);
    if (input >= 0) dup2(input, 0);
    if (output_fd >= 0) {
        dup2(output_fd, 1);
        dup2(output_fd, 2);
    }
    /* Ignored signals survive exec: give the child the default dispositions and an empty mask. */
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
