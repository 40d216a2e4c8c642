import Lockstep
import LockstepFiles

/// A streaming linear PCM converter: sample encoding and byte order (exactly, through 64-bit
/// floats: ``PCMSamples``), interleaving, channel count (a channel map) and sample rate (libsoxr,
/// latency-compensated). The engine of ``AudioConverterNew(_:_:_:)`` and of Extended Audio File
/// Services.
///
/// Source frames go in with ``push(_:frames:)``; converted frames come out with
/// ``pull(into:frames:)``. At the end of the stream ``end()`` releases what the rate converter
/// holds and makes the stream exactly `round(source frames × destination rate / source rate)`
/// frames long — so 44 100 frames at 44.1 kHz become exactly 48 000 at 48 kHz.
///
/// Not thread-safe: its owner serializes calls.
final class PCMConverter {
    let source: PCMFormat
    let destination: PCMFormat
    /// For each destination channel, the source channel it takes (from 0), or −1 for silence:
    /// Apple's `kAudioConverterChannelMap`.
    var channelMap: [Int]
    /// libsoxr's quality: ``SoxrRateConverter/Quality/veryHigh`` for `kAudioConverterQuality_Max`,
    /// ``SoxrRateConverter/Quality/high`` otherwise.
    private(set) var quality: SoxrRateConverter.Quality
    private var resampler: SoxrRateConverter?

    /// Converted frames not pulled yet: interleaved destination channels at the destination rate.
    private var fifo: [Double] = []
    private var fifoStart = 0
    /// Source frames pushed and destination frames pulled since the stream began.
    private(set) var consumedFrames: Int64 = 0
    private(set) var deliveredFrames: Int64 = 0
    /// Whether ``end()`` was called: no more source frames until ``reset()``.
    private(set) var ended = false

    private var decoded: [Double] = []
    private var mapped: [Double] = []
    private var floats: [Float] = []
    private var resampled: [Float] = []

    /// Destination frames per source frame.
    var ratio: Double { destination.sampleRate / source.sampleRate }
    var convertsRate: Bool { source.sampleRate != destination.sampleRate }
    /// Converted frames ready to pull.
    var available: Int { (fifo.count - fifoStart) / destination.channelCount }

    /// Creates a converter; the failure codes are Apple's (`kAudioConverterErr_…`).
    init(from source: PCMFormat, to destination: PCMFormat, quality: SoxrRateConverter.Quality = .high) throws(AudioQueueError) {
        self.source = source
        self.destination = destination
        self.quality = quality
        channelMap = Self.defaultChannelMap(inputs: source.channelCount, outputs: destination.channelCount)
        let ratio = destination.sampleRate / source.sampleRate
        guard SoxrRateConverter.supportedRatios.contains(ratio) else {
            throw AudioQueueError(kAudioConverterErr_OutputSampleRateOutOfRange,
                "cannot convert \(source.sampleRate) Hz to \(destination.sampleRate) Hz; the rates may differ by a factor of at most 256")
        }
        try makeResampler()
    }

    /// Apple's default channel map (AudioConverter.h, `kAudioConverterChannelMap`): the first
    /// min(inputs, outputs) channels in order; further outputs silent, further inputs dropped.
    static func defaultChannelMap(inputs: Int, outputs: Int) -> [Int] {
        (0..<outputs).map { $0 < inputs ? $0 : -1 }
    }

    private func makeResampler() throws(AudioQueueError) {
        guard convertsRate else { resampler = nil; return }
        do {
            resampler = try SoxrRateConverter(inputRate: source.sampleRate, outputRate: destination.sampleRate,
                                              channelCount: destination.channelCount, quality: quality)
        } catch {
            throw AudioQueueError(kAudioConverterErr_OutputSampleRateOutOfRange, error.message)
        }
    }

    /// Changes the rate converter's quality; the stream starts again (as after ``reset()``).
    func setQuality(_ quality: SoxrRateConverter.Quality) throws(AudioQueueError) {
        guard quality != self.quality else { return }
        self.quality = quality
        try makeResampler()
        reset()
    }

    /// Source frames to push for about `frames` more destination frames (at least 1).
    func inputFrames(forOutput frames: Int) -> Int {
        guard convertsRate else { return max(1, frames) }
        return max(1, Int((Double(frames) * source.sampleRate / destination.sampleRate).rounded(.up)))
    }

    /// Decodes `frames` frames from the source buffers (one pointer per source buffer) and
    /// converts them.
    func push(_ buffers: [UnsafeRawPointer], frames: Int) {
        guard frames > 0 else { return }
        let count = frames * source.channelCount
        if decoded.count < count { decoded = [Double](repeating: 0, count: count) }
        decoded.withUnsafeMutableBufferPointer { pointer in
            PCMSamples.decode(buffers, format: source, frames: frames, into: pointer.baseAddress!)
        }
        decoded.withUnsafeBufferPointer { pushDecoded($0.baseAddress!, frames: frames) }
    }

