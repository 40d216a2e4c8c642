import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

@Suite("SoxrRateConverter")
struct SoxrRateConverterTests {
    /// The result of streaming a signal through a converter.
    struct Run {
        var output: [Float] = []
        /// The largest |frames returned − inputFrames × ratio| over the process calls.
        var worstCallDeviation = 0.0
        /// The largest inputTotal × ratio − outputTotal after any call (frames held back).
        var worstHoldBack = 0.0
        var flushedFrames = 0
    }

    /// Feeds `input` (interleaved) in chunks cycling through `chunks`, then flushes.
    ///
    /// `capacity` limits each call's output buffer (nil: room for everything).
    static func stream(_ converter: SoxrRateConverter, _ input: [Float], chunks: [Int],
                       capacity: Int? = nil, flushCapacity: Int? = nil) -> Run {
        let channels = converter.channelCount
        let frames = input.count / channels
        var run = Run()
        var offset = 0
        var index = 0
        var inputTotal = 0
        var outputTotal = 0
        let bound = converter.maximumLatencyFrames
        input.withUnsafeBufferPointer { source in
            while offset < frames {
                let count = min(chunks[index % chunks.count], frames - offset)
                index += 1
                let room = capacity ?? (Int((Double(count) * converter.ratio).rounded(.up)) + bound)
                var out = [Float](repeating: .nan, count: max(1, room) * channels)
                let got = out.withUnsafeMutableBufferPointer {
                    converter.process(source.baseAddress! + offset * channels, frames: count,
                                      into: $0.baseAddress!, capacity: room)
                }
                #expect(got >= 0 && got <= room)
                run.output += out[0..<(got * channels)]
                offset += count
                inputTotal += count
                outputTotal += got
                run.worstCallDeviation = max(run.worstCallDeviation, abs(Double(got) - Double(count) * converter.ratio))
                run.worstHoldBack = max(run.worstHoldBack, Double(inputTotal) * converter.ratio - Double(outputTotal))
            }
        }
        let tailRoom = flushCapacity ?? bound
        var tail = [Float](repeating: .nan, count: tailRoom * channels)
        let flushed = tail.withUnsafeMutableBufferPointer { converter.flush(into: $0.baseAddress!, capacity: tailRoom) }
        run.flushedFrames = flushed
        run.output += tail[0..<(flushed * channels)]
        return run
    }

    /// Index of the largest |sample| of `channel`.
    static func peakIndex(_ samples: [Float], channel: Int, channels: Int) -> Int {
        var best = 0
        var bestValue: Float = -1
        for frame in 0..<(samples.count / channels) where abs(samples[frame * channels + channel]) > bestValue {
            bestValue = abs(samples[frame * channels + channel])
            best = frame
        }
        return best
    }

    static let oddChunks = [37, 512, 1001]

    @Test("an impulse at input frame 1000 of 44100→48000 peaks at output frame 1088, both channels")
    func impulseAlignment() throws {
        let converter = try SoxrRateConverter(inputRate: 44100, outputRate: 48000, channelCount: 2)
        let frames = 20000
        var input = [Float](repeating: 0, count: frames * 2)
        input[1000 * 2] = 1
        input[1000 * 2 + 1] = -0.5
        let run = Self.stream(converter, input, chunks: Self.oddChunks)
        #expect(Self.peakIndex(run.output, channel: 0, channels: 2) == 1088)
        #expect(Self.peakIndex(run.output, channel: 1, channels: 2) == 1088)
        #expect(run.output[1088 * 2] > 0.5)
        #expect(run.output[1088 * 2 + 1] < -0.25)
        // Total length after flush: round(20000 × 48000 / 44100) = round(21768.71) = 21769, ±1 allowed.
        let expected = (Double(frames) * 48000 / 44100).rounded()
        #expect(abs(Double(run.output.count / 2) - expected) <= 1)
        #expect(!run.output.contains { $0.isNaN })
    }

