import Synchronization

/// The open `AsyncStream`s of one event source (an engine's discontinuities, a queue's events):
/// makes new streams, yields to all of them, and finishes them. Thread-safe.
final class StreamRegistry<Element: Sendable>: Sendable {
    private let continuations = Mutex<[Int: AsyncStream<Element>.Continuation]>([:])
    private let nextToken = Atomic<Int>(0)
    private let finished = Atomic<Bool>(false)

    /// A new stream that receives every element yielded from now on (the newest 4096 are kept
    /// when the consumer is slow). After ``finish(with:)`` a new stream yields `last` and ends.
    func makeStream(finishedWith last: Element? = nil) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let token = nextToken.wrappingAdd(1, ordering: .relaxed).newValue
        let added = continuations.withLock { list -> Bool in
            if finished.load(ordering: .acquiring) { return false }
            list[token] = continuation
            return true
        }
        if added {
            continuation.onTermination = { [weak self] _ in
                _ = self?.continuations.withLock { $0.removeValue(forKey: token) }
            }
        } else {
            if let last { continuation.yield(last) }
            continuation.finish()
        }
        return stream
    }

    /// Yields `element` to every open stream.
    func yield(_ element: Element) {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(element) }
    }

    /// Yields `last` (if any) to every open stream and finishes them all.
    func finish(with last: Element?) {
        let list = continuations.withLock { list -> [AsyncStream<Element>.Continuation] in
            finished.store(true, ordering: .releasing)
            defer { list.removeAll() }
            return Array(list.values)
        }
        for continuation in list {
            if let last { continuation.yield(last) }
            continuation.finish()
        }
    }
}
