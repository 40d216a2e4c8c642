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
/// **Only regular files.** A FIFO, a device (`/dev/zero`, a terminal), a socket or a directory
/// is refused with a ``FileError`` of kind ``FileError/Kind/notAFile`` before anything reads from
/// it, so a path that would never deliver an end of file cannot hang the caller (see
/// ``init(path:truncation:warnings:)``).
///
/// **Truncated files.** libsndfile opens a WAV, AIFF, CAF, W64 or RF64 file whose audio stops
/// before the header says it should and reports only the whole frames actually present. The
/// reader compares what is there with the header's claim when it opens the file, the same way for
/// all five containers:
/// - data that ends inside its last frame (a partial frame at the end, by a cut of fewer bytes
///   than a frame or a header that declares it) is not truncation: the whole frames play, the
///   partial frame's bytes are ignored (``partialFrameByteCount``) and a ``FileWarning`` of kind
///   ``FileWarning/Kind/partialFrame`` is recorded;
/// - data missing at least one whole declared frame is truncation.
///
/// For compressed formats (FLAC, MP3, Opus, …) the reader notices when decoding stops before
/// ``frameCount``. Either way ``isTruncated`` becomes `true` and ``truncationError`` describes
/// the problem. With ``TruncationPolicy/reject`` the reader throws instead: from the initializer
/// when the header gives it away, otherwise from ``read(into:frames:)`` once the audio that is
/// present has been delivered; with ``TruncationPolicy/tolerate`` it records a
/// ``FileWarning/Kind/truncated`` warning. Call ``scanPeak()`` up front to find truncation in
/// compressed files before playing them.
///
/// **Non-finite samples.** A float file can hold NaN or ±infinity, which would poison a mix and
/// every level computed from it. The float and double reads replace them by 0 (silence) as they
/// decode and count them in ``nonFiniteSampleCount`` (each sample of the file once, however often
/// it is read), recording a ``FileWarning/Kind/nonFiniteSamples`` warning. Only formats that
/// decode to floating point are scanned (integer PCM, FLAC and ALAC cannot hold such values);
/// the scan is a tight loop over the samples just read, and a second one replaces only when the
/// first found something. ``read(int32Samples:frames:)`` is not scanned: use it for integer files.
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

    /// The codec or sample encoding, short: `PCM s16`, `PCM f32`, `µ-law`, `A-law`, `IMA ADPCM`,
    /// `FLAC s24`, `ALAC s16`, `Vorbis`, `Opus`, `MP3`, …; libsndfile's own name for others.
    public var codecName: String { Sndfile.codecName(format: libsndfileFormat) }

    /// Whether the encoding is lossy (Vorbis, Opus, MP3, ADPCM, GSM, …).
    public var isLossy: Bool { Sndfile.isLossy(format: libsndfileFormat) }

    /// Bits per second: exact for uncompressed encodings (rate × channels × bits); for
    /// compressed ones the average over the file (its size in bytes × 8 ÷ its duration, headers
    /// and tags included). Nil for an empty file.
    public var bitrate: Int? {
        if let bytes = Sndfile.uncompressedBytesPerSample(subtype: Sndfile.subtype(libsndfileFormat)),
           Sndfile.major(libsndfileFormat) != Int32(SF_FORMAT_FLAC) {
            return Int(format.sampleRate) * format.channelCount * bytes * 8
        }
        if let bits = FileSampleFormat(libsndfileSubtype: Sndfile.subtype(libsndfileFormat))?.codecBitsPerSample {
            return Int((format.sampleRate * Double(format.channelCount) * bits).rounded())
        }
        guard frameCount > 0, lengthIsKnown else { return nil }
        let size = isStream ? StandardInput.shared.bytesRead : fileSize
        let seconds = Double(frameCount) / format.sampleRate
        return Int((Double(size) * 8 / seconds).rounded())
    }

    /// Whether ``bitrate`` is the encoding's exact rate (uncompressed, or a fixed-rate codec:
    /// G.721, G.723, NMS and VOX ADPCM, GSM 6.10) rather than an average computed from the
    /// file's size.
    public var bitrateIsExact: Bool {
        if FileSampleFormat(libsndfileSubtype: Sndfile.subtype(libsndfileFormat))?.codecBitsPerSample != nil { return true }
        return Sndfile.uncompressedBytesPerSample(subtype: Sndfile.subtype(libsndfileFormat)) != nil
            && Sndfile.major(libsndfileFormat) != Int32(SF_FORMAT_FLAC)
    }
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
    /// The file's size in bytes when it was opened.
    public let fileSize: Int64
    /// Whether the file states its length exactly: true for every container that stores it
    /// (WAV, FLAC, Ogg with an intact last page, MP3 whose Xing/LAME header agrees with its
    /// frames, …); false when libsndfile could only estimate it (an MP3 without a Xing/LAME
    /// header, whose length it takes from the first frame's bitrate and the file's size) or
    /// found none (an Ogg file cut short). ``frameCount`` is exact either way: such files are
    /// counted by decoding them once.
    public private(set) var lengthIsExact = true
    /// The bitrate mode an MP3 file declares (libsndfile's `SFC_GET_BITRATE_MODE`), nil for
    /// other files.
    public private(set) var bitrateMode: BitrateMode?
    /// The frame count the file's header declares when it is larger than what the file holds,
    /// `nil` when the header agrees with the data or declares nothing usable.
    public private(set) var declaredFrameCount: Int64?
    /// Why the file is considered truncated, or `nil` while no truncation has been found.
    public private(set) var truncationError: FileError?
    /// The frame the next ``read(into:frames:)`` starts at.
    public private(set) var position: Int64 = 0
    /// The bytes of a partial frame at the end of the audio data that are ignored (the data ends
    /// inside a frame); 0 when the data holds whole frames only.
    public private(set) var partialFrameByteCount = 0
    /// How many NaN or infinite samples the float and double reads have replaced by 0 so far,
    /// each sample of the file counted once however often it is read (see ``scanPeak()`` to
    /// count a whole file).
    public private(set) var nonFiniteSampleCount: Int64 = 0
    /// Where the reader records the problems it works around.
    public let warnings: FileWarnings

    /// Whether the reader reads standard input as a stream (a pipe or a socket, see
    /// ``StandardInput``): it reads once, from the start, as the audio arrives. Its
    /// ``frameCount`` is unknown (`Int64.max`) until the end has been read, then the frames read
    /// (see ``lengthIsKnown``); it cannot seek back past what the stream keeps, so it cannot loop
    /// or start later than its first frame; truncation cannot be told from an end.
    public let isStream: Bool
    /// Whether ``frameCount`` is known: always for files, for a stream once its end has been read.
    public var lengthIsKnown: Bool { !isStream || streamEnded }
    private var streamEnded = false
    /// ``StandardInput/refusedSeeks`` once the stream was open: a seek refused later means
    /// libsndfile needed to go where a stream cannot.
    private var streamSeekBaseline = 0
    /// The stream position libsndfile reads standard input at (kept while ``handle`` is open).
    private var streamCursor: StandardInput.Cursor?

    private var handle: OpaquePointer?
    /// The view libsndfile reads a cut CAF file through, if it does (see ``reopenCutCAF``).
    private var fileView: PatchedFileView?
    /// Whether the decoded samples are floating point and so may be NaN or infinite.
    private let scansForNonFiniteSamples: Bool
    /// The frame ranges whose non-finite samples have been counted (sorted, disjoint).
    private var countedRanges: [Range<Int64>] = []
    /// How ``ReadAhead`` maps this file's frames to bytes (nil for a stream), and the reader's
    /// registration there, made on the first read.
    private var readAheadPlan: (file: ReadAhead.FileIdentity, dataOffset: Int64, bytesPerFrame: Double)?
    private var readAhead: ReadAhead.Reader?
    /// The read-ahead the reader registers with (another than ``ReadAhead/shared`` in tests).
    var readAheadService = ReadAhead.shared

    /// Opens an audio file for reading.
    ///
    /// The path is looked up before it is opened, and opened so that nothing can block: a FIFO,
    /// device, socket or directory is refused (also one swapped in between the look-up and the
    /// open), and libsndfile reads the checked file through its descriptor.
    ///
    /// - Parameters:
    ///   - path: the file to open.
    ///   - truncation: whether a file that holds less audio than it declares is tolerated
    ///     (the default) or rejected.
    ///   - warnings: where the problems worked around are recorded (a partial frame at the end,
    ///     non-finite samples, tolerated truncation); ``FileWarnings/shared`` by default.
    /// - Throws: ``FileError`` when the file is missing (``FileError/Kind/notFound``), unreadable
    ///   for this user (``FileError/Kind/permissionDenied``), a directory, FIFO, device or socket
    ///   (``FileError/Kind/notAFile``), zero bytes long (``FileError/Kind/emptyFile``), not audio
    ///   libsndfile can decode (``FileError/Kind/unsupportedFormat``), damaged
    ///   (``FileError/Kind/corrupt``), visibly truncated under ``TruncationPolicy/reject``
    ///   (``FileError/Kind/truncated``), or cannot be read (``FileError/Kind/ioError``).
    public init(path: String, truncation: TruncationPolicy = .tolerate,
                warnings: FileWarnings = .shared) throws(FileError) {
        self.path = path
        self.truncationPolicy = truncation
        self.warnings = warnings

        let opened = try Sndfile.openForReading(path: path)
        // Only the header walk below reads through the reader's own descriptor; libsndfile has its own.
        defer { FileSystem.closeDescriptor(opened.descriptor) }
        var info = opened.info
        var handle = opened.handle
        self.handle = handle
        streamCursor = opened.cursor
        isStream = opened.cursor != nil
        streamSeekBaseline = StandardInput.shared.refusedSeeks
        guard info.channels >= 1, info.samplerate >= 1 else {
            sf_close(handle)
            self.handle = nil
            throw FileError(.corrupt, path: path,
                problem: "the header declares \(info.channels) channels at \(info.samplerate) Hz; re-export the file")
        }
        let layout: (layout: ContainerLayout, bytesPerFrame: Int64)?
        do throws(FileError) {
            layout = isStream ? nil : try Self.layout(of: opened, path: path)
        } catch {
            sf_close(handle)
            self.handle = nil
            throw error
        }
        if let layout, let repaired = Self.reopenCutCAF(opened, layout: layout.layout, bytesPerFrame: layout.bytesPerFrame) {
            sf_close(handle)
            handle = repaired.handle
            info = repaired.info
            self.handle = handle
            fileView = repaired.view
        }

        let subtype = Sndfile.subtype(info.format)
        fileSize = opened.size
        libsndfileFormat = info.format
        fileType = AudioFileType(libsndfileFormat: info.format)
        containerName = Sndfile.formatName(Sndfile.major(info.format))
        encodingName = Sndfile.formatName(subtype)
        format = StreamFormat(sampleRate: Double(info.samplerate), channelCount: Int(info.channels),
                              sampleFormat: Sndfile.nearestSampleFormat(subtype: subtype))
        scansForNonFiniteSamples = format.sampleFormat.isFloat
        frameCount = info.frames
        let extent = layout.flatMap { $0.layout.extent(fileSize: opened.size, bytesPerFrame: $0.bytesPerFrame, frames: info.frames) }

        if isStream, Sndfile.major(info.format) == Int32(SF_FORMAT_CAF), info.frames <= 0 {
            // sox writes a CAF into a pipe with its data chunk's size "unknown" (-1), which
            // libsndfile 1.2 can only resolve from the file's length.
            sf_close(handle)
            self.handle = nil
            throw FileError(.unsupportedFormat, path: path,
                problem: "standard input (a pipe) holds a CAF whose length is left open, which libsndfile can only read from a file; write WAV, AU, FLAC or Ogg to the pipe (sox … -t wav -), or give a file name instead of -")
        }
        if isStream {
            // A stream is read once, as it arrives: its length is what arrives (counted as it is
            // read), whatever a header says (a WAV piped by sox says 2 GiB).
            frameCount = Int64.max
            if Sndfile.major(info.format) == Int32(SF_FORMAT_MPEG) {
                bitrateMode = BitrateMode(libsndfileValue: sf_command(handle, Int32(SFC_GET_BITRATE_MODE), nil, 0))
            }
        } else if Sndfile.major(info.format) == Int32(SF_FORMAT_MPEG) {
            // MP3 stores no exact length: play and render what is really there, to its end. An
            // estimate off by encoder padding is normal; a clear shortfall (more than 5 % or 1 s)
            // means the file was cut short. The count is kept per file version, so opening the
            // same file again (a session cue opened on the callback thread) decodes nothing.
            let key = Self.fileVersion(descriptor: opened.descriptor)
            let counted: Int64
            if let key, let known = Self.decodedLengths.withLock({ $0[key] }) {
                counted = known
            } else {
                counted = try countFramesByDecoding()
                if let key { Self.decodedLengths.withLock { $0[key] = counted } }
            }
            if counted != info.frames {
                estimatedFrameCount = info.frames
                lengthIsExact = false
            }
            bitrateMode = BitrateMode(libsndfileValue: sf_command(handle, Int32(SFC_GET_BITRATE_MODE), nil, 0))
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
            lengthIsExact = false
            // (A FLAC whose STREAMINFO leaves the length open, as a killed FLAC recording's and
            // a FLAC written to a pipe do, is counted here too: it cannot be told from a cut one.)
            truncationError = FileError(.truncated, path: path,
                problem: "the end of the audio stream is missing or damaged (\(counted) frames could be decoded); re-export or re-copy the file")
        } else if let extent {
            switch extent {
            case .complete:
                break
            case .partialFrame(let bytes):
                partialFrameByteCount = bytes
                warnings.record(.partialFrame(path: path, bytes: bytes, frames: info.frames))
            case .truncated(let declared):
                declaredFrameCount = declared
                truncationError = Self.headerTruncation(path: path, declared: declared, present: info.frames)
            }
        } else if let declared = Self.declaredFrameCount(log: Sndfile.log(handle), format: info.format,
                                                         channels: Int(info.channels), frames: info.frames) {
            declaredFrameCount = declared
            truncationError = Self.headerTruncation(path: path, declared: declared, present: info.frames)
        }
        if let error = truncationError {
            if truncation == .reject {
                sf_close(handle)
                self.handle = nil
                throw error
            }
            warnings.record(.truncated(error, frames: frameCount))
        }
        if !isStream, frameCount > 0, let version = Self.fileVersion(descriptor: opened.descriptor) {
            // PCM in a container the walk knows: exact; anything else: the file's average.
            let dataOffset = layout?.layout.dataOffset ?? 0
            let bytesPerFrame = layout.map { Double($0.bytesPerFrame) } ?? Double(max(0, fileSize - dataOffset)) / Double(frameCount)
            readAheadPlan = (ReadAhead.FileIdentity(device: version.device, inode: version.inode), dataOffset, bytesPerFrame)
        }
    }

    deinit {
        close()
    }

    /// Whether libsndfile's decoder for the format fills a block cut short by the end of the data
    /// with silence and carries on to the declared length (IMA and MS ADPCM, GSM 6.10, G.72x,
    /// NMS, VOX, DWVW), rather than stopping.
    static func padsShortBlocks(_ format: Int32) -> Bool {
        switch Sndfile.subtype(format) {
        case Int32(SF_FORMAT_IMA_ADPCM), Int32(SF_FORMAT_MS_ADPCM), Int32(SF_FORMAT_GSM610), Int32(SF_FORMAT_G721_32),
             Int32(SF_FORMAT_G723_24), Int32(SF_FORMAT_G723_40), Int32(SF_FORMAT_NMS_ADPCM_16), Int32(SF_FORMAT_NMS_ADPCM_24),
             Int32(SF_FORMAT_NMS_ADPCM_32), Int32(SF_FORMAT_VOX_ADPCM), Int32(SF_FORMAT_DWVW_12), Int32(SF_FORMAT_DWVW_16),
             Int32(SF_FORMAT_DWVW_24):
            return true
        default:
            return false
        }
    }

    /// The error for a stream asked to go back to audio it no longer keeps.
    static func streamSeekError(path: String) -> FileError {
        FileError(.invalidArgument, path: path,
            problem: "standard input (a pipe) is read once, as it arrives, and cannot go back (to loop, seek or play a region); save the stream to a file first (sox … out.wav) and give that, or pipe it without looping")
    }

    /// The error for a file whose header declares `declared` frames of which `present` are there.
    private static func headerTruncation(path: String, declared: Int64, present: Int64) -> FileError {
        FileError(.truncated, path: path,
            problem: "the file is truncated: its header declares \(declared) frames but only \(present) are present; re-export or re-copy it from the original")
    }

    /// Where the audio data of an uncompressed WAV, RF64, W64, AIFF or CAF file lies and how
    /// long its header says it is (see ``ContainerLayout``), with its bytes per frame; nil for
    /// other files or a header the walk cannot follow.
    /// - Throws: ``FileError/Kind/corrupt`` when the file ends before its audio data begins
    ///   (libsndfile opens some such files, taking sizes from beyond their end).
    private static func layout(of file: Sndfile.OpenedFile, path: String) throws(FileError)
        -> (layout: ContainerLayout, bytesPerFrame: Int64)?
    {
        switch Sndfile.major(file.info.format) {
        case Int32(SF_FORMAT_WAV), Int32(SF_FORMAT_WAVEX), Int32(SF_FORMAT_RF64), Int32(SF_FORMAT_W64),
             Int32(SF_FORMAT_AIFF), Int32(SF_FORMAT_CAF):
            break
        default:
            return nil
        }
        guard let bytesPerSample = Sndfile.uncompressedBytesPerSample(subtype: Sndfile.subtype(file.info.format)) else { return nil }
        switch ContainerLayout.read(descriptor: file.descriptor, fileSize: file.size) {
        case .found(let layout):
            return (layout, Int64(bytesPerSample) * Int64(file.info.channels))
        case .unknown:
            return nil
        case .endsInHeader:
            throw FileError(.corrupt, path: path,
                problem: "damaged or incomplete audio file (it ends inside its header, before the audio data); re-export or re-copy it from the original")
        }
    }

    /// Opens a cut CAF file again so that libsndfile keeps every whole frame present.
    ///
    /// libsndfile 1.2 keeps 8 bytes fewer than a CAF file holds once its data chunk declares
    /// more than is there (up to two frames fewer than a WAV cut at the same place would give).
    /// Through a ``PatchedFileView`` whose data chunk size is the bytes present it keeps them
    /// all. Nil when the file is not such a CAF, or the view does not open to the same format
    /// with the frames expected.
    private static func reopenCutCAF(_ file: Sndfile.OpenedFile, layout: ContainerLayout, bytesPerFrame: Int64)
        -> (handle: OpaquePointer, info: SF_INFO, view: PatchedFileView)?
    {
        guard Sndfile.major(file.info.format) == Int32(SF_FORMAT_CAF), let declared = layout.declaredBytes else { return nil }
        let available = file.size - layout.dataOffset
        guard available >= 0, declared > available, file.info.frames < available / bytesPerFrame else { return nil }
        // The data chunk: its type, its 8-byte big-endian size (which counts the 4-byte edit
        // count before the audio), the edit count, then the audio at `dataOffset`.
        let size = UInt64(available + 4)
        let patch = (0..<8).map { UInt8(truncatingIfNeeded: size >> (8 * (7 - UInt64($0)))) }
        guard let view = PatchedFileView(descriptor: file.descriptor, size: file.size,
                                         patchOffset: layout.dataOffset - 12, patch: patch) else { return nil }
        var info = SF_INFO()
        guard let handle = Sndfile.guardedOpen(path: "", forWriting: false, { view.open(&info) }).handle else { return nil }
        guard info.format == file.info.format, info.channels == file.info.channels,
              info.samplerate == file.info.samplerate, info.frames == available / bytesPerFrame else {
            sf_close(handle)
            return nil
        }
        return (handle, info, view)
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

    /// The version of the file open on `descriptor`, or nil when it cannot be read.
    static func fileVersion(descriptor: Int32) -> FileVersion? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return FileVersion(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                           modified: Int(info.st_mtim.tv_sec), modifiedNanoseconds: Int(info.st_mtim.tv_nsec))
    }

    /// Whether the file stores IEEE floating-point samples (32- or 64-bit float PCM), the only
    /// encodings that can hold NaN or infinity as written (a lossy decoder's output is scanned
    /// too, but cannot normally hold them).
    public var storesFloatingPointSamples: Bool {
        let subtype = Sndfile.subtype(libsndfileFormat)
        return subtype == Int32(SF_FORMAT_FLOAT) || subtype == Int32(SF_FORMAT_DOUBLE)
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
    /// - Returns: the number of frames read; fewer than `frames` only at the end of the audio
    ///   (and, for standard input on a pipe in a block codec such as IMA ADPCM, 256 at a time),
    ///   0 once it is exhausted.
    /// - Throws: ``FileError`` of kind ``FileError/Kind/truncated`` under
    ///   ``TruncationPolicy/reject`` when the audio stops before ``frameCount`` (after the frames
    ///   that are present have been returned), or ``FileError/Kind/ioError`` when the reader is
    ///   closed.
    ///
    /// NaN and infinite samples are replaced by 0 and counted (see ``nonFiniteSampleCount``).
    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(FileError) -> Int {
        let start = position
        let got = try read(frames: frames) { sf_readf_float($0, buffer, $1) }
        if scansForNonFiniteSamples && got > 0 {
            replaceNonFinite(from: start, frames: got) { NonFinite.replace(buffer + $0, count: $1) }
        }
        return got
    }

    /// Reads up to `frames` interleaved frames as 32-bit integers, full scale ±2³¹ (libsndfile's
    /// `sf_readf_int`): exact for 16-, 24- and 32-bit integer files (a 16-bit sample `x` reads as
    /// `x << 16`). Otherwise like ``read(into:frames:)``.
    public func read(int32Samples buffer: UnsafeMutablePointer<Int32>, frames: Int) throws(FileError) -> Int {
        try read(frames: frames) { sf_readf_int($0, buffer, $1) }
    }

    /// Reads up to `frames` interleaved frames as 64-bit floats (libsndfile's `sf_readf_double`):
    /// exact for 64-bit float files. Otherwise like ``read(into:frames:)``, NaN and infinite
    /// samples included.
    public func read(doubleSamples buffer: UnsafeMutablePointer<Double>, frames: Int) throws(FileError) -> Int {
        let start = position
        let got = try read(frames: frames) { sf_readf_double($0, buffer, $1) }
        if scansForNonFiniteSamples && got > 0 {
            replaceNonFinite(from: start, frames: got) { NonFinite.replace(buffer + $0, count: $1) }
        }
        return got
    }

    /// Replaces the non-finite samples of `frames` frames just read from frame `start` (through
    /// `replace(sampleOffset, sampleCount)`, which returns how many it replaced) and counts those
    /// in frames not counted before.
    private func replaceNonFinite(from start: Int64, frames: Int, _ replace: (Int, Int) -> Int) {
        let channels = format.channelCount
        let end = start + Int64(frames)
        var found: Int64 = 0
        var cursor = start
        // Frames already counted are cleaned again (they were decoded again) but not recounted.
        for counted in countedRanges where counted.upperBound > cursor && counted.lowerBound < end {
            if counted.lowerBound > cursor {
                found += Int64(replace(Int(cursor - start) * channels, Int(counted.lowerBound - cursor) * channels))
            }
            let upper = min(end, counted.upperBound)
            _ = replace(Int(max(cursor, counted.lowerBound) - start) * channels, Int(upper - max(cursor, counted.lowerBound)) * channels)
            cursor = upper
        }
        if cursor < end {
            found += Int64(replace(Int(cursor - start) * channels, Int(end - cursor) * channels))
        }
        markCounted(start..<end)
        if found > 0 {
            nonFiniteSampleCount += found
            warnings.record(.nonFiniteSamples(path: path, count: nonFiniteSampleCount))
        }
    }

    /// Adds `range` to ``countedRanges``, merging ranges that touch. The list stays short (a
    /// reader plays forward, looping over one region); past 256 ranges new ones are no longer
    /// remembered, so a pathological pattern of seeks can only over-count.
    private func markCounted(_ range: Range<Int64>) {
        var merged = range
        var kept: [Range<Int64>] = []
        kept.reserveCapacity(countedRanges.count + 1)
        for existing in countedRanges {
            if existing.upperBound < merged.lowerBound || existing.lowerBound > merged.upperBound {
                kept.append(existing)
            } else {
                merged = min(existing.lowerBound, merged.lowerBound)..<max(existing.upperBound, merged.upperBound)
            }
        }
        guard kept.count < 256 else { return }
        kept.append(merged)
        kept.sort { $0.lowerBound < $1.lowerBound }
        countedRanges = kept
    }

    private func read(frames requested: Int, _ body: (OpaquePointer, Int64) -> Int64) throws(FileError) -> Int {
        guard let handle else { throw closedError() }
        guard requested > 0 else { return 0 }
        // From a pipe, a block codec is read 256 frames at a time, so the read that meets the
        // stream's end carries little of the silence libsndfile pads it with (see below).
        let frames = isStream && Self.padsShortBlocks(libsndfileFormat) ? min(requested, 256) : requested
        if isStream, streamCursor?.reachedEnd == true, Self.padsShortBlocks(libsndfileFormat) {
            // libsndfile's block codecs fill a block the stream ended in with silence and go on
            // to the length the header claims (sox writes 2 GiB into a pipe: 12 hours of
            // silence): the stream's end is the end. At most the read that met it carries padding.
            if !streamEnded {
                streamEnded = true
                frameCount = position
            }
            return 0
        }
        let got = body(handle, Int64(frames))
        let count = max(0, got)
        position += count
        publishPosition()
        if isStream {
            if count < Int64(frames) && !streamEnded {
                if let code = StandardInput.shared.failure {
                    throw FileError(.ioError, path: path,
                        problem: "reading standard input failed after \(position) frames (\(FileSystem.errorText(code))); check the program writing into the pipe")
                }
                if StandardInput.shared.hasLostBytes {
                    throw Self.streamSeekError(path: path)
                }
                if StandardInput.shared.refusedSeeks > streamSeekBaseline && !StandardInput.shared.hasEnded {
                    // libsndfile stopped because it could not seek (SDS reads packet by packet):
                    // the rest of the stream is there but cannot be read this way.
                    throw FileError(.unsupportedFormat, path: path,
                        problem: "standard input (a pipe) stopped being readable at frame \(position): libsndfile must seek in \(containerName) to read on, which a pipe cannot do past its first 4 MiB; write WAV, AU, FLAC or Ogg to the pipe (sox … -t wav -), or give a file name instead of -")
                }
                streamEnded = true
                frameCount = position
            }
            return Int(count)
        }
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
        if isStream {
            if frame == position { return }
            // Back within the first bytes kept (a stream opened again from its start) works;
            // anything else cannot be read again.
            let result = sf_seek(handle, frame, SEEK_SET)
            guard result == frame else { throw Self.streamSeekError(path: path) }
            position = result
            return
        }
        var result = sf_seek(handle, frame, SEEK_SET)
        if result < 0 {
            // A decoder that hit damaged data (a truncated FLAC, say) may refuse to seek at all;
            // a fresh handle can still seek within the intact part.
            let reason = Sndfile.errorText(handle)
            if fileView == nil, let fresh = try? Sndfile.openForReading(path: path) {
                FileSystem.closeDescriptor(fresh.descriptor)
                if fresh.info.format == libsndfileFormat, fresh.info.channels == Int32(format.channelCount) {
                    sf_close(handle)
                    self.handle = fresh.handle
                    // A fresh handle starts at frame 0: codecs that cannot seek at all (G.72x,
                    // DPCM) can still start again.
                    result = frame == 0 ? 0 : sf_seek(fresh.handle, frame, SEEK_SET)
                } else {
                    sf_close(fresh.handle)
                }
            }
            guard result >= 0 else {
                throw FileError(.ioError, path: path,
                    problem: "cannot seek to frame \(frame) (\(reason)); convert the file to WAV or FLAC")
            }
        }
        position = result
        publishPosition()
    }

    /// Reads the whole file in bounded memory and returns its absolute peak sample and the
    /// number of frames actually decoded.
    ///
    /// The read position is restored afterwards. Decoding the whole file also discovers
    /// truncation in compressed files (see ``isTruncated``) and counts every non-finite sample
    /// (``nonFiniteSampleCount``); those read as 0, so the peak is that of the finite samples and
    /// is never NaN or infinite.
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
        if saved != position, saved <= frameCount, !isStream { try seek(toFrame: saved) }
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
        if let readAhead { readAheadService.unregister(readAhead) }
        readAhead = nil
        readAheadPlan = nil
        if let handle { sf_close(handle) }
        handle = nil
        fileView = nil
        streamCursor = nil
    }

    // MARK: - Internals

    /// Tells ``ReadAhead`` where the reader is; registers there on the first call.
    private func publishPosition() {
        if let readAhead {
            readAhead.position.store(position, ordering: .relaxed)
        } else if let plan = readAheadPlan {
            readAheadPlan = nil
            readAhead = readAheadService.register(path: path, file: plan.file, dataOffset: plan.dataOffset,
                                                  bytesPerFrame: plan.bytesPerFrame, framesPerSecond: format.sampleRate,
                                                  fileSize: fileSize, position: position)
        }
    }

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
        let error = FileError(.truncated, path: path,
            problem: "the audio stops at frame \(position) of \(frameCount)\(reason); the file is truncated or damaged, re-export or re-copy it from the original",
            libsndfileCode: decoderFailed ? sf_error(handle) : nil)
        truncationError = error
        if truncationPolicy == .tolerate { warnings.record(.truncated(error, frames: position)) }
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

    /// The frame count the header declares, when libsndfile's parse log shows it exceeds the
    /// `frames` actually present; `nil` otherwise. Used when ``ContainerLayout`` cannot walk the
    /// header.
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
                // "data : 384000 (should be 191978)"; 0, 0xFFFFFFFF and sox's 0x7FFFF000 are
                // streaming placeholders.
                guard line.hasPrefix("data :"), line.contains("(should be"),
                      let bytes = firstInteger(in: line.dropFirst(6)), let bytesPerFrame,
                      bytes != 0, bytes < 0xFFFF_FFFF, bytes != ContainerLayout.soxUnspecifiedLength else { continue }
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

