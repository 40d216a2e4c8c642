import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// Paths that are not regular files: refused before anything reads from them, never a hang.
@Suite("AudioFileReader: FIFOs, devices, sockets, directories")
struct SpecialFileTests {
    /// Opens `path` with a reader on another thread; if that blocks for 5 s, `fifos` are opened
    /// for writing to release it and the test fails. Returns the error thrown (nil if none).
    func openError(_ path: String, fifos: [String] = []) -> FileError? {
        let result = ErrorBox()
        let returned = BlockingGuard.returns(within: 5, unblocking: fifos) {
            do throws(FileError) {
                let reader = try AudioFileReader(path: path)
                reader.close()
            } catch {
                result.set(error)
            }
        }
        #expect(returned, "opening \(path) blocked")
        return result.value
    }

    @Test("a FIFO is refused before it is opened: one error naming the path and saying what it is")
    func fifo() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("fifo.wav")
        #expect(mkfifo(path, 0o644) == 0)
        let error = try #require(openError(path, fifos: [path]))
        #expect(error.kind == .notAFile)
        #expect(error.path == path)
        #expect(error.message == "\(path): is a FIFO (named pipe), not a regular file; give the path of an audio file (a stream must be saved to a file first)")
    }

    @Test("a symbolic link to a FIFO is refused as the FIFO it leads to")
    func linkToFIFO() throws {
        let dir = try TemporaryTestDirectory()
        let fifo = dir.file("pipe")
        let link = dir.file("song.wav")
        #expect(mkfifo(fifo, 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: fifo)
        let error = try #require(openError(link, fifos: [fifo]))
        #expect(error.kind == .notAFile)
        #expect(error.message.hasPrefix("\(link): is a FIFO (named pipe), not a regular file"))
    }

    @Test("character devices are refused without being read", arguments: ["/dev/zero", "/dev/urandom", "/dev/null", "/dev/tty"])
    func characterDevice(path: String) throws {
        try #require(FileManager.default.fileExists(atPath: path), "\(path) is missing here")
        let error = try #require(openError(path))
        #expect(error.kind == .notAFile)
        #expect(error.message == "\(path): is a character device, not a regular file; give the path of an audio file (a stream must be saved to a file first)")
    }

    @Test("a Unix socket is refused")
    func socketFile() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("sock.wav")
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0, "cannot bind a socket at \(path)")
        let error = try #require(openError(path))
        #expect(error.kind == .notAFile)
        #expect(error.message.hasPrefix("\(path): is a socket, not a regular file"))
    }

    @Test("a directory keeps its own error")
    func directory() throws {
        let dir = try TemporaryTestDirectory()
        let error = try #require(openError(dir.path))
        #expect(error.kind == .notAFile)
        #expect(error.message == "\(dir.path): is a directory, not an audio file; give the path of a file inside it")
    }

    @Test("a path swapped between a file and a FIFO while it is opened never blocks: each open succeeds or is refused")
    func swapRace() throws {
        let dir = try TemporaryTestDirectory()
        let target = dir.file("swap.wav")
        let regular = dir.file("regular.wav")
        let fifo = dir.file("fifo")
        try FileFixtures.writeWAV(path: regular, samples: [Float](repeating: 0.25, count: 480),
                                  format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .int16))
        #expect(mkfifo(fifo, 0o644) == 0)
        let stop = ErrorBox()
        // Moves the FIFO and the file in and out of `target` as fast as it can.
        let swapper = Thread {
            while !stop.isSet {
                rename(fifo, target); rename(target, fifo)
                rename(regular, target); rename(target, regular)
            }
        }
        swapper.start()
        defer { stop.set(FileError(.ioError, path: "", message: "stop")) }
        let outcomes = OutcomeCounter()
        let returned = BlockingGuard.returns(within: 20, unblocking: [target, fifo]) {
            for _ in 0..<1500 {
                do throws(FileError) {
                    let reader = try AudioFileReader(path: target)
                    outcomes.count(reader.frameCount == 480 ? "opened" : "wrong file")
                    reader.close()
                } catch {
                    outcomes.count(error.kind == .notAFile || error.kind == .notFound ? "refused" : "\(error.kind): \(error.message)")
                }
            }
        }
        #expect(returned, "an open blocked on the FIFO")
        let seen = outcomes.counts
        #expect(Set(seen.keys).isSubset(of: ["opened", "refused"]), "\(seen)")
        #expect(seen.values.reduce(0, +) == 1500)
    }

    @Test("an MP3 with a FIFO named like its Mac resource fork (._name) and an .AppleDouble folder beside it opens")
    func resourceForkProbes() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("song.mp3")
        let signal = FileFixtures.sine(frames: 4800, channels: 1, sampleRate: 48000, frequency: 440, amplitude: 0.5)
        try Helpers.encodeWithLibsndfile(signal, path: path, format: Helpers.mp3, channels: 1, sampleRate: 48000)
        // libsndfile probes these when a header does not identify the file at once (an MP3
        // without a tag): given the path itself it would block on the FIFO.
        let fork = dir.file("._song.mp3")
        #expect(mkfifo(fork, 0o644) == 0)
        try FileManager.default.createDirectory(atPath: dir.file(".AppleDouble"), withIntermediateDirectories: true)
        #expect(mkfifo(dir.file(".AppleDouble/song.mp3"), 0o644) == 0)
        let frames = ErrorBox()
        let returned = BlockingGuard.returns(within: 10, unblocking: [fork, dir.file(".AppleDouble/song.mp3")]) {
            do throws(FileError) {
                let reader = try AudioFileReader(path: path)
                if reader.frameCount != 4800 { frames.set(FileError(.corrupt, path: path, message: "\(reader.frameCount) frames")) }
            } catch {
                frames.set(error)
            }
        }
        #expect(returned, "libsndfile blocked on a resource-fork probe")
        #expect(frames.value == nil, "\(frames.value?.message ?? "")")
    }

    @Test("an MP3 recognised only by its extension (junk before the first frame) still opens")
    func extensionOnlyFormat() throws {
        let dir = try TemporaryTestDirectory()
        let clean = dir.file("clean.mp3")
        let signal = FileFixtures.sine(frames: 48000, channels: 1, sampleRate: 48000, frequency: 440, amplitude: 0.5)
        try Helpers.encodeWithLibsndfile(signal, path: clean, format: Helpers.mp3, channels: 1, sampleRate: 48000)
        let junk = Data(count: 100) + (try Data(contentsOf: URL(fileURLWithPath: clean)))
        try junk.write(to: URL(fileURLWithPath: dir.file("junk.mp3")))
        try junk.write(to: URL(fileURLWithPath: dir.file("junk.bin")))
        let reader = try AudioFileReader(path: dir.file("junk.mp3"))
        #expect(reader.fileType == .mp3)
        #expect(reader.frameCount == 48000)
        // Without the extension, libsndfile cannot tell what it is.
        let error = #expect(throws: FileError.self) { try AudioFileReader(path: dir.file("junk.bin")) }
        #expect(error?.kind == .unsupportedFormat)
        // No temporary link is left behind.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("lockstep-open-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test("an open reader costs one file descriptor; a refused path none")
    func descriptors() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("a.wav")
        try FileFixtures.writeWAV(path: path, samples: [0.1, 0.2], format: StreamFormat(sampleRate: 48000, channelCount: 1))
        let fifo = dir.file("p.wav")
        #expect(mkfifo(fifo, 0o644) == 0)
        // Descriptors open on `target` (other tests run at the same time: only these count).
        func descriptors(on target: String) -> Int {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return entries.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == target }.count
        }
        let readers = try (0..<20).map { _ in try AudioFileReader(path: path) }
        for _ in 0..<20 { _ = openError(fifo, fifos: [fifo]) }
        #expect(descriptors(on: path) == 20)
        #expect(descriptors(on: fifo) == 0)
        readers.forEach { $0.close() }
        #expect(descriptors(on: path) == 0)
    }
}

/// A value set from another thread.
final class ErrorBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: FileError?

    func set(_ error: FileError) { lock.lock(); stored = error; lock.unlock() }
    var value: FileError? { lock.lock(); defer { lock.unlock() }; return stored }
    var isSet: Bool { value != nil }
}

/// Counts outcomes by name, from another thread.
final class OutcomeCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [String: Int] = [:]

    func count(_ outcome: String) { lock.lock(); seen[outcome, default: 0] += 1; lock.unlock() }
    var counts: [String: Int] { lock.lock(); defer { lock.unlock() }; return seen }
}
