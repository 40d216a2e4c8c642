import Foundation
import Lockstep

/// Deterministic test signals, interleaved float.
public enum Signals {
    /// A sine of `frequency` Hz at `sampleRate`, `frames` long, in every one of `channels` channels.
    public static func sine(frequency: Double, sampleRate: Double, frames: Int, amplitude: Float = 1,
                            channels: Int = 1, phase: Double = 0) -> [Float] {
        var out = [Float](repeating: 0, count: frames * channels)
        for i in 0..<frames {
            let v = amplitude * Float(sin(2 * Double.pi * frequency * Double(i) / sampleRate + phase))
            for c in 0..<channels { out[i * channels + c] = v }
        }
        return out
    }

    /// A mono counter ramp: frame i holds `Float(start + i) * step` (exact in float up to 2^24).
    public static func ramp(frames: Int, start: Int = 0, step: Float = 1.0 / 65536, channels: Int = 1) -> [Float] {
        var out = [Float](repeating: 0, count: frames * channels)
        for i in 0..<frames {
            for c in 0..<channels { out[i * channels + c] = Float(start + i) * step }
        }
        return out
    }

    /// A constant signal.
    public static func constant(_ value: Float, frames: Int, channels: Int = 1) -> [Float] {
        [Float](repeating: value, count: frames * channels)
    }

    /// Silence with a single impulse of `value` at `position`.
    public static func impulse(at position: Int, frames: Int, value: Float = 1, channels: Int = 1) -> [Float] {
        var out = [Float](repeating: 0, count: frames * channels)
        for c in 0..<channels { out[position * channels + c] = value }
        return out
    }

    /// One channel of interleaved samples.
    public static func channel(_ c: Int, of samples: [Float], channels: Int) -> [Float] {
        stride(from: c, to: samples.count, by: channels).map { samples[$0] }
    }

    /// The index of the first sample whose magnitude exceeds `threshold`, or nil.
    public static func firstNonSilent(_ samples: [Float], threshold: Float = 0) -> Int? {
        samples.firstIndex { abs($0) > threshold }
    }

    /// The index of the largest magnitude.
    public static func peakIndex(_ samples: [Float]) -> Int {
        var best = 0
        for i in samples.indices where abs(samples[i]) > abs(samples[best]) { best = i }
        return best
    }
}

/// An offline engine set up for tests: a device, an engine, and a render loop that collects
/// the interleaved output.
public final class OfflineHarness: @unchecked Sendable {
    /// The device.
    public let device: OfflineDevice
    /// The engine.
    public let engine: Engine
    /// Frames per render call.
    public let period: Int

    /// Creates a float offline device and its engine.
    public init(sampleRate: Double = 48000, channels: Int = 2, period: Int = 256,
                rateConverter: SampleRateConverterFactory? = nil) throws {
        device = try OfflineDevice(format: StreamFormat(sampleRate: sampleRate, channelCount: channels, sampleFormat: .float32),
                                   maximumFramesPerRender: max(period, 4096))
        engine = try Engine(device: device, rateConverter: rateConverter)
        self.period = period
    }

    /// Renders `frames` frames in calls of `period` frames (the last may be shorter); returns
    /// interleaved floats.
    public func render(frames: Int) throws -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(frames * device.channelCount)
        var left = frames
        while left > 0 {
            let n = min(period, left)
            out += try device.renderFloat(frames: n)
            left -= n
        }
        return out
    }

    /// Renders and returns one channel.
    public func renderChannel(_ channel: Int, frames: Int) throws -> [Float] {
        Signals.channel(channel, of: try render(frames: frames), channels: device.channelCount)
    }
}

/// Collects values from callbacks on any thread.
public final class Recorder<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Value] = []
    /// Creates an empty recorder.
    public init() {}
    /// Appends a value.
    public func append(_ value: Value) { lock.lock(); storage.append(value); lock.unlock() }
    /// Everything appended so far.
    public var values: [Value] { lock.lock(); defer { lock.unlock() }; return storage }
}

extension OutputQueue {
    /// Allocates a buffer, fills it with `samples` (interleaved float) and enqueues it.
    @discardableResult
    public func enqueueSamples(_ samples: [Float], startTime: Int64? = nil, trimFramesAtStart: Int = 0,
                               trimFramesAtEnd: Int = 0, parameters: [ParameterEvent] = []) throws -> (QueueBuffer, Int64) {
        let buffer = try allocateBuffer(frameCapacity: max(1, samples.count / format.channelCount))
        buffer.fill(from: samples)
        let start = try enqueue(buffer, startTime: startTime, trimFramesAtStart: trimFramesAtStart,
                                trimFramesAtEnd: trimFramesAtEnd, parameters: parameters)
        return (buffer, start)
    }
}
