import Foundation
import Lockstep
import Synchronization

/// Streams an audio file through an ``OutputQueue`` the way Audio Queue's playback callback does:
/// a few buffers circulate; each one the queue hands back is refilled with the next frames of the
/// file and enqueued again; after the last frame the queue is told to stop once it has played
/// everything.
///
/// Each buffer is filled by the player's ``RegionStream`` — the region, the loops, the rate
/// conversion (libsoxr, latency-compensated) and the channel matrix — so the queue has the
/// device's rate: a file's first frame lands on the queue's start sample exactly, whatever its
/// rate. Looping (``playCount``) is gapless: the next pass continues in the same buffer. Memory
/// stays bounded — ``bufferCount`` buffers of ``bufferDuration`` seconds — however long the file.
///
/// ```swift
/// let engine = try Engine(device: device)
/// let player = try FilePlayer(path: "drums.wav", engine: engine)
/// try player.prepare()
/// try player.queue.start(at: startTime)
/// ```
///
/// Thread safety: create and control the player from any thread; the refills run on the engine's
/// callback thread.
public final class FilePlayer: @unchecked Sendable {
    /// How many times the file (or its ``startFrame``..<``endFrame`` region) plays.
    public enum PlayCount: Sendable, Hashable {
        /// This many passes (at least 1).
        case times(Int)
        /// Until stopped.
        case forever
    }

    /// The file's path.
    public let path: String
    /// The queue that plays the file; start it, set its gain and volume, meter it.
    public let queue: OutputQueue
    /// The first frame of the file that plays (each pass).
    public let startFrame: Int64
    /// The frame after the last one that plays (each pass).
    public let endFrame: Int64
    /// How many passes play.
    public let playCount: PlayCount
    /// Seconds of audio per buffer.
    public let bufferDuration: Double
    /// Buffers in circulation.
    public let bufferCount: Int
    /// The file's format (the queue's format is the engine's rate and the file's channels as
    /// 32-bit float, or the matrix's output channels when there is a ``channelMatrix``).
    public let fileFormat: StreamFormat
    /// The conversion from the file's channels to the queue's, applied as each buffer is
    /// filled (off the realtime thread); nil when the queue has the file's own channels.
    public let channelMatrix: ChannelMatrix?
    /// The routing asked for when the player was created (to create another like it).
    public let channelRouting: ChannelRouting

    /// How a player's queue gets its channels from the file's.
    public enum ChannelRouting: Sendable, Hashable {
        /// The queue has the file's channels; the engine maps them to its outputs (mono on the
        /// first two, otherwise channel to channel — channels beyond the engine's are not heard).
        case unchanged
        /// A file with more channels than this is downmixed to it by
        /// ``ChannelMatrix/standardDownmix(from:to:)`` (BS.775 for 5.1 and 7.1, equal-power
        /// otherwise); other files are unchanged.
        case downmix(to: Int)
        /// Explicit routing into this many channels.
        case map(ChannelMap, outputs: Int)
    }

    private let reader: AudioFileReader
    /// The file as the queue plays it (used under the state lock only).
    private let stream: RegionStream
    private let state = Mutex(PlaybackState())
    /// Refills handed to the streamer and not yet done. Outside ``state``: a refill of standard
    /// input holds that lock while it waits for the pipe, and counting the next refill, like
    /// reading ``error``, must not wait behind it (`play -` stalled until more input came when
    /// the streamer reached a read the pipe could not yet satisfy before `prepare` returned).
    private let pendingRefills = Atomic<Int>(0)
    /// ``PlaybackState/error`` as the last refill or reposition left it, readable while a
    /// refill waits on a pipe.
    private let reportedError = Mutex<FileError?>(nil)
    /// Signalled whenever the queue hands a buffer back and whenever a refill is done.
    private let bufferReturned = ChangeSignal()
    /// The thread that refills the buffers, or nil for the engine's callback thread.
    public let streamer: FileStreamer?
    /// This player's lane on the ``streamer`` (players spread over its threads).
    private let lane = FilePlayer.lanes.wrappingAdd(1, ordering: .relaxed).oldValue
    private static let lanes = Atomic<Int>(0)

    struct PlaybackState {
        /// Whether buffers are filled: until everything is enqueued, or a stop.
        enum Feed: Equatable {
            /// Refills read the next frames.
            case feeding
            /// Every frame is enqueued (the last pass, or the end of a stream).
            case allEnqueued
            /// Stopped (or being repositioned): refills do nothing.
            case stopped
        }

        var feed = Feed.feeding
        var error: FileError?
        var framesEnqueued: Int64 = 0
        var buffers: [QueueBuffer] = []
        var stagger = 0.0
    }

