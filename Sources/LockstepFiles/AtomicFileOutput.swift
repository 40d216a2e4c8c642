#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

import Synchronization

/// A file that appears at its destination only when it is complete.
///
/// The output is written to an unnamed file in the destination's folder (Linux `O_TMPFILE`): it
/// has no name until ``commit()`` flushes it to disk, links it into the folder and renames it over
/// the destination in one POSIX `rename`. A render that fails, is cancelled or is killed — even
/// with SIGKILL — therefore leaves nothing behind: the kernel frees an unnamed file when its last
/// descriptor closes. ``abort()`` (or deinitializing without committing) closes it.
///
/// Where the file system has no `O_TMPFILE`, the output is a hidden named file,
/// `<folder>/.<name>.<pid>.<random>.tmp-render`, which ``abort()`` deletes; a process ending on a
/// signal removes its named files with ``removeAllTemporaryFiles()`` (the `lockstep` CLI does, on
/// SIGINT, SIGTERM, SIGHUP and SIGQUIT), and the named files of a process killed outright are
/// removed by the next output to the same destination (their name carries the pid of a process
/// that no longer exists). An existing file at the destination is replaced only by a finished one.
///
/// **Threads.** Not thread-safe: use it from one thread at a time; it may move between threads.
public final class AtomicFileOutput: @unchecked Sendable {
    /// Where the finished file goes, as the caller gave it.
    public let destinationPath: String
    /// The hidden named temporary file being written in the destination's folder, or nil when the
    /// file is unnamed (`O_TMPFILE`, the usual case on Linux) until ``commit()``.
    public let temporaryPath: String?

    /// The life cycle of an output.
    public enum State: Sendable, Hashable {
        /// The temporary file exists and is being written.
        case open
        /// The temporary file has been renamed to the destination.
        case committed
        /// The temporary file has been deleted.
        case aborted
    }

    /// Where the output is in its life cycle.
    public private(set) var state: State = .open

    /// Whether ``commit()`` replaces a file already at the destination (the default). When
    /// false, the finished file is linked in only if nothing is there — atomically, since
    /// `link` fails when the name exists — and ``commit()`` throws otherwise.
    public var replacesExistingFile = true

    /// The temporary file's descriptor, open for reading and writing until commit or abort.
    public private(set) var descriptor: Int32

    /// The name prefix of named temporary files: `<folder>/.<name>.<pid>.`.
    private let prefix: String

    /// Creates the temporary file next to `destinationPath`.
    ///
    /// - Throws: ``FileError`` of kind ``FileError/Kind/unwritableOutput`` or
    ///   ``FileError/Kind/permissionDenied`` when the destination folder is missing, is not a
    ///   folder or is not writable, or the destination is a directory or a read-only file;
    ///   ``FileError/Kind/ioError`` when the temporary file cannot be created.
    public init(destinationPath: String) throws(FileError) {
        try FileSystem.checkWritableDestination(destinationPath)
        self.destinationPath = destinationPath
        let folder = FileSystem.directory(of: destinationPath)
        let stem = "." + FileSystem.fileName(of: destinationPath) + "."
        Self.removeStaleTemporaryFiles(in: folder, stem: stem)
        prefix = (destinationPath.contains("/") ? folder + "/" : "") + stem + "\(getpid())."
        #if os(Linux)
        let unnamed = open(folder.isEmpty ? "." : folder, Self.temporaryFileFlag | O_RDWR | O_CLOEXEC, 0o666)
        if unnamed >= 0 {
            temporaryPath = nil
            descriptor = unnamed
            return
        }
        #endif
        var lastError: Int32 = 0
        for _ in 0..<16 {
            let candidate = Self.candidateName(prefix)
            let fd = open(candidate, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            if fd >= 0 {
                temporaryPath = candidate
                descriptor = fd
                _ = Self.openTemporaryPaths.withLock { $0.insert(candidate) }
                return
            }
            lastError = errno
            if lastError != EEXIST { break }
        }
        throw FileError(lastError == EACCES ? .permissionDenied : .ioError, path: destinationPath,
            problem: "cannot create a temporary file in \(folder) (\(FileSystem.errorText(lastError))); check the folder's permissions and free space")
    }

    #if os(Linux)
    /// Linux's `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`), which Swift does not import.
    private static let temporaryFileFlag: Int32 = 0o20_000_000 | O_DIRECTORY
    #endif

    /// Linux's `AT_EMPTY_PATH` (link the descriptor itself), which Swift does not import.
    private static let emptyPathFlag: Int32 = 0x1000

    /// A fresh `<prefix><random hex>.tmp-render` name.
    private static func candidateName(_ prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        return prefix + String(generator.next() as UInt64, radix: 16) + ".tmp-render"
    }

    deinit {
        abort()
    }

    /// Flushes the temporary file to disk and renames it to ``destinationPath``, replacing any
    /// file there (unless ``replacesExistingFile`` is false).
    ///
    /// Calling it again after a successful commit does nothing.
    /// Writes all of `bytes` at the file's position (a write cut short by a signal goes on); on
    /// a failure the output is abandoned.
    /// - Throws: ``FileError`` of kind ``FileError/Kind/ioError`` naming the destination.
    public func write(_ bytes: [UInt8]) throws(FileError) {
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { Self.systemWrite(descriptor, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let code = errno
                abort()
                throw FileError(.ioError, path: destinationPath, problem: "write failed: \(FileSystem.errorText(code)); check free space and try again")
            }
            done += n
        }
    }

    private static func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
        #elseif canImport(Musl)
        Musl.write(descriptor, bytes, count)
        #else
        Darwin.write(descriptor, bytes, count)
        #endif
    }

