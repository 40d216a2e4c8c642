import CSndfile
import Lockstep

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes interleaved 32-bit float audio to any file type libsndfile 1.2 writes (see
/// ``AudioFileType``): WAV, AIFF, FLAC, CAF, W64, RF64, AU, Ogg Vorbis, Opus or MP3.
///
/// Samples are converted to the file's encoding by libsndfile. Integer encodings clip values
/// outside −1…1 (instead of wrapping around); float encodings store them unchanged; the lossy
/// codecs encode what they are given (values beyond full scale may clip when decoded).
///
/// By default the writer is *atomic*: it writes a hidden temporary file in the destination's
/// folder (see ``AtomicFileOutput``) and ``close()`` renames it into place only after the header
/// is finalized (for a codec: after its last frame or page is flushed). ``abort()``, a failed
/// ``close()``, or deinitializing an open atomic writer deletes the temporary file, so a failed
/// render never leaves a file that looks whole — a half-written MP3 or Ogg file never appears
/// under the destination's name.
///
/// **Threads.** Not thread-safe: use a writer from one thread at a time; it may move between
/// threads.
public final class AudioFileWriter: @unchecked Sendable {
    /// The destination path, as the caller gave it.
    public let path: String
    /// The container written.
    public let type: AudioFileType
    /// Sample rate, channel count and the queue sample format nearest to what the file stores
    /// (32-bit float for the lossy codecs; 16-bit for u8, s8, µ-law and A-law).
    public let format: StreamFormat
    /// The container, sample format and codec settings written.
    public let encoding: AudioFileEncoding
    /// Whether the file is written to a temporary file and renamed into place by ``close()``.
    public let isAtomic: Bool
    /// Frames written so far.
    public private(set) var framesWritten: Int64 = 0

    private var handle: OpaquePointer?
    private let output: AtomicFileOutput?
    /// For standard output on a pipe: the sink libsndfile writes through (see ``PipeSink``).
    private var sink: PipeSink?
    private var phase = Phase.writing

    private enum Phase { case writing, closed, aborted }

    /// Creates the output file and prepares it for writing.
    ///
    /// - Parameters:
    ///   - path: the destination file.
    ///   - type: the container.
    ///   - format: the sample rate (a whole number of Hz), channel count and the sample encoding
    ///     to store (see ``AudioFileType/writableSampleFormats``; ignored by the lossy codecs).
    ///   - atomic: write through a temporary file that ``close()`` renames into place (the
    ///     default), or write `path` directly.
    /// - Throws: ``FileError`` as ``init(path:encoding:sampleRate:channelCount:atomic:)`` does.
    public convenience init(path: String, type: AudioFileType, format: StreamFormat, atomic: Bool = true) throws(FileError) {
        if !type.isLossy { _ = try type.libsndfileFormat(for: format.sampleFormat, path: path) }
        try self.init(path: path, encoding: AudioFileEncoding(type: type, format: format),
                      sampleRate: format.sampleRate, channelCount: format.channelCount, atomic: atomic)
    }

    /// Creates the output file in the given encoding and prepares it for writing.
    ///
    /// - Parameters:
    ///   - path: the destination file; `-` writes standard output (never atomic; see
    ///     ``StandardStreams`` for what a pipe can carry).
    ///   - encoding: the container, sample format and codec settings (see
    ///     ``AudioFileEncoding/resolve(path:formatName:sampleFormat:quality:bitrateMode:)``).
    ///   - sampleRate: frames per second, a whole number the type holds.
    ///   - channelCount: channels, 1…64 (and what the type holds).
    ///   - atomic: write through a temporary file that ``close()`` renames into place (the
    ///     default), or write `path` directly.
    /// - Throws: ``FileError`` of kind ``FileError/Kind/unwritableOutput`` or
    ///   ``FileError/Kind/permissionDenied`` when the folder is missing or not writable,
    ///   ``FileError/Kind/unsupportedOutputFormat`` when the type cannot hold the encoding, rate
    ///   or channel count (FLAC with f32 or more than 8 channels, MP3 at 96 kHz, …), or
    ///   ``FileError/Kind/ioError`` when the file cannot be created.
    public init(path: String, encoding: AudioFileEncoding, sampleRate: Double, channelCount: Int,
                atomic: Bool = true) throws(FileError) {
        self.path = path
        self.type = encoding.type
        self.encoding = encoding
        let format = StreamFormat(sampleRate: sampleRate, channelCount: channelCount,
                                  sampleFormat: encoding.nearestSampleFormat)
        self.format = format

        if let sampleFormat = encoding.sampleFormat {
            _ = try encoding.type.libsndfileFormat(forFileSampleFormat: sampleFormat, path: path)
        }
        do {
            try format.validate()
        } catch {
            throw FileError(.unsupportedOutputFormat, path: path, problem: error.message)
        }
        var info = SF_INFO()
        info.samplerate = Int32(clamping: Int64(sampleRate.isFinite ? sampleRate : 0))
        info.channels = Int32(channelCount)
        info.format = try encoding.check(sampleRate: sampleRate, channelCount: channelCount, path: path)

        if StandardStreams.names(path) {
            // `-`: standard output, written in place (a file) or through a sink (a pipe).
            try StandardStreams.checkOutput(encoding.type)
            self.output = nil
            self.isAtomic = false
            if StandardStreams.connection(of: STDOUT_FILENO) == .stream {
                let sink = PipeSink(descriptor: STDOUT_FILENO)
                var callbacks = PipeSink.callbacks
                let opened = Sndfile.guardedOpen(path: path, forWriting: true) {
                    sf_open_virtual(&callbacks, Int32(SFM_WRITE), &info, Unmanaged.passUnretained(sink).toOpaque())
                }
                guard let handle = opened.handle else { throw opened.error! }
                self.handle = handle
                self.sink = sink
                guard sink.seal(patching: encoding.type) else {
                    sf_close(handle)
                    self.handle = nil
                    phase = .aborted
                    throw Self.pipeError(sink, frames: 0)
                }
            } else {
                let duplicate = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0)
                guard duplicate >= 0 else {
                    throw FileError(.ioError, path: path, problem: "cannot duplicate standard output (\(String(cString: strerror(errno))))")
                }
                let opened = Sndfile.guardedOpen(path: path, forWriting: true) { sf_open_fd(duplicate, Int32(SFM_WRITE), &info, Int32(SF_TRUE)) }
                guard let handle = opened.handle else { throw opened.error! }
                self.handle = handle
            }
        } else if atomic {
            let output = try AtomicFileOutput(destinationPath: path)
            let opened = Sndfile.guardedOpen(path: path, forWriting: true) { sf_open_fd(output.descriptor, Int32(SFM_WRITE), &info, Int32(SF_FALSE)) }
            guard let handle = opened.handle else {
                output.abort()
                throw opened.error!
            }
            self.output = output
            self.isAtomic = true
            self.handle = handle
        } else {
            self.isAtomic = false
            try FileSystem.checkWritableDestination(path)
            let opened = Sndfile.guardedOpen(path: path, forWriting: true) { sf_open(path, Int32(SFM_WRITE), &info) }
            guard let handle = opened.handle else { throw opened.error! }
            self.output = nil
            self.handle = handle
        }
        if let sampleFormat = encoding.sampleFormat, !sampleFormat.isFloat {
            sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        }
        // libsndfile's return values for these two differ between codecs (SF_TRUE from some, 0
        // from others even when the setting took effect), so they are not checked here:
        // AudioFileEncoding.resolve has already refused what a type does not take.
        if var level = encoding.compressionLevel {
            sf_command(handle, Int32(SFC_SET_COMPRESSION_LEVEL), &level, Int32(MemoryLayout<Double>.size))
        }
        if !atomic, encoding.type == .oggVorbis || encoding.type == .opus {
            // A direct writer is a recording's: short Ogg pages (about 100 ms instead of the
            // encoder's second or so) leave less unwritten audio should the process be killed.
            // libsndfile 1.2 honours it for Opus only: a Vorbis page ends after 4 KiB of
            // packets or 255 of them, and nothing flushes one sooner (Docs/Recording.md).
            var milliseconds = 100.0
            sf_command(handle, Int32(SFC_SET_OGG_PAGE_LATENCY_MS), &milliseconds, Int32(MemoryLayout<Double>.size))
        }
        // A direct writer's MP3 is a recording's: at a constant bitrate unless asked otherwise,
        // so that a take cut short by a kill (no length in its header) reads back whole — a
        // reader counts a constant-bitrate stream's frames from its bytes, but takes a variable
        // one for the first frame's rate (libsndfile read a killed 10 s VBR take as 2.5 s).
        let bitrateMode = encoding.bitrateMode ?? (!atomic && encoding.type == .mp3 ? .constant : nil)
        if let mode = bitrateMode {
            var value = mode.libsndfileValue
            sf_command(handle, Int32(SFC_SET_BITRATE_MODE), &value, Int32(MemoryLayout<Int32>.size))
        }
    }

    /// Creates the output file, choosing the container from the path's extension.
    ///
    /// - Throws: ``FileError`` as ``init(path:type:format:atomic:)`` does, and of kind
    ///   ``FileError/Kind/unsupportedOutputFormat`` when the extension is unknown or read-only
    ///   (see ``AudioFileType/forOutput(path:)``).
    public convenience init(path: String, format: StreamFormat, atomic: Bool = true) throws(FileError) {
        try self.init(path: path, type: AudioFileType.forOutput(path: path), format: format, atomic: atomic)
    }

    deinit {
        guard phase == .writing else { return }
        if isAtomic {
            abort()
        } else if let handle {
            sf_close(handle)
        }
    }

    /// Whether ``close()`` or ``abort()`` has been called.
    public var isClosed: Bool { phase != .writing }

    /// Appends `frames` interleaved float frames (`frames × format.channelCount` samples).
    ///
    /// - Throws: ``FileError`` of kind ``FileError/Kind/unsupportedOutputFormat`` when the audio
    ///   would exceed the container's size limit (WAV 4 GiB, AIFF 2 GiB; nothing is written),
    ///   or ``FileError/Kind/ioError`` when writing fails (disk full, …) or the writer is closed.
    public func write(_ samples: UnsafePointer<Float>, frames: Int) throws(FileError) {
        try write(frames: frames) { sf_writef_float($0, samples, $1) }
    }

    /// Appends `frames` interleaved frames of 32-bit integers, full scale ±2³¹ (libsndfile's
    /// `sf_writef_int`): exact for integer files (`x << 16` stores the 16-bit sample `x`).
    /// Otherwise like ``write(_:frames:)``.
    public func write(int32Samples samples: UnsafePointer<Int32>, frames: Int) throws(FileError) {
        try write(frames: frames) { sf_writef_int($0, samples, $1) }
    }

    /// Appends `frames` interleaved frames of 64-bit floats (libsndfile's `sf_writef_double`).
    /// Otherwise like ``write(_:frames:)``.
    public func write(doubleSamples samples: UnsafePointer<Double>, frames: Int) throws(FileError) {
        try write(frames: frames) { sf_writef_double($0, samples, $1) }
    }

    private func write(frames: Int, _ body: (OpaquePointer, Int64) -> Int64) throws(FileError) {
        guard let handle, phase == .writing else {
            throw FileError(.ioError, path: path, problem: "the writer has been closed; create a new one")
        }
        guard frames > 0 else { return }
        if let limit = type.maximumFrameCount, framesWritten + Int64(frames) > limit {
            throw FileError(.unsupportedOutputFormat, path: path,
                problem: "\(type) files cannot hold more than \(limit) frames (\(Int(Double(limit) / format.sampleRate)) s at \(Int(format.sampleRate)) Hz); write WAV, FLAC or CAF instead, or shorten it")
        }
        if let limit = type.maximumDataBytes, let bytesPerSample = encoding.bytesPerSample {
            let bytes = (framesWritten + Int64(frames)) * Int64(bytesPerSample * format.channelCount)
            if bytes > limit {
                throw FileError(.unsupportedOutputFormat, path: path,
                    problem: "\(type) files cannot hold more than \(limit / (1 << 20)) MiB of audio (\(Self.limitDuration(limit, bytesPerFrame: bytesPerSample * format.channelCount, format))); write .w64, .rf64 or .caf instead")
            }
        }
        let written = body(handle, Int64(frames))
        framesWritten += max(0, written)
        if let sink, sink.failure != nil { throw Self.pipeError(sink, frames: framesWritten) }
        guard written == Int64(frames) else {
            throw FileError(.ioError, path: path,
                problem: "writing audio failed after \(framesWritten) frames (\(Sndfile.errorText(handle))); check free disk space",
                libsndfileCode: sf_error(handle))
        }
    }

    /// Finalizes the header and closes the file; an atomic writer then renames it into place.
    ///
    /// Calling it again after it succeeded does nothing. If it fails, the unfinished file is
    /// deleted (the temporary file of an atomic writer, the file at ``path`` of a direct one).
    /// - Throws: ``FileError`` of kind ``FileError/Kind/ioError`` when finalizing or renaming
    ///   fails, or when the writer was aborted.
    public func close() throws(FileError) {
        switch phase {
        case .closed:
            return
        case .aborted:
            throw FileError(.ioError, path: path,
                problem: "the output was abandoned before it was finished; render it again")
        case .writing:
            break
        }
        if type == .sds, let handle, framesWritten % 120 != 0 {
            // libsndfile 1.2 loses a last partial 120-byte SDS packet (measured: the frames after
            // the last whole packet read back as 0): pad it with silence so every frame written
            // reads back (120 frames is a whole number of packets at 8, 16 and 24 bits).
            let padding = Int(120 - framesWritten % 120)
            let silence = [Float](repeating: 0, count: padding * format.channelCount)
            _ = silence.withUnsafeBufferPointer { sf_writef_float(handle, $0.baseAddress!, Int64(padding)) }
        }
        let status = handle.map { sf_close($0) } ?? 0
        handle = nil
        if let sink, !sink.flush() {
            phase = .aborted
            throw Self.pipeError(sink, frames: framesWritten)
        }
        guard status == 0 else {
            let text = Sndfile.errorText(nil)
            discardFile()
            throw FileError(.ioError, path: path,
                problem: "finishing the file failed (\(text)); check free disk space and write it again")
        }
        if let output {
            do {
                try output.commit()
            } catch {
                phase = .aborted
                throw error
            }
        }
        phase = .closed
    }

    /// Abandons the file: closes it without keeping it. An atomic writer deletes its temporary
    /// file (the destination is untouched); a direct writer deletes the partial file at ``path``.
    ///
    /// Does nothing after ``close()`` or a previous ``abort()``.
    public func abort() {
        guard phase == .writing else { return }
        if let handle { sf_close(handle) }
        handle = nil
        discardFile()
    }

    private func discardFile() {
        phase = .aborted
        if let output {
            output.abort()
        } else if !keepsFileOnFailure && !StandardStreams.names(path) {
            unlink(path)
        }
    }

    /// For an atomic writer: whether ``close()`` replaces a file that is at ``path`` by then (the
    /// default). When false, ``close()`` throws instead and leaves that file alone (see
    /// ``AtomicFileOutput/replacesExistingFile``). A direct writer ignores it.
    public var replacesExistingFile: Bool {
        get { output?.replacesExistingFile ?? true }
        set { output?.replacesExistingFile = newValue }
    }

    /// For a direct (non-atomic) writer: keep the file at ``path`` even when closing fails or the
    /// writer is aborted — what a recorder wants, since every frame written is worth keeping.
    /// Off by default.
    public var keepsFileOnFailure = false

    /// Rewrites the header for the audio written so far (`SFC_UPDATE_HEADER_NOW`), so the file
    /// is complete and readable as it stands should the process die. For WAV, AIFF, CAF, W64, RF64
    /// and AU; a no-op for FLAC and the lossy codecs, which have no header to rewrite (FLAC's
    /// frames and Ogg's pages are readable as they are written; see ``AudioFileType/survivesKill``).
    /// - Throws: ``FileError`` of kind ``FileError/Kind/ioError`` when the writer is closed.
    public func updateHeader() throws(FileError) {
        guard let handle, phase == .writing else {
            throw FileError(.ioError, path: path, problem: "the writer has been closed")
        }
        guard !type.isCompressed else { return }
        sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
    }

    // MARK: - Internals

    /// The error for a write to standard output that failed: its reader went away (`EPIPE`) or
    /// the pipe failed otherwise.
    private static func pipeError(_ sink: PipeSink, frames: Int64) -> FileError {
        let code = sink.failure ?? EIO
        let reason = code == EPIPE
            ? "the program reading standard output stopped reading (\(FileSystem.errorText(code))) after \(frames) frames; check that program's own error"
            : "writing standard output failed after \(frames) frames (\(FileSystem.errorText(code))); check the program or file it goes to"
        return FileError(.ioError, path: StandardStreams.path, problem: reason)
    }

    private static func limitDuration(_ limit: Int64, bytesPerFrame: Int, _ format: StreamFormat) -> String {
        let seconds = Double(limit) / Double(bytesPerFrame) / format.sampleRate
        let minutes = Int(seconds / 60)
        return "about \(minutes / 60) h \(minutes % 60) min at \(format)"
    }
}
