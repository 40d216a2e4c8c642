#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Small POSIX helpers shared by the reader, the writer and the atomic output (internal).
enum FileSystem {
    /// What `stat` says about a path.
    enum Status {
        case regularFile(size: Int64)
        case directory
        /// A FIFO, a device, a socket: something that is neither a file nor a directory.
        case special(SpecialKind)
        case missing
        case failed(errno: Int32)
    }

    /// The kinds of file-system object that are neither regular files nor directories.
    enum SpecialKind {
        case fifo
        case characterDevice
        case blockDevice
        case socket
        case unknown

        /// The kind from a `st_mode`, or nil for a regular file or a directory.
        init?(mode: mode_t) {
            switch mode & S_IFMT {
            case S_IFREG, S_IFDIR: return nil
            case S_IFIFO: self = .fifo
            case S_IFCHR: self = .characterDevice
            case S_IFBLK: self = .blockDevice
            case S_IFSOCK: self = .socket
            default: self = .unknown
            }
        }

        /// What the object is, for a message: `a FIFO (named pipe)`, `a character device`, ….
        var name: String {
            switch self {
            case .fifo: "a FIFO (named pipe)"
            case .characterDevice: "a character device"
            case .blockDevice: "a block device (a disk or a partition)"
            case .socket: "a socket"
            case .unknown: "a special file"
            }
        }
    }

