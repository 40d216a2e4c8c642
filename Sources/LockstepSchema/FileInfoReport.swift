/// `lockstep info --json`: one object per file, one per line.
public struct FileInfoReport: Sendable, Hashable, Codable {
    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// The path as given (`-` for standard input).
    public var file: String
    /// The container, as libsndfile names it (`WAV (Microsoft)`, `FLAC`, …).
    public var container: String
    /// The encoding, as libsndfile names it (`Signed 16 bit PCM`, …).
    public var encoding: String
    /// The sample format samples are read in (`s16`, `s24`, `f32`, …).
    public var sampleFormat: String
    /// The codec or sample encoding, short: `PCM s16`, `µ-law`, `Vorbis`, `MP3`, ….
    public var codec: String
    /// Whether the encoding is lossy.
    public var lossy: Bool
    /// Bits per second (exact for uncompressed, the file's average for compressed).
    public var bitrate: Int?
    /// Whether `bitrate` is exact (uncompressed) or an average over the file.
    public var bitrateExact: Bool
    /// An MP3's declared bitrate mode (`constant`, `average`, `variable`), else absent.
    public var bitrateMode: String?
    /// Whether the file states its length exactly (false: an estimate, see `estimatedFrames`).
    public var lengthExact: Bool
    /// The length libsndfile estimated when it differs from the frames decoded.
    public var estimatedFrames: Int64?
    /// Frames per second.
    public var sampleRate: Int
    /// Channels.
    public var channels: Int
    /// Frames really decoded.
    public var frames: Int64
    /// `frames` ÷ `sampleRate`.
    public var seconds: Double
    /// The largest absolute finite sample (linear, 1 = 0 dBFS).
    public var peak: Double
    /// The peak in dBFS, rounded to 0.01 (null: silence).
    @DecibelLevel public var peakDB: Double?
    /// NaN or infinite samples, read as silence (and left out of the peak).
    public var nonFiniteSamples: Int64
    /// Bytes of a partial frame at the end of the data, ignored.
    public var partialFrameBytes: Int

    /// Creates a report; `peakDB` is rounded as the schema writes levels.
    public init(file: String, container: String, encoding: String, sampleFormat: String, codec: String, lossy: Bool,
                bitrate: Int?, bitrateExact: Bool, bitrateMode: String?, lengthExact: Bool, estimatedFrames: Int64?,
                sampleRate: Int, channels: Int, frames: Int64, peak: Double, peakDB: Double,
                nonFiniteSamples: Int64, partialFrameBytes: Int) {
        self.file = file
        self.container = container
        self.encoding = encoding
        self.sampleFormat = sampleFormat
        self.codec = codec
        self.lossy = lossy
        self.bitrate = bitrate
        self.bitrateExact = bitrateExact
        self.bitrateMode = bitrateMode
        self.lengthExact = lengthExact
        self.estimatedFrames = estimatedFrames
        self.sampleRate = sampleRate
        self.channels = channels
        self.frames = frames
        seconds = sampleRate > 0 ? Double(frames) / Double(sampleRate) : 0
        self.peak = peak
        self.peakDB = JSONSchema.decibels(peakDB)
        self.nonFiniteSamples = nonFiniteSamples
        self.partialFrameBytes = partialFrameBytes
    }
}
