import CSndfile
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
/// that is a regular file (`< take.wav`) is read in place, like any file. A pipe or a socket is
/// read as a stream, as it arrives, through libsndfile's virtual I/O (see ``StandardInput``): a
/// render or a play starts at once and nothing is spooled to disk. A terminal or a device on
/// standard input is refused (nothing would ever end it), as a FIFO or a device given by name is.
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
    /// WAV, AU, raw, FLAC, Ogg Vorbis, Opus and MP3 (see ``PipeSink``).
    public static let outputTypesForPipes: [AudioFileType] = [.wav, .au, .raw, .flac, .oggVorbis, .opus, .mp3]

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

    /// Opens standard input for reading as ``FileSystem/openRegularFileForReading(_:allowEmpty:)``
    /// opens a file, when standard input is a regular file (`< take.wav`): a new descriptor
    /// (close-on-exec; the caller closes it) and the size. A pipe or socket is not opened this
    /// way: see ``StandardInput``.
    /// - Throws: ``FileError`` with path `-`: ``FileError/Kind/notAFile`` for a terminal or a
    ///   device (and for a pipe: the caller reads those through ``StandardInput``),
    ///   ``FileError/Kind/emptyFile`` when the file is empty (unless `allowEmpty`).
    static func openInput(allowEmpty: Bool) throws(FileError) -> (descriptor: Int32, size: Int64) {
        switch connection(of: STDIN_FILENO) {
        case .terminal:
            throw FileError(.notAFile, path: path,
                problem: "standard input is a terminal; pipe audio into lockstep (sox in.flac -t wav - | lockstep …) or give a file name instead of -")
        case .device, .unavailable:
            throw FileError(.notAFile, path: path,
                problem: "standard input is a device or is closed, not a pipe or a file; pipe audio into lockstep or give a file name instead of -")
        case .stream:
            throw FileError(.notAFile, path: path,
                problem: "standard input is a pipe, which is read as a stream here, not as a file; give a file name instead of -")
        case .regularFile:
            break
        }
        var info = stat()
        fstat(STDIN_FILENO, &info)
        let size = Int64(info.st_size)
        guard size > 0 || allowEmpty else {
            throw FileError(.emptyFile, path: path,
                problem: "nothing arrived on standard input (0 bytes); pipe audio into it, e.g. sox in.flac -t wav - | lockstep info -")
        }
        let duplicate = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0 else {
            throw FileError(.ioError, path: path,
                problem: "cannot open standard input again (\(FileSystem.errorText(errno))); raise the open-file limit (ulimit -n)")
        }
        // A reader that reads on (a session file) starts at 0. (libsndfile opens /proc/self/fd/N,
        // a file position of its own.)
        lseek(duplicate, 0, SEEK_SET)
        return (duplicate, size)
    }

    /// Whether standard input is a pipe or a socket, read as a stream (``StandardInput``).
    public static var inputIsStream: Bool { connection(of: STDIN_FILENO) == .stream }
}

/// Standard input when it is a pipe or a socket, read as it arrives — never copied whole to disk
/// or to memory.
///
/// libsndfile reads it through virtual I/O (`sf_open_virtual`, see ``open(_:)``): each open gets a
/// ``Cursor`` of its own over one shared stream. The stream keeps its first ``headCapacity`` bytes
/// (4 MiB: every header, and the whole of a short stream), so the command can open `-` more than
/// once — to check its header before a JACK server is started, then to play it — and libsndfile
/// can seek back and forth within a header. Past that, bytes are kept only until they are read
/// (plus the last 64 KiB), so memory stays bounded however long the stream is.
///
/// What a stream cannot do, and what happens instead:
/// - Seek back past the kept bytes: a cursor's seek there fails, so a stream plays once, from its
///   start (`play --loop -` and a region that does not start at 0 are refused; see
///   ``AudioFileReader/isStream``).
/// - Tell its length before its end: `get_filelen` answers "unknown" (the largest count) until the
///   end has been read, so the length is what was read — ``AudioFileReader/frameCount`` is
///   unknown (`Int64.max`) until then, `info -` counts the frames as it decodes them, and a
///   render ends when every layer, the stream included, has ended.
/// - Skip forward past what has arrived beyond the first 4 MiB: refused, which libsndfile's WAV,
///   AIFF, CAF and W64 readers take in their stride (they try to look past the audio data for
///   trailing chunks and carry on when they cannot).
/// The formats libsndfile cannot read without the file's length fail with an error that says to
/// pipe WAV, AU, FLAC or Ogg instead, or to give a file — found by piping each: HTK (its length
/// comes from the file's size) does not open, and a CAF whose data size is left open (as sox
/// writes one into a pipe) is refused. WAV, AIFF, AU, CAF (ALAC included: libsndfile writes its
/// packet table first), W64, RF64, FLAC, Ogg Vorbis/Opus, MP3, PAF, NIST, IRCAM, VOC, AVR, PVF,
/// SDS, XI, MAT and WAV's ADPCM/GSM codecs read through a pipe of any length. Should libsndfile
/// need a seek a stream cannot make while it reads (none found), the reader reports it rather
/// than pass the stop off as the stream's end.
public final class StandardInput: @unchecked Sendable {
    /// The stream of this process's standard input.
    public static let shared = StandardInput(descriptor: STDIN_FILENO)

