import Foundation
import Lockstep
import Synchronization

/// Records an ``Lockstep/InputQueue`` into an audio file, the way Audio Queue's recording guide
/// does it — but with a disk-writer thread, so the engine's callback thread never waits on the
/// disk, and with a file that stays valid while it grows.
///
/// Filled buffers go from the input callback to the writer thread, which writes them with
/// libsndfile, rewrites the header (so a killed process leaves a file any decoder reads, holding
/// all but the last fraction of a second), and hands the buffers back to the queue. If the disk
/// fills up or a write fails, recording stops with ``error`` set and the file keeps everything
/// written before. Overflows of the queue's ring (the writer fell seconds behind) are reported as
/// discontinuities and recorded as exactly that much silence, so the file's timeline stays true.
///
/// ```swift
/// let recorder = try FileRecorder(engine: engine, path: "take.wav", channels: 2)
/// try recorder.start()
/// …
/// let summary = try recorder.stop()
/// ```
public final class FileRecorder: @unchecked Sendable {
    /// What a finished recording holds.
    public struct Summary: Sendable, Hashable {
        /// The file.
        public var path: String
        /// Frames written to the file.
        public var framesWritten: Int64
        /// The device sample time of the first frame, or nil if nothing was recorded.
        public var startSampleTime: Int64?
        /// The file's sample rate.
        public var sampleRate: Double
        /// The largest absolute sample per channel (linear).
        public var peaks: [Float]
        /// Frames lost to overflows (recorded as silence).
        public var lostFrames: Int64
        /// Seconds recorded.
        public var duration: Double { Double(framesWritten) / sampleRate }

        /// Creates a summary.
        public init(path: String, framesWritten: Int64, startSampleTime: Int64?, sampleRate: Double, peaks: [Float],
                    lostFrames: Int64) {
            self.path = path
            self.framesWritten = framesWritten
            self.startSampleTime = startSampleTime
            self.sampleRate = sampleRate
            self.peaks = peaks
            self.lostFrames = lostFrames
        }
    }

    /// The file being written.
    public let path: String
    /// The input queue that captures (float, the device's rate).
    public let queue: InputQueue
    /// The file's format (the device's rate, the channels, the file's encoding).
    public let fileFormat: StreamFormat

    private let writer: AudioFileWriter
    private let state = Mutex(WriterState())
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled when the queue stops, a write fails, and when the writer has finished.
    private let changed = ChangeSignal()
    private var thread: Thread?
    private let channelCount: Int

    struct WriterState: @unchecked Sendable {
        var pending: [(QueueBuffer, Int64, Int)] = []
        var stopping = false
        var finished = false
        var error: FileError?
        var firstSampleTime: Int64?
        var nextSampleTime: Int64?
        var peaks: [Float] = []
        var framesWritten: Int64 = 0
        var stopped = false
    }

    /// Creates the file and the input queue (not started).
    ///
    /// - Parameters:
    ///   - engine: the engine to record on.
    ///   - path: the output file; its extension picks the container unless `encoding` does. Every
    ///     ``AudioFileType`` records; ``AudioFileType/survivesKill`` says which keep all their
    ///     audio but the last buffer if the process is killed (WAV, AIFF, CAF, W64, RF64, AU and
    ///     FLAC); Opus and MP3 (written at a constant bitrate unless `encoding` says otherwise)
    ///     lose about 0.1 s more, Ogg Vorbis its last, unfinished page (Docs/Recording.md).
    ///   - channels: channels to record.
    ///   - sampleFormat: the file's encoding (default: the type's default — f32, s24 for FLAC).
    ///   - encoding: the full encoding (type, sample format, codec settings), overriding the
    ///     extension and `sampleFormat`; nil to use them.
    ///   - source: the device's input (default) or the engine's own mix.
    ///   - channelMap: the device input (or mix) channel for each recorded channel.
    ///   - bufferSeconds: seconds per buffer handed to the writer (default 0.1): what a kill loses
    ///     at most besides what the type's encoder holds back.
    ///   - ringSeconds: how far the writer may fall behind before frames are lost (default 20 s).
    /// - Throws: ``FileError`` for an output that cannot be written; ``FileError`` wrapping the
    ///   queue's error otherwise.
    public init(engine: Engine, path: String, channels: Int, sampleFormat: SampleFormat? = nil,
                encoding: AudioFileEncoding? = nil,
                source: InputSource = .deviceInput, channelMap: [Int]? = nil,
                bufferSeconds: Double = 0.1, ringSeconds: Double = 20) throws(FileError) {
        let chosen: AudioFileEncoding
        if let encoding {
            chosen = encoding
        } else {
            let type = try AudioFileType.forOutput(path: path)
            if let sampleFormat, !type.isLossy { _ = try type.libsndfileFormat(for: sampleFormat, path: path) }
            chosen = AudioFileEncoding(type: type, sampleFormat: sampleFormat.map(FileSampleFormat.init))
        }
        writer = try AudioFileWriter(path: path, encoding: chosen, sampleRate: engine.sampleRate, channelCount: channels,
                                     atomic: false)
        fileFormat = writer.format
        writer.keepsFileOnFailure = true
        try? writer.updateHeader()
        self.path = path
        channelCount = channels
        let box = RecorderBox()
        do {
            queue = try engine.makeInputQueue(format: StreamFormat(sampleRate: engine.sampleRate, channelCount: channels),
                                              name: URL(fileURLWithPath: path).lastPathComponent, source: source,
                                              channelMap: channelMap, ringSeconds: ringSeconds) { _, buffer, start, frames in
                box.recorder?.received(buffer, start: start, frames: frames)
            }
            let bytes = InputQueue.bufferByteSize(seconds: bufferSeconds, format: queue.format, maximumBytes: 1 << 24)
            for _ in 0..<8 { try queue.enqueue(try queue.allocateBuffer(byteCapacity: bytes)) }
        } catch {
            writer.abort()
            throw FileError(.invalidArgument, path: path, problem: error.message)
        }
        state.withLock { $0.peaks = Array(repeating: 0, count: channels) }
        let changed = self.changed
        _ = try? queue.addPropertyListener(.isRunning) { _, _ in changed.signal() }
        box.recorder = self
        let thread = Thread { [weak self] in
            ThreadName.setCurrent("lockstep.recorder")
            self?.writeLoop()
        }
        thread.name = "lockstep.recorder"
        self.thread = thread
        thread.start()
    }

