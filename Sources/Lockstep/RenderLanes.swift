import CRealtime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One render cycle shared between the render thread and a helper thread, for engines of
/// thousands of queues.
///
/// Why: at thousands of layers a cycle is bound by how fast one core can pull each layer's few
/// KiB of audio from memory, not by arithmetic. On a 2-core virtual machine a single thread
/// read 4096 stereo layers of a 256-frame cycle in a median 1.7–1.9 ms; two threads, each
/// reading half, in 0.8 ms (a C model of the render loop, measured side by side).
///
/// How: the queue slots are cut into chunks of ``chunkQueues``. The render thread publishes the
/// cycle (its sample time and length, under a ``SeqLock``), resets one atomic claim word
/// (generation and next chunk) and wakes the helper with a `sem_post`; then both threads claim
/// chunks from the word until none are left. A chunk renders into a partial mix of its own;
/// once every chunk is done the render thread adds the partials into the output in chunk order.
/// The sum is therefore the same whichever thread rendered which chunk — the mix is
/// deterministic, and an offline render (which has no helper) gives the same samples as a live
/// one.
///
/// Per queue, nothing changes: a queue's state is touched by one thread per cycle, and the
/// claim word's acquire/release orders one cycle's work before the next (whichever thread does
/// it). The helper's events (completed buffers, starts, stops) go into a ring of its own, which
/// the render thread moves into the engine's event ring after the chunks, so each queue's events
/// stay in order.
///
/// The render thread never blocks: if the helper is late it takes every chunk itself. It only
/// spins, after its last chunk, on chunks the helper has claimed and not finished — at most one
/// chunk (30–90 µs for 128 stereo layers: 0.2 µs a layer in `Scripts/bench.sh` part 1, up to
/// four times that live, when memory is contended) unless the helper's core stalls. So the helper runs
/// at the render thread's realtime priority (the device creates it, as JACK's
/// `jack_client_create_thread` does), and only on a machine with a second core.
struct RenderLanes: ~Copyable {
    /// Queue slots per chunk. An engine whose used slots fit in one chunk renders on the render
    /// thread alone, straight into the output, as it always did.
    static let chunkQueues = 128
    /// Engines of more queue slots than this have lanes (a smaller one renders on one thread:
    /// 256 layers take about 50 µs a cycle at part 1's 0.2 µs a layer, and the helper's event
    /// ring and partial mixes would only cost memory).
    static let minimumEngineQueues = 256
    /// The fewest chunks for which the render thread wakes the helper (a smaller cycle is over
    /// before a woken thread gets going).
    static let helperMinimumChunks = 4
    /// The largest partial-mix memory a shared render may use; more chunks than fit are merged.
    static let maximumPartialBytes = 32 << 20

    /// Chunks the queue table is cut into.
    let chunkCount: Int
    /// Queue slots per chunk (``chunkQueues``, or more when partials would not fit).
    let queuesPerChunk: Int
    /// The partial mixes: `chunkCount × channelCount` buffers of `maximumFrames`.
    let partials: UnsafeMutablePointer<Float>
    /// Per chunk, its `channelCount` partial buffers (the output pointers it renders into).
    let partialPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// The most events one chunk can produce in a cycle (every buffer of each of its queues coming
    /// back, plus starts, stops and removals): the helper claims a chunk only with this much room
    /// left in its ring, so it never drops an event the engine's ring would have held.
    let chunkEventBound: Int
    /// The helper's event ring (helper pushes, render thread pops; empty at each cycle's start),
    /// room for two chunks' worst case.
    let helperEvents: UnsafeMutablePointer<SPSCRing>
    /// The helper's per-frame gain scratch.
    let helperGainScratch: UnsafeMutablePointer<Float>
    /// Wakes the helper.
    let semaphore: UnsafeMutablePointer<sem_t>

    /// The render thread's cycle counter (render thread only).
    var generation: UInt32 = 0

    /// Generation (high 32 bits) and next chunk to claim (low 32 bits).
    let claim = Atomic<UInt64>(0)
    /// Chunks the helper finished this generation.
    let helperFinished = Atomic<Int>(0)
    /// The cycle being shared, published together.
    let cycle = SeqLock()
    let cycleGeneration = Atomic<UInt32>(0)
    let cycleStart = Atomic<Int64>(0)
    let cycleFrames = Atomic<Int>(0)
    let cycleChunks = Atomic<Int>(0)

