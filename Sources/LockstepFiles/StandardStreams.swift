import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `-` as a file name: standard input where a file is read, standard output where one is written.
///
/// **Reading `-`.** ``AudioFileReader``, ``RegularFile/read(_:maximumBytes:)`` (session files)
/// and everything built on them read standard input when given the path ``path``. Standard input
/// that is a regular file (`< take.wav`) is read in place. A pipe or a socket is read to its end
/// once, into an unnamed temporary file (Linux `O_TMPFILE` in `$TMPDIR`, else `/tmp`; the
/// kernel frees it when the process ends), and every open of `-` in the process reads that copy:
/// libsndfile needs to seek in most formats (an MP3's length is counted by decoding it and
/// rewinding, an Ogg file's end is found by seeking to it, a WAV header is read back and forth),
/// so the stream is kept whole, on disk rather than in memory, and the exact length of what was
/// piped in is known before anything plays. A terminal or a device on standard input is refused
/// (nothing would ever end it), as a FIFO or a device given by name is.
///
/// **Writing `-`.** ``AudioFileWriter`` writes standard output when given ``path``. Standard
/// output that is a regular file (`> mix.wav`) is written in place and seekable, so every type
/// works. A pipe or socket cannot seek: WAV and AU are written with the header's lengths set to
/// "unknown" and FLAC with STREAMINFO's total left at "unknown" (see ``PipeSink``); Ogg Vorbis,
/// Opus and MP3 are streams anyway. AIFF, W64 and RF64 have no way to say "length unknown", and
/// libsndfile 1.2 cannot read back a CAF that says it: those are refused
/// (``outputTypesForPipes`` lists what works). A terminal is refused.
public enum StandardStreams {
    /// The file name that stands for standard input (read) or standard output (written): `-`.
    public static let path = "-"

    /// Whether `path` names a standard stream (is `-`).
    public static func names(_ path: String) -> Bool { path == Self.path }

    /// What a standard stream is connected to.
    public enum Connection: Sendable, Hashable {
        /// A regular file (`< in.wav`, `> out.wav`): seekable.
        case regularFile
        /// A pipe or a socket: read or written once, in order.
        case stream
        /// A terminal.
        case terminal
        /// A device other than a terminal (`/dev/null`, `/dev/zero`), or a directory.
        case device
        /// Closed, or `fstat` failed.
        case unavailable
    }

