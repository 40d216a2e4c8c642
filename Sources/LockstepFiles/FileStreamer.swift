import Foundation
import Lockstep
import Synchronization

/// A thread of its own that refills ``FilePlayer``s: reading, decoding and enqueueing each buffer
/// a queue hands back, so the engine's callback thread — which delivers every queue's events,
/// listeners and control — never waits on a disk or a decoder (kira's decode scheduler; the
/// writer thread of ``FileRecorder`` the other way round).
///
/// Give one streamer to many players (`FilePlayer(…, streamer:)`). Work runs in the order it was
/// submitted, so each player's buffers are refilled in the order its queue returned them. Players
/// keep enough buffers queued (``FilePlayer/bufferCount`` × ``FilePlayer/bufferDuration``) that a
/// refill may wait behind others for most of that time without an underrun.
///
/// Thread safety: every method may be called from any thread except a realtime one.
public final class FileStreamer: Sendable {
    /// The thread's name, for debuggers and `top -H`.
    public let name: String
    private let core = StreamerCore()

    /// Starts the streaming thread.
    public init(name: String = "lockstep.streamer") {
        self.name = name
        let core = self.core
        let thread = Thread {
            ThreadName.setCurrent(name)
            core.run()
        }
        thread.name = name
        thread.qualityOfService = .userInitiated
        thread.start()
    }

    /// Lets the thread finish the work already submitted, then end.
    deinit { core.requestStop() }

    /// Runs `work` on the streaming thread after everything submitted before it.
    /// - Returns: false if the streamer has been stopped (the work does not run).
    @discardableResult
    public func submit(_ work: @escaping @Sendable () -> Void) -> Bool {
        core.submit(work)
    }

    /// Work items the queue holds, run or not yet (for tests: it stays bounded while the
    /// streamer is never idle).
    var heldWorkCount: Int { core.heldWorkCount }

    /// Stops the thread after the work already submitted, and waits for it (at most `timeout`
    /// seconds). Later submissions are refused.
    public func stop(timeout: Double = 5) {
        if core.requestStop() { core.waitUntilFinished(timeout: timeout) }
    }
}

/// The queue of work and the loop the streaming thread runs (the thread holds this, not the
/// ``FileStreamer``, so dropping the streamer ends the thread).
private final class StreamerCore: Sendable {
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    private struct State: @unchecked Sendable {
        var work: [@Sendable () -> Void] = []
        var head = 0
        var stopping = false
    }

    var heldWorkCount: Int { state.withLock { $0.work.count } }

    func submit(_ work: @escaping @Sendable () -> Void) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.work.append(work)
            return true
        }
        if accepted { wake.signal() }
        return accepted
    }

    /// Refuses further work and wakes the thread; returns whether this call stopped it.
    @discardableResult
    func requestStop() -> Bool {
        let first = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        if first { wake.signal() }
        return first
    }

    func waitUntilFinished(timeout: Double) {
        _ = finished.wait(timeout: .now() + timeout)
    }

    func run() {
        while true {
            wake.wait()
            while let work = next() { work() }
            if state.withLock({ $0.stopping && $0.head >= $0.work.count }) { break }
        }
        finished.signal()
    }

    private func next() -> (@Sendable () -> Void)? {
        state.withLock { state in
            guard state.head < state.work.count else {
                state.work.removeAll(keepingCapacity: true)
                state.head = 0
                return nil
            }
            let work = state.work[state.head]
            state.head += 1
            if state.head >= 256 && state.head * 2 >= state.work.count {
                // A streamer that is never idle never reaches the empty queue above: drop the
                // work already taken here, or the array (and every closure it still holds, with
                // the buffer it refilled) grows for as long as playback lasts. At 4096 layers that
                // was 16 MB a second of heap on the callback and streaming threads.
                state.work.removeFirst(state.head)
                state.head = 0
            }
            return work
        }
    }
}