    /// Opens `path` and creates its queue on `engine`.
    ///
    /// - Parameters:
    ///   - path: an audio file libsndfile reads.
    ///   - engine: the engine to play on; a file at another rate is converted to the engine's.
    ///   - name: the queue's name (default: the file name).
    ///   - startFrame: the first frame to play (default 0).
    ///   - endFrame: the frame to stop before (default: the end of the file).
    ///   - playCount: passes to play (default once).
    ///   - bufferDuration: seconds per buffer (default 0.25).
    ///   - bufferCount: buffers in circulation (default 4; at least 2).
    ///   - truncation: whether a file holding less audio than its header declares is played
    ///     (`.tolerate`, the default: what is there plays and ``error`` reports it) or refused.
    ///   - streamer: the thread that reads, decodes and enqueues each buffer the queue hands
    ///     back; nil (the default) refills on the engine's callback thread. Share one among many
    ///     players so disk and decoding never hold up the engine's callbacks.
    ///   - channels: how the queue's channels come from the file's (default: unchanged).
    /// - Throws: ``FileError`` if the file cannot be opened or the region is empty or out of
    ///   range, or (kind ``FileError/Kind/invalidArgument``) when a channel map names a channel
    ///   the file or the output does not have, or (``FileError/Kind/unsupportedFormat``) for rates
    ///   libsoxr cannot convert; the engine's ``Lockstep/AudioQueueError``, unchanged, if the queue
    ///   cannot be created.
    public init(path: String, engine: Engine, name: String? = nil, startFrame: Int64 = 0, endFrame: Int64? = nil,
                playCount: PlayCount = .times(1), bufferDuration: Double = 0.25, bufferCount: Int = 4,
                truncation: AudioFileReader.TruncationPolicy = .tolerate, streamer: FileStreamer? = nil,
                channels: ChannelRouting = .unchanged) throws
    {
        let reader = try AudioFileReader(path: path, truncation: truncation)
        if reader.isStream, startFrame != 0 || endFrame != nil || playCount != .times(1) {
            // Standard input on a pipe plays once, from its start, as it arrives.
            throw AudioFileReader.streamSeekError(path: path)
        }
        guard bufferDuration > 0, bufferDuration <= 10, bufferCount >= 2, bufferCount <= 64 else {
            throw FileError(.invalidArgument, path: path,
                problem: "buffering of \(bufferCount) × \(bufferDuration) s is out of range; use 2…64 buffers of up to 10 s")
        }
        let matrix: ChannelMatrix?
        switch channels {
        case .unchanged:
            matrix = nil
        case .downmix(let outputs):
            matrix = ChannelMatrix.standardDownmix(from: reader.format.channelCount, to: outputs)
        case .map(let map, let outputs):
            do { matrix = try map.matrix(inputs: reader.format.channelCount, outputs: outputs) } catch {
                throw FileError(.invalidArgument, path: path, problem: "channel map \(error.problem)")
            }
        }
        let end = endFrame ?? reader.frameCount
        let count: Int?
        switch playCount {
        case .times(let n): count = n
        case .forever: count = nil
        }
        guard startFrame < end else {
            throw FileError(.invalidArgument, path: path,
                problem: "the region \(startFrame)..<\(end) is empty or outside the file's \(reader.frameCount) frames; choose a start and end inside the file")
        }
        stream = try RegionStream(source: reader, region: startFrame..<end, playCount: count,
                                  outputRate: engine.sampleRate, channelMatrix: matrix)
        channelMatrix = matrix
        channelRouting = channels
        if let matrix, !matrix.droppedInputs.isEmpty {
            reader.warnings.record(.droppedChannels(path: path, channels: matrix.droppedInputs.map { $0 + 1 }, matrix: matrix))
        }
        let queueFormat = StreamFormat(sampleRate: engine.sampleRate, channelCount: stream.outputChannels,
                                       sampleFormat: .float32)
        let fileName = path.split(separator: "/").last.map(String.init) ?? path
        let box = PlayerBox()
        queue = try engine.makeOutputQueue(format: queueFormat, name: name ?? fileName) { queue, buffer in
            box.player?.bufferHandedBack(buffer)
        }
        self.streamer = streamer
        self.path = path
        self.reader = reader
        self.startFrame = startFrame
        self.endFrame = end
        self.playCount = playCount
        self.bufferDuration = bufferDuration
        self.bufferCount = bufferCount
        fileFormat = reader.format
        box.player = self
    }

    /// The file's channels (from 0) the ``channelMatrix`` sends nowhere; empty without one.
    public var droppedChannels: [Int] { channelMatrix?.droppedInputs ?? [] }

