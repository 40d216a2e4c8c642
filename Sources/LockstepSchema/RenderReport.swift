/// `lockstep render --json` (and the file part of `session render --json`): what was written.
public struct RenderReport: Sendable, Hashable, Codable {
    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// The file written (`-` for standard output), named `file` as in every report.
    public var file: String
    /// The files mixed, in layer order (for `session render`: the session file).
    public var inputs: [String]
    /// Frames written.
    public var frames: Int64
    /// `frames` ÷ `sampleRate`.
    public var seconds: Double
    /// The output's rate.
    public var sampleRate: Int
    /// The output's channels.
    public var channels: Int
    /// The sample format written (`s16`, `s24`, `f32`, …).
    public var sampleFormat: String
    /// The file type, by its extension (`wav`, `flac`, `mp3`, …).
    public var fileType: String
    /// The encoding, short (`PCM s24`, `FLAC s16`, `MP3 (quality 0.8)`, …).
    public var encoding: String
    /// The mix's peak in dBFS, rounded to 0.01 (null: silence).
    @DecibelLevel public var peakDB: Double?
    /// Whether the mix went above 0 dBFS (lower the gains).
    public var clipped: Bool

    /// Creates a report; `peakDB` is rounded as the schema writes levels.
    public init(file: String, inputs: [String], frames: Int64, sampleRate: Int, channels: Int, sampleFormat: String,
                fileType: String, encoding: String, peakDB: Double, clipped: Bool) {
        self.file = file
        self.inputs = inputs
        self.frames = frames
        seconds = sampleRate > 0 ? Double(frames) / Double(sampleRate) : 0
        self.sampleRate = sampleRate
        self.channels = channels
        self.sampleFormat = sampleFormat
        self.fileType = fileType
        self.encoding = encoding
        self.peakDB = JSONSchema.decibels(peakDB)
        self.clipped = clipped
    }
}
