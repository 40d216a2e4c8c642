// The render path's cost per cycle and its allocations (which must be 0), measured with
// ordo-one/benchmark's malloc interposer.
//
// `Scripts/bench.sh` runs these and fails if a "render cycle" benchmark allocates. The "control"
// benchmark allocates on purpose (it reads the master meter, which returns an array) and must
// report > 0: proof that the malloc counter counts.

import Benchmark
import Foundation
import Lockstep
import Synchronization

/// The rig of the benchmark that is running (set in setup, cleared in teardown).
final class RigSlot: @unchecked Sendable {
    private let lock = Mutex<RenderRig?>(nil)
    func set(_ rig: RenderRig?) { lock.withLock { $0 = rig } }
    func get() -> RenderRig {
        guard let rig = lock.withLock({ $0 }) else { fatalError("benchmark ran without its setup") }
        return rig
    }
}

let slot = RigSlot()

/// Cycles per measured run: 10 000 × 256 frames = 53.3 s at 48 kHz, inside the 60 s buffers.
let measuredCycles = 10_000
let bufferSeconds = 60.0

/// `LOCKSTEP_BENCH_FORCE_ALLOCATION=1` makes every measured cycle allocate once: a check that a
/// render path that allocates fails `Scripts/bench.sh`.
let forceAllocation = ProcessInfo.processInfo.environment["LOCKSTEP_BENCH_FORCE_ALLOCATION"] == "1"

// Not `.cpuTotal`: reading the CPU time allocates (16 mallocs per iteration on Linux) and would be
// counted as the render path's.
let metrics: [BenchmarkMetric] = [
    .wallClock,
    .mallocCountTotal,
    .mallocBytesCount,
]

/// Setup and teardown for a benchmark on a fresh rig.
func rigHooks(_ make: @escaping @Sendable () throws -> RenderRig)
    -> (setup: Benchmark.BenchmarkSetupHook, teardown: Benchmark.BenchmarkTeardownHook)
{
    (setup: { slot.set(try make()) },
     teardown: {
         let rig = slot.get()
         slot.set(nil)
         if let problem = rig.verify() { fatalError(problem) }
     })
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: metrics,
        timeUnits: .nanoseconds,
        warmupIterations: 16,
        scalingFactor: .one,
        maxDuration: .seconds(10),
        maxIterations: measuredCycles
    )

    // The realtime path in steady state: one 256-frame cycle of 64 running queues per iteration.
    // Every 64th iteration, before the measured region, Volume changes on 8 queues, so the
    // measured cycles include gain ramps.
    let steady = rigHooks { try RenderRig(queueCount: 64, buffers: .long(seconds: bufferSeconds)) }
    Benchmark(
        "render cycle, 64 queues, 256 frames",
        closure: { benchmark in
            let rig = slot.get()
            if rig.remainingCycles <= 0 {
                benchmark.error("ran past the queues' buffers; lower maxIterations or lengthen the buffers")
                return
            }
            if rig.cycles % 64 == 0 {
                do { try rig.toggleVolumes(rig.cycles / 64) } catch {
                    benchmark.error("setVolume failed: \(error)")
                }
            }
            benchmark.startMeasurement()
            rig.cycle()
            if forceAllocation { blackHole([rig.firstSample]) }
            benchmark.stopMeasurement()
            blackHole(rig.firstSample)
        },
        setup: steady.setup,
        teardown: steady.teardown
    )

    // The same with short buffers (1024 frames, three per queue) re-enqueued from the output
    // callback between cycles (not measured): every 4th cycle each queue finishes a buffer,
    // reports it and moves to the next.
    recyclingBenchmark("render cycle, 64 queues, 256 frames, recycled 1024-frame buffers",
                       queueCount: 64, frames: 1024)

    // The per-layer cost at the engine's limit: 4096 queues (the most `Engine(maximumQueues:)`
    // takes), three 4800-frame (100 ms) buffers each, recycled as above. It is the 64-queue rig
    // scaled up: a stereo engine (master meter on, four input queues recording), half the queues
    // stereo and level-metered (the odd ones), half mono and unmetered, float32 and int16
    // alternating in pairs. All buffers end together, so one cycle in ~19 (4800 / 256) also
    // finishes 4096 buffers: the p50 is steady mixing, the p99 includes those cycles. Peak RSS
    // ~1.1 GB: ~0.6 GB of buffers (encoded audio and a float copy; 60 s buffers would take 600
    // times that), the rest mostly the engine's rings at the default maximumBuffersPerQueue, as
    // `lockstep play` makes them.
    recyclingBenchmark("render cycle, 4096 queues, 256 frames, recycled 4800-frame buffers",
                       queueCount: 4096, frames: 4800)

    // Control: the same kind of cycle (8 queues) plus reading the master meter, which returns a
    // fresh array — at least one allocation per iteration. If this reports 0 mallocs, the malloc
    // counter does not count and the 0s above prove nothing.
    let control = rigHooks { try RenderRig(queueCount: 8, buffers: .long(seconds: 10)) }
    Benchmark(
        "control: cycle + masterLevels (allocates)",
        configuration: .init(maxIterations: 1_000),
        closure: { benchmark in
            let rig = slot.get()
            rig.cycle()
            blackHole(rig.engine.masterLevels)
        },
        setup: control.setup,
        teardown: control.teardown
    )
}

/// A benchmark of one cycle of `queueCount` queues whose `frames`-frame buffers (three per queue)
/// are re-enqueued from the output callback after each measured cycle.
func recyclingBenchmark(_ name: String, queueCount: Int, frames: Int) {
    let hooks = rigHooks { try RenderRig(queueCount: queueCount, buffers: .recycled(frames: frames, count: 3)) }
    Benchmark(
        name,
        closure: { benchmark in
            let rig = slot.get()
            benchmark.startMeasurement()
            rig.cycle()
            if forceAllocation { blackHole([rig.firstSample]) }
            benchmark.stopMeasurement()
            rig.deliverEvents()
            blackHole(rig.firstSample)
        },
        setup: hooks.setup,
        teardown: hooks.teardown
    )
}
