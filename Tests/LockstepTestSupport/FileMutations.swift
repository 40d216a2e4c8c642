import Foundation

/// A seeded pseudo-random generator (SplitMix64): the same seed gives the same sequence on every
/// run and platform, so a failing mutation case can be replayed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Starts the sequence at `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One damaged variant of a file: cut short, or some bytes replaced.
public enum FileMutation: Sendable, Hashable, CustomStringConvertible {
    /// Keep only the first `count` bytes.
    case truncate(to: Int)
    /// Replace the byte at each `offset` by `value` (offsets inside the file).
    case replace([Replacement])

    /// One replaced byte.
    public struct Replacement: Sendable, Hashable {
        /// Where.
        public var offset: Int
        /// The new value.
        public var value: UInt8
    }

    /// The mutated bytes.
    public func apply(to bytes: [UInt8]) -> [UInt8] {
        switch self {
        case .truncate(let count):
            return Array(bytes.prefix(count))
        case .replace(let replacements):
            var out = bytes
            for replacement in replacements where replacement.offset < out.count {
                out[replacement.offset] = replacement.value
            }
            return out
        }
    }

    /// `truncate 57` or `replace 12=0xff 40=0x00`, to name a failing case.
    public var description: String {
        switch self {
        case .truncate(let count):
            return "truncate \(count)"
        case .replace(let replacements):
            return "replace " + replacements.map { "\($0.offset)=0x" + String($0.value, radix: 16) }.joined(separator: " ")
        }
    }
}

/// Structure-aware damage for audio-file fixtures: where their headers' fields and chunks begin
/// and end, and seeded sets of truncations and byte replacements around them.
public enum FileMutations {
    /// The offsets at which the structure of a WAV/RF64 (RIFF), AIFF (FORM), CAF, W64 or FLAC
    /// file changes — the ends of the magic and size fields, the start, header end and end of
    /// every chunk (or FLAC metadata block) up to the audio data, and the data's first byte —
    /// sorted, within the file. Walks at most 64 chunks; unknown files give `[]`.
    public static func headerBoundaries(of bytes: [UInt8]) -> [Int] {
        var marks: Set<Int> = []
        let n = bytes.count
        func ascii(_ at: Int, _ count: Int) -> String {
            at + count <= n ? String(decoding: bytes[at..<(at + count)], as: UTF8.self) : ""
        }
        func le(_ at: Int, _ count: Int) -> Int {
            at + count <= n ? (0..<count).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } : -1
        }
        func be(_ at: Int, _ count: Int) -> Int {
            at + count <= n ? (0..<count).reduce(0) { $0 << 8 | Int(bytes[at + $1]) } : -1
        }
        switch ascii(0, 4) {
        case "RIFF", "RIFX", "RF64", "FORM":
            let bigEndian = ascii(0, 4) == "RIFX" || ascii(0, 4) == "FORM"
            marks.formUnion([4, 8, 12])
            var offset = 12
            for _ in 0..<64 where offset + 8 <= n {
                let id = ascii(offset, 4)
                var size = bigEndian ? be(offset + 4, 4) : le(offset + 4, 4)
                marks.formUnion([offset, offset + 4, offset + 8])
                if id == "SSND" { marks.insert(offset + 16) }
                if id == "data" || id == "SSND" { break }
                if id == "ds64" { marks.formUnion([offset + 16, offset + 24, offset + 32]) }
                size += size & 1
                offset += 8 + size
                marks.insert(offset)
            }
        case "caff":
            marks.formUnion([4, 6, 8])
            var offset = 8
            for _ in 0..<64 where offset + 12 <= n {
                let id = ascii(offset, 4)
                let size = be(offset + 4, 8)
                marks.formUnion([offset, offset + 4, offset + 12])
                if id == "data" { marks.insert(offset + 16); break }
                guard size >= 0, size < n else { break }
                offset += 12 + size
                marks.insert(offset)
            }
        case "riff":
            marks.formUnion([16, 24, 40])
            var offset = 40
            for _ in 0..<64 where offset + 24 <= n {
                let size = le(offset + 16, 8)
                marks.formUnion([offset, offset + 16, offset + 24])
                if ascii(offset, 4) == "data" { break }
                guard size >= 24, size < n else { break }
                offset += (size + 7) / 8 * 8
                marks.insert(offset)
            }
        case "fLaC":
            marks.insert(4)
            var offset = 4
            for _ in 0..<64 where offset + 4 <= n {
                let last = bytes[offset] & 0x80 != 0
                let length = be(offset + 1, 3)
                marks.formUnion([offset, offset + 1, offset + 4])
                offset += 4 + length
                marks.insert(offset)
                if last { marks.formUnion([offset + 2, offset + 4, offset + 8]); break }
            }
        default:
            break
        }
        return marks.filter { $0 > 0 && $0 < n }.sorted()
    }

    /// Where the audio data starts: the last header boundary, or 0 for an unknown file.
    public static func dataStart(of bytes: [UInt8]) -> Int {
        headerBoundaries(of: bytes).last ?? 0
    }

    /// Every truncation worth trying on a file of `bytes`: each of the first 128 bytes, each
    /// header boundary and the bytes either side of it, and each of the last `tail` bytes (a cut
    /// inside the last frame, and a little more).
    public static func truncations(of bytes: [UInt8], tail: Int = 8) -> [FileMutation] {
        let n = bytes.count
        var cuts = Set(0..<min(128, n))
        for mark in headerBoundaries(of: bytes) { cuts.formUnion([mark - 1, mark, mark + 1]) }
        for back in 1...max(1, tail) { cuts.insert(n - back) }
        return cuts.filter { $0 >= 0 && $0 < n }.sorted().map { .truncate(to: $0) }
    }

    /// `count` seeded replacements of 1 to 4 bytes each: about two thirds in the header (before
    /// ``dataStart(of:)``), the rest in the audio data; each byte XORed with a random non-zero
    /// value or set to 0x00, 0xFF, 0x7F or 0x80.
    public static func replacements(of bytes: [UInt8], count: Int, seed: UInt64) -> [FileMutation] {
        var random = SeededGenerator(seed: seed)
        let n = bytes.count
        guard n > 0 else { return [] }
        let header = max(1, min(n, dataStart(of: bytes)))
        return (0..<count).map { _ in
            let changes = Int.random(in: 1...4, using: &random)
            let inHeader = header < n ? Int.random(in: 0..<3, using: &random) < 2 : true
            let replaced: [FileMutation.Replacement] = (0..<changes).map { _ in
                let offset = inHeader ? Int.random(in: 0..<header, using: &random) : Int.random(in: header..<n, using: &random)
                let value: UInt8
                if Int.random(in: 0..<10, using: &random) < 7 {
                    value = bytes[offset] ^ UInt8.random(in: 1...255, using: &random)
                } else {
                    value = [0x00, 0xFF, 0x7F, 0x80][Int.random(in: 0..<4, using: &random)]
                }
                return FileMutation.Replacement(offset: offset, value: value)
            }
            return .replace(replaced)
        }
    }
}

