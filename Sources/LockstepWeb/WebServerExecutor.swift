import Foundation

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

    private init(name: String) {
        let thread = Thread { [unowned(unsafe) self] in self.run() }
        thread.name = name
        thread.start()
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
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            swap(&batch, &jobs)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
