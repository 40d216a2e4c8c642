@testable import Lockstep
import LockstepTestSupport
import Testing

@Suite("Engine: the discontinuity log")
struct DiscontinuityLogTests {
    @Test("past its capacity the log keeps the most recent 10 000, oldest first, and counts them all, by kind")
    func ring() throws {
        let h = try OfflineHarness()
        let capacity = Engine.discontinuityLogCapacity
        for i in 0..<(2 * capacity + 2_345) {
            h.engine.record(Discontinuity(kind: .underrun, sampleTime: Int64(i), queues: ["q\(i % 7)"]))
        }
        let log = h.engine.discontinuities
        #expect(log.count == capacity)
        #expect(log.map(\.sampleTime) == (Int64(capacity + 2_345)..<Int64(2 * capacity + 2_345)).map { $0 })
        #expect(h.engine.discontinuityCount == 2 * capacity + 2_345)
        #expect(log.last?.queues == ["q\((2 * capacity + 2_344) % 7)"])
        // Counted by kind too, also those the log no longer holds.
        h.engine.record(Discontinuity(kind: .xrun, sampleTime: 0, queues: []))
        #expect(h.engine.discontinuityCounts == [.underrun: 2 * capacity + 2_345, .xrun: 1])
    }

    @Test("a poller gets only what it has not seen, oldest first: across the ring's wrap, none, and what the log dropped left out")
    func after() throws {
        let h = try OfflineHarness()
        let capacity = Engine.discontinuityLogCapacity
        func record(_ range: Range<Int>) {
            for i in range { h.engine.record(Discontinuity(kind: .underrun, sampleTime: Int64(i), queues: ["q"])) }
        }
        record(0..<3)
        var (recent, total) = h.engine.discontinuities(after: 0)
        #expect(recent.map(\.sampleTime) == [0, 1, 2] && total == 3)
        (recent, total) = h.engine.discontinuities(after: 3)
        #expect(recent.isEmpty && total == 3)
        // Past the capacity: the ring has wrapped, and the five new ones are still in order.
        record(3..<(capacity + 100))
        (recent, total) = h.engine.discontinuities(after: capacity + 95)
        #expect(recent.map(\.sampleTime) == (Int64(capacity + 95)..<Int64(capacity + 100)).map { $0 } && total == capacity + 100)
        // A poller far behind gets what the log still holds: the newest 10 000, oldest first.
        (recent, total) = h.engine.discontinuities(after: 1)
        #expect(recent.count == capacity && recent.first?.sampleTime == 100 && recent.last?.sampleTime == Int64(capacity + 99))
        #expect(recent.map(\.sampleTime) == h.engine.discontinuities.map(\.sampleTime))
    }
}
