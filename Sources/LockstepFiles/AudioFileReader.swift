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

/// Reads an audio file of any type libsndfile decodes (WAV, AIFF, FLAC, Ogg Vorbis, Opus, MP3,
/// CAF, W64, RF64, …) as interleaved 32-bit float.
///
/// Integer files are scaled to −1…1 (a 16-bit sample `s` reads as `s / 32768`); float files are
/// returned unchanged, including values outside −1…1.
///
/// **Truncated files.** libsndfile opens a WAV, AIFF, W64 or RF64 file whose audio stops before
/// the header says it should and reports only the frames actually present. The reader compares
/// that with the header's claim when it opens the file; for compressed formats (FLAC, MP3, Opus,
/// …) it notices when decoding stops before ``frameCount``. Either way ``isTruncated`` becomes
/// `true` and ``truncationError`` describes the problem. With ``TruncationPolicy/reject`` the
/// reader throws instead: from the initializer when the header gives it away, otherwise from
/// ``read(into:frames:)`` once the audio that is present has been delivered. Call
/// ``scanPeak()`` up front to find truncation in compressed files before playing them.
///
/// **Threads.** A reader is not thread-safe: use it from one thread at a time. It may be created
/// on one thread and handed to another (hence `@unchecked Sendable`).
public final class AudioFileReader: @unchecked Sendable {
    /// What the reader does when a file holds less audio than it declares.
    public enum TruncationPolicy: Sendable, Hashable {
        /// Read what is there and record the problem in ``AudioFileReader/isTruncated`` and
        /// ``AudioFileReader/truncationError``.
        case tolerate
        /// Throw a ``FileError`` of kind ``FileError/Kind/truncated``.
        case reject
    }

    /// The path the reader was opened with.
    public let path: String
    /// Sample rate, channel count and the Lockstep sample format nearest to the file's encoding
    /// (its bit depth for PCM and lossless codecs, 32-bit float for lossy codecs).
    ///
    /// ``read(into:frames:)`` always delivers 32-bit float whatever `sampleFormat` says.
    public let format: StreamFormat
    /// The number of frames in the file: the frames actually present for uncompressed files, the
    /// length stored in the stream for compressed ones — for MP3, whose stored length is only an
    /// estimate (a Xing/LAME header if the encoder wrote one, else the first frame's bitrate times
    /// the file's size), the frames counted by decoding the whole file once when it is opened.
    public private(set) var frameCount: Int64
    /// The length libsndfile estimated for a format whose length is not stored exactly (MP3),
    /// when it differs from the decoded ``frameCount``; nil otherwise.
    public private(set) var estimatedFrameCount: Int64?
    /// The known container type, or `nil` for other formats libsndfile reads (AU, raw, …).
    public let fileType: AudioFileType?
    /// The raw libsndfile format word (`SF_INFO.format`: major type | subtype | endianness).
    public let libsndfileFormat: Int32
    /// libsndfile's name for the container, such as `WAV (Microsoft)` or `FLAC (Free Lossless Audio Codec)`.
    public let containerName: String
    /// libsndfile's name for the sample encoding, such as `Signed 24 bit PCM` or `Vorbis`.
    public let encodingName: String
    /// The policy chosen when the reader was opened.
    public let truncationPolicy: TruncationPolicy
    /// The frame count the file's header declares when it is larger than what the file holds,
    /// `nil` when the header agrees with the data or declares nothing usable.
    public private(set) var declaredFrameCount: Int64?
    /// Why the file is considered truncated, or `nil` while no truncation has been found.
    public private(set) var truncationError: FileError?
    /// The frame the next ``read(into:frames:)`` starts at.
    public private(set) var position: Int64 = 0

    private var handle: OpaquePointer?

