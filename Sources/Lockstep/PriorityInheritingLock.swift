#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A mutex with priority inheritance (`PTHREAD_PRIO_INHERIT`): while a realtime thread waits for
/// it, the thread holding it runs at the waiter's priority.
///
/// For locks that a GO (on a reader at realtime priority) shares with the layers' ordinary
/// streamer threads: with a plain mutex, a refill holding its layer's lock waits behind every
/// other ordinary thread for the CPU, and the GO with it (5–12 ms among 4096 layers on two cores).
/// Swift's `Mutex` inherits priority too (a PI futex on Linux), but it has no `lock()` and
/// `unlock()` that span functions. Not for the render thread, which never takes a lock.
package final class PriorityInheritingLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A new, unlocked mutex.
    package init() {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_setprotocol(&attributes, Int32(PTHREAD_PRIO_INHERIT))
        let status = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(status == 0, "pthread_mutex_init with priority inheritance failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Waits until the calling thread holds the lock.
    package func lock() { pthread_mutex_lock(mutex) }

    /// Takes the lock if it is free; whether it did.
    package func `try`() -> Bool { pthread_mutex_trylock(mutex) == 0 }

    /// Releases the lock (held by the calling thread).
    package func unlock() { pthread_mutex_unlock(mutex) }
}