    /// Bytes from the start of the stream that are kept for the process's life (4 MiB).
    public static let headCapacity = 4 << 20
    /// Bytes past the head kept after they are read (64 KiB), for short seeks back.
    static let tailCapacity = 1 << 16

    private let descriptor: Int32
    private let state = Mutex(State())

    private struct State: @unchecked Sendable {
        /// The first bytes of the stream (up to ``headCapacity``).
        var head: [UInt8] = []
        /// The bytes most recently read past the head, starting at ``tailStart``.
        var tail: [UInt8] = []
        var tailStart: Int64 = 0
        /// Bytes read from the descriptor so far.
        var consumed: Int64 = 0
        /// Whether the end of the stream has been read.
        var ended = false
        /// The `errno` of a failed read.
        var failure: Int32?
        /// Whether a read or seek asked for bytes no longer kept.
        var lostBytes = false
        /// Seeks refused so far (past what has arrived beyond the head, or back past what is kept).
        var refusedSeeks = 0
    }

    /// A stream over `descriptor` (not owned: never closed).
    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Bytes read from standard input so far.
    public var bytesRead: Int64 { state.withLock { $0.consumed } }

    /// Whether the end of the stream has been read.
    public var hasEnded: Bool { state.withLock { $0.ended } }

    /// Whether a reader asked for bytes the stream no longer keeps (it tried to seek back).
    var hasLostBytes: Bool { state.withLock { $0.lostBytes } }

    /// How many seeks have been refused so far (a reader compares it before and after reading).
    var refusedSeeks: Int { state.withLock { $0.refusedSeeks } }

    /// The `errno` of a failed read of standard input, if one failed.
    var failure: Int32? { state.withLock { $0.failure } }

    /// One reader's position in the stream, handed to libsndfile's virtual I/O callbacks.
    final class Cursor {
        let stream: StandardInput
        var position: Int64 = 0
        /// Whether a read at this cursor came back short because the stream had ended.
        var reachedEnd = false
        init(stream: StandardInput) { self.stream = stream }
    }

    /// libsndfile's callbacks, each handed the ``Cursor`` through `user_data`.
    static var callbacks: SF_VIRTUAL_IO {
        SF_VIRTUAL_IO(
            get_filelen: { user in
                let cursor = Unmanaged<Cursor>.fromOpaque(user!).takeUnretainedValue()
                return cursor.stream.length ?? Int64.max
            },
            seek: { offset, whence, user in
                let cursor = Unmanaged<Cursor>.fromOpaque(user!).takeUnretainedValue()
                return cursor.stream.seek(cursor, offset: offset, whence: whence)
            },
            read: { pointer, count, user in
                let cursor = Unmanaged<Cursor>.fromOpaque(user!).takeUnretainedValue()
                guard let pointer, count > 0 else { return 0 }
                return cursor.stream.read(cursor, into: pointer, count: Int(count))
            },
            write: { _, _, _ in 0 },
            tell: { user in Unmanaged<Cursor>.fromOpaque(user!).takeUnretainedValue().position })
    }

    /// The stream's length once its end has been read, else nil.
    var length: Int64? { state.withLock { $0.ended ? $0.consumed : nil } }

    /// Moves `cursor`: anywhere within the bytes kept, forward within the head (reading up to it),
    /// or to the end once it is known; -1 otherwise.
    func seek(_ cursor: Cursor, offset: Int64, whence: Int32) -> Int64 {
        let target = reachableTarget(cursor, offset: offset, whence: whence)
        guard let target else {
            state.withLock { $0.refusedSeeks += 1 }
            return -1
        }
        cursor.position = target
        return target
    }

