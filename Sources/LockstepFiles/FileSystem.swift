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
        case other
        case missing
        case failed(errno: Int32)
    }

    /// Stats `path`, following symbolic links.
    static func status(_ path: String) -> Status {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            return code == ENOENT || code == ENOTDIR ? .missing : .failed(errno: code)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regularFile(size: Int64(info.st_size))
        case S_IFDIR: return .directory
        default: return .other
        }
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
        case .regularFile, .other:
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
        case .other:
            throw FileError(.unwritableOutput, path: path,
                problem: "the path names a device, pipe or socket, not a regular file; choose a file name for the output")
        case .missing, .failed:
            break
        }
    }
}
