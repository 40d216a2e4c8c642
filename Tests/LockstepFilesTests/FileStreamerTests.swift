@testable import LockstepFiles
import Dispatch
import Foundation
import Lockstep
import LockstepTestSupport
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
}

