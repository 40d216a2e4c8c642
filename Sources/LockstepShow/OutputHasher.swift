import Foundation
import Lockstep
import LockstepSession
import Synchronization

/// Hashes of a run's output per block of session samples, for a show link to compare the main's
/// output with its backup's (``OutputComparison``).
///
/// It records the engine's mix with an input queue (``Lockstep/InputSource/mix``, on a dispatch
/// queue of its own, never the realtime thread), maps each device sample to the session sample it played
/// (``LockstepSession/SessionPlayer/segments``) and hashes every output channel over each whole
/// block of ``blockFrames`` session samples that starts on a multiple of ``blockFrames``. A block
/// the run did not play whole (a start, seek or pause inside it, frames the queue lost) has no
/// hash. The last ``rawHistory`` blocks' samples are kept, to find a divergence's exact sample.
public final class OutputHasher: Sendable {
    /// One block's hashes.
    public struct BlockHash: Sendable, Hashable {
        /// Its first session sample (a multiple of ``OutputHasher/blockFrames``).
        public var start: Int64
        /// FNV-1a (64 bits) of each output channel's samples (their bits), output 1 first.
        public var hashes: [UInt64]
        /// When the block was hashed (seconds since 1970, the system clock): the same block
        /// played again (after a seek or a reset) is compared only with the other side's
        /// playing of it at about the same time.
        public var time: Double

        /// Creates a block's hashes.
        public init(start: Int64, hashes: [UInt64], time: Double) {
            self.start = start
            self.hashes = hashes
            self.time = time
        }
    }

    /// Session samples per block.
    public static let blockFrames = 4096
    /// Blocks whose hashes are kept (about 87 s at 48 kHz).
    public static let hashHistory = 1024
    /// Blocks whose samples are kept (about 11 s at 48 kHz).
    public static let rawHistory = 128

    /// The output channels hashed.
    public let channelCount: Int

    private struct Block {
        var start: Int64
        var filled = 0
        var hashes: [UInt64]
        var samples: [Float]
    }
    private struct State {
        var current: Block?
        var hashes: [Int64: BlockHash] = [:]
        var order: [Int64] = []
        var raw: [Int64: [Float]] = [:]
        var rawOrder: [Int64] = []
        var fresh: [BlockHash] = []
        var player: ObjectIdentifier?
        var stopped = false
    }
    private let state = Mutex(State())
    private let queue: InputQueue

    /// Starts hashing the mix of `engine` (its first `channels` outputs) as played by the player
    /// `player` gives (the current one: a rate change replaces it).
    /// - Throws: ``Lockstep/AudioQueueError`` when the engine cannot record its mix.
    public init(engine: Engine, channels: Int, player: @escaping @Sendable () -> SessionPlayer) throws(AudioQueueError) {
        channelCount = channels
        let format = StreamFormat(sampleRate: engine.sampleRate, channelCount: channels)
        let box = Box()
        // (On a queue of its own: `player` may take a lock that a control change holds while it
        // waits for the engine's event thread.)
        let executor = CallbackExecutor.dispatchQueue(DispatchQueueBox(DispatchQueue(label: "lockstep.link-hash")))
        queue = try engine.makeInputQueue(format: format, name: "link-hash", source: .mix, ringSeconds: 10,
                                          callbackExecutor: executor) { queue, buffer, start, frames in
            box.hasher?.received(buffer, start: start, frames: frames, player: player())
            if !queue.isDisposed { try? queue.enqueue(buffer) }
        }
        let bytes = InputQueue.bufferByteSize(seconds: 0.05, format: format)
        for _ in 0..<16 { try queue.enqueue(try queue.allocateBuffer(byteCapacity: bytes)) }
        box.hasher = self
        try queue.start()
    }

    private final class Box: @unchecked Sendable {
        weak var hasher: OutputHasher?
    }

    /// Stops hashing.
    public func stop() {
        let first = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        try? queue.stop(immediately: true)
        try? queue.dispose()
    }

    /// The blocks hashed since the last call, oldest first.
    public func takeFresh() -> [BlockHash] {
        state.withLock { state in
            defer { state.fresh = [] }
            return state.fresh
        }
    }

    /// The hashes of the block starting at session sample `start` (as last played), while kept.
    public func hashes(of start: Int64) -> BlockHash? { state.withLock { $0.hashes[start] } }

    /// The samples of the block starting at session sample `start` (interleaved), while kept.
    public func samples(of start: Int64) -> [Float]? { state.withLock { $0.raw[start] } }

    /// The FNV-1a hash (64 bits) of `hash` extended by the bits of `sample`.
    @inline(__always)
    static func fnv(_ hash: UInt64, _ sample: Float) -> UInt64 {
        var hash = hash
        var bits = sample.bitPattern
        for _ in 0..<4 {
            hash = (hash ^ UInt64(bits & 0xff)) &* 0x100_0000_01b3
            bits >>= 8
        }
        return hash
    }

    /// FNV-1a's offset basis.
    static let basis: UInt64 = 0xcbf2_9ce4_8422_2325

    /// The hashes of each channel of `samples` (interleaved, `channels` channels).
    public static func hashes(of samples: [Float], channels: Int) -> [UInt64] {
        var result = Array(repeating: basis, count: channels)
        for (index, sample) in samples.enumerated() { result[index % channels] = fnv(result[index % channels], sample) }
        return result
    }

    private func received(_ buffer: QueueBuffer, start: Int64, frames: Int, player: SessionPlayer) {
        let segments = player.segments
        let channels = channelCount
        let samples = UnsafePointer(buffer.data.assumingMemoryBound(to: Float.self))
        state.withLock { state in
            guard !state.stopped else { return }
            // Another player (a rate change): its session samples are others.
            if state.player != ObjectIdentifier(player) {
                state.player = ObjectIdentifier(player)
                state.current = nil
            }
            var segment = segments.last
            for frame in 0..<frames {
                let device = start + Int64(frame)
                if segment?.contains(device) != true { segment = segments.last { $0.contains(device) } }
                guard let segment else {
                    state.current = nil
                    continue
                }
                let position = segment.position(atDeviceTime: device)
                if let current = state.current, position != current.start + Int64(current.filled) { state.current = nil }
                if state.current == nil {
                    guard position >= 0, position % Int64(Self.blockFrames) == 0 else { continue }
                    state.current = Block(start: position, hashes: Array(repeating: Self.basis, count: channels),
                                          samples: Array(repeating: 0, count: Self.blockFrames * channels))
                }
                let base = frame * channels, at = state.current!.filled * channels
                for channel in 0..<channels {
                    let sample = samples[base + channel]
                    state.current!.hashes[channel] = Self.fnv(state.current!.hashes[channel], sample)
                    state.current!.samples[at + channel] = sample
                }
                state.current!.filled += 1
                if state.current!.filled == Self.blockFrames {
                    complete(state.current!, in: &state)
                    state.current = nil
                }
            }
        }
    }

    private func complete(_ block: Block, in state: inout State) {
        let hash = BlockHash(start: block.start, hashes: block.hashes, time: Date().timeIntervalSince1970)
        if state.hashes.updateValue(hash, forKey: block.start) == nil { state.order.append(block.start) }
        if state.order.count > Self.hashHistory { state.hashes[state.order.removeFirst()] = nil }
        if state.raw.updateValue(block.samples, forKey: block.start) == nil { state.rawOrder.append(block.start) }
        if state.rawOrder.count > Self.rawHistory { state.raw[state.rawOrder.removeFirst()] = nil }
        state.fresh.append(hash)
        if state.fresh.count > Self.hashHistory { state.fresh.removeFirst() }
    }
}