    /// - Throws: ``FileError`` of kind ``FileError/Kind/ioError`` when flushing or renaming fails
    ///   (the temporary file is deleted), or when the output was aborted.
    public func commit() throws(FileError) {
        switch state {
        case .committed:
            return
        case .aborted:
            throw FileError(.ioError, path: destinationPath,
                problem: "the output was abandoned before it was committed; render it again")
        case .open:
            break
        }
        if fsync(descriptor) != 0 {
            let code = errno
            abort()
            throw FileError(.ioError, path: destinationPath,
                problem: "cannot flush the rendered audio to disk (\(FileSystem.errorText(code))); check free space and render again")
        }
        let named: String
        if let temporaryPath {
            named = temporaryPath
        } else {
            do throws(FileError) { named = try linkUnnamedFile() } catch {
                abort()
                throw error
            }
        }
        close(descriptor)
        descriptor = -1
        if !replacesExistingFile {
            let linked = link(named, destinationPath) == 0
            let code = errno
            unlink(named)
            _ = Self.openTemporaryPaths.withLock { $0.remove(named) }
            guard linked else {
                state = .aborted
                throw FileError(code == EEXIST ? .unwritableOutput : .ioError, path: destinationPath,
                    problem: code == EEXIST
                        ? "a file appeared at the destination while this one was written; it was left alone — remove it or choose another name"
                        : "cannot move the finished file into place (\(FileSystem.errorText(code))); check the folder's permissions and render again")
            }
            state = .committed
            return
        }
        if rename(named, destinationPath) != 0 {
            let code = errno
            unlink(named)
            _ = Self.openTemporaryPaths.withLock { $0.remove(named) }
            state = .aborted
            throw FileError(.ioError, path: destinationPath,
                problem: "cannot move the finished file into place (\(FileSystem.errorText(code))); check the folder's permissions and render again")
        }
        _ = Self.openTemporaryPaths.withLock { $0.remove(named) }
        state = .committed
    }

    /// Gives the unnamed file a hidden name in the destination's folder (for the final `rename`).
    private func linkUnnamedFile() throws(FileError) -> String {
        var lastError: Int32 = 0
        for _ in 0..<16 {
            let candidate = Self.candidateName(prefix)
            _ = Self.openTemporaryPaths.withLock { $0.insert(candidate) }
            if linkat(AT_FDCWD, "/proc/self/fd/\(descriptor)", AT_FDCWD, candidate, AT_SYMLINK_FOLLOW) == 0
                || linkat(descriptor, "", AT_FDCWD, candidate, Self.emptyPathFlag) == 0 {
                return candidate
            }
            lastError = errno
            _ = Self.openTemporaryPaths.withLock { $0.remove(candidate) }
            if lastError != EEXIST { break }
        }
        throw FileError(.ioError, path: destinationPath,
            problem: "cannot give the finished file a name in its folder (\(FileSystem.errorText(lastError))); check the folder's permissions and render again")
    }

    /// Deletes the temporary file; the destination is left untouched.
    ///
    /// Does nothing once the output is committed or aborted.
    public func abort() {
        guard state == .open else { return }
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        if let temporaryPath {
            unlink(temporaryPath)
            _ = Self.openTemporaryPaths.withLock { $0.remove(temporaryPath) }
        }
        state = .aborted
    }

    /// The named temporary files of this process's outputs that are neither committed nor aborted.
    private static let openTemporaryPaths = Mutex<Set<String>>([])

    /// Deletes the named temporary file of every open output of this process (destinations are
    /// left untouched; unnamed files vanish with the process). For a signal handler that is about to end the process; any thread.
    public static func removeAllTemporaryFiles() {
        let paths = openTemporaryPaths.withLock { paths -> [String] in
            defer { paths.removeAll() }
            return Array(paths)
        }
        for path in paths { unlink(path) }
    }

    /// Deletes `<folder>/<stem><pid>.<hex>.tmp-render` files whose process no longer exists:
    /// what an output to the same destination left when its process was killed outright.
    static func removeStaleTemporaryFiles(in folder: String, stem: String) {
        guard let directory = opendir(folder.isEmpty ? "." : folder) else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard name.hasPrefix(stem), name.hasSuffix(".tmp-render") else { continue }
            let middle = name.dropFirst(stem.count).dropLast(".tmp-render".count).split(separator: ".")
            guard middle.count == 2, let pid = Int32(middle[0]), pid > 0, middle[1].allSatisfy(\.isHexDigit) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                unlink((folder.isEmpty ? "" : folder + "/") + name)
            }
        }
    }
}
