import CSoxr
import Lockstep
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A streaming sample-rate converter for interleaved 32-bit float audio, built on libsoxr.
///
/// libsoxr's constant-rate engine is already latency-compensated: it discards its filter's
/// delay at the start of a stream and releases the tail when flushed, so an impulse at input
/// frame `n` peaks at output frame `round(n × ratio)` and a stream of `N` input frames yields
/// `round(N × ratio)` output frames (±1). This class adds the ``SampleRateConverter`` contract
/// on top: every call consumes all of its input, and output that does not fit in `capacity` is
/// kept and delivered first by the next call.
///
/// ``maximumLatencyFrames`` is measured, not guessed: the first converter for a given pair of
/// rates and quality feeds a silent stream through libsoxr one frame at a time, records the
/// largest number of output frames libsoxr ever holds back, and adds a 25 % margin (results
/// are cached per rate pair).
///
/// **Threads.** Not thread-safe: use a converter from one thread at a time (the thread that
/// enqueues buffers); it may move between threads.
public final class SoxrRateConverter: SampleRateConverter, @unchecked Sendable {
    /// The filter quality, trading CPU time for accuracy.
    public enum Quality: Sendable, Hashable {
        /// libsoxr's `SOXR_HQ`: 20-bit precision, single-precision engine. Transparent for
        /// playback.
        case high
        /// libsoxr's `SOXR_VHQ`: 28-bit precision, double-precision engine.
        case veryHigh

        var recipe: UInt {
            switch self {
            case .high: UInt(SOXR_HQ)
            case .veryHigh: UInt(SOXR_VHQ)
            }
        }
    }

    /// Creates converters with ``Quality/high`` quality, for ``Engine`` and other users of
    /// ``SampleRateConverterFactory``.
    public static let factory: SampleRateConverterFactory = { inputRate, outputRate, channelCount in
        try SoxrRateConverter(inputRate: inputRate, outputRate: outputRate, channelCount: channelCount)
    }

    /// The smallest and largest supported `outputRate / inputRate`.
    public static let supportedRatios: ClosedRange<Double> = (1.0 / 256)...256

    /// Input frames per second.
    public let inputRate: Double
    /// Output frames per second.
    public let outputRate: Double
    /// Channels per frame, for input and output.
    public let channelCount: Int
    /// `outputRate / inputRate`.
    public let ratio: Double
    /// The filter quality.
    public let quality: Quality
    /// An upper bound on the frames ``flush(into:capacity:)`` returns and on how far one
    /// ``process(_:frames:into:capacity:)`` call's output count strays from
    /// `inputFrames × ratio` (when `capacity` is large enough).
    ///
    /// Give `process` a capacity of at least `ceil(inputFrames × ratio) + maximumLatencyFrames`
    /// and `flush` at least `maximumLatencyFrames` and no output is ever deferred or dropped.
    public let maximumLatencyFrames: Int

    private let soxr: soxr_t
    /// Output that did not fit in a caller's buffer, delivered first by the next call.
    private var pending: UnsafeMutablePointer<Float>
    private var pendingCapacity: Int  // frames
    private var pendingStart = 0       // frames
    private var pendingCount = 0       // frames

    /// Creates a converter.
    ///
    /// - Throws: ``AudioQueueError`` with code ``AudioQueueError/Code/unsupportedFormat`` when a
    ///   rate is not positive and finite, the channel count is outside
    ///   1…``StreamFormat/maximumChannelCount``, the ratio is outside ``supportedRatios``, or
    ///   libsoxr rejects the configuration.
    public init(inputRate: Double, outputRate: Double, channelCount: Int,
                quality: Quality = .high) throws(AudioQueueError) {
        guard inputRate.isFinite, outputRate.isFinite, inputRate > 0, outputRate > 0 else {
            throw AudioQueueError(.unsupportedFormat,
                "cannot convert \(Self.hertz(inputRate)) to \(Self.hertz(outputRate)): both rates must be positive and finite")
        }
        guard (1...StreamFormat.maximumChannelCount).contains(channelCount) else {
            throw AudioQueueError(.unsupportedFormat,
                "cannot convert \(channelCount) channels; use 1…\(StreamFormat.maximumChannelCount) channels")
        }
        let ratio = outputRate / inputRate
        guard Self.supportedRatios.contains(ratio) else {
            throw AudioQueueError(.unsupportedFormat,
                "cannot convert \(Self.hertz(inputRate)) to \(Self.hertz(outputRate)): libsoxr converts between rates at most 256 times apart; resample in two steps or choose closer rates")
        }
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channelCount = channelCount
        self.ratio = ratio
        self.quality = quality
        soxr = try Self.makeSoxr(inputRate, outputRate, channelCount, quality)
        maximumLatencyFrames = try Self.latencyBound(inputRate, outputRate, quality)
        pendingCapacity = 0
        pending = UnsafeMutablePointer<Float>.allocate(capacity: 0)
    }

