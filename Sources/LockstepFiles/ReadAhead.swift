import Foundation
import Lockstep
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Keeps the next seconds of every file being read in the page cache, from a thread of its own,
/// so that a read (on a ``FileStreamer``, or a session's thread) finds its bytes in memory instead
/// of waiting on the disk.
///
/// A read that misses the page cache waits for the disk, however far ahead the kernel's own
/// read-ahead went: pages read ahead can be dropped again before the reader reaches them (by
/// memory pressure, or by a virtual machine's host), and a virtual disk can take half a second
/// to answer. A wait that long on the thread that refills every layer runs each layer out of
/// queued audio at once. So every ``AudioFileReader`` that reads a regular file registers here on
/// its first read and publishes its position on each read and seek; this thread asks the kernel
/// (`posix_fadvise(POSIX_FADV_WILLNEED)`) for the bytes from each reader's position to
/// ``Settings/seconds`` of its audio beyond, so pages dropped ahead of a reader are read back
/// long before it gets there. A window is topped up in one request once half of it is new (a few
/// pages at a time would make the disk read a few pages at a time), and once a second every
/// window is asked for whole: pages already in memory cost a few microseconds a megabyte and are
/// not read again.
///
/// Readers of the same file share one descriptor and one request per pass for the ranges they
/// cover together. While the ranges of all files together come to more than
/// ``Settings/totalBytes``, every window shrinks in proportion (readers at the same place in a file
/// count once), and the thread sleeps twenty times the processor time its last
/// pass took (0.1 s to 1 s), so it costs at most about 5 % of a core with thousands of files. It never
/// copies audio, never holds a lock a reader waits on for more than a list update, and closes a
/// file's descriptor within one pass once its last reader closes.
///
/// Thread safety: every member may be used from any thread except a realtime one.
public final class ReadAhead: Sendable {
    /// The read-ahead every ``AudioFileReader`` uses.
    public static let shared = ReadAhead(name: "lockstep.readahead")

    /// How far ahead the thread keeps files in memory.
    public struct Settings: Sendable, Equatable {
        /// Whether readers register at all (true by default). Turning it off stops new
        /// registrations; readers already registered stay until they close.
        public var isEnabled: Bool
        /// Seconds of audio kept in memory ahead of each reader's position (4 by default).
        public var seconds: Double
        /// The most bytes all readers together ask for ahead of their positions (512 MiB by
        /// default); past it every window shrinks in proportion.
        public var totalBytes: Int64

        /// Settings with the given values.
        public init(isEnabled: Bool = true, seconds: Double = 4, totalBytes: Int64 = 512 << 20) {
            self.isEnabled = isEnabled
            self.seconds = seconds
            self.totalBytes = totalBytes
        }
    }

    /// What the thread has done so far.
    public struct Statistics: Sendable, Equatable {
        /// Passes over every registered reader.
        public var passes: Int
        /// Readers registered now.
        public var readers: Int
        /// Files open for read-ahead now (one descriptor each, shared by their readers).
        public var files: Int
        /// The bytes asked for in the last pass (in memory already or not).
        public var bytesAdvisedLastPass: Int64
        /// The bytes every reader's window covers together, as of the last pass (readers at the
        /// same place in a file count once): what read-ahead keeps in memory.
        public var windowBytes: Int64
        /// The processor time the last pass took, in seconds (the kernel's work for its requests
        /// included, a wait for the disk not).
        public var lastPassSeconds: Double
        /// Files that could not be opened again for read-ahead, or were no longer the file the
        /// reader had open (replaced under its path): read as before, without read-ahead.
        public var filesSkipped: Int
    }

    /// The settings in force; a change applies from the next pass.
    public var settings: Settings {
        get { state.withLock { $0.settings } }
        set {
            state.withLock { $0.settings = newValue }
            wakeThread()
        }
    }

    /// What the thread has done so far.
    public var statistics: Statistics {
        state.withLock { state in
            Statistics(passes: state.passes, readers: state.files.values.reduce(0) { $0 + $1.readers.count },
                       files: state.files.values.filter { $0.descriptor >= 0 }.count,
                       bytesAdvisedLastPass: state.bytesAdvisedLastPass, windowBytes: state.windowBytes,
                       lastPassSeconds: state.lastPassSeconds,
                       filesSkipped: state.filesSkipped)
        }
    }

    /// The thread's name, for debuggers and `top -H`.
    public let name: String