    /// Opens an audio file for reading.
    ///
    /// - Parameters:
    ///   - path: the file to open.
    ///   - truncation: whether a file that holds less audio than it declares is tolerated
    ///     (the default) or rejected.
    /// - Throws: ``FileError`` when the file is missing (``FileError/Kind/notFound``), unreadable
    ///   for this user (``FileError/Kind/permissionDenied``), a directory
    ///   (``FileError/Kind/notAFile``), zero bytes long (``FileError/Kind/emptyFile``), not audio
    ///   libsndfile can decode (``FileError/Kind/unsupportedFormat``), damaged
    ///   (``FileError/Kind/corrupt``), visibly truncated under ``TruncationPolicy/reject``
    ///   (``FileError/Kind/truncated``), or cannot be read (``FileError/Kind/ioError``).
    public init(path: String, truncation: TruncationPolicy = .tolerate) throws(FileError) {
        self.path = path
        self.truncationPolicy = truncation
        try Self.checkReadable(path)

        var info = SF_INFO()
        guard let handle = sf_open(path, Int32(SFM_READ), &info) else {
            throw Sndfile.openError(path: path, forWriting: false)
        }
        self.handle = handle
        guard info.channels >= 1, info.samplerate >= 1 else {
            sf_close(handle)
            self.handle = nil
            throw FileError(.corrupt, path: path,
                problem: "the header declares \(info.channels) channels at \(info.samplerate) Hz; re-export the file")
        }

        let subtype = Sndfile.subtype(info.format)
        libsndfileFormat = info.format
        fileType = AudioFileType(libsndfileFormat: info.format)
        containerName = Sndfile.formatName(Sndfile.major(info.format))
        encodingName = Sndfile.formatName(subtype)
        format = StreamFormat(sampleRate: Double(info.samplerate), channelCount: Int(info.channels),
                              sampleFormat: Sndfile.nearestSampleFormat(subtype: subtype))
        frameCount = info.frames

        if Sndfile.major(info.format) == Int32(SF_FORMAT_MPEG) {
            // MP3 stores no exact length: play and render what is really there, to its end. An
            // estimate off by encoder padding is normal; a clear shortfall (more than 5 % or 1 s)
            // means the file was cut short. The count is kept per file version, so opening the
            // same file again (a session cue opened on the callback thread) decodes nothing.
            let key = Self.fileVersion(path)
            let counted: Int64
            if let key, let known = Self.decodedLengths.withLock({ $0[key] }) {
                counted = known
            } else {
                counted = try countFramesByDecoding()
                if let key { Self.decodedLengths.withLock { $0[key] = counted } }
            }
            if counted != info.frames { estimatedFrameCount = info.frames }
            frameCount = counted
            let tolerance = max(info.frames / 20, Int64(info.samplerate))
            if info.frames - counted > tolerance {
                declaredFrameCount = info.frames
                truncationError = FileError(.truncated, path: path,
                    problem: "the audio stops at frame \(counted) of \(info.frames) (the file was cut short); re-export or re-copy it")
            }
        } else if info.frames == Int64.max || info.frames < 0 {
            // libsndfile could not find the end of the stream (an Ogg file cut short, typically):
            // decode it once to learn its real length.
            let counted = try countFramesByDecoding()
            frameCount = counted
            truncationError = FileError(.truncated, path: path,
                problem: "the end of the audio stream is missing or damaged (\(counted) frames could be decoded); re-export or re-copy the file")
        } else if let declared = Self.declaredFrameCount(log: Sndfile.log(handle), format: info.format,
                                                         channels: Int(info.channels), frames: info.frames) {
            declaredFrameCount = declared
            truncationError = FileError(.truncated, path: path,
                problem: "the file is truncated: its header declares \(declared) frames but only \(info.frames) are present; re-export or re-copy it from the original")
        }
        if truncation == .reject, let error = truncationError {
            sf_close(handle)
            self.handle = nil
            throw error
        }
    }

    deinit {
        if let handle { sf_close(handle) }
    }

