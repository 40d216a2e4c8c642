import Foundation
import Lockstep
import LockstepTimecode
import Synchronization

/// LTC following a live session: one mono output queue of its own (outputs `ltc_1` on JACK,
/// never in the master mix) whose buffers are the ``LTCSignal`` of the session samples they play.
///
/// It is started, halted and restarted with the layers (``SessionPlayer``'s start, seek, pause,
/// resume, reset, transport), in the same group start, so its frames stay on the session's
/// samples through every relocation, and a late start skips the same frames as the layers. Its
/// buffers are computed where the layers' are — on a streamer lane of their own, never on the
/// device's thread — from a position that only a start sets: no control change touches it.
final class SessionTimecodeOutput: @unchecked Sendable {
    /// The queue; its own outputs are ``outputNames``.
    let queue: OutputQueue
    /// The queue's buffers, all of them.
    let buffers: [QueueBuffer]
    /// The setting it was made from (carried to a player at another rate).
    let setting: SessionPlayer.TimecodeSetting

    /// Guards ``signal`` and ``filled``/``origin``.
    private let lock = NSLock()
    private let signal: LTCSignal
    /// The next session sample to compute, and the session sample at queue time 0.
    private var filled: Int64 = 0, origin: Int64 = 0

    /// The queue's name: its JACK ports are `<client>:ltc_1`.
    static let name = "ltc"

    /// Creates the queue on `engine` (with outputs of its own when `directOutputs`).
    /// - Throws: ``AudioQueueError`` (the queue, its outputs); ``TimecodeError`` for a setting
    ///   the engine's rate cannot carry.
    init(setting: SessionPlayer.TimecodeSetting, engine: Engine, directOutputs: Bool, bufferFrames: Int, bufferCount: Int,
         handedBack: @escaping @Sendable (QueueBuffer) -> Void) throws {
        self.setting = setting
        signal = try LTCSignal(clock: TimecodeClock(rate: setting.rate, sampleRate: Int(engine.sampleRate.rounded()), start: setting.start))
        let format = StreamFormat(sampleRate: engine.sampleRate, channelCount: 1, sampleFormat: .float32)
        let queue = try engine.makeOutputQueue(format: format, name: Self.name) { _, buffer in handedBack(buffer) }
        if directOutputs {
            try queue.enableDirectOutputs()
            queue.mixesIntoMaster = false
        }
        buffers = try (0..<bufferCount).map { _ in try queue.allocateBuffer(frameCapacity: bufferFrames) }
        self.queue = queue
    }

    /// The queue's own outputs (JACK: full port names).
    var outputNames: [String] { queue.directOutputNames }

    /// Whether a buffer is still with the queue.
    var hasBuffersInFlight: Bool { buffers.contains { $0.isInFlight } }

    /// Computes every buffer from session sample `position` (queue time 0) and enqueues them.
    func prepare(from position: Int64) {
        lock.withLock {
            filled = position
            origin = position
        }
        for buffer in buffers { fill(buffer) { true } }
    }

    /// Computes `buffer`'s next stretch of LTC and enqueues it on its sample, if `current()`
    /// (asked under the lock a start takes too) says the run it was handed back in goes on.
    func fill(_ buffer: QueueBuffer, if current: () -> Bool) {
        lock.withLock {
            guard current() else { return }
            buffer.withFloatSamples { signal.render(into: $0.baseAddress!, from: filled, count: buffer.frameCapacity) }
            buffer.frameCount = buffer.frameCapacity
            _ = try? queue.enqueue(buffer, startTime: filled - origin)
            filled += Int64(buffer.frameCapacity)
        }
    }
}

extension SessionPlayer {
    /// LTC a live player sends on outputs of its own (``SessionPlayer/init(session:engine:directOutputs:bufferFrames:bufferCount:streamer:sources:timecode:)``).
    public struct TimecodeSetting: Sendable, Hashable {
        /// The frame rate.
        public var rate: TimecodeRate
        /// The label of session sample 0.
        public var start: Timecode

        /// Creates the setting.
        public init(rate: TimecodeRate, start: Timecode = Timecode(hours: 0, minutes: 0, seconds: 0, frames: 0)) {
            self.rate = rate
            self.start = start
        }
    }

    /// Where session time is on the device while the session plays: session sample `position`
    /// plays on device sample `deviceTime`, and every later one a sample later, until `run` (a
    /// count of starts) changes; nil while it does not play (stopped, paused, relocating). For
    /// what follows session time outside the engine (MTC out). Any thread.
    public var clockMapping: (run: Int, deviceTime: Int64, position: Int64)? {
        state.withLock { state in
            state.phase == .playing ? (state.run, state.originDevice, state.originPosition) : nil
        }
    }

    /// The LTC queue (nil without LTC): disposed of with the player.
    public var timecodeQueue: OutputQueue? { timecodeOutput?.queue }

    /// The LTC queue's own outputs (JACK: `<client>:ltc_1`), to connect; empty without LTC.
    public var timecodeOutputNames: [String] { timecodeOutput?.outputNames ?? [] }

    /// A buffer the LTC queue handed back: computed again on the LTC's lane (after the layers'),
    /// unless the run it belonged to is over.
    func timecodeBufferHandedBack(_ buffer: QueueBuffer) {
        guard let output = timecodeOutput else { return }
        let run = currentRun.load(ordering: .acquiring)
        let refill: @Sendable () -> Void = { [self] in
            output.fill(buffer) { state.withLock { $0.phase.computes && $0.run == run } }
        }
        if streamer?.submit(lane: queues.count, refill) != true { refill() }
    }
}