    /// Whether a helper thread is waiting for cycles.
    let helperRunning = Atomic<Bool>(false)
    /// Set to end the helper's loop.
    let helperStopRequested = Atomic<Bool>(false)
    /// Chunks the helper has rendered since the engine began.
    let helperChunks = Atomic<Int>(0)
    /// Cycles that were shared (rendered in chunks) since the engine began.
    let sharedCycles = Atomic<Int>(0)

    /// Lanes for a queue table of `maximumQueues` slots mixing `channelCount` channels of at most
    /// `maximumFrames` frames, whose queues produce at most `eventsPerQueue` events a cycle.
    init(maximumQueues: Int, channelCount: Int, maximumFrames: Int, eventsPerQueue: Int) {
        let bytesPerChunk = max(1, channelCount * maximumFrames * MemoryLayout<Float>.size)
        let fitting = max(1, Self.maximumPartialBytes / bytesPerChunk)
        var perChunk = Self.chunkQueues
        while (maximumQueues + perChunk - 1) / perChunk > fitting { perChunk *= 2 }
        queuesPerChunk = perChunk
        chunkCount = (maximumQueues + perChunk - 1) / perChunk
        let buffers = chunkCount * max(channelCount, 1)
        partials = .allocate(capacity: buffers * maximumFrames)
        partials.initialize(repeating: 0, count: buffers * maximumFrames)
        partialPointers = .allocate(capacity: buffers)
        for b in 0..<buffers { (partialPointers + b).initialize(to: partials + b * maximumFrames) }
        chunkEventBound = perChunk * eventsPerQueue
        helperEvents = .allocate(capacity: 1)
        helperEvents.initialize(to: SPSCRing(minimumCapacity: 2 * chunkEventBound))
        helperGainScratch = .allocate(capacity: maximumFrames)
        helperGainScratch.initialize(repeating: 0, count: maximumFrames)
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    /// Frees the memory (after the helper has stopped).
    func deallocate() {
        partials.deallocate()
        partialPointers.deallocate()
        helperEvents.pointee.deallocate()
        helperEvents.deallocate()
        helperGainScratch.deallocate()
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Wakes the helper unless a wake is pending. Realtime-safe: one `sem_post`, which never
    /// blocks or takes a lock.
    @inline(__always)
    func wakeHelper() {
        let semaphore = self.semaphore
        _unsafePerformance { lockstep_try_post(semaphore) }
    }

    /// Waits for a wake (helper thread only; not realtime work: the helper is idle here).
    func waitForWake() {
        while sem_wait(semaphore) != 0 && errno == EINTR {}
    }
}

extension RenderCore {
    /// The render core the helper thread uses: the same queues and memory, its own gain scratch
    /// and event ring.
    func helperLane() -> RenderCore? {
        guard let lanes else { return nil }
        return RenderCore(channelCount: channelCount, maximumFrames: maximumFrames, maximumQueues: maximumQueues,
                          rampFrames: rampFrames, slots: slots, engineCommands: engineCommands,
                          events: lanes.pointee.helperEvents, gainScratch: lanes.pointee.helperGainScratch,
                          shared: shared, directOutputs: directOutputs, inputChannelCount: inputChannelCount,
                          maximumInputQueues: maximumInputQueues, inputSlots: inputSlots, lanes: lanes)
    }

    /// Renders the output queues of slots `0..<RenderShared.usedSlots` in chunks that the helper
    /// thread may share, then adds the chunks' partial mixes into `output` in chunk order. Render thread.
    @inline(__always)
    func renderShared(_ lanes: UnsafeMutablePointer<RenderLanes>, chunks: Int, frames: Int, t0: Int64,
                      output: UnsafePointer<UnsafeMutablePointer<Float>>) {
        lanes.pointee.generation &+= 1
        let generation = lanes.pointee.generation
        lanes.pointee.cycle.write {
            lanes.pointee.cycleGeneration.store(generation, ordering: .relaxed)
            lanes.pointee.cycleStart.store(t0, ordering: .relaxed)
            lanes.pointee.cycleFrames.store(frames, ordering: .relaxed)
            lanes.pointee.cycleChunks.store(chunks, ordering: .relaxed)
        }
        lanes.pointee.helperFinished.store(0, ordering: .relaxed)
        lanes.pointee.claim.store(UInt64(generation) << 32, ordering: .releasing)
        lanes.pointee.sharedCycles.wrappingAdd(1, ordering: .relaxed)
        if chunks >= RenderLanes.helperMinimumChunks && lanes.pointee.helperRunning.load(ordering: .relaxed) {
            lanes.pointee.wakeHelper()
        }

        var mine = 0
        while true {
            let word = lanes.pointee.claim.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
            let chunk = Int(word & 0xFFFF_FFFF)
            if chunk >= chunks { break }
            renderChunk(lanes, chunk, frames: frames, t0: t0)
            mine += 1
        }
        // The helper's chunks: claimed ones finish within a chunk's time.
        while lanes.pointee.helperFinished.load(ordering: .acquiring) < chunks - mine {
            _unsafePerformance { lockstep_cpu_relax() }
        }

        let channels = max(channelCount, 1)
        for chunk in 0..<chunks {
            let partial = lanes.pointee.partialPointers + chunk * channels
            for c in 0..<channelCount {
                let out = output[c]
                let source = UnsafePointer(partial[c])
                for i in 0..<frames { out[i] += source[i] }
            }
        }
        // The helper's events, after this cycle's own (each queue's stay in order).
        while let message = lanes.pointee.helperEvents.pointee.pop() {
            if !events.pointee.push(message) {
                shared.pointee.droppedEvents.wrappingAdd(1, ordering: .relaxed)
            }
        }
    }

    /// Renders chunk `chunk` of the queue table into its partial mix (either thread).
    @inline(__always)
    func renderChunk(_ lanes: UnsafeMutablePointer<RenderLanes>, _ chunk: Int, frames: Int, t0: Int64) {
        let partial = UnsafePointer(lanes.pointee.partialPointers + chunk * max(channelCount, 1))
        for c in 0..<channelCount { partial[c].update(repeating: 0, count: frames) }
        let start = chunk * lanes.pointee.queuesPerChunk
        let end = min(start + lanes.pointee.queuesPerChunk, shared.pointee.usedSlots)
        renderSlots(start, end, frames: frames, t0: t0, output: partial)
    }

    /// The helper thread's share of the current cycle: claims and renders chunks until none are
    /// left (or its event ring lacks room for another chunk's worst case). Realtime-safe (the helper runs at the render thread's priority).
    #if LOCKSTEP_REALTIME_CHECKS && !LOCKSTEP_UNOPTIMIZED
    @_noAllocation @_noLocks
    func helpCurrentCycle() { helpCurrentCycleBody() }
    #else
    func helpCurrentCycle() { helpCurrentCycleBody() }
    #endif

    @inline(__always)
    func helpCurrentCycleBody() {
        guard let lanes else { return }
        let ring = lanes.pointee.helperEvents
        while ring.pointee.count <= ring.pointee.capacity - lanes.pointee.chunkEventBound {
            let word = lanes.pointee.claim.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
            let generation = UInt32(truncatingIfNeeded: word >> 32)
            let chunk = Int(word & 0xFFFF_FFFF)
            // A chunk claimed under the cycle being rendered holds that cycle open, so the
            // published cycle is this generation's; anything else was a late wake.
            let (published, t0, frames, chunks) = lanes.pointee.cycle.read {
                (lanes.pointee.cycleGeneration.load(ordering: .relaxed), lanes.pointee.cycleStart.load(ordering: .relaxed),
                 lanes.pointee.cycleFrames.load(ordering: .relaxed), lanes.pointee.cycleChunks.load(ordering: .relaxed))
            }
            guard published == generation, chunk < chunks else { return }
            renderChunk(lanes, chunk, frames: frames, t0: t0)
            lanes.pointee.helperChunks.wrappingAdd(1, ordering: .relaxed)
            lanes.pointee.helperFinished.wrappingAdd(1, ordering: .releasing)
        }
    }

    /// The helper thread's loop: waits for wakes and helps with each cycle until
    /// ``stopHelper()``. Call on a thread of the render thread's realtime priority.
    func runHelper() {
        guard let lanes else { return }
        lanes.pointee.helperRunning.store(true, ordering: .releasing)
        while !lanes.pointee.helperStopRequested.load(ordering: .acquiring) {
            lanes.pointee.waitForWake()
            if lanes.pointee.helperStopRequested.load(ordering: .acquiring) { break }
            helpCurrentCycle()
        }
        lanes.pointee.helperRunning.store(false, ordering: .releasing)
    }

    /// Ends ``runHelper()`` (it returns soon after; join its thread before freeing the engine).
    func stopHelper() {
        guard let lanes else { return }
        lanes.pointee.helperStopRequested.store(true, ordering: .releasing)
        sem_post(lanes.pointee.semaphore)
    }
}

