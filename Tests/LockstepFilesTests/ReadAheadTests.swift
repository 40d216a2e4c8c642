@testable import LockstepFiles
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// ``ReadAhead`` against the page cache itself: pages are dropped with
/// `posix_fadvise(POSIX_FADV_DONTNEED)`, as a host or memory pressure drops them, and their
/// presence is read with `mincore`.
@Suite("ReadAhead: the next seconds of every file being read stay in memory")
struct ReadAheadTests {
    static let rate = 48000
    static let bytesPerSecond = 48000 * 2 * 4          // stereo 32-bit float

    /// A 30 s stereo float WAV (11 MB), on the disk and out of the page cache; nil (and why)
    /// where pages cannot be dropped (a file system in memory).
    static func coldFile(_ temp: TemporaryTestDirectory, _ name: String = "long.wav") throws -> (path: String, skip: String?) {
        let path = temp.file(name)
        let frames = rate * 30
        try FileFixtures.writeWAV(path: path, samples: (0..<(frames * 2)).map { Float($0 % 1000) / 2000 },
                                  format: StreamFormat(sampleRate: Double(rate), channelCount: 2, sampleFormat: .float32))
        drop(path)
        let left = resident(path, 0..<fileSize(path))
        return (path, left < 0.01 ? nil : "the page cache keeps \(Int(left * 100)) % of \(path) after POSIX_FADV_DONTNEED (a file system in memory?)")
    }

    static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }

    /// Writes the file's dirty pages out and drops all its pages from the page cache.
    static func drop(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = fsync(descriptor)
        _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED))
    }

    /// The fraction of `range`'s pages of the file in memory (mincore).
    static func resident(_ path: String, _ range: Range<Int64>) -> Double {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return -1 }
        defer { close(descriptor) }
        let page = Int64(sysconf(Int32(_SC_PAGESIZE)))
        let start = range.lowerBound / page * page
        let length = Int(range.upperBound - start)
        guard length > 0, let map = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, off_t(start)), map != MAP_FAILED else { return -1 }
        defer { munmap(map, length) }
        let pages = (length + Int(page) - 1) / Int(page)
        var vector = [UInt8](repeating: 0, count: pages)
        guard mincore(map, length, &vector) == 0 else { return -1 }
        return Double(vector.filter { $0 & 1 == 1 }.count) / Double(pages)
    }

    /// Waits until `condition` holds (at most `timeout` seconds).
    static func eventually(_ timeout: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    @Test("pages dropped ahead of a reader are read back before it gets there, up to its window and no further; without read-ahead they stay out")
    func droppedPagesComeBack() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-readahead")
        let (path, skip) = try Self.coldFile(temp)
        if let skip { print("SKIP: \(skip)"); return }
        let service = ReadAhead(name: "test.readahead")
        defer { service.stop() }
        service.settings = ReadAhead.Settings(seconds: 4)
        let reader = try AudioFileReader(path: path)
        reader.readAheadService = service
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: Self.rate * 2)
        defer { buffer.deallocate() }
        #expect(try reader.read(into: buffer, frames: Self.rate) == Self.rate)     // 1 s: registered
        #expect(service.waitForPass())
        // The kernel's own read-ahead loaded pages too: drop everything, as a host would.
        Self.drop(path)
        let at = 44 + Int64(Self.rate * 8)                                      // byte of frame 48000
        let window = at..<(at + Int64(4 * Self.bytesPerSecond))
        let beyond = (window.upperBound + (1 << 20))..<Self.fileSize(path)
        #expect(Self.eventually { Self.resident(path, window) >= 1 }, "\(Self.resident(path, window))")
        #expect(Self.resident(path, beyond) < 0.01, "\(Self.resident(path, beyond))")
        #expect(service.statistics.readers == 1 && service.statistics.files == 1, "\(service.statistics)")
        // Reading on moves the window with it.
        try reader.seek(toFrame: Int64(Self.rate * 20))
        let later = (44 + Int64(Self.rate * 20 * 8))..<(44 + Int64(Self.rate * 24 * 8))
        #expect(Self.eventually { Self.resident(path, later) >= 1 }, "\(Self.resident(path, later))")
        // Closed: the reader leaves and the file's descriptor is closed within a pass.
        reader.close()
        #expect(service.waitForPass() && service.statistics.readers == 0 && service.statistics.files == 0, "\(service.statistics)")

        // The control: the same with read-ahead off, and the dropped pages stay out.
        let off = ReadAhead(name: "test.readahead.off")
        defer { off.stop() }
        off.settings.isEnabled = false
        let plain = try AudioFileReader(path: path)
        plain.readAheadService = off
        #expect(try plain.read(into: buffer, frames: Self.rate) == Self.rate)
        Self.drop(path)
        usleep(500_000)     // a wait for time: only time shows that nothing brings the pages back
        #expect(Self.resident(path, window) < 0.01)
        #expect(off.statistics.readers == 0)
        plain.close()
    }

    @Test("readers of one file share one descriptor; a file replaced under its path is skipped; the byte budget caps every window")
    func sharingReplacementAndBudget() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-readahead")
        let (path, skip) = try Self.coldFile(temp)
        if let skip { print("SKIP: \(skip)"); return }
        let service = ReadAhead(name: "test.readahead.share")
        defer { service.stop() }
        service.settings = ReadAhead.Settings(seconds: 4, totalBytes: 1 << 20)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4096 * 2)
        defer { buffer.deallocate() }
        let readers = try (0..<3).map { _ in try AudioFileReader(path: path) }
        for (index, reader) in readers.enumerated() {
            reader.readAheadService = service
            try reader.seek(toFrame: Int64(index / 2 * Self.rate * 10))         // at 0 s, 0 s and 10 s
        }
        #expect(service.waitForPass() && service.waitForPass())
        #expect(service.statistics.readers == 3 && service.statistics.files == 1, "\(service.statistics)")
        // Two places in the file share 1 MiB (the two readers at 0 s count once): about half a
        // mebibyte each, at each place.
        let kept = service.statistics.windowBytes
        #expect(kept <= 1 << 20 && kept > (1 << 20) - 8192, "\(service.statistics)")
        let half = Int64(1 << 19) - 8192
        #expect(Self.eventually { Self.resident(path, 44..<(44 + half)) >= 1 })
        let second = 44 + Int64(Self.rate * 10 * 8)
        #expect(Self.eventually { Self.resident(path, second..<(second + half)) >= 1 })
        #expect(Self.resident(path, (second + (1 << 19) + (1 << 20))..<Self.fileSize(path)) < 0.01)
        readers.forEach { $0.close() }
        #expect(service.waitForPass() && service.statistics.files == 0, "\(service.statistics)")

        // A file replaced under its path after it was opened: read-ahead does not open the new one.
        let replaced = try AudioFileReader(path: path)
        try FileManager.default.moveItem(atPath: path, toPath: temp.file("moved.wav"))
        try FileManager.default.copyItem(atPath: temp.file("moved.wav"), toPath: path)
        replaced.readAheadService = service
        #expect(try replaced.read(into: buffer, frames: 4096) == 4096)
        #expect(service.waitForPass() && service.waitForPass())
        #expect(service.statistics.filesSkipped == 1 && service.statistics.files == 0, "\(service.statistics)")
        replaced.close()
    }
}
