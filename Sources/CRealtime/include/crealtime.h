#ifndef LOCKSTEP_CREALTIME_H
#define LOCKSTEP_CREALTIME_H

/// Asks the CPU to bring the cache line holding `address` into its caches ahead of a read
/// (x86 `prefetcht0`, Arm `prfm pldl1keep`). Never faults, whatever the address; inlined into
/// the Swift caller, so it costs one instruction on the render path. Swift has no prefetch of
/// its own.
static inline __attribute__((always_inline)) void lockstep_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

/// Asks the CPU to bring the cache line holding `address` into its second-level cache only
/// (x86 `prefetcht2`, Arm `prfm pldl2keep`): for data read a little later, in bulk. The first
/// level's few miss buffers stay free for the loads that are due now; measured at 4096 stereo
/// layers, prefetching each layer's next audio this way instead of into the first level lowered
/// the mean DSP load from about 50 % to about 41 %. Never faults; inlined.
static inline __attribute__((always_inline)) void lockstep_prefetch_l2(const void *address) {
    __builtin_prefetch(address, 0, 1);
}

#endif