    /// What the descriptor `descriptor` (0 or 1) is connected to.
    public static func connection(of descriptor: Int32) -> Connection {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .unavailable }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regularFile
        case S_IFIFO, S_IFSOCK: return .stream
        case S_IFCHR: return isatty(descriptor) == 1 ? .terminal : .device
        default: return .device
        }
    }

    /// The output types that can be written to standard output when it is a pipe or a socket:
    /// WAV, AU, FLAC, Ogg Vorbis, Opus and MP3 (see ``PipeSink``).
    public static let outputTypesForPipes: [AudioFileType] = [.wav, .au, .flac, .oggVorbis, .opus, .mp3]

    /// Refuses writing `type` to standard output when standard output cannot take it: a terminal,
    /// or a pipe (or socket) and a type that needs seeking (AIFF, W64, RF64, CAF).
    /// - Throws: ``FileError`` of kind ``FileError/Kind/unwritableOutput`` (a terminal or a
    ///   device that is closed) or ``FileError/Kind/unsupportedOutputFormat`` (a type a pipe cannot
    ///   carry), listing what works.
    public static func checkOutput(_ type: AudioFileType) throws(FileError) {
        switch connection(of: STDOUT_FILENO) {
        case .terminal:
            throw FileError(.unwritableOutput, path: path,
                problem: "standard output is a terminal, which cannot take audio; pipe it into a program (| sox -t \(type.fileExtension) - out.flac) or give -o a file name")
        case .unavailable:
            throw FileError(.unwritableOutput, path: path,
                problem: "standard output is closed; redirect it to a file or a pipe, or give -o a file name")
        case .stream where !outputTypesForPipes.contains(type):
            let names = outputTypesForPipes.map(\.description).joined(separator: ", ")
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "\(type) cannot be written to a pipe: its header must be rewritten with the length after the audio\(type == .caf ? " (libsndfile cannot read CAF's 'length unknown')" : ", and \(type) has no 'length unknown'"); write \(names) to a pipe (--format), or give -o a file name")
        case .regularFile, .device, .stream:
            return
        }
    }

    /// The copy of standard input every open of `-` reads, made on the first.
    private static let input = Mutex<InputCopy?>(nil)

    /// Standard input as read once: the descriptor to read it from (a regular file, or the
    /// unnamed copy of a stream) and its size, or why it cannot be read.
    private enum InputCopy {
        case ready(descriptor: Int32, size: Int64)
        case failed(FileError)
    }

    /// Opens standard input for reading as ``FileSystem/openRegularFileForReading(_:allowEmpty:)``
    /// opens a file: a new descriptor (close-on-exec; the caller closes it) and the size.
    /// - Throws: ``FileError`` with path `-`: ``FileError/Kind/notAFile`` for a terminal or a
    ///   device, ``FileError/Kind/emptyFile`` when nothing was piped in (unless `allowEmpty`),
    ///   ``FileError/Kind/ioError`` when the copy cannot be made (no space in `$TMPDIR`, say).
    static func openInput(allowEmpty: Bool) throws(FileError) -> (descriptor: Int32, size: Int64) {
        let copy = input.withLock { copy -> InputCopy in
            if let copy { return copy }
            let made = makeInputCopy()
            copy = made
            return made
        }
        switch copy {
        case .failed(let error):
            throw error
        case .ready(let descriptor, let size):
            guard size > 0 || allowEmpty else {
                throw FileError(.emptyFile, path: path,
                    problem: "nothing arrived on standard input (0 bytes); pipe audio into it, e.g. sox in.flac -t wav - | lockstep info -")
            }
            let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
            guard duplicate >= 0 else {
                throw FileError(.ioError, path: path,
                    problem: "cannot open standard input again (\(FileSystem.errorText(errno))); raise the open-file limit (ulimit -n)")
            }
            // The copy was written to its end; a reader that reads on (a session file) starts at 0.
            // (libsndfile opens /proc/self/fd/N, a file position of its own.)
            lseek(duplicate, 0, SEEK_SET)
            return (duplicate, size)
        }
    }

    /// Reads standard input: a regular file in place, a stream into an unnamed temporary file.
    private static func makeInputCopy() -> InputCopy {
        switch connection(of: STDIN_FILENO) {
        case .terminal:
            return .failed(FileError(.notAFile, path: path,
                problem: "standard input is a terminal; pipe audio into lockstep (sox in.flac -t wav - | lockstep …) or give a file name instead of -"))
        case .device, .unavailable:
            return .failed(FileError(.notAFile, path: path,
                problem: "standard input is a device or is closed, not a pipe or a file; pipe audio into lockstep or give a file name instead of -"))
        case .regularFile:
            var info = stat()
            fstat(STDIN_FILENO, &info)
            return .ready(descriptor: STDIN_FILENO, size: Int64(info.st_size))
        case .stream:
            break
        }
        let folder = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var spool: Int32 = -1
        #if os(Linux)
        spool = open(folder, 0o20_000_000 | O_DIRECTORY | O_RDWR | O_CLOEXEC, 0o600)
        #endif
        if spool < 0 {
            var template = Array("\(folder)/lockstep-stdin-XXXXXX".utf8CString)
            spool = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            if spool >= 0 {
                _ = fcntl(spool, F_SETFD, FD_CLOEXEC)
                template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            }
        }
        guard spool >= 0 else {
            return .failed(FileError(.ioError, path: path,
                problem: "cannot create a temporary file in \(folder) to hold standard input (\(FileSystem.errorText(errno))); set TMPDIR to a writable folder"))
        }
        var size: Int64 = 0
        let capacity = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let got = read(STDIN_FILENO, buffer, capacity)
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                close(spool)
                return .failed(FileError(.ioError, path: path,
                    problem: "reading standard input failed (\(FileSystem.errorText(errno))); check the program writing into the pipe"))
            }
            var done = 0
            while done < got {
                let wrote = write(spool, buffer + done, got - done)
                if wrote < 0 {
                    if errno == EINTR { continue }
                    let code = errno
                    close(spool)
                    return .failed(FileError(.ioError, path: path,
                        problem: "cannot keep standard input in \(folder) (\(FileSystem.errorText(code)) after \(size + Int64(done)) bytes); free some space or set TMPDIR to a folder with room"))
                }
                done += wrote
            }
            size += Int64(got)
        }
        return .ready(descriptor: spool, size: size)
    }
}
