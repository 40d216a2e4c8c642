import Dispatch
import NIOCore

extension WebControlServer {
    /// Closes every connection and stops listening: the pages are sent a close (waits up to
    /// 0.5 s for that), then whatever is still open is closed on the event loop (up to 3 s).
    ///
    /// Hummingbird's shutdown runs partly on Swift's shared thread pool, which callers that block
    /// its threads (a synchronous caller such as this one, in a test on that pool) can hold up
    /// for as long as they wait: the closing that matters does not depend on it.
    public func stop() {
        ticker.withLock { $0?.cancel(); $0 = nil }
        let clients = state.withLock { state in
            defer { state.clients.removeAll(); state.subscription?.cancel(); state.subscription = nil }
            return Array(state.clients.values)
        }
        for client in clients { client.queue.finish() }
        guard let task = running.withLock({ task in defer { task = nil }; return task }) else { return }
        task.cancel()
        let ended = DispatchSemaphore(value: 0)
        Task.detached(executorPreference: WebServerExecutor.shared) { await task.value; ended.signal() }
        guard ended.wait(timeout: .now() + 0.5) == .timedOut else { return }
        let (listening, open) = channels.withLock { ($0.listening, Array($0.open.values)) }
        let closed = DispatchSemaphore(value: 0)
        let closing = ([listening].compactMap { $0 } + open).map { channel in
            channel.close().flatMapErrorThrowing { _ in }       // (already closed: fine)
        }
        EventLoopFuture.andAllComplete(closing, on: Self.eventLoops.next()).whenComplete { _ in closed.signal() }
        _ = closed.wait(timeout: .now() + 3)
    }
}
