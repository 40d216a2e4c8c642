import Foundation

/// The level of one channel over the most recent metering window: Audio Queue's
/// `AudioQueueLevelMeterState`.
///
/// In linear form (``OutputQueue/currentLevelMeter``) both values are amplitudes where 1.0 is
/// full scale; in decibel form (``OutputQueue/currentLevelMeterDB``) they are dBFS, where a
/// full-scale sine reads peak 0 dB and average −3.01 dB, and silence reads `-infinity`.
public struct ChannelLevel: Sendable, Hashable {
    /// The RMS (root-mean-square) level over the window.
    public var averagePower: Float
    /// The largest absolute sample value over the window.
    public var peakPower: Float

    /// Creates a level reading.
    public init(averagePower: Float, peakPower: Float) {
        self.averagePower = averagePower
        self.peakPower = peakPower
    }

    /// The same reading in decibels relative to full scale (20·log10).
    public var decibels: ChannelLevel {
        ChannelLevel(averagePower: Decibels.fromLinear(averagePower), peakPower: Decibels.fromLinear(peakPower))
    }
}

/// One level-meter reading with the window it measures on the device timeline.
///
/// Meters publish once per window (about 50 ms of device frames): ``sampleTime`` is the device
/// sample time of the window's first frame and ``frames`` its length, so a reading can be placed
/// exactly against discontinuities, cue starts and other readings. A meter that has not published
/// yet (or was just cleared by a stop) reads zero frames.
public struct LevelReading: Sendable, Hashable {
    /// The device sample time of the first frame of the measured window.
    public var sampleTime: Int64
    /// The window's length in frames.
    public var frames: Int
    /// The levels per channel, linear.
    public var levels: [ChannelLevel]

    /// Creates a reading.
    public init(sampleTime: Int64, frames: Int, levels: [ChannelLevel]) {
        self.sampleTime = sampleTime
        self.frames = frames
        self.levels = levels
    }

    /// The same reading with its levels in dBFS.
    public var decibels: LevelReading {
        LevelReading(sampleTime: sampleTime, frames: frames, levels: levels.map(\.decibels))
    }
}

/// Conversions between linear gain and decibels.
public enum Decibels {
    /// 20·log10(`linear`); `-infinity` for 0.
    public static func fromLinear(_ linear: Float) -> Float {
        linear <= 0 ? -.infinity : 20 * log10f(linear)
    }

    /// 10^(`decibels`/20); 0 for `-infinity`.
    public static func toLinear(_ decibels: Double) -> Double {
        decibels == -.infinity ? 0 : pow(10, decibels / 20)
    }
}
