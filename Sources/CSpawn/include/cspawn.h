#ifndef LOCKSTEP_CSPAWN_H
#define LOCKSTEP_CSPAWN_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` under a keeper process that stops it when the calling
/// process goes away, however it goes (SIGKILL included): the keeper watches a pipe only this
/// process holds open, and when it closes waits up to `settle_ms` for the child to end by itself
/// (a JACK server first removes the client that died with this process), then sends SIGTERM,
/// then SIGKILL after 5 s. The keeper forwards SIGTERM, SIGINT, SIGHUP and SIGQUIT to the child
/// and exits as it does (its status, or 128 + its signal); the child is SIGKILLed if the keeper
/// dies. Both run in a process group of their own (terminal signals reach only this process);
/// the child has standard input from /dev/null, standard output and error on `output_fd`, and no
/// other descriptor of this process. Returns the keeper's pid (wait for that one) and sets
/// `*server` to the child's, or returns -1 with errno set.
pid_t lockstep_spawn_kept(const char *path, char *const argv[], char *const envp[], int output_fd, int settle_ms,
                          pid_t *server);

#endif
