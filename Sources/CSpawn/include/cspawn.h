#ifndef LOCKSTEP_CSPAWN_H
#define LOCKSTEP_CSPAWN_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` as a child bound to this process: the kernel sends it
/// `death_signal` when the calling thread's process goes away, however it goes (prctl
/// PR_SET_PDEATHSIG, set between fork and exec, re-checked against a parent that died first).
/// The child runs in a process group of its own (terminal signals reach only the parent), with
/// standard input from /dev/null and standard output and error on `output_fd`.
/// Call it from a thread that lives as long as the process (the main thread): the signal fires
/// when the thread that forked exits. Returns the child's pid, or -1 with errno set.
pid_t lockstep_spawn_bound(const char *path, char *const argv[], char *const envp[], int output_fd, int death_signal);

#endif
