#ifndef LOCKSTEP_CREALTIME_H
#define LOCKSTEP_CREALTIME_H

/// Asks the CPU to bring the cache line holding `address` into its caches ahead of a read
/// (x86 `prefetcht0`, Arm `prfm pldl1keep`). Never faults, whatever the address; inlined into
/// the Swift caller, so it costs one instruction on the render path. Swift has no prefetch of
/// its own.
static inline __attribute__((always_inline)) void lockstep_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
