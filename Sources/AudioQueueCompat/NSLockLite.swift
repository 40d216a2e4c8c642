import Foundation

/// A small non-recursive lock for classes whose guarded state is spread over several fields.
final class NSLockLite: @unchecked Sendable {
    private let lock = NSLock()
    @inline(__always)
    func locked<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