    /// Waits until the thread has completed a pass that began after this call (at most
    /// `timeout` seconds); false when it did not (no thread runs while nothing is registered).
    @discardableResult
    public func waitForPass(timeout: Double = 5) -> Bool {
        let target = state.withLock { $0.passesStarted } + 1
        wakeThread()
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if state.withLock({ $0.passes >= target }) { return true }
            usleep(2_000)
        }
        return false
    }

    // MARK: - Registration (by AudioFileReader)

    /// One reader's place in a file, as the thread sees it.
    final class Reader: Sendable {
        /// The frame the reader reads next, published by the reader.
        let position = Atomic<Int64>(0)
        /// The byte up to which the thread has asked for this reader's file (the thread's own).
        let advisedEnd = Atomic<Int64>(0)
        let file: FileIdentity
        /// Where frame 0's bytes start, and the bytes a frame takes (exact for PCM, the file's
        /// average for compressed audio).
        let dataOffset: Int64
        let bytesPerFrame: Double
        let framesPerSecond: Double
        let fileSize: Int64

        init(file: FileIdentity, dataOffset: Int64, bytesPerFrame: Double, framesPerSecond: Double, fileSize: Int64, position: Int64) {
            self.file = file
            self.dataOffset = dataOffset
            self.bytesPerFrame = bytesPerFrame
            self.framesPerSecond = framesPerSecond
            self.fileSize = fileSize
            self.position.store(position, ordering: .relaxed)
        }
    }

    /// A file by device and inode: readers of the same file share its descriptor.
    struct FileIdentity: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    /// Registers a reader of `path` (the file `file` identifies) reading from `position`; nil
    /// when read-ahead is off.
    func register(path: String, file: FileIdentity, dataOffset: Int64, bytesPerFrame: Double,
                  framesPerSecond: Double, fileSize: Int64, position: Int64) -> Reader? {
        guard bytesPerFrame > 0, framesPerSecond > 0, fileSize > 0 else { return nil }
        let reader = Reader(file: file, dataOffset: dataOffset, bytesPerFrame: bytesPerFrame,
                            framesPerSecond: framesPerSecond, fileSize: fileSize, position: position)
        let startThread = state.withLock { state -> Bool? in
            guard state.settings.isEnabled, !state.stopping else { return nil }
            state.files[file, default: OpenFile(path: path)].readers[ObjectIdentifier(reader)] = reader
            defer { state.threadStarted = true }
            return !state.threadStarted
        }
        guard let startThread else { return nil }
        // (No wake: the next pass, within a second, takes the reader in. Waking the thread on
        // every registration made it run pass after pass while a test opened 20 000 files.)
        if startThread { startTheThread() }
        return reader
    }

    /// Removes a reader; its file's descriptor is closed at the next pass (within a second) if it
    /// was the last.
    func unregister(_ reader: Reader) {
        state.withLock { state in
            state.files[reader.file]?.readers[ObjectIdentifier(reader)] = nil
        }
    }

    // MARK: - The thread

    private struct OpenFile: @unchecked Sendable {
        let path: String
        var readers: [ObjectIdentifier: Reader] = [:]
        /// -1 until the thread opened it; -2 when it cannot be (skipped).
        var descriptor: Int32 = -1
    }

    private struct State: @unchecked Sendable {
        var settings = Settings()
        var files: [FileIdentity: OpenFile] = [:]
        var threadStarted = false
        var passes = 0
        var passesStarted = 0
        var bytesAdvisedLastPass: Int64 = 0
        var windowBytes: Int64 = 0
        var lastPassSeconds = 0.0
        var filesSkipped = 0
        var stopping = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    /// Whether a wake is posted and not yet taken: wakes coalesce into one pass.
    private let wakePending = Atomic<Bool>(false)
    /// When the thread last asked for every window whole (the thread's own).
    private nonisolated(unsafe) var lastWholePass: UInt64 = 0

    /// A read-ahead with its own thread (started on the first registration). Only
    /// ``shared`` is used outside tests.
    init(name: String) {
        self.name = name
    }

    /// Wakes the thread for a pass now (wakes posted before it runs count once).
    private func wakeThread() {
        if !wakePending.exchange(true, ordering: .sequentiallyConsistent) { wake.signal() }
    }

    private func startTheThread() {
        let thread = Thread { [self] in
            ThreadName.setCurrent(name)
            run()
        }
        thread.name = name
        thread.qualityOfService = .utility
        thread.start()
    }

    /// Ends the thread and closes every descriptor it holds; later registrations are refused
    /// (for instances other than ``shared``, in tests). Returns once the thread has ended (at
    /// most `timeout` seconds).
    func stop(timeout: Double = 5) {
        let running = state.withLock { state -> Bool in
            state.settings.isEnabled = false
            state.stopping = true
            return state.threadStarted
        }
        guard running else { return }
        wakeThread()
        _ = ended.wait(timeout: .now() + timeout)
    }

    private func run() {
        var sleep = 0.1
        while true {
            _ = wake.wait(timeout: .now() + sleep)
            wakePending.store(false, ordering: .sequentiallyConsistent)
            let descriptors = state.withLock { state -> [Int32]? in
                guard state.stopping else { return nil }
                defer { state.files = [:] }
                return state.files.values.map(\.descriptor).filter { $0 >= 0 }
            }
            if let descriptors {
                descriptors.forEach(FileSystem.closeDescriptor)
                ended.signal()
                return
            }
            let started = Self.threadCPUTime()
            let (advised, windows) = pass()
            // The thread's own processor time (the kernel's work for its requests included; a
            // wait for the disk is not), so it stays near 5 % of a core however many files.
            let seconds = Self.threadCPUTime() - started
            state.withLock { state in
                state.passes += 1
                state.bytesAdvisedLastPass = advised
                state.windowBytes = windows
                state.lastPassSeconds = seconds
            }
            sleep = min(1, max(0.1, seconds * 20))
        }
    }

    /// One pass: opens new files, closes those no reader needs, and asks for each reader's window.
    /// Returns the bytes asked for and the bytes the windows cover.
    private func pass() -> (advised: Int64, windows: Int64) {
        // What to do, decided under the lock; the system calls happen outside it.
        let (settings, toOpen, toClose, planned) = state.withLock { state in
            state.passesStarted += 1
            var toOpen: [(FileIdentity, String)] = []
            var toClose: [Int32] = []
            var work: [(descriptor: Int32, readers: [Reader])] = []
            for (identity, file) in state.files {
                if file.readers.isEmpty {
                    if file.descriptor >= 0 { toClose.append(file.descriptor) }
                    state.files[identity] = nil
                } else if file.descriptor == -1 {
                    toOpen.append((identity, file.path))
                } else if file.descriptor >= 0 {
                    work.append((file.descriptor, Array(file.readers.values)))
                }
            }
            return (state.settings, toOpen, toClose, work)
        }
        for descriptor in toClose { FileSystem.closeDescriptor(descriptor) }
        var work = planned
        for (identity, path) in toOpen {
            let descriptor = Self.open(path, identity)
            let kept = state.withLock { state -> [Reader]? in
                guard state.files[identity] != nil else { return nil }
                state.files[identity]!.descriptor = descriptor ?? -2
                if descriptor == nil { state.filesSkipped += 1 }
                return Array(state.files[identity]!.readers.values)
            }
            if let descriptor {
                if let kept { work.append((descriptor, kept)) } else { FileSystem.closeDescriptor(descriptor) }
            }
        }
        guard !work.isEmpty else { return (0, 0) }
        // Every reader's full window; while their union is over the budget, every window
        // shrinks in proportion (readers at the same place in a file count once).
        var scale = 1.0
        var plan: [(descriptor: Int32, windows: [(Reader, Range<Int64>)])] = []
        var total: Int64 = 0
        for _ in 0..<4 {
            (plan, total) = Self.windows(work, seconds: settings.seconds * scale)
            guard total > settings.totalBytes, total > 0 else { break }
            scale *= Double(max(0, settings.totalBytes)) / Double(total)
        }
        // Asking for a few pages at a time makes the disk read a few pages at a time: a window
        // is topped up once half of it is new, in one request. Once a second every window is
        // asked for whole, which reads only the pages dropped since (and costs microseconds a
        // megabyte where none were).
        let now = DispatchTime.now().uptimeNanoseconds
        let whole = now &- lastWholePass >= 1_000_000_000
        if whole { lastWholePass = now }
        var advised: Int64 = 0
        for (descriptor, windows) in plan {
            var pieces: [Range<Int64>] = []
            for (reader, window) in windows {
                let done = reader.advisedEnd.load(ordering: .relaxed)
                let from = whole ? window.lowerBound : max(window.lowerBound, min(done, window.upperBound))
                guard whole || window.upperBound - from >= max(1, Int64(window.count) / 2) else { continue }
                pieces.append(from..<window.upperBound)
                reader.advisedEnd.store(window.upperBound, ordering: .relaxed)
            }
            for range in RangeSet(pieces).ranges {
                let count = min(Int64(range.count), max(0, settings.totalBytes - advised))
                guard count > 0 else { break }
                _ = posix_fadvise(descriptor, off_t(range.lowerBound), off_t(count), Int32(POSIX_FADV_WILLNEED))
                advised += count
            }
        }
        return (advised, total)
    }

    /// Each file's readers with their windows (from their positions to `seconds` beyond), and
    /// the length of the windows' union.
    private static func windows(_ work: [(descriptor: Int32, readers: [Reader])], seconds: Double)
        -> ([(descriptor: Int32, windows: [(Reader, Range<Int64>)])], Int64)
    {
        var total: Int64 = 0
        let plan = work.map { descriptor, readers in
            var windows: [(Reader, Range<Int64>)] = []
            windows.reserveCapacity(readers.count)
            for reader in readers {
                let frame = reader.position.load(ordering: .relaxed)
                let start = max(0, reader.dataOffset + Int64((Double(frame) * reader.bytesPerFrame).rounded(.down)))
                let end = min(reader.fileSize, start + Int64(max(0, seconds) * reader.framesPerSecond * reader.bytesPerFrame))
                if start < end { windows.append((reader, start..<end)) }
            }
            total += RangeSet(windows.map(\.1)).ranges.reduce(0) { $0 + Int64($1.count) }
            return (descriptor, windows)
        }
        return (plan, total)
    }

    /// The processor time the calling thread has used, in seconds.
    private static func threadCPUTime() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Opens `path` again for read-ahead, or nil when it cannot be or is no longer `identity`.
    private static func open(_ path: String, _ identity: FileIdentity) -> Int32? {
        guard let (descriptor, _) = try? FileSystem.openRegularFileForReading(path) else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, UInt64(info.st_dev) == identity.device, UInt64(info.st_ino) == identity.inode else {
            FileSystem.closeDescriptor(descriptor)
            return nil
        }
        return descriptor
    }
}