/// Fails loudly instead of hanging: if the code between ``enter(_:)`` calls runs for longer than
/// the limit, the watchdog writes the case it was on to standard error and aborts the process
/// (a test that hangs would otherwise stall the whole run without saying where).
public final class HangWatchdog: @unchecked Sendable {
    private let limit: Double
    private let lock = NSLock()
    private var current = "starting"
    private var since = Date()
    private var done = false

    /// Starts watching; each case may take at most `seconds`.
    public init(seconds: Double) {
        limit = seconds
        let thread = Thread { [self] in watch() }
        thread.start()
    }

    /// Marks the start of the case `name` (restarting the clock).
    public func enter(_ name: String) {
        lock.lock()
        current = name
        since = Date()
        lock.unlock()
    }

    /// Stops watching.
    public func finish() {
        lock.lock()
        done = true
        lock.unlock()
    }

    private func watch() {
        while true {
            usleep(100_000)
            lock.lock()
            let (finished, name, elapsed) = (done, current, Date().timeIntervalSince(since))
            lock.unlock()
            if finished { return }
            if elapsed > limit {
                FileHandle.standardError.write(Data("HangWatchdog: '\(name)' has run for \(Int(elapsed)) s; it hangs\n".utf8))
                abort()
            }
        }
    }
}

/// Helpers for tests that open paths which must not block.
public enum BlockingGuard {
    /// Runs `body` on a thread of its own and waits at most `timeout` seconds. If it has not
    /// returned by then, each FIFO in `fifos` is opened for writing (which releases a reader
    /// blocked opening it) so the thread can finish, and false is returned.
    public static func returns(within timeout: Double, unblocking fifos: [String] = [],
                               _ body: @escaping @Sendable () -> Void) -> Bool {
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            body()
            finished.signal()
        }
        thread.start()
        if finished.wait(timeout: .now() + timeout) == .success { return true }
        for fifo in fifos {
            let descriptor = open(fifo, O_WRONLY | O_NONBLOCK)
            if descriptor >= 0 { close(descriptor) }
        }
        _ = finished.wait(timeout: .now() + 10)
        return false
    }
}
