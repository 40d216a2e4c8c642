import Foundation
import Lockstep

/// The thread the web server's tasks run on: a task executor of its own, so the page is served
/// however busy Swift's shared (cooperative) thread pool is.
///
/// That pool has one thread per core — two on the machines Lockstep targets — and code that
/// blocks one of them (a synchronous wait in a caller, a test, another library) used to hold the
/// server back: seen in the test suite as "it did not start within 10 s" while other tests
/// waited on processes. Every task of the server (Hummingbird's service and its child tasks,
/// the meter ticker, the stop) prefers this executor; one thread serves a cue page's few
/// clients easily. Jobs run in the order they were enqueued.
final class WebServerExecutor: TaskExecutor, @unchecked Sendable {
    /// The one executor every web server of the process shares (its thread lives as long as
    /// the process).
    static let shared = WebServerExecutor(name: "lockstep.web")
    private let condition = NSCondition()
    /// Jobs waiting to run (guarded by `condition`).
    private var jobs: [UnownedJob] = []

    /// Set by ``finish()``: the thread ends once no job waits (guarded by `condition`).
    private var finished = false

    /// Starts the executor's thread, named `name`; it holds the executor until ``finish()``.
    init(name: String) {
        // The system's name too (`top -H`, debuggers): Foundation's name alone stays Foundation's.
        let thread = Thread { [self] in
            ThreadName.setCurrent(name)
            self.run()
        }
        thread.name = name
        thread.start()
    }

    /// Closures to run on the thread before its next jobs (guarded by `condition`).
    private var setups: [@Sendable () -> Void] = []

    /// Runs `setup` on the executor's thread, before the jobs enqueued after this call (any
    /// thread may call it): to give the thread a priority, say.
    func runOnThread(_ setup: @escaping @Sendable () -> Void) {
        condition.lock()
        setups.append(setup)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the jobs enqueued by then have run (for an executor whose users are
    /// gone: a web server's commands' thread, at the server's end).
    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    /// Takes a job to run on the executor's thread (any thread may call it).
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// The thread's loop: runs jobs as they come, sleeping while there are none.
    private func run() {
        var batch: [UnownedJob] = []
        var setup: [@Sendable () -> Void] = []
        while true {
            condition.lock()
            while jobs.isEmpty && setups.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty && setups.isEmpty {
                condition.unlock()
                return
            }
            swap(&batch, &jobs)
            swap(&setup, &setups)
            condition.unlock()
            for body in setup { body() }
            setup.removeAll(keepingCapacity: true)
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