    /// Converts `frames` frames of already decoded source samples (interleaved doubles, source
    /// channels).
    func pushDecoded(_ samples: UnsafePointer<Double>, frames: Int) {
        guard frames > 0, !ended else { return }
        consumedFrames += Int64(frames)
        let outChannels = destination.channelCount
        let inChannels = source.channelCount
        let identity = inChannels == outChannels && channelMap.enumerated().allSatisfy { $0.offset == $0.element }
        let count = frames * outChannels
        if mapped.count < count { mapped = [Double](repeating: 0, count: count) }
        mapped.withUnsafeMutableBufferPointer { out in
            if identity {
                out.baseAddress!.update(from: samples, count: count)
            } else {
                for frame in 0..<frames {
                    for channel in 0..<outChannels {
                        let input = channelMap[channel]
                        out[frame * outChannels + channel] = input >= 0 && input < inChannels ? samples[frame * inChannels + input] : 0
                    }
                }
            }
        }
        guard let resampler else {
            fifo.append(contentsOf: mapped[0..<count])
            return
        }
        if floats.count < count { floats = [Float](repeating: 0, count: count) }
        for i in 0..<count { floats[i] = Float(mapped[i]) }
        let capacity = Int((Double(frames) * ratio).rounded(.up)) + resampler.maximumLatencyFrames + 8
        if resampled.count < capacity * outChannels { resampled = [Float](repeating: 0, count: capacity * outChannels) }
        let produced = floats.withUnsafeBufferPointer { input in
            resampled.withUnsafeMutableBufferPointer { output in
                resampler.process(input.baseAddress!, frames: frames, into: output.baseAddress!, capacity: capacity)
            }
        }
        appendResampled(produced)
    }

    private func appendResampled(_ frames: Int) {
        let count = frames * destination.channelCount
        fifo.reserveCapacity(fifo.count + count)
        for i in 0..<count { fifo.append(Double(resampled[i])) }
    }

    /// Ends the stream: releases what the rate converter holds and pads or trims the converted
    /// audio to exactly `round(consumed × ratio)` frames. Later pushes are ignored until
    /// ``reset()``.
    func end() {
        guard !ended else { return }
        ended = true
        guard let resampler else { return }
        let capacity = resampler.maximumLatencyFrames + 16
        if resampled.count < capacity * destination.channelCount {
            resampled = [Float](repeating: 0, count: capacity * destination.channelCount)
        }
        let produced = resampled.withUnsafeMutableBufferPointer { resampler.flush(into: $0.baseAddress!, capacity: capacity) }
        appendResampled(produced)
        resampler.reset()
        let target = Int64((Double(consumedFrames) * destination.sampleRate / source.sampleRate).rounded())
        let have = deliveredFrames + Int64(available)
        if have > target {
            let excess = Int(min(have - target, Int64(available)))
            fifo.removeLast(excess * destination.channelCount)
        } else if have < target {
            fifo.append(contentsOf: repeatElement(0, count: Int(target - have) * destination.channelCount))
        }
    }

    /// Encodes up to `frames` converted frames into the destination buffers (one pointer per
    /// destination buffer); returns the frames written.
    func pull(into buffers: [UnsafeMutableRawPointer], frames: Int) -> Int {
        let n = min(frames, available)
        guard n > 0 else { return 0 }
        fifo.withUnsafeBufferPointer { pointer in
            PCMSamples.encode(pointer.baseAddress! + fifoStart, format: destination, frames: n, into: buffers)
        }
        take(n)
        return n
    }

    /// Takes up to `frames` converted frames as doubles (interleaved destination channels).
    func pullDecoded(frames: Int) -> [Double] {
        let n = min(frames, available)
        let samples = Array(fifo[fifoStart..<(fifoStart + n * destination.channelCount)])
        take(n)
        return samples
    }

    private func take(_ frames: Int) {
        fifoStart += frames * destination.channelCount
        deliveredFrames += Int64(frames)
        if fifoStart == fifo.count {
            fifo.removeAll(keepingCapacity: true)
            fifoStart = 0
        } else if fifoStart > 65536 && fifoStart * 2 > fifo.count {
            fifo.removeFirst(fifoStart)
            fifoStart = 0
        }
    }

    /// Forgets the stream: converted frames not pulled, the rate converter's state, the counts.
    func reset() {
        resampler?.reset()
        fifo.removeAll(keepingCapacity: true)
        fifoStart = 0
        consumedFrames = 0
        deliveredFrames = 0
        ended = false
    }

    /// Converts `frames` frames at once, without touching the stream (same rate only).
    func convertDirect(_ input: [UnsafeRawPointer], frames: Int, into output: [UnsafeMutableRawPointer]) {
        precondition(!convertsRate)
        guard frames > 0 else { return }
        let saved = (fifo, fifoStart, consumedFrames, deliveredFrames)
        fifo = []
        fifoStart = 0
        push(input, frames: frames)
        _ = pull(into: output, frames: frames)
        (fifo, fifoStart, consumedFrames, deliveredFrames) = saved
    }
}