    /// The frames of the file (at its own rate) this player will play in total, or nil when it
    /// loops forever or reads standard input as a stream whose end has not arrived yet.
    public var totalFrames: Int64? {
        // Standard input on a pipe: unknown until it ends.
        if reader.isStream { return reader.lengthIsKnown ? reader.frameCount : nil }
        if case .times(let n) = playCount { return (endFrame - startFrame) * Int64(n) }
        return nil
    }

    /// The first read or queue error that ended playback early, if any.
    public var error: FileError? { reportedError.withLock { $0 } }

    /// ``error`` unless it only says the file is truncated and the player tolerates that (the
    /// audio that is there plays; ``prepare(stagger:)`` and ``reposition(toFrame:)`` go on).
    private var unacceptedError: FileError? {
        guard let error else { return nil }
        return error.kind == .truncated && reader.truncationPolicy == .tolerate ? nil : error
    }

    /// Waits until at most `count` refills are pending on the ``streamer`` (returns at once
    /// without one), as long as they take (a file on a pipe waits for its writer). An offline
    /// render that streams its files calls this before each cycle, so the queue never reaches a
    /// buffer still being read: with at most ``bufferCount`` − 2 pending, at least one whole
    /// buffer is queued beyond the one playing.
    public func waitForRefills(leavingAtMost count: Int) {
        let done = { self.pendingRefills.load(ordering: .acquiring) <= count }
        // A deadline a minute on at a time: Foundation's condition traps on `distantFuture`.
        while !done() && !bufferReturned.wait(until: Date().addingTimeInterval(60), for: done) {}
    }

    /// Whether every frame has been handed to the queue (playback then ends once the queue drains).
    public var hasEnqueuedEverything: Bool { state.withLock { $0.feed == .allEnqueued } }

    /// A stagger for layer `index` of many started together (for ``prepare(stagger:)``): the
    /// fractional parts of `index × φ`, which spread any number of layers evenly over a buffer.
    public static func stagger(forLayer index: Int) -> Double {
        (Double(index) * 0.618_033_988_749_894_8).truncatingRemainder(dividingBy: 1)
    }

    /// Allocates the buffers, fills them from the file and enqueues them, so a start is instant.
    /// Call once, before starting the queue. With a ``streamer`` only the first two buffers are
    /// filled here and the others on the streamer, which has them ready long before the first
    /// two have played; a read error there shows in ``error``.
    ///
    /// - Parameter stagger: the fraction (0 ..< 1) of a buffer by which the first buffer is
    ///   shortened (also after ``reposition(toFrame:)``). Queues started on one sample with the
    ///   same buffer size otherwise hand their buffers back on the same cycle, and every refill
    ///   falls on it; staggered (``stagger(forLayer:)``), they refill on different cycles. The
    ///   audio is the same: buffers follow each other gaplessly.
    /// - Throws: ``FileError`` for a read error, a stagger outside 0 ..< 1, or when called twice;
    ///   the queue's ``Lockstep/AudioQueueError``, unchanged, if it cannot allocate its buffers.
    public func prepare(stagger: Double = 0) throws {
        guard stagger >= 0, stagger < 1 else {
            throw FileError(.invalidArgument, path: path, problem: "stagger \(stagger) is out of range; use 0 ..< 1 (a fraction of a buffer)")
        }
        let frames = max(64, Int((bufferDuration * queue.format.sampleRate).rounded()))
        let already = state.withLock { !$0.buffers.isEmpty }
        if already { throw FileError(.invalidArgument, path: path, problem: "the player is already prepared") }
        var buffers: [QueueBuffer] = []
        for _ in 0..<bufferCount { buffers.append(try queue.allocateBuffer(frameCapacity: frames)) }
        state.withLock { state in
            state.buffers = buffers
            state.stagger = stagger
        }
        refillAll(buffers)
        if let error = unacceptedError { throw error }
    }

    /// Fills and enqueues `buffers` in order, the first one shortened by the stagger. With a
    /// streamer, only the first two are filled here — enough to start on — and the rest are left
    /// to the streamer, so preparing thousands of layers takes a third of the reading.
    private func refillAll(_ buffers: [QueueBuffer]) {
        let stagger = state.withLock { $0.stagger }
        for (index, buffer) in buffers.enumerated() {
            if index >= 2, streamer != nil {
                bufferHandedBack(buffer)
                continue
            }
            let shortened = index == 0 ? Int(stagger * Double(buffer.frameCapacity)) : 0
            refill(buffer, limit: max(min(64, buffer.frameCapacity), buffer.frameCapacity - shortened))
        }
    }