    /// Stats `path`, following symbolic links.
    static func status(_ path: String) -> Status {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            return code == ENOENT || code == ENOTDIR ? .missing : .failed(errno: code)
        }
        return status(of: info)
    }

    /// The status a `stat` result describes.
    private static func status(of info: stat) -> Status {
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regularFile(size: Int64(info.st_size))
        case S_IFDIR: return .directory
        default: return .special(SpecialKind(mode: info.st_mode) ?? .unknown)
        }
    }

    /// The error for an input path that is not a regular file.
    static func notARegularFile(_ path: String, _ kind: SpecialKind) -> FileError {
        FileError(.notAFile, path: path,
            problem: "is \(kind.name), not a regular file; give the path of an audio file (a stream must be saved to a file first)")
    }

    /// The error for an input path that is a directory.
    static func isADirectory(_ path: String) -> FileError {
        FileError(.notAFile, path: path,
            problem: "is a directory, not an audio file; give the path of a file inside it")
    }

    /// Opens `path` for reading, refusing everything but a non-empty regular file, without ever
    /// blocking: the path is looked up first (a FIFO, device, socket or directory is refused before
    /// it is opened), then opened with `O_NONBLOCK` — so a FIFO swapped in after the look-up cannot
    /// block the open — and checked again with `fstat` on the descriptor itself. `O_NONBLOCK` is
    /// cleared before the descriptor is returned.
    ///
    /// - Returns: the open descriptor (close-on-exec; the caller closes it) and the file's size.
    /// - Throws: ``FileError`` naming the path: ``FileError/Kind/notFound``,
    ///   ``FileError/Kind/permissionDenied``, ``FileError/Kind/notAFile`` (a directory, FIFO,
    ///   device or socket), ``FileError/Kind/emptyFile`` or ``FileError/Kind/ioError``.
    ///
    /// `-` opens standard input (see ``StandardStreams``).
    static func openRegularFileForReading(_ path: String, allowEmpty: Bool = false) throws(FileError) -> (descriptor: Int32, size: Int64) {
        if StandardStreams.names(path) { return try StandardStreams.openInput(allowEmpty: allowEmpty) }
        switch status(path) {
        case .missing:
            throw FileError(.notFound, path: path, problem: "no such file; check the path and the file name's spelling")
        case .directory:
            throw isADirectory(path)
        case .special(let kind):
            throw notARegularFile(path, kind)
        case .failed(let code):
            if code == EACCES {
                throw FileError(.permissionDenied, path: path,
                    problem: "permission denied while looking up the file; check the permissions of the folders on its path")
            }
            throw FileError(.ioError, path: path, problem: "cannot look up the file (\(errorText(code))); check the path")
        case .regularFile:
            break
        }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            switch code {
            case EACCES, EPERM:
                throw FileError(.permissionDenied, path: path,
                    problem: "permission denied; make the file readable (chmod +r) or run as its owner")
            case ENOENT, ENOTDIR:
                throw FileError(.notFound, path: path, problem: "no such file (it disappeared while being opened); check the path")
            case EMFILE, ENFILE:
                throw FileError(.ioError, path: path,
                    problem: "cannot open the file: too many files are open (\(errorText(code))); raise the limit (ulimit -n) or use fewer files")
            default:
                throw FileError(.ioError, path: path, problem: "cannot open the file (\(errorText(code))); check the path and the disk")
            }
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw FileError(.ioError, path: path, problem: "cannot inspect the opened file (\(errorText(code))); check the disk")
        }
        switch status(of: info) {
        case .regularFile(let size):
            guard size > 0 || allowEmpty else {
                close(descriptor)
                throw FileError(.emptyFile, path: path,
                    problem: "the file is empty (0 bytes), so it was never written completely; re-export or re-copy it")
            }
            let flags = fcntl(descriptor, F_GETFL)
            guard flags >= 0, fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
                let code = errno
                close(descriptor)
                throw FileError(.ioError, path: path, problem: "cannot prepare the file for reading (\(errorText(code))); check the disk")
            }
            return (descriptor, size)
        case .directory:
            close(descriptor)
            throw isADirectory(path)
        case .special(let kind):
            close(descriptor)
            throw notARegularFile(path, kind)
        case .missing, .failed:
            close(descriptor)
            throw FileError(.ioError, path: path, problem: "cannot inspect the opened file; check the disk")
        }
    }

    /// Closes a descriptor this module opened (retrying is wrong on Linux, so it is not retried).
    static func closeDescriptor(_ descriptor: Int32) {
        guard descriptor >= 0 else { return }
        _ = close(descriptor)
    }

    /// Reads exactly `count` bytes at `offset` of `descriptor` without moving its file position;
    /// nil at the end of the file or on a read error.
    static func read(_ descriptor: Int32, at offset: Int64, count: Int) -> [UInt8]? {
        guard count > 0, offset >= 0 else { return count == 0 ? [] : nil }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { return nil }
            done += got
        }
        return bytes
    }

    /// The operating system's text for an `errno` value, such as `Permission denied`.
    static func errorText(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// The directory part of `path` (`.` for a bare file name, `/` for a file in the root).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let dir = path[..<slash]
        return dir.isEmpty ? "/" : String(dir)
    }

    /// The last component of `path`.
    static func fileName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// The extension of the last path component, without the dot (empty if there is none).
    static func pathExtension(of path: String) -> String {
        let name = fileName(of: path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// Whether the calling process may access `path` with `mode` (`R_OK`, `W_OK`, `X_OK`).
    static func isAccessible(_ path: String, _ mode: Int32) -> Bool {
        access(path, mode) == 0
    }

    /// Checks that a new file can be created at `path`: its folder exists, is a folder and is
    /// writable, and `path` itself is not a directory or a read-only file.
    static func checkWritableDestination(_ path: String) throws(FileError) {
        guard !path.isEmpty, !path.hasSuffix("/") else {
            throw FileError(.unwritableOutput, path: path,
                problem: "the output path does not name a file; add a file name such as out.wav")
        }
        let dir = directory(of: path)
        switch status(dir) {
        case .directory:
            break
        case .missing:
            throw FileError(.unwritableOutput, path: path,
                problem: "the output folder \(dir) does not exist; create it first or choose another folder")
        case .regularFile, .special:
            throw FileError(.unwritableOutput, path: path,
                problem: "\(dir) is not a folder; choose an output path inside an existing folder")
        case .failed(let code):
            throw FileError(code == EACCES ? .permissionDenied : .unwritableOutput, path: path,
                problem: "cannot look up the output folder \(dir) (\(errorText(code))); check its permissions")
        }
        guard isAccessible(dir, W_OK | X_OK) else {
            throw FileError(.permissionDenied, path: path,
                problem: "no permission to create files in the folder \(dir); choose a writable folder or fix its permissions")
        }
        switch status(path) {
        case .directory:
            throw FileError(.unwritableOutput, path: path,
                problem: "a directory with this name exists; choose a file name for the output")
        case .regularFile:
            guard isAccessible(path, W_OK) else {
                throw FileError(.permissionDenied, path: path,
                    problem: "the file exists and is read-only; remove it, make it writable or choose another name")
            }
        case .special(let kind):
            throw FileError(.unwritableOutput, path: path,
                problem: "the path names \(kind.name), not a regular file; choose a file name for the output")
        case .missing, .failed:
            break
        }
    }
}

/// Whole small files read the way audio files are opened: never blocking on a FIFO, a device or a
/// socket, never reading more than asked.
public enum RegularFile {
    /// What stands at `path` when it is not a regular file — `a folder`, `a FIFO (named pipe)`,
    /// `a character device`, `a block device (a disk or a partition)`, `a socket` — for a
    /// message; nil for a regular file or nothing at all.
    public static func kind(at path: String) -> String? {
        switch FileSystem.status(path) {
        case .directory: "a folder"
        case .special(let kind): kind.name
        case .regularFile, .missing, .failed: nil
        }
    }

    /// Reads the regular file at `path` (an empty one too), refusing anything else without
    /// blocking, as audio files are opened (``AudioFileReader``).
    /// - Parameter maximumBytes: the most it reads: a bigger file is not read (``Contents/bytes``
    ///   empty) and one that grows past it while read stops there; ``Contents/size`` says how big
    ///   it was.
    /// - Throws: ``FileError`` naming the path: ``FileError/Kind/notFound``,
    ///   ``FileError/Kind/permissionDenied``, ``FileError/Kind/notAFile`` (a folder, FIFO, device
    ///   or socket; ``kind(at:)`` says which) or ``FileError/Kind/ioError``.
    public static func read(_ path: String, maximumBytes: Int) throws(FileError) -> Contents {
        if StandardStreams.names(path) && StandardStreams.inputIsStream {
            // A pipe: read from the stream into memory (a session file is small), nothing on disk.
            let bytes = StandardInput.shared.readAll(maximumBytes: maximumBytes)
            if let code = StandardInput.shared.failure {
                throw FileError(.ioError, path: path,
                    problem: "reading standard input failed (\(FileSystem.errorText(code))); check the program writing into the pipe")
            }
            return bytes.count > maximumBytes ? Contents(bytes: [], size: Int64(bytes.count)) : Contents(bytes: bytes, size: Int64(bytes.count))
        }
        let (descriptor, size) = try FileSystem.openRegularFileForReading(path, allowEmpty: true)
        defer { FileSystem.closeDescriptor(descriptor) }
        guard size <= Int64(maximumBytes) else { return Contents(bytes: [], size: size) }
        var bytes = [UInt8](repeating: 0, count: Int(size) + 1)
        var filled = 0
        while filled <= maximumBytes {
            if filled == bytes.count { bytes.append(contentsOf: repeatElement(0, count: 1 << 16)) }
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                throw FileError(.ioError, path: path, problem: "cannot read the file (\(FileSystem.errorText(errno))); check the disk")
            }
            filled += got
        }
        // (A file that grew past the limit while it was read: its size is what was read.)
        return filled > maximumBytes ? Contents(bytes: [], size: Int64(filled)) : Contents(bytes: Array(bytes[..<filled]), size: Int64(filled))
    }

    /// What ``read(_:maximumBytes:)`` read.
    public struct Contents: Sendable {
        /// The file's bytes; empty when it is bigger than asked.
        public var bytes: [UInt8]
        /// Its size in bytes.
        public var size: Int64
    }
}
