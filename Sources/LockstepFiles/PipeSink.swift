import CSndfile

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// libsndfile's output through virtual I/O (`sf_open_virtual`) onto a descriptor that cannot seek
/// (a pipe or a socket: standard output piped into another program) (internal).
///
/// libsndfile opened on a pipe itself (`sf_open_fd`) refuses WAV, CAF, W64 and RF64
/// (`SFE_NO_PIPE_WRITE`), writes a damaged AIFF header before refusing it, and appends FLAC's
/// rewritten STREAMINFO block to the end of the stream (measured with libsndfile 1.2.0: sox reads
/// such a FLAC stream with `LOST_SYNC`). Through this sink libsndfile believes the output is
/// seekable; the sink keeps what libsndfile may still change and sends the rest:
///
/// - Until ``seal(patching:)`` everything stays in memory: that is the header libsndfile wrote
///   when it opened the file. Sealing sets the header's length fields to the container's
///   "length unknown" value (WAV: sox's 0x7FFFF000, which sox reads as "unspecified" and
///   libsndfile, ffmpeg and Lockstep read to the end of the stream; AU: −1, as its specification
///   defines) and sends it.
/// - After that, writes at the end are buffered (64 KiB) and sent in order; a write over bytes
///   already sent (libsndfile rewriting the header with the final lengths when it closes, libFLAC
///   updating STREAMINFO) cannot reach the reader and is dropped, counted in ``droppedBytes``.
///   The stream therefore says "length unknown" where a file would say the length, which every
///   reader of these types handles (they read to the end of the stream).
///
/// A write that fails (the reader went away: `EPIPE`) makes libsndfile's write fail; ``failure``
/// holds the `errno`.
final class PipeSink {
    /// The descriptor written (not owned: the sink never closes it).
    let descriptor: Int32
    /// Bytes not sent yet; they start at stream position ``sent``.
    private var pending: [UInt8] = []
    /// Bytes sent so far.
    private(set) var sent: Int64 = 0
    /// Where libsndfile's next write lands.
    fileprivate var position: Int64 = 0
    /// The stream's length as libsndfile sees it.
    fileprivate var length: Int64 = 0
    /// Whether the header has been patched and sent.
    private var sealed = false
    /// Bytes libsndfile rewrote after they had been sent (final header lengths), dropped.
    private(set) var droppedBytes: Int64 = 0
    /// The `errno` of a failed write, if one failed.
    private(set) var failure: Int32?

    /// Bytes collected before they are sent.
    private static let chunk = 1 << 16

    /// A sink writing to `descriptor`.
    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// libsndfile's callbacks, each handed the sink back through `user_data`.
    static var callbacks: SF_VIRTUAL_IO {
        SF_VIRTUAL_IO(
            get_filelen: { user in Unmanaged<PipeSink>.fromOpaque(user!).takeUnretainedValue().length },
            seek: { offset, whence, user in Unmanaged<PipeSink>.fromOpaque(user!).takeUnretainedValue().seek(offset, whence: whence) },
            read: { _, _, _ in 0 },
            write: { bytes, count, user in Unmanaged<PipeSink>.fromOpaque(user!).takeUnretainedValue().write(bytes, count: count) },
            tell: { user in Unmanaged<PipeSink>.fromOpaque(user!).takeUnretainedValue().position })
    }

    fileprivate func seek(_ offset: sf_count_t, whence: Int32) -> sf_count_t {
        guard let target = Sndfile.seekTarget(offset, whence: whence, position: position, end: length) else { return -1 }
        position = target
        return target
    }

    fileprivate func write(_ bytes: UnsafeRawPointer?, count: sf_count_t) -> sf_count_t {
        guard let bytes, count > 0 else { return 0 }
        guard failure == nil else { return 0 }
        var source = UnsafeRawBufferPointer(start: bytes, count: Int(count))
        // What lies over bytes already sent cannot change any more.
        if position < sent {
            let dropped = Int(min(Int64(source.count), sent - position))
            droppedBytes += Int64(dropped)
            position += Int64(dropped)
            source = UnsafeRawBufferPointer(rebasing: source[dropped...])
        }
        if !source.isEmpty {
            let offset = Int(position - sent)
            if offset > pending.count { pending.append(contentsOf: repeatElement(0, count: offset - pending.count)) }
            let overlap = min(source.count, pending.count - offset)
            for index in 0..<overlap { pending[offset + index] = source[index] }
            pending.append(contentsOf: source[overlap...])
            position += Int64(source.count)
        }
        length = max(length, position)
        if sealed && pending.count >= Self.chunk && !flush() { return 0 }
        return count
    }

