extension FilePlayer {
    /// How many buffers of how many seconds each of many players started together keeps queued:
    /// six of 0.25 s while all their buffers fit in ``budget`` bytes; beyond that four, as short
    /// as the budget asks but never under 0.1 s (4096 stereo 48 kHz layers: four of 0.128 s,
    /// 768 MiB instead of 2.3 GiB).
    ///
    /// Every byte of a buffer is memory the kernel must zero and the streamer fill before the
    /// first sample, so at thousands of layers a long queue costs seconds of start-up. A
    /// ``FileStreamer`` keeps up with four short buffers a layer: three stay queued while it
    /// refills the fourth.
    public struct Buffering: Sendable, Hashable {
        /// Bytes all the layers' buffers may take together.
        public static let budget = 768.0 * 1024 * 1024
        /// Buffers per layer (``FilePlayer/bufferCount``).
        public var count: Int
        /// Seconds per buffer (``FilePlayer/bufferDuration``).
        public var seconds: Double

        /// The buffering for layers whose queues play `layersBytesPerSecond` bytes a second in
        /// all: 32-bit float samples at each file's rate, in each queue's channels.
        public init(layersBytesPerSecond: Double) {
            if layersBytesPerSecond * 6 * 0.25 <= Self.budget {
                count = 6
                seconds = 0.25
            } else {
                count = 4
                seconds = max(0.1, min(0.25, Self.budget / (layersBytesPerSecond * 4)))
            }
        }
    }
}
