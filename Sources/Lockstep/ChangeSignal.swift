import Foundation

/// Lets a thread wait, with a deadline, until a condition that other threads make true holds:
/// they change their state, then call ``signal()``; the waiter re-checks its condition on each
/// signal. A wait on a condition variable instead of a sleep-and-poll loop.
///
/// No signal is lost: the condition is checked under the same lock ``signal()`` takes, so a
/// change made (and signalled) between a check and the wait wakes the waiter.
///
/// Not for the realtime thread (``signal()`` takes a lock).
public final class ChangeSignal: @unchecked Sendable {
    private let condition = NSCondition()

    /// A signal nobody waits on yet.
    public init() {}

    /// Wakes every waiter to check its condition again. Call it after changing the state the
    /// condition reads.
    public func signal() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `holds()` returns true or `deadline` passes.
    /// - Returns: whether the condition holds on return.
    @discardableResult
    public func wait(until deadline: Date, for holds: () -> Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !holds() {
            if !condition.wait(until: deadline) { return holds() }
        }
        return true
    }
}
