/// A break in the timeline as every JSON output writes it: in `--json` summaries, `--json-events`
/// lines and OSC/web `discontinuity` updates.
///
/// `{"kind": "xrun", "sampleTime": 96000, "frames": 256, "queues": ["drums.wav"]}`, with `detail`
/// where the kind has one (the xrun delay in µs, the new rate or period, the latency in frames).
public struct DiscontinuityRecord: Sendable, Hashable, Codable {
    /// The kind: `xrun`, `underrun`, `sampleRateChange`, `bufferSizeChange`, `clockJump`,
    /// `playbackLatencyChange`, `captureLatencyChange`, `serverLost`, `serverRestart`, `freewheel`,
    /// `shutdown`, `overflow` or `resume`.
    public var kind: String
    /// The device sample time at which it began.
    public var sampleTime: Int64
    /// Its length in device frames (the silence of an underrun, the frames an xrun skipped, the
    /// signed jump of a clock jump); 0 when it has none.
    public var frames: Int64
    /// The queues (layers) affected; every queue for a device-level break.
    public var queues: [String]
    /// The kind's detail (xrun delay in µs, new rate or period, latency in frames, ms away for a
    /// server restart, 1/0 for freewheel on/off); absent when the kind has none.
    public var detail: Double?

    /// Creates a record.
    public init(kind: String, sampleTime: Int64, frames: Int64, queues: [String], detail: Double? = nil) {
        self.kind = kind
        self.sampleTime = sampleTime
        self.frames = frames
        self.queues = queues
        self.detail = detail
    }
}
