import Foundation
import Lockstep
import Synchronization

/// Threads of their own that refill ``FilePlayer``s and compute session layers: reading, decoding,
/// rate converting and enqueueing each buffer a queue hands back, so the engine's callback thread
/// — which delivers every queue's events, listeners and control — never waits on a disk, a decoder
/// or a mix (kira's decode scheduler; the writer thread of ``FileRecorder`` the other way round).
///
/// Give one streamer to many players (`FilePlayer(…, streamer:)`, `SessionPlayer(…, streamer:)`).
/// Work is submitted on a *lane* (a layer): a lane's ordinary work always runs on the same thread,
/// in the order it was submitted, so each layer's buffers are refilled in the order its queue
/// returned them. Its urgent work (a control change recomputing a layer from a sample, the
/// layer's next buffers after a GO) runs in order on a second thread of the lane's, beside the
/// first, never behind ordinary work: a player that submits both for one layer serialises them
/// itself (``SessionPlayer`` holds the layer's lock). ``runOnUrgentThreads(_:)`` lets the urgent
/// threads run before ordinary threads. Players keep enough buffers queued that a refill may wait
/// behind others for most of that time without an underrun.
///
/// Thread safety: every method may be called from any thread except a realtime one.
public final class FileStreamer: Sendable {
    /// The threads' name, for debuggers and `top -H` (a number follows it when there are several).
    public let name: String
    /// How many threads share the work.
    public var threadCount: Int { cores.count }
    private let cores: [StreamerCore]

    /// Starts `threads` streaming threads (at least one; default one), each with a thread for its
    /// urgent work (named as it, with a `!` after).
    public init(name: String = "lockstep.streamer", threads: Int = 1) {
        self.name = name
        cores = (0..<max(1, threads)).map { _ in StreamerCore() }
        for (index, core) in cores.enumerated() {
            let threadName = cores.count == 1 ? name : "\(name).\(index + 1)"
            for urgent in [false, true] {
                let thread = Thread {
                    ThreadName.setCurrent(urgent ? threadName + "!" : threadName)
                    core.run(urgent: urgent)
                }
                thread.name = urgent ? threadName + "!" : threadName
                thread.qualityOfService = .userInitiated
                thread.start()
            }
        }
    }

    /// Runs `setup` on every thread of urgent work, before the urgent work submitted after this
    /// call: a live session gives them realtime priority under the JACK client's, so that a change
    /// is computed within its period however busy the ordinary threads are with thousands of
    /// layers (``LockstepJACK/JACKDevice/promoteCurrentThread(below:)``).
    public func runOnUrgentThreads(_ setup: @escaping @Sendable () -> Void) {
        for core in cores { _ = core.submit(setup, urgent: true) }
    }

    /// As many threads as the machine has processors.
    public static var machineThreadCount: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// Lets the threads finish the work already submitted, then end.
    deinit { for core in cores { core.requestStop() } }

    /// Runs `work` on lane `lane`'s thread after everything submitted on that thread before it
    /// (`urgent`: on the lane's thread of urgent work, after the urgent work before it, beside
    /// the ordinary work).
    /// - Returns: false if the streamer has been stopped (the work does not run).
    @discardableResult
    public func submit(lane: Int = 0, urgent: Bool = false, _ work: @escaping @Sendable () -> Void) -> Bool {
        cores[Int(UInt(bitPattern: lane) % UInt(cores.count))].submit(work, urgent: urgent)
    }

    /// Work items the queues hold, run or not yet (for tests: it stays bounded while the
    /// streamer is never idle).
    var heldWorkCount: Int { cores.reduce(0) { $0 + $1.heldWorkCount } }

    /// Stops the threads after the work already submitted, and waits for them (at most `timeout`
    /// seconds). Later submissions are refused.
    public func stop(timeout: Double = 5) {
        let stopping = cores.filter { $0.requestStop() }
        let deadline = DispatchTime.now() + timeout
        for core in stopping { core.waitUntilFinished(until: deadline) }
    }
}

/// The queues of work and the loop one streaming thread runs (the thread holds this, not the
/// ``FileStreamer``, so dropping the streamer ends the thread).
private final class StreamerCore: Sendable {
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let wakeUrgent = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    private struct State: @unchecked Sendable {
        var work = WorkList()
        var urgent = WorkList()
        var stopping = false
    }

    /// Work in submission order; taken from the head.
    private struct WorkList {
        var items: [@Sendable () -> Void] = []
        var head = 0

        mutating func take() -> (@Sendable () -> Void)? {
            guard head < items.count else {
                items.removeAll(keepingCapacity: true)
                head = 0
                return nil
            }
            let work = items[head]
            head += 1
            if head >= 256 && head * 2 >= items.count {
                // A streamer that is never idle never reaches the empty list above: drop the work
                // already taken here, or the array (and every closure it still holds, with the
                // buffer it refilled) grows for as long as playback lasts. At 4096 layers that was
                // 16 MB a second of heap on the callback and streaming threads.
                items.removeFirst(head)
                head = 0
            }
            return work
        }
    }

    var heldWorkCount: Int { state.withLock { $0.work.items.count + $0.urgent.items.count } }

    func submit(_ work: @escaping @Sendable () -> Void, urgent: Bool) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            if urgent { state.urgent.items.append(work) } else { state.work.items.append(work) }
            return true
        }
        if accepted { (urgent ? wakeUrgent : wake).signal() }
        return accepted
    }

    /// Refuses further work and wakes the thread; returns whether this call stopped it.
    @discardableResult
    func requestStop() -> Bool {
        let first = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        if first {
            wake.signal()
            wakeUrgent.signal()
        }
        return first
    }

    /// Waits for both threads to end.
    func waitUntilFinished(until deadline: DispatchTime) {
        _ = finished.wait(timeout: deadline)
        _ = finished.wait(timeout: deadline)
    }

    /// The loop of the thread of ordinary work, or of urgent work.
    func run(urgent: Bool) {
        let wake = urgent ? wakeUrgent : self.wake
        while true {
            wake.wait()
            while let work = state.withLock({ urgent ? $0.urgent.take() : $0.work.take() }) { work() }
            if state.withLock({ $0.stopping && (urgent ? $0.urgent.head >= $0.urgent.items.count : $0.work.head >= $0.work.items.count) }) { break }
        }
        finished.signal()
    }
}
