import Dispatch
import Foundation
import Synchronization

/// Discontinuities: the log, counts, handlers and streams.
extension Engine {
    /// Every discontinuity reported so far (the most recent ``discontinuityLogCapacity``).
    public var discontinuities: [Discontinuity] { discontinuities(after: 0).recent }

    /// The discontinuities reported after the first `count` (oldest first; those the log no
    /// longer holds are left out), and how many have been reported in all: what a poller has not
    /// seen yet, without copying the whole log (at thousands of underruns a second, copying the
    /// 10 000 entries on each poll took a core of its own).
    public func discontinuities(after count: Int) -> (recent: [Discontinuity], total: Int) {
        state.withLock { state in
            let log = state.discontinuityLog
            let fresh = min(max(0, state.totalDiscontinuities - count), log.count)
            var recent: [Discontinuity] = []
            recent.reserveCapacity(fresh)
            for index in (log.count - fresh)..<log.count {
                recent.append(log[(state.discontinuityLogStart + index) % log.count])
            }
            return (recent, state.totalDiscontinuities)
        }
    }

    /// How many discontinuities have been reported in total.
    public var discontinuityCount: Int { state.withLock { $0.totalDiscontinuities } }

    /// How many discontinuities of each kind have been reported in total (also those the
    /// ``discontinuities`` log no longer holds); kinds never reported are absent.
    public var discontinuityCounts: [Discontinuity.Kind: Int] { state.withLock { $0.discontinuitiesByKind } }

    /// Calls `handler` (on the engine's callback thread) for every discontinuity from now on.
    /// - Returns: a token for ``removeDiscontinuityHandler(_:)``.
    @discardableResult
    public func addDiscontinuityHandler(_ handler: @escaping @Sendable (Discontinuity) -> Void) -> Int {
        state.withLock { state in
            state.nextToken += 1
            state.handlers[state.nextToken] = handler
            return state.nextToken
        }
    }

    /// Removes a handler added with ``addDiscontinuityHandler(_:)``.
    public func removeDiscontinuityHandler(_ token: Int) {
        _ = state.withLock { $0.handlers.removeValue(forKey: token) }
    }

    /// An asynchronous sequence of every discontinuity from now on.
    public var discontinuityEvents: AsyncStream<Discontinuity> { discontinuityStreams.makeStream() }

    /// Logs a break its user caused or knows of (a run resumed from its journal), as the
    /// device's are: in ``discontinuities``, the counts, the handlers and the streams. Not
    /// realtime-safe: call it from a thread of your own.
    public func report(_ discontinuity: Discontinuity) { record(discontinuity) }

    func record(_ discontinuity: Discontinuity) {
        let handlers = state.withLock { state in
            if state.discontinuityLog.count < Self.discontinuityLogCapacity {
                state.discontinuityLog.append(discontinuity)
            } else {
                state.discontinuityLog[state.discontinuityLogStart] = discontinuity
                state.discontinuityLogStart = (state.discontinuityLogStart + 1) % Self.discontinuityLogCapacity
            }
            state.totalDiscontinuities += 1
            state.discontinuitiesByKind[discontinuity.kind, default: 0] += 1
            return Array(state.handlers.values)
        }
        for handler in handlers { handler(discontinuity) }
        discontinuityStreams.yield(discontinuity)
    }
}
