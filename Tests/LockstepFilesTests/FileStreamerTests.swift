@testable import LockstepFiles
import Dispatch
import Foundation
import Lockstep
import LockstepTestSupport
import Synchronization
import Testing

@Suite("FileStreamer: lanes on threads, urgent work first, a queue that stays bounded")
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

    @Test("the streaming and read-ahead threads carry their names for top -H and ps -L (cut to the 15 bytes Linux keeps)")
    func threadNames() throws {
        let streamer = FileStreamer(name: "test.streamer.named")
        let seen = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        streamer.submit {
            seen.withLock { $0 = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(seen.withLock { $0 } == "test.streamer.n")
        streamer.stop()
        // The read-ahead thread, found by its name among the process's threads.
        let temp = try TemporaryTestDirectory(prefix: "lockstep-names")
        try FileFixtures.writeWAV(path: temp.file("a.wav"), samples: [Float](repeating: 0.5, count: 4800),
                                  format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float32))
        let service = ReadAhead(name: "test.readahead.named")
        defer { service.stop() }
        let reader = try AudioFileReader(path: temp.file("a.wav"))
        reader.readAheadService = service
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { buffer.deallocate() }
        #expect(try reader.read(into: buffer, frames: 256) == 256)
        #expect(service.waitForPass())
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).compactMap {
            (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(names.contains("test.readahead."), "\(names)")
        reader.close()
    }

    @Test("a lane always runs on one thread, in order; lanes spread over the threads; urgent work overtakes what waits there")
    func lanesAndUrgency() throws {
        let streamer = FileStreamer(name: "test.lanes", threads: 2)
        defer { streamer.stop() }
        #expect(streamer.threadCount == 2)
        // Both threads held, then work queued behind them.
        let gates = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        for lane in 0..<2 { streamer.submit(lane: lane) { gates[lane].wait() } }
        let log = Mutex<[(lane: Int, step: Int, thread: UInt)]>([])
        let done = DispatchGroup()
        for step in 0..<50 {
            for lane in 0..<6 {
                done.enter()
                streamer.submit(lane: lane) {
                    let me = UInt(bitPattern: Int(bitPattern: pthread_self()))
                    log.withLock { $0.append((lane, step, me)) }
                    done.leave()
                }
            }
        }
        done.enter()
        streamer.submit(lane: 4, urgent: true) {
            let me = UInt(bitPattern: Int(bitPattern: pthread_self()))
            log.withLock { $0.append((4, -1, me)) }
            done.leave()
        }
        for gate in gates { gate.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success)
        let entries = log.withLock { $0 }
        for lane in 0..<6 {
            let mine = entries.filter { $0.lane == lane && $0.step >= 0 }
            #expect(mine.map(\.step) == Array(0..<50), "lane \(lane) ran out of order")
            #expect(Set(mine.map(\.thread)).count == 1, "lane \(lane) ran on several threads")
        }
        #expect(Set(entries.map(\.thread)).count == 2, "the lanes did not spread over both threads")
        // The urgent item ran first on its thread (lane 4 shares lane 0's and 2's).
        let thread = entries.first { $0.step == -1 }!.thread
        #expect(entries.first { $0.thread == thread }?.step == -1)
    }
}
