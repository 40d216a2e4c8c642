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
}
