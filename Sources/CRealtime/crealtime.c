// Most functions of this module are static inline in include/crealtime.h.
#define _GNU_SOURCE
#include <sched.h>
#include "crealtime.h"

int lockstep_reset_scheduling_on_fork(void) {
    struct sched_param param;
    int policy = sched_getscheduler(0);
    if (policy < 0 || sched_getparam(0, &param) != 0) return -1;
    return sched_setscheduler(0, policy | SCHED_RESET_ON_FORK, &param);
}

int lockstep_pin_current_thread(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}