/// Finding and replacing NaN and infinite samples (internal).
///
/// The counting loops are written so the compiler vectorizes them (checked in the optimised
/// build's assembly: SSE `pand`/`paddd`/`psrld`): a sample is non-finite when its exponent bits
/// are all ones, and adding the exponent's lowest bit then carries into the sign bit, which a
/// shift turns into 0 or 1 — no branch, no comparison per sample. The samples are rewritten only
/// when a block holds any.
enum NonFinite {
    /// Samples counted per block (the 32-bit count of a block cannot overflow).
    static let block = 1 << 16

    /// Replaces every NaN or ±infinity among `count` samples by 0; returns how many there were.
    static func replace(_ samples: UnsafeMutablePointer<Float>, count: Int) -> Int {
        var total = 0
        var start = 0
        while start < count {
            let chunk = UnsafeMutableBufferPointer(start: samples + start, count: min(block, count - start))
            var found: UInt32 = 0
            for value in chunk {
                found &+= ((value.bitPattern & 0x7F80_0000) &+ 0x0080_0000) >> 31
            }
            if found > 0 {
                for index in chunk.indices where !chunk[index].isFinite { chunk[index] = 0 }
                total += Int(found)
            }
            start += chunk.count
        }
        return total
    }

    /// Replaces every NaN or ±infinity among `count` samples by 0; returns how many there were.
    static func replace(_ samples: UnsafeMutablePointer<Double>, count: Int) -> Int {
        var total = 0
        var start = 0
        while start < count {
            let chunk = UnsafeMutableBufferPointer(start: samples + start, count: min(block, count - start))
            var found: UInt64 = 0
            for value in chunk {
                found &+= ((value.bitPattern & 0x7FF0_0000_0000_0000) &+ 0x0010_0000_0000_0000) >> 63
            }
            if found > 0 {
                for index in chunk.indices where !chunk[index].isFinite { chunk[index] = 0 }
                total += Int(found)
            }
            start += chunk.count
        }
        return total
    }
}
