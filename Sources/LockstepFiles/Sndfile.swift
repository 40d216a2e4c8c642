import CSndfile
import Lockstep
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Internal helpers around the libsndfile C API.
enum Sndfile {
    /// libsndfile's name for a major format or a subtype, from `SFC_GET_FORMAT_INFO`
    /// (such as `WAV (Microsoft)` or `Signed 16 bit PCM`); a hexadecimal code if it has none.
    static func formatName(_ format: Int32) -> String {
        var info = SF_FORMAT_INFO()
        info.format = format
        let status = sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &info,
                                Int32(MemoryLayout<SF_FORMAT_INFO>.size))
        if status == 0, let name = info.name {
            return String(cString: name)
        }
        return "format 0x" + String(format, radix: 16)
    }

    /// The text of libsndfile's current error for `handle`, or for the last failed open when `nil`.
    ///
    /// libsndfile's sentence is made a phrase for Lockstep's own: its `Error : ` prefix and final
    /// full stop dropped, its first letter lower-cased (`Error : this file format does not support
    /// pipe write.` reads `this file format does not support pipe write`).
    static func errorText(_ handle: OpaquePointer?) -> String {
        guard let text = sf_strerror(handle) else { return "unknown libsndfile error" }
        return phrase(String(cString: text))
    }

    /// libsndfile's error sentence as a phrase (see ``errorText(_:)``).
    static func phrase(_ sentence: String) -> String {
        var text = Substring(sentence)
        while let last = text.last, last == " " || last == "\n" { text = text.dropLast() }
        for prefix in ["Error : ", "Error: ", "Error :"] where text.hasPrefix(prefix) { text = text.dropFirst(prefix.count) }
        while text.last == "." { text = text.dropLast() }
        guard let first = text.first else { return "unknown libsndfile error" }
        // Lower-case a sentence's first word, not an acronym (`MP3 …`, `FLAC …`).
        let second = text.dropFirst().first
        return second.map { $0.isLowercase } ?? true ? first.lowercased() + text.dropFirst() : String(text)
    }

    /// The diagnostic log libsndfile wrote while parsing the file's header.
    static func log(_ handle: OpaquePointer) -> String {
        let capacity = 16 * 1024
        var buffer = [CChar](repeating: 0, count: capacity)
        _ = buffer.withUnsafeMutableBytes { raw in
            sf_command(handle, Int32(SFC_GET_LOG_INFO), raw.baseAddress, Int32(capacity - 1))
        }
        buffer[capacity - 1] = 0
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Where a virtual I/O seek (`sf_vio_seek`) lands: `offset` from the start (`SEEK_SET`), from
    /// `position` (`SEEK_CUR`) or from `end` (`SEEK_END`); nil before the start.
    static func seekTarget(_ offset: Int64, whence: Int32, position: Int64, end: Int64) -> Int64? {
        let base: Int64 = switch whence {
        case SEEK_CUR: position
        case SEEK_END: end
        default: 0
        }
        let target = base + offset
        return target >= 0 ? target : nil
    }

    /// The subtype part of a libsndfile format word.
    static func subtype(_ format: Int32) -> Int32 { format & Int32(SF_FORMAT_SUBMASK) }

    /// The major-type part of a libsndfile format word.
    static func major(_ format: Int32) -> Int32 { format & Int32(SF_FORMAT_TYPEMASK) }

    /// The Lockstep sample format nearest to a subtype's native encoding: integer PCM and lossless
    /// codecs keep their bit depth (8-bit and companded encodings become 16-bit), floats keep
    /// their width, lossy codecs become 32-bit float.
    static func nearestSampleFormat(subtype: Int32) -> SampleFormat {
        switch subtype {
        case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8), Int32(SF_FORMAT_PCM_16),
             Int32(SF_FORMAT_ULAW), Int32(SF_FORMAT_ALAW), Int32(SF_FORMAT_DPCM_8),
             Int32(SF_FORMAT_DPCM_16), Int32(SF_FORMAT_DWVW_12), Int32(SF_FORMAT_DWVW_16),
             Int32(SF_FORMAT_ALAC_16):
            return .int16
        case Int32(SF_FORMAT_PCM_24), Int32(SF_FORMAT_DWVW_24), Int32(SF_FORMAT_ALAC_20),
             Int32(SF_FORMAT_ALAC_24):
            return .int24
        case Int32(SF_FORMAT_PCM_32), Int32(SF_FORMAT_ALAC_32):
            return .int32
        case Int32(SF_FORMAT_DOUBLE):
            return .float64
        default:
            return .float32
        }
    }

    /// Bytes per sample of an uncompressed subtype, `nil` for compressed encodings.
    static func uncompressedBytesPerSample(subtype: Int32) -> Int? {
        switch subtype {
        case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8), Int32(SF_FORMAT_ULAW),
             Int32(SF_FORMAT_ALAW):
            return 1
        case Int32(SF_FORMAT_PCM_16): return 2
        case Int32(SF_FORMAT_PCM_24): return 3
        case Int32(SF_FORMAT_PCM_32), Int32(SF_FORMAT_FLOAT): return 4
        case Int32(SF_FORMAT_DOUBLE): return 8
        default: return nil
        }
    }

    /// A short name for a format word's codec or sample encoding: `PCM s16`, `µ-law`, `Vorbis`,
    /// `FLAC s24`, `MP3`, …; libsndfile's own subtype name for the rarer ones.
    static func codecName(format: Int32) -> String {
        let sub = subtype(format)
        let width: String? = switch sub {
        case Int32(SF_FORMAT_PCM_U8): "u8"
        case Int32(SF_FORMAT_PCM_S8): "s8"
        case Int32(SF_FORMAT_PCM_16), Int32(SF_FORMAT_ALAC_16): "s16"
        case Int32(SF_FORMAT_ALAC_20): "s20"
        case Int32(SF_FORMAT_PCM_24), Int32(SF_FORMAT_ALAC_24): "s24"
        case Int32(SF_FORMAT_PCM_32), Int32(SF_FORMAT_ALAC_32): "s32"
        case Int32(SF_FORMAT_FLOAT): "f32"
        case Int32(SF_FORMAT_DOUBLE): "f64"
        default: nil
        }
        if major(format) == Int32(SF_FORMAT_FLAC) { return "FLAC" + (width.map { " " + $0 } ?? "") }
        switch sub {
        case Int32(SF_FORMAT_ALAC_16), Int32(SF_FORMAT_ALAC_20), Int32(SF_FORMAT_ALAC_24), Int32(SF_FORMAT_ALAC_32):
            return "ALAC " + (width ?? "")
        case Int32(SF_FORMAT_ULAW): return "µ-law"
        case Int32(SF_FORMAT_ALAW): return "A-law"
        case Int32(SF_FORMAT_IMA_ADPCM): return "IMA ADPCM"
        case Int32(SF_FORMAT_MS_ADPCM): return "MS ADPCM"
        case Int32(SF_FORMAT_GSM610): return "GSM 6.10"
        case Int32(SF_FORMAT_VORBIS): return "Vorbis"
        case Int32(SF_FORMAT_OPUS): return "Opus"
        case Int32(SF_FORMAT_MPEG_LAYER_I): return "MP1"
        case Int32(SF_FORMAT_MPEG_LAYER_II): return "MP2"
        case Int32(SF_FORMAT_MPEG_LAYER_III): return "MP3"
        default:
            if let width { return "PCM " + width }
            return FileSampleFormat(libsndfileSubtype: sub)?.description ?? formatName(sub)
        }
    }

    /// Whether a format word's encoding is lossy (everything but PCM, floats, FLAC and ALAC; the
    /// companding laws count as lossy).
    static func isLossy(format: Int32) -> Bool {
        if major(format) == Int32(SF_FORMAT_FLAC) { return false }
        switch subtype(format) {
        case Int32(SF_FORMAT_PCM_U8), Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_16), Int32(SF_FORMAT_PCM_24),
             Int32(SF_FORMAT_PCM_32), Int32(SF_FORMAT_FLOAT), Int32(SF_FORMAT_DOUBLE),
             Int32(SF_FORMAT_ALAC_16), Int32(SF_FORMAT_ALAC_20), Int32(SF_FORMAT_ALAC_24), Int32(SF_FORMAT_ALAC_32):
            return false
        default:
            return true
        }
    }

    /// Whether a subtype is a lossy codec whose frame count libsndfile may only estimate.
    static func hasEstimatedLength(format: Int32) -> Bool {
        major(format) == Int32(SF_FORMAT_MPEG)
    }

    /// A file open for reading: libsndfile's handle, and the descriptor Lockstep opened and
    /// checked. libsndfile reads through a descriptor of its own (closed by `sf_close`); the
    /// caller closes ``descriptor`` once it no longer needs it (the reader does at the end of
    /// opening, so an open file costs one descriptor).
    struct OpenedFile {
        var handle: OpaquePointer
        var info: SF_INFO
        /// -1 for standard input read as a stream.
        var descriptor: Int32
        /// -1 for standard input read as a stream (its size is unknown until its end).
        var size: Int64
        /// For standard input read as a stream: the position libsndfile reads it at. Keep it as
        /// long as ``handle`` is open.
        var cursor: StandardInput.Cursor? = nil
    }

    /// Opens standard input, a pipe or a socket, as a stream through libsndfile's virtual I/O
    /// (see ``StandardInput``).
    /// - Throws: ``FileError`` with path `-`: ``FileError/Kind/emptyFile`` when nothing arrived,
    ///   ``FileError/Kind/unsupportedFormat`` when libsndfile cannot read the stream without
    ///   seeking in it (or it is not audio), naming what to pipe instead.
    static func openStandardInputStream() throws(FileError) -> OpenedFile {
        let path = StandardStreams.path
        let cursor = StandardInput.Cursor(stream: .shared)
        var callbacks = StandardInput.callbacks
        var info = SF_INFO()
        let context = Unmanaged.passUnretained(cursor).toOpaque()
        let (handle, error) = guardedOpen(path: path, forWriting: false) { sf_open_virtual(&callbacks, Int32(SFM_READ), &info, context) }
        if let handle { return OpenedFile(handle: handle, info: info, descriptor: -1, size: -1, cursor: cursor) }
        let stream = StandardInput.shared
        if let code = stream.failure {
            throw FileError(.ioError, path: path,
                problem: "reading standard input failed (\(FileSystem.errorText(code))); check the program writing into the pipe")
        }
        if stream.hasEnded && stream.bytesRead == 0 {
            throw FileError(.emptyFile, path: path,
                problem: "nothing arrived on standard input (0 bytes); pipe audio into it, e.g. sox in.flac -t wav - | lockstep info -")
        }
        // libsndfile's reason, without the advice for files (which follows the first "; ").
        let reason = error.map { error in
            let text = error.message.hasPrefix(path + ": ") ? String(error.message.dropFirst(path.count + 2)) : error.message
            return text.components(separatedBy: "; ").first ?? text
        } ?? "libsndfile cannot open it"
        throw FileError(.unsupportedFormat, path: path,
            problem: "standard input (a pipe) cannot be read as a stream: \(reason). A format libsndfile must measure or seek in (HTK, whose length comes from the file's size; a CAF whose length is left open) cannot come through a pipe: write WAV, AU, FLAC or Ogg to the pipe (sox … -t wav -), or give a file name instead of -",
            libsndfileCode: error?.libsndfileCode)
    }

    /// Opens `path` for reading without ever blocking.
    ///
    /// ``FileSystem/openRegularFileForReading(_:)`` opens and checks the file (only a non-empty
    /// regular file passes); libsndfile then opens that same open file as `/proc/self/fd/N`, so a
    /// FIFO swapped in under the path afterwards cannot reach it. Neither `sf_open(path)` nor
    /// `sf_open_fd` would do: the first opens the path again (racing the check), and with the
    /// second libsndfile, having no file name, probes `._` and `.AppleDouble/` in the current
    /// folder for a Mac resource fork when it does not recognise a header at once (every MP3
    /// without a tag) — a FIFO of that name blocks it, a `.AppleDouble` folder makes it fail —
    /// and libsndfile 1.2.0 closes the descriptor it was given when opening fails. Under
    /// `/proc/self/fd/` those probes find nothing.
    ///
    /// `-` on a pipe or a socket is read as a stream instead (``openStandardInputStream()``).
    ///
    /// libsndfile recognises a few formats by their file name's extension alone (headerless `.au`,
    /// `.snd`, `.vox`, `.gsm`, and `.mp3` that starts with neither a tag nor a frame header): for
    /// those the same open file is offered again under its extension, through a symbolic link to
    /// `/proc/self/fd/N` in a private temporary folder. Without `/proc`, libsndfile gets a
    /// duplicate of the descriptor (`sf_open_fd`).
    /// - Throws: ``FileError`` as ``FileSystem/openRegularFileForReading(_:)`` and
    ///   ``openError(path:forWriting:)`` describe.
    static func openForReading(path: String) throws(FileError) -> OpenedFile {
        if StandardStreams.names(path) && StandardStreams.inputIsStream { return try openStandardInputStream() }
        let (descriptor, size) = try FileSystem.openRegularFileForReading(path)
        let procPath = "/proc/self/fd/\(descriptor)"
        var info = SF_INFO()
        var (handle, error) = guardedOpen(path: path, forWriting: false) { sf_open(procPath, Int32(SFM_READ), &info) }
        if handle == nil, error?.libsndfileCode == Int32(SF_ERR_SYSTEM), !FileSystem.isAccessible(procPath, R_OK) {
            // No /proc: libsndfile reads a duplicate descriptor of its own (closed on failure too).
            let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
            if duplicate >= 0 {
                info = SF_INFO()
                (handle, error) = guardedOpen(path: path, forWriting: false) { sf_open_fd(duplicate, Int32(SFM_READ), &info, 1) }
            }
        }
        if handle == nil, error?.libsndfileCode == Int32(SF_ERR_UNRECOGNISED_FORMAT) {
            info = SF_INFO()
            let (byExtension, _) = guardedOpen(path: path, forWriting: false) { openByExtension(descriptor: descriptor, path: path, info: &info) }
            handle = byExtension
        }
        guard let handle else {
            FileSystem.closeDescriptor(descriptor)
            throw error ?? FileError(.unsupportedFormat, path: path, problem: "libsndfile cannot open it; convert it to WAV or FLAC")
        }
        return OpenedFile(handle: handle, info: info, descriptor: descriptor, size: size)
    }

    /// The extensions libsndfile recognises a file by when its content does not say what it is.
    static let extensionOnlyFormats: Set<String> = ["au", "snd", "vox", "vox6", "vox8", "gsm", "mp3"]

    /// Opens the file on `descriptor` by its name's extension (see ``openForReading(path:)``), or
    /// nil when the extension is not one libsndfile uses or the open fails.
    private static func openByExtension(descriptor: Int32, path: String, info: inout SF_INFO) -> OpaquePointer? {
        let ext = FileSystem.pathExtension(of: path).lowercased()
        guard extensionOnlyFormats.contains(ext) else { return nil }
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/lockstep-open-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { return nil }
        let folder = String(cString: made)
        let link = folder + "/audio." + ext
        defer {
            unlink(link)
            rmdir(folder)
        }
        guard symlink("/proc/self/fd/\(descriptor)", link) == 0 else { return nil }
        return sf_open(link, Int32(SFM_READ), &info)
    }

    /// Held around every `sf_open*` and the reading of its error: libsndfile keeps the error of a
    /// failed open in one process-wide variable (`sf_error(NULL)`), which an open on another
    /// thread overwrites (seen: a text file reported as damaged, error 0, while other files opened).
    private static let openLock = Mutex(())

    /// Runs `open` (an `sf_open*` call) under ``openLock``; on failure, the error it left,
    /// classified (``openError(path:forWriting:)``).
    static func guardedOpen(path: String, forWriting: Bool,
                            _ open: () -> OpaquePointer?) -> (handle: OpaquePointer?, error: FileError?) {
        let result = openLock.withLock { _ -> (SendablePointer?, FileError?) in
            let handle = open()
            return (handle.map { SendablePointer($0) }, handle == nil ? openError(path: path, forWriting: forWriting) : nil)
        }
        return (result.0?.pointer, result.1)
    }

    /// The error for a failed `sf_open`, classified by `sf_error(NULL)`. Call it under
    /// ``openLock`` right after the open (``guardedOpen(path:forWriting:_:)``).
    private static func openError(path: String, forWriting: Bool) -> FileError {
        let code = sf_error(nil)
        let text = errorText(nil)
        if forWriting {
            return FileError(.ioError, path: path,
                problem: "cannot create the audio file (\(text)); check the folder's free space and permissions", libsndfileCode: code)
        }
        switch code {
        case Int32(SF_ERR_UNRECOGNISED_FORMAT):
            return FileError(.unsupportedFormat, path: path,
                problem: "not an audio file libsndfile can read (\(text)); convert it to WAV or FLAC", libsndfileCode: code)
        case Int32(SF_ERR_UNSUPPORTED_ENCODING):
            return FileError(.unsupportedFormat, path: path,
                problem: "uses an audio encoding libsndfile cannot decode (\(text)); convert it to WAV or FLAC", libsndfileCode: code)
        case Int32(SF_ERR_SYSTEM):
            return FileError(.ioError, path: path,
                problem: "cannot read the file (\(text)); check that the disk is readable and the file is not locked", libsndfileCode: code)
        default:
            return FileError(.corrupt, path: path,
                problem: "damaged or incomplete audio file (\(text)); re-export or re-copy it from the original", libsndfileCode: code)
        }
    }
}

/// A C pointer carried out of a lock's closure (the closure's result must be `Sendable`).
struct SendablePointer: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}