    /// Starts recording at device sample time `sampleTime` (nil: the next rendered frame).
    public func start(at sampleTime: Int64? = nil) throws(FileError) {
        do { try queue.start(at: sampleTime) } catch {
            throw FileError(.invalidArgument, path: path, problem: error.message)
        }
    }

    /// Ends the recording before device sample time `sampleTime` (see
    /// ``Lockstep/InputQueue/stop(atSampleTime:)``); call ``stop(timeout:)`` afterwards to close the file.
    public func stop(atSampleTime sampleTime: Int64) throws(FileError) {
        do { try queue.stop(atSampleTime: sampleTime) } catch {
            throw FileError(.invalidArgument, path: path, problem: error.message)
        }
    }

    /// Whether the queue has delivered its last buffer after a stop.
    public var isRecording: Bool { queue.isRunning }

    /// The first write error, if recording stopped because of one.
    public var error: FileError? { state.withLock { $0.error } }

    /// Frames written so far, each counted once the file's header describes it too.
    public var framesWritten: Int64 { state.withLock { $0.framesWritten } }

    /// Whether recording has ended (stopped, or stopped by an error).
    public var hasEnded: Bool { state.withLock { $0.stopped || $0.error != nil } }

    /// Stops the queue, waits until everything captured is in the file, and closes it.
    ///
    /// - Parameter timeout: seconds to wait for the last buffers (default 10).
    /// - Returns: what was recorded.
    /// - Throws: the write error that stopped the recording early, if any (the file then holds
    ///   everything written before it); ``FileError`` if closing fails.
    @discardableResult
    public func stop(timeout: Double = 10) throws(FileError) -> Summary {
        try? queue.stop(immediately: true)
        let deadline = Date().addingTimeInterval(timeout)
        changed.wait(until: deadline) { !queue.isRunning || state.withLock { $0.error != nil } }
        state.withLock { $0.stopping = true }
        wake.signal()
        changed.wait(until: deadline) { state.withLock { $0.finished } }
        try? queue.dispose()
        let (error, summary) = state.withLock { state in
            (state.error, Summary(path: path, framesWritten: state.framesWritten, startSampleTime: state.firstSampleTime,
                                  sampleRate: fileFormat.sampleRate, peaks: state.peaks, lostFrames: queue.lostFrames))
        }
        do { try writer.close() } catch {
            throw error
        }
        if let error { throw error }
        return summary
    }

    // MARK: - Callback thread → writer thread

    func received(_ buffer: QueueBuffer, start: Int64, frames: Int) {
        state.withLock { $0.pending.append((buffer, start, frames)) }
        wake.signal()
    }

    private func writeLoop() {
        while true {
            _ = wake.wait(timeout: .now() + .milliseconds(100))
            while let (buffer, start, frames) = state.withLock({ $0.pending.isEmpty ? nil : $0.pending.removeFirst() }) {
                write(buffer, start: start, frames: frames)
            }
            let done = state.withLock { state -> Bool in
                if state.stopping && state.pending.isEmpty { state.finished = true }
                return state.finished
            }
            if done {
                changed.signal()
                return
            }
        }
    }

    private func write(_ buffer: QueueBuffer, start: Int64, frames: Int) {
        let failed = state.withLock { $0.error != nil }
        if !failed && frames > 0 {
            state.withLock { state in
                if state.firstSampleTime == nil { state.firstSampleTime = start }
                state.nextSampleTime = start + Int64(frames)
            }
            let samples = UnsafePointer(buffer.data.assumingMemoryBound(to: Float.self))
            do throws(FileError) {
                try writer.write(samples, frames: frames)
                var peaks = [Float](repeating: 0, count: channelCount)
                for i in 0..<(frames * channelCount) {
                    let c = i % channelCount
                    peaks[c] = max(peaks[c], abs(samples[i]))
                }
                try writer.updateHeader()
                // Counted once the header describes them too: a copy of the file taken now holds them.
                state.withLock { state in
                    for c in 0..<channelCount { state.peaks[c] = max(state.peaks[c], peaks[c]) }
                    state.framesWritten += Int64(frames)
                }
            } catch {
                state.withLock { $0.error = $0.error ?? error }
                changed.signal()
                try? queue.stop(immediately: true)
            }
        }
        if !queue.isDisposed { try? queue.enqueue(buffer) }
        if !queue.isRunning { state.withLock { $0.stopped = true } }
    }
}

/// Lets the queue's callback reach the recorder without a retain cycle.
private final class RecorderBox: @unchecked Sendable {
    weak var recorder: FileRecorder?
}
