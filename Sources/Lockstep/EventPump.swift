import CRealtime
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Drains the render thread's event ring and dispatches the events (completed buffers, starts,
/// stops, discontinuities) and fills input queues' buffers from their rings.
///
/// Where it runs is the device's choice (``AudioDevice/callbackDelivery``): an offline device
/// drains inline on the thread that renders, after each render; a live device has the engine's
/// callback thread drain, and wakes it from its realtime thread after each cycle that left it
/// something (``DeviceRenderer/wakeCallbackThread()``) with ``wake()`` — a semaphore post, which
/// never blocks or takes a lock (as JACK's `capture_client.c` only *tries* to wake its disk
/// thread). Without wakes the thread still looks every ``idleInterval`` seconds.
final class EventPump: @unchecked Sendable {
    /// How long the callback thread sleeps when no device wakes it.
    static let idleInterval = 0.02

    weak var engine: Engine?
    private let isStopped = Atomic<Bool>(false)
    private let draining = Atomic<Bool>(false)
    private let semaphore: UnsafeMutablePointer<sem_t>
    private var thread: Thread?
    private let threadDone = DispatchSemaphore(value: 0)
    private let wakes = Atomic<Int>(0)
    /// Work to run on the draining thread (``schedule(_:)``), in order.
    private let scheduled = Mutex<[@Sendable () -> Void]>([])

    init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Wakes the callback thread. Realtime-safe: never allocates, locks or blocks (one
    /// `sem_post`, skipped when a wake is already pending).
    @inline(__always)
    func wake() {
        lockstep_try_post(semaphore)
    }

    /// Runs `work` on the thread that drains, after the events pending then: at once on the
    /// callback thread (woken now), or for a device that delivers inline in its next render.
    /// Not for the realtime thread (it takes a lock).
    func schedule(_ work: @escaping @Sendable () -> Void) {
        scheduled.withLock { $0.append(work) }
        wake()
    }

    /// Starts the engine's callback thread, which drains on every wake.
    func startThread() {
        let thread = Thread { [self] in
            ThreadName.setCurrent("lockstep.callbacks")
            while !isStopped.load(ordering: .acquiring) {
                drain()
                waitForWake()
            }
            threadDone.signal()
        }
        thread.name = "lockstep.callbacks"
        thread.qualityOfService = .userInteractive
        self.thread = thread
        thread.start()
    }

    /// Stops the callback thread and waits (at most 2 s) for it to finish the drain it is in,
    /// unless called on that thread.
    func stopThread() {
        guard thread != nil, !isStopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        sem_post(semaphore)
        if Thread.current != thread { _ = threadDone.wait(timeout: .now() + 2) }
    }

    private func waitForWake() {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(Self.idleInterval * 1e9)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        var result: Int32
        repeat { result = sem_timedwait(semaphore, &deadline) } while result != 0 && errno == EINTR
        if result == 0 { wakes.add(1, ordering: .relaxed) }
    }

    /// How many times the callback thread was woken by a post (not by its idle timeout).
    var postedWakes: Int { wakes.load(ordering: .relaxed) }

    /// Dispatches every pending event; returns whether there were any. Reentrant and concurrent
    /// calls return at once (the running drain delivers everything).
    @discardableResult
    func drain() -> Bool {
        guard let engine else { return false }
        guard draining.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return false
        }
        defer { draining.store(false, ordering: .releasing) }
        var any = false
        // Snapshot each input ring's write position first: every mark placed before those frames
        // is then visible, so gaps land exactly where they belong.
        let inputs = engine.inputQueues
        let limits = inputs.map { $0.captureLimit() }
        while let message = engine.core.events.pointee.pop() {
            any = true
            if let event = RenderEvent(message) { engine.handle(event) }
        }
        // Input buffers, then scheduled work (including what that work schedules in turn); work
        // may enqueue input buffers again, which the next round fills from what is captured.
        for _ in 0..<4096 {
            var progress = false
            for (queue, limit) in zip(inputs, limits) where queue.service(upTo: limit) { progress = true }
            let work = scheduled.withLock { work in
                defer { work.removeAll() }
                return work
            }
            for item in work { item() }
            if !progress && work.isEmpty { break }
            any = true
        }
        engine.delivered.signal()
        return any
    }
}
