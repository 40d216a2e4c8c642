@testable import LockstepFiles
import Dispatch
import Foundation
import Lockstep
import LockstepTestSupport
import Synchronization
import Testing

@Suite("FileStreamer: lanes on threads, urgent work on threads of its own, a queue that stays bounded")
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

    @Test("a lane always runs on one thread, in order; lanes spread over the threads; urgent work runs in order on a thread of its lane's own, never behind ordinary work")
    func lanesAndUrgency() throws {
        let streamer = FileStreamer(name: "test.lanes", threads: 2)
        defer { streamer.stop() }
        #expect(streamer.threadCount == 2)
        @Sendable func me() -> UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }
        // Both ordinary threads held, then work queued behind them.
        let gates = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        for lane in 0..<2 { streamer.submit(lane: lane) { gates[lane].wait() } }
        let log = Mutex<[(lane: Int, step: Int, thread: UInt)]>([])
        let urgentLog = Mutex<[(lane: Int, step: Int, thread: UInt)]>([])
        let done = DispatchGroup()
        for step in 0..<50 {
            for lane in 0..<6 {
                done.enter()
                streamer.submit(lane: lane) {
                    log.withLock { $0.append((lane, step, me())) }
                    done.leave()
                }
            }
        }
        // Urgent work runs while the ordinary threads are still held.
        let urgentDone = DispatchGroup()
        for step in 0..<10 {
            for lane in 0..<6 {
                urgentDone.enter()
                streamer.submit(lane: lane, urgent: true) {
                    urgentLog.withLock { $0.append((lane, step, me())) }
                    urgentDone.leave()
                }
            }
        }
        #expect(urgentDone.wait(timeout: .now() + 10) == .success, "urgent work waited behind ordinary work")
        #expect(log.withLock { $0.isEmpty })
        for gate in gates { gate.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success)
        for (entries, what) in [(log.withLock { $0 }, "ordinary"), (urgentLog.withLock { $0 }, "urgent")] {
            let steps = what == "urgent" ? 10 : 50
            for lane in 0..<6 {
                let mine = entries.filter { $0.lane == lane }
                #expect(mine.map(\.step) == Array(0..<steps), "\(what) work of lane \(lane) ran out of order")
                #expect(Set(mine.map(\.thread)).count == 1, "\(what) work of lane \(lane) ran on several threads")
            }
            #expect(Set(entries.map(\.thread)).count == 2, "the \(what) lanes did not spread over both threads")
        }
        #expect(Set(log.withLock { $0 }.map(\.thread)).isDisjoint(with: urgentLog.withLock { $0 }.map(\.thread)))
        // A setup runs on each thread of urgent work (named as its lane's thread, with a "!").
        let names = Mutex<[String]>([])
        let setUp = DispatchGroup()
        setUp.enter()
        setUp.enter()
        streamer.runOnUrgentThreads {
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
            names.withLock { $0.append(name.trimmingCharacters(in: .whitespacesAndNewlines)) }
            setUp.leave()
        }
        #expect(setUp.wait(timeout: .now() + 10) == .success)
        #expect(names.withLock { $0 }.sorted() == ["test.lanes.1!", "test.lanes.2!"])
    }
}