    /// Where a seek lands when the stream can take it there, else nil.
    private func reachableTarget(_ cursor: Cursor, offset: Int64, whence: Int32) -> Int64? {
        let end = state.withLock { $0.ended ? $0.consumed : nil }
        if whence == SEEK_END && end == nil { return nil }
        guard let target = Sndfile.seekTarget(offset, whence: whence, position: cursor.position, end: end ?? 0) else { return nil }
        let consumed = state.withLock { $0.consumed }
        if target > consumed {
            // Forward past what has arrived: only within the head (read up to it), else refused.
            guard target <= Int64(Self.headCapacity) else { return nil }
            fill(upTo: target)
            guard state.withLock({ $0.consumed }) >= target else { return nil }
        } else if !isKept(target) {
            state.withLock { $0.lostBytes = true }
            return nil
        }
        return target
    }

    /// Whether the byte at `offset` (below ``bytesRead``) is still kept.
    private func isKept(_ offset: Int64) -> Bool {
        state.withLock { state in
            offset < Int64(state.head.count) || offset >= state.tailStart || offset == state.consumed
        }
    }

    /// Reads from the descriptor until `offset` bytes have arrived (or the stream ends).
    private func fill(upTo offset: Int64) {
        while state.withLock({ !$0.ended && $0.failure == nil && $0.consumed < offset }) {
            readMore(atLeast: Int(min(Int64(1 << 16), offset - state.withLock { $0.consumed })))
        }
    }

    /// One `read` of the descriptor (blocking until something arrives), kept in the head or the tail.
    private func readMore(atLeast wanted: Int) {
        let capacity = max(wanted, 1 << 16)
        var chunk = [UInt8](repeating: 0, count: capacity)
        var got = 0
        while true {
            got = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, capacity) }
            if got < 0 && errno == EINTR { continue }
            break
        }
        let code = errno
        state.withLock { state in
            if got < 0 {
                state.failure = code
                state.ended = true
                return
            }
            if got == 0 {
                state.ended = true
                return
            }
            var bytes = chunk[..<got]
            let room = Self.headCapacity - state.head.count
            if room > 0 {
                let kept = min(room, bytes.count)
                state.head.append(contentsOf: bytes.prefix(kept))
                bytes = bytes.dropFirst(kept)
                state.tailStart = Int64(state.head.count)
            }
            if !bytes.isEmpty {
                state.tail.append(contentsOf: bytes)
                let excess = state.tail.count - Self.tailCapacity
                if excess > 0 {
                    state.tail.removeFirst(excess)
                    state.tailStart += Int64(excess)
                }
            }
            state.consumed += Int64(got)
        }
    }

    /// Copies up to `count` bytes at `cursor`'s position, reading the descriptor as needed.
    func read(_ cursor: Cursor, into pointer: UnsafeMutableRawPointer, count: Int) -> Int64 {
        var done = 0
        while done < count {
            let copied: Int? = state.withLock { state in
                let position = cursor.position
                if position < Int64(state.head.count) {
                    let available = min(count - done, state.head.count - Int(position))
                    state.head.withUnsafeBytes { (pointer + done).copyMemory(from: $0.baseAddress! + Int(position), byteCount: available) }
                    return available
                }
                if position >= state.tailStart && position < state.consumed {
                    let start = Int(position - state.tailStart)
                    let available = min(count - done, state.tail.count - start)
                    state.tail.withUnsafeBytes { (pointer + done).copyMemory(from: $0.baseAddress! + start, byteCount: available) }
                    return available
                }
                if position < state.consumed {
                    state.lostBytes = true
                    return 0
                }
                return state.ended ? 0 : nil
            }
            if let copied {
                if copied == 0 {
                    if state.withLock({ $0.ended && cursor.position >= $0.consumed }) { cursor.reachedEnd = true }
                    break
                }
                done += copied
                cursor.position += Int64(copied)
            } else {
                readMore(atLeast: count - done)
            }
        }
        return Int64(done)
    }

    /// Reads the whole stream from its start into memory (a session file), up to
    /// `maximumBytes + 1` bytes.
    func readAll(maximumBytes: Int) -> [UInt8] {
        let cursor = Cursor(stream: self)
        var bytes = [UInt8](repeating: 0, count: 1 << 16)
        var filled = 0
        while filled <= maximumBytes {
            if filled == bytes.count { bytes.append(contentsOf: repeatElement(0, count: 1 << 16)) }
            let got = bytes.withUnsafeMutableBytes { read(cursor, into: $0.baseAddress! + filled, count: $0.count - filled) }
            if got == 0 { break }
            filled += Int(got)
        }
        return Array(bytes[..<filled])
    }
}