    /// The container's "length unknown" markers written into the header kept so far, then the
    /// header sent. Call once, right after `sf_open_virtual` returned.
    /// - Returns: false when sending failed (see ``failure``).
    func seal(patching type: AudioFileType) -> Bool {
        Self.markLengthUnknown(&pending, type: type)
        sealed = true
        return flush()
    }

    /// Sends everything kept. Call after `sf_close`.
    /// - Returns: false when sending failed (see ``failure``).
    @discardableResult
    func flush() -> Bool {
        guard failure == nil else { return false }
        var done = 0
        while done < pending.count {
            let wrote = pending.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + done, $0.count - done) }
            if wrote < 0 {
                if errno == EINTR { continue }
                failure = errno
                return false
            }
            done += wrote
        }
        sent += Int64(pending.count)
        pending.removeAll(keepingCapacity: true)
        return true
    }

    /// Sets the length fields of a header libsndfile wrote at open (lengths 0) to "unknown".
    ///
    /// - WAV: the `data` chunk's size (the header's last 4 bytes) becomes 0x7FFFF000 and the RIFF
    ///   size (offset 4) agrees with it, as sox writes to a pipe; a `PEAK` chunk (float files; its peaks are still 0 at open) becomes a
    ///   `JUNK` chunk, which readers skip.
    /// - AU: the data size (offset 8) becomes 0xFFFFFFFF (−1, "unknown" in the AU specification).
    /// - CAF: the `data` chunk's 64-bit size (12 bytes before the header's end: size, then the
    ///   4-byte edit count) becomes −1 ("unknown, the last chunk" in the CAF specification). Not
    ///   offered for pipes (see ``StandardStreams/outputTypesForPipes``): libsndfile 1.2 cannot
    ///   read such a CAF back ("malformed"), so neither sox nor Lockstep could.
    /// FLAC's STREAMINFO already says "total samples unknown" (0) until libFLAC rewrites it, and
    /// Ogg and MP3 streams carry no total length.
    static func markLengthUnknown(_ header: inout [UInt8], type: AudioFileType) {
        func store(_ value: UInt32, at offset: Int) {
            for index in 0..<4 { header[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(index))) }
        }
        func fill(_ offset: Int, _ count: Int) {
            guard offset >= 0, offset + count <= header.count else { return }
            for index in offset..<(offset + count) { header[index] = 0xFF }
        }
        switch type {
        case .wav:
            guard header.count >= 44, header.starts(with: Array("RIFF".utf8)),
                  String(decoding: header[(header.count - 8)..<(header.count - 4)], as: UTF8.self) == "data" else { return }
            let data = UInt32(ContainerLayout.soxUnspecifiedLength)
            store(data, at: header.count - 4)
            store(data + UInt32(header.count - 8), at: 4)
            var offset = 12
            while offset + 8 <= header.count {
                let id = String(decoding: header[offset..<(offset + 4)], as: UTF8.self)
                let size = Int(header[offset + 4]) | Int(header[offset + 5]) << 8 | Int(header[offset + 6]) << 16 | Int(header[offset + 7]) << 24
                if id == "PEAK" {
                    for (index, byte) in "JUNK".utf8.enumerated() { header[offset + index] = byte }
                }
                if id == "data" { break }
                offset += 8 + size + (size & 1)
            }
        case .au:
            guard header.count >= 24 else { return }
            fill(8, 4)
        case .caf:
            guard header.count >= 16,
                  String(decoding: header[(header.count - 16)..<(header.count - 12)], as: UTF8.self) == "data" else { return }
            fill(header.count - 12, 8)
        default:
            return
        }
    }
}
