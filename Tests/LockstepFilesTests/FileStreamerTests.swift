@testable import LockstepFiles
import Dispatch
import Synchronization
import Testing

@Suite("FileStreamer: a queue of work that stays bounded")
struct FileStreamerTests {
    @Test("a streamer that is never idle holds about its backlog, not everything it ever ran")
    func boundedWhileBusy() throws {
        let streamer = FileStreamer(name: "test.streamer")
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let ran = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        let total = 20_000, backlog = 2_000
        streamer.submit { gate.wait() }
        // Every item submits the next while `backlog` others wait: the queue is never empty
        // until the last one (as with thousands of layers refilling without pause).
        @Sendable func item() {
            let count = ran.add(1, ordering: .relaxed).newValue
            let held = streamer.heldWorkCount
            if held > most.load(ordering: .relaxed) { most.store(held, ordering: .relaxed) }
            if count + backlog <= total { streamer.submit(item) }
            if count == total { done.signal() }
        }
        for _ in 0..<backlog { streamer.submit(item) }
        gate.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(ran.load(ordering: .relaxed) == total)
        // Without dropping the items already run, the queue held all 20 001 of them.
        #expect(most.load(ordering: .relaxed) <= 2 * backlog + 512, "held \(most.load(ordering: .relaxed)) work items at most")
        streamer.stop()
    }
}
