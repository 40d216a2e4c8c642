#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file that appears at its destination only when it is complete.
///
/// The output is written to a hidden temporary file, `<folder>/.<name>.<random>.tmp-render`, in
/// the destination's folder. ``commit()`` flushes it to disk and renames it over the destination
/// in one POSIX `rename`; ``abort()`` (or deinitializing without committing) deletes it. A render
/// that fails, is cancelled or crashes therefore never leaves a file that looks whole at the
/// destination, and an existing file there is replaced only by a finished one.
///
/// **Threads.** Not thread-safe: use it from one thread at a time; it may move between threads.
public final class AtomicFileOutput: @unchecked Sendable {
    /// Where the finished file goes, as the caller gave it.
    public let destinationPath: String
    /// The hidden temporary file being written, in the destination's folder.
    public let temporaryPath: String

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

    /// The temporary file's descriptor, open for reading and writing until commit or abort.
    private(set) var descriptor: Int32

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
        let prefix = (destinationPath.contains("/") ? folder + "/" : "")
            + "." + FileSystem.fileName(of: destinationPath) + "."
        var generator = SystemRandomNumberGenerator()
        var lastError: Int32 = 0
        for _ in 0..<16 {
            let token = String(generator.next() as UInt64, radix: 16)
            let candidate = prefix + token + ".tmp-render"
            let fd = open(candidate, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            if fd >= 0 {
                temporaryPath = candidate
                descriptor = fd
                return
            }
            lastError = errno
            if lastError != EEXIST { break }
        }
        throw FileError(lastError == EACCES ? .permissionDenied : .ioError, path: destinationPath,
            problem: "cannot create a temporary file in \(folder) (\(FileSystem.errorText(lastError))); check the folder's permissions and free space")
    }

    deinit {
        abort()
    }

    /// Flushes the temporary file to disk and renames it to ``destinationPath``, replacing any
    /// file there.
    ///
    /// Calling it again after a successful commit does nothing.
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
        close(descriptor)
        descriptor = -1
        if rename(temporaryPath, destinationPath) != 0 {
            let code = errno
            abort()
            throw FileError(.ioError, path: destinationPath,
                problem: "cannot move the finished file into place (\(FileSystem.errorText(code))); check the folder's permissions and render again")
        }
        state = .committed
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
        unlink(temporaryPath)
        state = .aborted
    }
}