    /// A file's identity and version (device, inode, size, modification time).
    struct FileVersion: Hashable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int
        var modifiedNanoseconds: Int
    }

    /// Decoded lengths of files whose stored length is an estimate (MP3), by file version.
    private static let decodedLengths = Mutex<[FileVersion: Int64]>([:])

    /// The version of the file at `path`, or nil when it cannot be read.
    static func fileVersion(_ path: String) -> FileVersion? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileVersion(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                           modified: Int(info.st_mtim.tv_sec), modifiedNanoseconds: Int(info.st_mtim.tv_nsec))
    }

    /// Whether the file holds less audio than it declares (see ``truncationError``).
    public var isTruncated: Bool { truncationError != nil }

    /// The length in seconds, ``frameCount`` divided by the sample rate.
    public var duration: Double { Double(frameCount) / format.sampleRate }

    /// Container and encoding together, such as `WAV (Microsoft), Signed 16 bit PCM`.
    public var formatDescription: String { "\(containerName), \(encodingName)" }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { handle == nil }

    /// Reads up to `frames` interleaved float frames into `buffer`.
    ///
    /// `buffer` must have room for `frames × format.channelCount` samples.
    /// - Returns: the number of frames read; fewer than `frames` only at the end of the audio,
    ///   0 once it is exhausted.
    /// - Throws: ``FileError`` of kind ``FileError/Kind/truncated`` under
    ///   ``TruncationPolicy/reject`` when the audio stops before ``frameCount`` (after the frames
    ///   that are present have been returned), or ``FileError/Kind/ioError`` when the reader is
    ///   closed.
    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(FileError) -> Int {
        try read(frames: frames) { sf_readf_float($0, buffer, $1) }
    }

    /// Reads up to `frames` interleaved frames as 32-bit integers, full scale ±2³¹ (libsndfile's
    /// `sf_readf_int`): exact for 16-, 24- and 32-bit integer files (a 16-bit sample `x` reads as
    /// `x << 16`). Otherwise like ``read(into:frames:)``.
    public func read(int32Samples buffer: UnsafeMutablePointer<Int32>, frames: Int) throws(FileError) -> Int {
        try read(frames: frames) { sf_readf_int($0, buffer, $1) }
    }

    /// Reads up to `frames` interleaved frames as 64-bit floats (libsndfile's `sf_readf_double`):
    /// exact for 64-bit float files. Otherwise like ``read(into:frames:)``.
    public func read(doubleSamples buffer: UnsafeMutablePointer<Double>, frames: Int) throws(FileError) -> Int {
        try read(frames: frames) { sf_readf_double($0, buffer, $1) }
    }

    private func read(frames: Int, _ body: (OpaquePointer, Int64) -> Int64) throws(FileError) -> Int {
        guard let handle else { throw closedError() }
        guard frames > 0 else { return 0 }
        let got = body(handle, Int64(frames))
        let count = max(0, got)
        position += count
        if count < Int64(frames) {
            noteEndOfData(handle)
            if count == 0, truncationPolicy == .reject, let truncationError {
                throw truncationError
            }
        }
        return Int(count)
    }

    /// Moves the read position to `frame` (0…``frameCount``).
    ///
    /// - Throws: ``FileError`` of kind ``FileError/Kind/ioError`` when the frame is out of range,
    ///   the file cannot seek, or the reader is closed.
    public func seek(toFrame frame: Int64) throws(FileError) {
        guard let handle else { throw closedError() }
        guard frame >= 0, frame <= frameCount else {
            throw FileError(.ioError, path: path,
                problem: "cannot seek to frame \(frame); the file has \(frameCount) frames")
        }
        var result = sf_seek(handle, frame, SEEK_SET)
        if result < 0 {
            // A decoder that hit damaged data (a truncated FLAC, say) may refuse to seek at all;
            // a fresh handle can still seek within the intact part.
            let reason = Sndfile.errorText(handle)
            var info = SF_INFO()
            if let fresh = sf_open(path, Int32(SFM_READ), &info) {
                if info.format == libsndfileFormat, info.channels == Int32(format.channelCount) {
                    sf_close(handle)
                    self.handle = fresh
                    result = sf_seek(fresh, frame, SEEK_SET)
                } else {
                    sf_close(fresh)
                }
            }
            guard result >= 0 else {
                throw FileError(.ioError, path: path,
                    problem: "cannot seek to frame \(frame) (\(reason)); convert the file to WAV or FLAC")
            }
        }
        position = result
    }

    /// Reads the whole file in bounded memory and returns its absolute peak sample and the
    /// number of frames actually decoded.
    ///
    /// The read position is restored afterwards. Decoding the whole file also discovers
    /// truncation in compressed files (see ``isTruncated``).
    /// - Throws: ``FileError`` when reading or seeking fails, or of kind
    ///   ``FileError/Kind/truncated`` when the file is truncated and the policy is
    ///   ``TruncationPolicy/reject``.
    public func scanPeak() throws(FileError) -> (peak: Float, frames: Int64) {
        let saved = position
        if position != 0 { try seek(toFrame: 0) }
        let chunk = 4096
        let samples = chunk * format.channelCount
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: samples)
        defer { buffer.deallocate() }
        var peak: Float = 0
        var total: Int64 = 0
        while true {
            let got = try read(into: buffer, frames: chunk)
            if got == 0 { break }
            total += Int64(got)
            for index in 0..<(got * format.channelCount) {
                let magnitude = abs(buffer[index])
                if magnitude > peak { peak = magnitude }
            }
        }
        if saved != position, saved <= frameCount { try seek(toFrame: saved) }
        return (peak, total)
    }

    /// Opens `path`, scans it with ``scanPeak()`` and closes it.
    ///
    /// - Throws: ``FileError`` as ``init(path:truncation:)`` and ``scanPeak()`` do.
    public static func scanPeak(path: String, truncation: TruncationPolicy = .tolerate) throws(FileError)
        -> (peak: Float, frames: Int64)
    {
        let reader = try AudioFileReader(path: path, truncation: truncation)
        defer { reader.close() }
        return try reader.scanPeak()
    }

    /// Closes the file; later reads throw. Calling it again does nothing.
    public func close() {
        if let handle { sf_close(handle) }
        handle = nil
    }

    // MARK: - Internals

    private func closedError() -> FileError {
        FileError(.ioError, path: path, problem: "the reader has been closed; open the file again")
    }

    /// Called when a read returns fewer frames than requested: the end of the decodable audio.
    private func noteEndOfData(_ handle: OpaquePointer) {
        let decoderFailed = sf_error(handle) != 0
        let missing = frameCount - position
        guard truncationError == nil, missing > 0 else { return }
        // MP3 lengths can be estimates; only a clear shortfall counts there.
        if Sndfile.hasEstimatedLength(format: libsndfileFormat), !decoderFailed {
            let tolerance = max(frameCount / 20, Int64(format.sampleRate))
            guard missing > tolerance else { return }
        }
        declaredFrameCount = frameCount
        let reason = decoderFailed ? " (\(Sndfile.errorText(handle)))" : ""
        truncationError = FileError(.truncated, path: path,
            problem: "the audio stops at frame \(position) of \(frameCount)\(reason); the file is truncated or damaged, re-export or re-copy it from the original",
            libsndfileCode: decoderFailed ? sf_error(handle) : nil)
    }

    /// Decodes the whole stream to count its frames, then rewinds (used when libsndfile
    /// reports an unknown length).
    private func countFramesByDecoding() throws(FileError) -> Int64 {
        guard let handle else { throw closedError() }
        let chunk = 4096
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunk * format.channelCount)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while true {
            let got = sf_readf_float(handle, buffer, Int64(chunk))
            if got <= 0 { break }
            total += got
        }
        guard sf_seek(handle, 0, SEEK_SET) == 0 else {
            let reason = Sndfile.errorText(handle)
            let code = sf_error(handle)
            sf_close(handle)
            self.handle = nil
            throw FileError(.corrupt, path: path,
                problem: "the stream's length is unknown and it cannot be rewound (\(reason)); re-export the file", libsndfileCode: code)
        }
        return total
    }

    /// Checks the path before libsndfile sees it, for precise messages.
    private static func checkReadable(_ path: String) throws(FileError) {
        switch FileSystem.status(path) {
        case .missing:
            throw FileError(.notFound, path: path,
                problem: "no such file; check the path and the file name's spelling")
        case .directory:
            throw FileError(.notAFile, path: path,
                problem: "is a directory, not an audio file; give the path of a file inside it")
        case .failed(let code):
            if code == EACCES {
                throw FileError(.permissionDenied, path: path,
                    problem: "permission denied while looking up the file; check the permissions of the folders on its path")
            }
            throw FileError(.ioError, path: path,
                problem: "cannot look up the file (\(FileSystem.errorText(code))); check the path")
        case .regularFile(let size):
            guard FileSystem.isAccessible(path, R_OK) else {
                throw FileError(.permissionDenied, path: path,
                    problem: "permission denied; make the file readable (chmod +r) or run as its owner")
            }
            guard size > 0 else {
                throw FileError(.emptyFile, path: path,
                    problem: "the file is empty (0 bytes), so it was never written completely; re-export or re-copy it")
            }
        case .other:
            guard FileSystem.isAccessible(path, R_OK) else {
                throw FileError(.permissionDenied, path: path,
                    problem: "permission denied; make it readable or run as its owner")
            }
        }
    }

    /// The frame count the header declares, when libsndfile's parse log shows it exceeds the
    /// `frames` actually present; `nil` otherwise.
    ///
    /// libsndfile trims the frame count of a truncated WAV, AIFF, W64 or RF64 file to the data
    /// present and records the header's figure in its log: `data : 384000 (should be 191978)`
    /// (WAV), `Frame count read from 'COMM' chunk (48000) not equal to …` (AIFF),
    /// `… does not match value from 'ds64' chunk of 48000.` (RF64), or `data : 288024` whose
    /// size includes the 24-byte chunk header and padding to a multiple of 8 bytes (W64).
    static func declaredFrameCount(log: String, format: Int32, channels: Int, frames: Int64) -> Int64? {
        let major = Sndfile.major(format)
        let bytesPerFrame = Sndfile.uncompressedBytesPerSample(subtype: Sndfile.subtype(format))
            .map { Int64($0 * channels) }
        var declared: Int64?
        for rawLine in log.split(separator: "\n") {
            let line = rawLine.drop { $0 == " " || $0 == "\t" }
            switch major {
            case Int32(SF_FORMAT_WAV), Int32(SF_FORMAT_WAVEX):
                // "data : 384000 (should be 191978)"; 0 and 0xFFFFFFFF are streaming placeholders.
                guard line.hasPrefix("data :"), line.contains("(should be"),
                      let bytes = firstInteger(in: line.dropFirst(6)), let bytesPerFrame,
                      bytes != 0, bytes < 0xFFFF_FFFF else { continue }
                declared = bytes / bytesPerFrame
            case Int32(SF_FORMAT_W64):
                // The size includes the 24-byte chunk header and padding to 8 bytes.
                guard line.hasPrefix("data :"), let bytes = firstInteger(in: line.dropFirst(6)),
                      let bytesPerFrame, bytes > 24 else { continue }
                let payload = bytes - 24
                declared = payload - frames * bytesPerFrame < 8 ? frames : payload / bytesPerFrame
            case Int32(SF_FORMAT_AIFF):
                guard line.contains("Frame count read from 'COMM' chunk (") else { continue }
                declared = firstInteger(in: line)
            case Int32(SF_FORMAT_RF64):
                guard let range = line.firstRange(of: "value from 'ds64' chunk of") else { continue }
                declared = firstInteger(in: line[range.upperBound...])
            default:
                return nil
            }
            if declared != nil { break }
        }
        guard let declared, declared > frames else { return nil }
        return declared
    }

    /// The first run of decimal digits in `text`, if any.
    private static func firstInteger(in text: Substring) -> Int64? {
        guard let start = text.firstIndex(where: \.isASCIIDigit) else { return nil }
        let digits = text[start...].prefix(while: \.isASCIIDigit)
        return Int64(digits)
    }
}

extension Character {
    /// Whether the character is one of `0`…`9`.
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