    /// Moves playback to `frame` of the file (a frame of the whole play at the file's rate, so
    /// with looping it may lie in a later pass); see ``reposition(toOutputFrame:)``.
    public func reposition(toFrame frame: Int64) throws(FileError) {
        try reposition(toOutputFrame: stream.outputFrame(forSourceFrame: max(0, frame)))
    }

    /// Moves playback to output frame `frame` (frames at the queue's rate, the engine's, from the
    /// start of the play): stops the queue at once, waits for its buffers to come back, then
    /// refills them from the new position. Start the queue again afterwards (at the sample time
    /// where `frame` should play). A file at another rate plays on from there exactly as an
    /// uninterrupted play would (its converter is warmed up on the frames before).
    ///
    /// - Parameter frame: past the end, nothing is left to play.
    /// - Throws: ``FileError`` for a read error, if the player reads a stream (standard input
    ///   cannot move), or if the buffers don't come back within 2 s (the engine's callback
    ///   thread is blocked).
    public func reposition(toOutputFrame frame: Int64) throws(FileError) {
        if reader.isStream { throw AudioFileReader.streamSeekError(path: path) }
        state.withLock { $0.feed = .stopped }
        try? queue.stop(immediately: true)
        let returned = bufferReturned.wait(until: Date().addingTimeInterval(2)) {
            pendingRefills.load(ordering: .acquiring) == 0 && state.withLock { state in !state.buffers.contains { $0.isInFlight } }
        }
        guard returned else {
            throw FileError(.invalidArgument, path: path,
                problem: "the queue did not hand its buffers back within 2 s; is the engine's callback thread blocked?")
        }
        let buffers: [QueueBuffer] = state.withLock { state in
            stream.seek(to: max(0, frame))
            state.feed = .feeding
            state.error = stream.error
            reportedError.withLock { $0 = state.error }
            return state.buffers
        }
        if let error = unacceptedError { throw error }
        refillAll(buffers)
        if let error = unacceptedError { throw error }
    }

    /// Stops feeding the queue and stops it at once.
    public func stop() {
        state.withLock { $0.feed = .stopped }
        try? queue.stop(immediately: true)
    }

    /// A buffer the queue handed back: refilled here (callback thread) or on the streamer.
    func bufferHandedBack(_ buffer: QueueBuffer) {
        guard let streamer else { return refill(buffer) }
        pendingRefills.wrappingAdd(1, ordering: .relaxed)
        let accepted = streamer.submit(lane: lane) { [self] in
            refill(buffer)
            pendingRefills.wrappingSubtract(1, ordering: .releasing)
            bufferReturned.signal()
        }
        if !accepted {
            // The streamer was stopped: refill here rather than lose the buffer.
            pendingRefills.wrappingSubtract(1, ordering: .releasing)
            refill(buffer)
        }
    }

    /// Fills `buffer` with the next frames (at most `limit`; looping as asked) and enqueues it; at
    /// the end, asks the queue to stop after playing what it holds.
    func refill(_ buffer: QueueBuffer, limit: Int? = nil) {
        defer { bufferReturned.signal() }
        let result: (enqueued: Bool, finish: Bool) = state.withLock { state in
            defer { reportedError.withLock { $0 = state.error } }
            if state.feed != .feeding || state.error != nil { return (false, false) }
            // A hand-back whose refill comes late (queued on the streamer, or delivered after a
            // reposition already refilled this buffer) has nothing left to do.
            if buffer.isInFlight { return (false, false) }
            let channels = queue.format.channelCount
            let capacity = min(limit ?? buffer.frameCapacity, buffer.frameCapacity)
            let base = buffer.data.bindMemory(to: Float.self, capacity: capacity * channels)
            let filled = stream.read(into: base, frames: capacity)
            if filled < capacity {
                // The last pass, the end of a stream, or a read error (a file that ended before
                // its declared length plays what there was).
                state.feed = .allEnqueued
                state.error = stream.error
            }
            if filled > 0 {
                buffer.frameCount = filled
                // Enqueued under the player's lock: refills on different threads (the streamer,
                // the callback thread, a reposition) read and enqueue one after the other, so
                // buffers reach the queue in the order their frames were read.
                do throws(AudioQueueError) {
                    try queue.enqueue(buffer)
                    state.framesEnqueued += Int64(filled)
                } catch {
                    state.error = FileError(.invalidArgument, path: path, problem: error.message)
                    return (true, true)
                }
            }
            return (filled > 0, state.feed == .allEnqueued || state.error != nil)
        }
        if result.finish { try? queue.stop(immediately: false) }
    }
}

/// Lets the queue's callback reach the player without a retain cycle.
private final class PlayerBox: @unchecked Sendable {
    weak var player: FilePlayer?
}