    deinit {
        soxr_delete(soxr)
        pending.deallocate()
    }

    /// Converts `inputFrames` frames and writes as many output frames as are ready.
    ///
    /// All input is consumed. Output that does not fit in `capacity` is kept and written first
    /// by the next call (or by ``flush(into:capacity:)``).
    /// - Returns: the number of frames written to `output` (at most `capacity`).
    public func process(_ input: UnsafePointer<Float>, frames inputFrames: Int,
                        into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int {
        var written = drainPending(into: output, capacity: capacity)
        var consumed = 0
        while true {
            let remaining = max(0, inputFrames - consumed)
            let destination: UnsafeMutablePointer<Float>
            let room: Int
            let toCaller = pendingCount == 0 && written < capacity
            if toCaller {
                destination = output + written * channelCount
                room = capacity - written
            } else {
                let wanted = Int((Double(remaining) * ratio).rounded(.up)) + maximumLatencyFrames + 64
                reservePending(wanted)
                destination = pending + (pendingStart + pendingCount) * channelCount
                room = pendingCapacity - pendingStart - pendingCount
            }
            var inputDone = 0
            var outputDone = 0
            soxr_process(soxr, input + consumed * channelCount, remaining, &inputDone,
                         destination, room, &outputDone)
            consumed += inputDone
            if toCaller {
                written += outputDone
            } else {
                pendingCount += outputDone
            }
            // Done when all input is in and libsoxr had no more output than fitted.
            if consumed >= inputFrames, outputDone < room { break }
            if inputDone == 0, outputDone == 0, room > 0 { break }  // defensive: no progress
        }
        return written
    }

    /// Ends the stream: writes every frame still held (deferred output first, then the
    /// filter's tail) and starts a new stream.
    ///
    /// Frames beyond `capacity` are discarded; a capacity of ``maximumLatencyFrames`` always
    /// suffices when earlier calls had room for their output.
    /// - Returns: the number of frames written (at most `capacity`).
    public func flush(into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int {
        var written = drainPending(into: output, capacity: capacity)
        if written < capacity {
            while written < capacity {
                var outputDone = 0
                soxr_process(soxr, nil, 0, nil, output + written * channelCount,
                             capacity - written, &outputDone)
                if outputDone == 0 { break }
                written += outputDone
            }
        }
        reset()
        return written
    }

    /// Discards the converter's state (held input, deferred output) and starts a new stream.
    public func reset() {
        soxr_clear(soxr)
        pendingStart = 0
        pendingCount = 0
    }

    // MARK: - Deferred output

    /// Copies deferred output into `output`; returns the frames copied.
    private func drainPending(into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int {
        let count = min(pendingCount, max(0, capacity))
        guard count > 0 else { return 0 }
        output.update(from: pending + pendingStart * channelCount, count: count * channelCount)
        pendingStart += count
        pendingCount -= count
        if pendingCount == 0 { pendingStart = 0 }
        return count
    }

    /// Ensures room for `frames` more deferred frames after the ones held.
    private func reservePending(_ frames: Int) {
        if pendingStart > 0 {
            memmove(pending, pending + pendingStart * channelCount,
                    pendingCount * channelCount * MemoryLayout<Float>.stride)
            pendingStart = 0
        }
        let needed = pendingCount + frames
        guard needed > pendingCapacity else { return }
        let newCapacity = max(needed, pendingCapacity * 2)
        let grown = UnsafeMutablePointer<Float>.allocate(capacity: newCapacity * channelCount)
        grown.update(from: pending, count: pendingCount * channelCount)
        pending.deallocate()
        pending = grown
        pendingCapacity = newCapacity
    }

    // MARK: - libsoxr set-up

    /// A rate for a message: `48000 Hz`, `22050.5 Hz`.
    static func hertz(_ rate: Double) -> String {
        rate.isFinite && rate == rate.rounded() && abs(rate) < 1e15 ? "\(Int(rate)) Hz" : "\(rate) Hz"
    }

    private static func makeSoxr(_ inputRate: Double, _ outputRate: Double, _ channelCount: Int,
                                 _ quality: Quality) throws(AudioQueueError) -> soxr_t {
        var ioSpec = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var qualitySpec = soxr_quality_spec(quality.recipe, 0)
        var runtimeSpec = soxr_runtime_spec(1)
        var error: soxr_error_t?
        let handle = soxr_create(inputRate, outputRate, UInt32(channelCount), &error,
                                 &ioSpec, &qualitySpec, &runtimeSpec)
        guard let handle, error == nil else {
            if let handle { soxr_delete(handle) }
            let reason = error.map { String(cString: $0) } ?? "unknown error"
            throw AudioQueueError(.unsupportedFormat,
                "libsoxr cannot convert \(Self.hertz(inputRate)) to \(Self.hertz(outputRate)) (\(reason)); choose other rates")
        }
        return handle
    }

    private struct LatencyKey: Hashable {
        var inputRate: Double
        var outputRate: Double
        var quality: Quality
    }

    private static let latencyCache = Mutex<[LatencyKey: Int]>([:])

    /// The measured hold-back bound for a rate pair, cached.
    private static func latencyBound(_ inputRate: Double, _ outputRate: Double,
                                     _ quality: Quality) throws(AudioQueueError) -> Int {
        let key = LatencyKey(inputRate: inputRate, outputRate: outputRate, quality: quality)
        if let cached = latencyCache.withLock({ $0[key] }) { return cached }
        let measured = try measureHoldBack(inputRate, outputRate, quality)
        let bound = Int((measured * 1.25).rounded(.up)) + 16
        latencyCache.withLock { $0[key] = bound }
        return bound
    }

    /// Feeds silence through a mono converter one frame at a time and returns the largest
    /// `inputFrames × ratio − outputFrames` seen (libsoxr holds back the same for any channel count).
    ///
    /// The hold-back peaks just before each block of output; after the first output appears the
    /// pattern settles within a few blocks, so the probe runs for eight times the start-up delay.
    static func measureHoldBack(_ inputRate: Double, _ outputRate: Double,
                                _ quality: Quality) throws(AudioQueueError) -> Double {
        let probe = try makeSoxr(inputRate, outputRate, 1, quality)
        defer { soxr_delete(probe) }
        let ratio = outputRate / inputRate
        let outputCapacity = 1 << 16
        let output = UnsafeMutablePointer<Float>.allocate(capacity: outputCapacity)
        defer { output.deallocate() }
        var silence: Float = 0
        var inputTotal = 0
        var outputTotal = 0
        var firstOutputAt = 0
        var maximum = 0.0
        let hardLimit = 1 << 24
        while inputTotal < hardLimit {
            if firstOutputAt > 0, inputTotal >= firstOutputAt * 8 { break }
            var inputDone = 0
            var outputDone = 0
            soxr_process(probe, &silence, 1, &inputDone, output, outputCapacity, &outputDone)
            inputTotal += inputDone
            outputTotal += outputDone
            while outputDone == outputCapacity {
                soxr_process(probe, &silence, 0, nil, output, outputCapacity, &outputDone)
                outputTotal += outputDone
            }
            if firstOutputAt == 0, outputTotal > 0 { firstOutputAt = inputTotal }
            maximum = max(maximum, Double(inputTotal) * ratio - Double(outputTotal))
        }
        return maximum
    }
}
