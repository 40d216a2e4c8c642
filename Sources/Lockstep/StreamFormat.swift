/// The format of an interleaved linear PCM stream: sample rate, channel count and sample encoding.
///
/// This is Lockstep's counterpart of Audio Queue's `AudioStreamBasicDescription` restricted to
/// what Lockstep plays: packed, interleaved linear PCM, one frame per packet.
public struct StreamFormat: Sendable, Hashable, CustomStringConvertible {
    /// The largest channel count a queue or device may have.
    public static let maximumChannelCount = 64

    /// Frames per second. Any positive finite rate is accepted.
    public var sampleRate: Double
    /// Channels per frame, 1…``maximumChannelCount``.
    public var channelCount: Int
    /// The encoding of each sample.
    public var sampleFormat: SampleFormat

    /// Creates a format without validating it; call ``validate()`` (queues and devices do) before use.
    public init(sampleRate: Double, channelCount: Int, sampleFormat: SampleFormat = .float32) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.sampleFormat = sampleFormat
    }

    /// Bytes in one frame (one sample for every channel).
    public var bytesPerFrame: Int { channelCount * sampleFormat.bytesPerSample }

    /// Checks that the format is one Lockstep can play.
    ///
    /// - Throws: ``AudioQueueError`` with code ``AudioQueueError/Code/unsupportedFormat`` naming the
    ///   offending field and the accepted range.
    public func validate() throws(AudioQueueError) {
        guard sampleRate.isFinite, sampleRate >= 1, sampleRate <= 1_536_000 else {
            throw AudioQueueError(.unsupportedFormat,
                "sample rate \(sampleRate) is not supported; use a rate between 1 and 1536000 Hz")
        }
        guard (1...Self.maximumChannelCount).contains(channelCount) else {
            throw AudioQueueError(.unsupportedFormat,
                "channel count \(channelCount) is not supported; use 1…\(Self.maximumChannelCount) channels")
        }
    }

    /// For example `48000 Hz, 2 ch, 32-bit float`.
    public var description: String {
        let rate = sampleRate == sampleRate.rounded() ? String(Int(sampleRate)) : String(sampleRate)
        return "\(rate) Hz, \(channelCount) ch, \(sampleFormat)"
    }
}