    @Test("impulses land at round(n × ratio) for other rate pairs", arguments: [
        (48000.0, 44100.0), (44100.0, 96000.0), (96000.0, 44100.0), (22050.0, 48000.0),
        (48000.0, 8000.0), (8000.0, 48000.0), (44100.0, 88200.0), (32000.0, 48000.0),
    ])
    func impulseOtherRates(inputRate: Double, outputRate: Double) throws {
        let converter = try SoxrRateConverter(inputRate: inputRate, outputRate: outputRate, channelCount: 1)
        let frames = 30000
        for position in [1000, 7777] {
            var input = [Float](repeating: 0, count: frames)
            input[position] = 1
            let run = Self.stream(converter, input, chunks: Self.oddChunks)
            let ideal = Double(position) * converter.ratio
            #expect(abs(Double(Self.peakIndex(run.output, channel: 0, channels: 1)) - ideal) <= 0.5 + 1e-9,
                    "impulse at \(position): ideal \(ideal)")
            #expect(abs(Double(run.output.count) - (Double(frames) * converter.ratio).rounded()) <= 1)
        }
    }

    @Test("a sine keeps its amplitude and phase (latency-compensated) after 44100→48000")
    func sineAmplitude() throws {
        let converter = try SoxrRateConverter(inputRate: 44100, outputRate: 48000, channelCount: 2)
        let frames = 44100
        var input = [Float](repeating: 0, count: frames * 2)
        for frame in 0..<frames {
            let phase = 2 * Double.pi * 1000 * Double(frame) / 44100
            input[frame * 2] = Float(0.8 * sin(phase))
            input[frame * 2 + 1] = Float(0.3 * cos(phase))
        }
        let run = Self.stream(converter, input, chunks: Self.oddChunks)
        let outFrames = run.output.count / 2
        var peak: [Float] = [0, 0]
        var worstError: Float = 0
        for frame in 2000..<(outFrames - 2000) {
            let phase = 2 * Double.pi * 1000 * Double(frame) / 48000
            peak[0] = max(peak[0], abs(run.output[frame * 2]))
            peak[1] = max(peak[1], abs(run.output[frame * 2 + 1]))
            worstError = max(worstError, abs(run.output[frame * 2] - Float(0.8 * sin(phase))))
        }
        #expect(abs(peak[0] - 0.8) < 0.01)
        #expect(abs(peak[1] - 0.3) < 0.01)
        #expect(worstError < 0.01, "output differs from the ideal 48 kHz sine by \(worstError)")
    }

    @Test("maximumLatencyFrames bounds every call's deviation, the hold-back and the flush", arguments: [
        (44100.0, 48000.0), (48000.0, 44100.0), (8000.0, 48000.0), (48000.0, 8000.0),
        (44100.0, 192000.0), (192000.0, 44100.0), (44100.0, 47999.0),
    ])
    func latencyBound(inputRate: Double, outputRate: Double) throws {
        var generator = SplitMix(seed: 42)
        let frames = 60000
        let input = (0..<(frames * 2)).map { _ in Float(generator.nextUnit() - 0.5) }
        for chunks in [[1], Self.oddChunks, [4096], [16384, 3], [frames]] {
            let converter = try SoxrRateConverter(inputRate: inputRate, outputRate: outputRate, channelCount: 2)
            let bound = Double(converter.maximumLatencyFrames)
            let run = Self.stream(converter, input, chunks: chunks)
            #expect(run.worstCallDeviation <= bound, "chunks \(chunks): call deviation \(run.worstCallDeviation) > \(bound)")
            #expect(run.worstHoldBack <= bound, "chunks \(chunks): hold-back \(run.worstHoldBack) > \(bound)")
            #expect(Double(run.flushedFrames) <= bound, "chunks \(chunks): flush \(run.flushedFrames) > \(bound)")
            #expect(abs(Double(run.output.count / 2) - (Double(frames) * converter.ratio).rounded()) <= 1)
        }
    }

    @Test("output that does not fit is deferred, not lost")
    func smallCapacity() throws {
        var generator = SplitMix(seed: 7)
        let input = (0..<(20000 * 2)).map { _ in Float(generator.nextUnit() - 0.5) }
        let roomy = Self.stream(try SoxrRateConverter(inputRate: 44100, outputRate: 48000, channelCount: 2),
                                input, chunks: Self.oddChunks)
        for capacity in [0, 1, 10, 300] {
            // Everything that did not fit comes out of the flush, given room for it.
            let tight = Self.stream(try SoxrRateConverter(inputRate: 44100, outputRate: 48000, channelCount: 2),
                                    input, chunks: Self.oddChunks, capacity: capacity, flushCapacity: 30000)
            let identical = tight.output == roomy.output
            #expect(identical, "capacity \(capacity): \(tight.output.count) vs \(roomy.output.count) samples")
        }
    }

    @Test("flush and reset start a new stream that matches a fresh converter")
    func resetAndReuse() throws {
        var input = [Float](repeating: 0, count: 10000)
        input[500] = 1
        input[4000] = -0.5
        let converter = try SoxrRateConverter(inputRate: 48000, outputRate: 44100, channelCount: 1)
        let first = Self.stream(converter, input, chunks: Self.oddChunks)
        let second = Self.stream(converter, input, chunks: [999])
        let same = first.output == second.output
        #expect(same)

        var partial = [Float](repeating: 0.25, count: 3000)
        _ = partial.withUnsafeMutableBufferPointer { buffer in
            var out = [Float](repeating: 0, count: 3000 + converter.maximumLatencyFrames)
            return converter.process(buffer.baseAddress!, frames: 3000, into: &out, capacity: out.count)
        }
        converter.reset()
        let afterReset = Self.stream(converter, input, chunks: Self.oddChunks)
        let sameAfterReset = afterReset.output == first.output
        #expect(sameAfterReset)
    }

    @Test("equal rates pass audio through unchanged in length and position")
    func equalRates() throws {
        let converter = try SoxrRateConverter(inputRate: 48000, outputRate: 48000, channelCount: 2)
        var generator = SplitMix(seed: 3)
        let input = (0..<(5000 * 2)).map { _ in Float(generator.nextUnit() - 0.5) }
        let run = Self.stream(converter, input, chunks: Self.oddChunks)
        try #require(run.output.count == input.count)
        var worst: Float = 0
        for (a, b) in zip(input, run.output) { worst = max(worst, abs(a - b)) }
        #expect(worst < 1e-4)
    }

    @Test("the factory makes high-quality converters")
    func factory() throws {
        let made = try SoxrRateConverter.factory(44100, 48000, 6)
        let converter = try #require(made as? SoxrRateConverter)
        #expect(converter.channelCount == 6)
        #expect(converter.ratio == 48000.0 / 44100.0)
        #expect(converter.quality == .high)
        #expect(converter.maximumLatencyFrames > 0)
        let veryHigh = try SoxrRateConverter(inputRate: 44100, outputRate: 48000, channelCount: 1, quality: .veryHigh)
        #expect(veryHigh.maximumLatencyFrames > 0)
    }

    @Test("impossible configurations throw unsupportedFormat", arguments: [
        (0.0, 48000.0, 2), (44100.0, -1.0, 2), (Double.nan, 48000.0, 2), (44100.0, 48000.0, 0),
        (44100.0, 48000.0, 65), (1000.0, 1_000_000.0, 1),
    ])
    func invalid(inputRate: Double, outputRate: Double, channels: Int) {
        let error = #expect(throws: AudioQueueError.self) {
            try SoxrRateConverter(inputRate: inputRate, outputRate: outputRate, channelCount: channels)
        }
        #expect(error?.code == .unsupportedFormat)
    }
}

/// The seeded generator the test signals use.
typealias SplitMix = SeededRandom
