/// `lockstep record --json`: what was recorded, from which device sample, and what went wrong.
public struct RecordReport: Sendable, Hashable, Codable {
    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// The file written.
    public var file: String
    /// Frames written.
    public var frames: Int64
    /// `frames` ÷ `sampleRate`.
    public var seconds: Double
    /// The device sample time of the first frame (absent: nothing was captured).
    public var startSampleTime: Int64?
    /// The rate recorded at.
    public var sampleRate: Int
    /// The loudest channel's peak in dBFS, rounded to 0.01 (null: silence).
    @DecibelLevel public var peakDB: Double?
    /// Each channel's peak in dBFS, rounded to 0.01 (null: silence), in channel order.
    public var channelPeakDB: [Double?]
    /// Frames lost because the disk writer fell behind (written as silence).
    public var lostFrames: Int64
    /// Frames the server skipped in xruns while a driver's (physical) port was recorded: written
    /// as silence, keeping the take on the wall clock.
    public var skippedFrames: Int64
    /// Frames the server skipped in xruns while only other clients' ports were recorded: left out,
    /// since those clients were skipped too and their audio goes on unbroken (the take is that
    /// much shorter than the time it spans).
    public var leftOutFrames: Int64
    /// Every break in the timeline.
    public var discontinuities: [DiscontinuityRecord]
    /// Whether a signal (Ctrl-C) ended the recording.
    public var interrupted: Bool
    /// What ended it early, if anything.
    public var error: String?
    /// The process callback's durations over the recording (absent when nothing was measured),
    /// as in ``PlayReport/callbackTime``.
    public var callbackTime: PlayReport.CallbackTime?

    /// Creates a report from each channel's peak; `peakDB` is the largest, and the peaks are rounded.
    public init(file: String, frames: Int64, startSampleTime: Int64?, sampleRate: Int, channelPeakDB: [Double],
                lostFrames: Int64, skippedFrames: Int64, leftOutFrames: Int64 = 0, discontinuities: [DiscontinuityRecord],
                interrupted: Bool, error: String?,
                callbackTime: PlayReport.CallbackTime? = nil) {
        self.file = file
        self.frames = frames
        seconds = sampleRate > 0 ? Double(frames) / Double(sampleRate) : 0
        self.startSampleTime = startSampleTime
        self.sampleRate = sampleRate
        peakDB = channelPeakDB.max().flatMap(JSONSchema.decibels)
        self.channelPeakDB = channelPeakDB.map(JSONSchema.decibels)
        self.lostFrames = lostFrames
        self.skippedFrames = skippedFrames
        self.leftOutFrames = leftOutFrames
        self.discontinuities = discontinuities
        self.interrupted = interrupted
        self.error = error
        self.callbackTime = callbackTime
    }
}
