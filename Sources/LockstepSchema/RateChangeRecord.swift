/// A sample-rate change a live command (`play`, `session run`) played on through.
public struct RateChangeRecord: Sendable, Hashable, Codable {
    /// The device sample time of the first cycle at the new rate (every layer stopped there).
    public var sampleTime: Int64
    /// The new rate.
    public var sampleRate: Int
    /// `session run`: the session sample (at the new rate) it played on from.
    public var position: Int64?
    /// The device sample time it played on at (absent while a session was paused).
    public var resumedSampleTime: Int64?
    /// `resumedSampleTime` on JACK's 32-bit frame clock.
    public var resumedJACKFrame: UInt32?
    /// `play`: per layer, the file frame (of the whole play) it played on from.
    public var fileFrames: [Int64]?

    /// Creates a record.
    public init(sampleTime: Int64, sampleRate: Int, position: Int64? = nil, resumedSampleTime: Int64?,
                resumedJACKFrame: UInt32?, fileFrames: [Int64]? = nil) {
        self.sampleTime = sampleTime
        self.sampleRate = sampleRate
        self.position = position
        self.resumedSampleTime = resumedSampleTime
        self.resumedJACKFrame = resumedJACKFrame
        self.fileFrames = fileFrames
    }
}
