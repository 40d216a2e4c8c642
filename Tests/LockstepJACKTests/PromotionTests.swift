import Foundation
import Lockstep
import LockstepJACK
import LockstepTestSupport
import Synchronization
import Testing

extension JACKTests {
    /// Realtime priority off the render thread: ``JACKDevice/promoteCurrentThread(below:)`` (the
    /// priority it gives, and the one it does not pass on) and the locks a GO shares with the
    /// layers' ordinary threads (``PriorityInheritingLock``). Here, not among the offline tests:
    /// a stall of every core's ordinary threads would hold up the tests running beside it.
    @Suite("realtime priority off the render thread", .serialized)
    struct PromotionTests {
        /// A thread's scheduling policy and priority, read on that thread.
        struct Scheduling: Equatable {
            var policy: Int32
            var priority: Int32
            /// Whether the threads it starts start as ordinary ones (`SCHED_RESET_ON_FORK`).
            var resetOnFork: Bool

            static func current() -> Scheduling {
                var parameters = sched_param()
                _ = sched_getparam(0, &parameters)
                let word = sched_getscheduler(0)
                let resetOnFork: Int32 = 0x4000_0000
                return Scheduling(policy: word & ~resetOnFork, priority: parameters.sched_priority, resetOnFork: word & resetOnFork != 0)
            }
        }

        /// Runs `body` on a new thread and returns what it returned.
        static func onNewThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
            let result = Mutex<T?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                result.withLock { $0 = body() }
                done.signal()
            }
            done.wait()
            return result.withLock { $0! }
        }

        @Test("a promoted thread runs at realtime priority under the client's, and the threads it starts do not")
        func threadsStartedByAPromotedOneAreOrdinary() throws {
            let server = try JACKServer(period: 256)
            let device = try JACKDevice(options: .init(clientName: "lockstep-promotion", serverName: server.name,
                                                   connectToPhysicalOutputs: false))
            try device.start()
            defer { device.stop() }
            let (promoted, own, child) = Self.onNewThread { () -> (Bool, Scheduling, Scheduling) in
                let promoted = device.promoteCurrentThread(below: 3)
                return (promoted, Scheduling.current(), Self.onNewThread { Scheduling.current() })
            }
            #expect(promoted)
            #expect(own.policy == SCHED_FIFO && own.priority >= 1 && own.resetOnFork, "\(own)")
            // (Without SCHED_RESET_ON_FORK the child inherits SCHED_FIFO and the priority.)
            #expect(child == Scheduling(policy: SCHED_OTHER, priority: 0, resetOnFork: false), "\(child)")
        }

        @Test("a realtime thread waiting for a lock held by a starved ordinary thread gets it within the stall")
        func lockInheritsPriority() throws {
            if let reason = NonRealtimeStall.unavailable {
                print("skipped: \(reason)")
                return
            }
            let lock = PriorityInheritingLock()
            let held = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
            let waiting = Atomic<Bool>(false)
            let waited = Mutex<Duration?>(nil)
            // The holder: an ordinary thread that needs 5 ms of the CPU after the waiter comes.
            Thread.detachNewThread {
                lock.lock()
                held.signal()
                while !waiting.load(ordering: .acquiring) {}
                let start = ContinuousClock.now
                while ContinuousClock.now - start < .milliseconds(5) {}
                lock.unlock()
            }
            held.wait()
            // The waiter: realtime, above the stall's loops; it asks 150 ms into a 600 ms stall.
            Thread.detachNewThread {
                var parameters = sched_param(sched_priority: 5)
                guard pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0 else {
                    done.signal()
                    return
                }
                usleep(150_000)
                let asked = ContinuousClock.now
                waiting.store(true, ordering: .releasing)
                lock.lock()
                waited.withLock { $0 = ContinuousClock.now - asked }
                lock.unlock()
                done.signal()
            }
            try NonRealtimeStall.stall(milliseconds: 600)
            done.wait()
            let wait = try #require(waited.withLock { $0 }, "the waiter could not get realtime priority")
            // Inherited, the holder runs at once (5 ms); a plain mutex leaves it to the end of
            // the stall, 400 ms or more.
            #expect(wait < .milliseconds(200), "the realtime waiter waited \(wait)")
        }
    }
}
