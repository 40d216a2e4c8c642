import Dispatch

/// Where a queue's block callbacks run: a Swift `DispatchQueue`, or — for the C API's
/// `AudioQueueNewOutputWithDispatchQueue` — a C program's `dispatch_queue_t`, run through that
/// program's own libdispatch (the installed library carries a private one inside, which must not
/// touch another's queues).
package protocol CallbackDispatchQueue: Sendable {
    /// Runs `work` on the queue: `synchronously` (returning once it has run), or asynchronously.
    func run(synchronously: Bool, _ work: Unchecked<() -> Void>)
}

extension DispatchQueue: CallbackDispatchQueue {
    /// Runs `work` with `sync` or `async`.
    package func run(synchronously: Bool, _ work: Unchecked<() -> Void>) {
        if synchronously { sync { work.value() } } else { async { work.value() } }
    }
}

/// A C program's dispatch queue and the functions of its libdispatch that run work on it and
/// release it (`AudioQueueCompatDispatchFunctions`, filled in by `<AudioToolbox/AudioQueue.h>` in
/// the program). It retains the queue while the audio queue holds it.
package final class CDispatchQueue: CallbackDispatchQueue, @unchecked Sendable {
    // @unchecked Sendable: immutable; a dispatch queue and libdispatch's functions work from any thread.
    private let queue: UnsafeMutableRawPointer
    private let functions: AudioQueueCompatDispatchFunctions

    /// Retains `queue` with `functions`.
    package init(queue: UnsafeMutableRawPointer, functions: AudioQueueCompatDispatchFunctions) {
        self.queue = queue
        self.functions = functions
        functions.retainQueue(queue)
    }

    deinit { functions.releaseQueue(queue) }

    /// Runs `work` with the program's `dispatch_sync_f` or `dispatch_async_f`.
    package func run(synchronously: Bool, _ work: Unchecked<() -> Void>) {
        let context = Unmanaged.passRetained(Box(work.value)).toOpaque()
        let trampoline: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().work()
        }
        (synchronously ? functions.dispatchSync : functions.dispatchAsync)(queue, context, trampoline)
    }

    /// The work handed to libdispatch as a context pointer.
    private final class Box {
        let work: () -> Void
        init(_ work: @escaping () -> Void) { self.work = work }
    }
}
