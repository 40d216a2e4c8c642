/// `lockstep session check --json`: a session's resolved timeline (also inside
/// `session render --json`). Positions are session samples at `sampleRate`.
public struct TimelineReport: Sendable, Hashable, Codable {
    /// One layer.
    public struct Layer: Sendable, Hashable, Codable {
        /// Its name.
        public var name: String
        /// Its gain in dB, rounded to 0.01 (null: −∞).
        @DecibelLevel public var gainDB: Double?
        /// The JACK ports its own outputs connect to (empty: the master mix).
        public var ports: [String]

        /// Creates a layer; `gainDB` is rounded as the schema writes levels.
        public init(name: String, gainDB: Double, ports: [String]) {
            self.name = name
            self.gainDB = JSONSchema.decibels(gainDB)
            self.ports = ports
        }
    }

    /// One cue.
    public struct Cue: Sendable, Hashable, Codable {
        /// Its name.
        public var name: String
        /// Its layer.
        public var layer: String
        /// Its audio file.
        public var file: String
        /// Whether it waits for go.
        public var manual: Bool
        /// Its first session sample (absent: not placed, a manual cue not fired).
        public var start: Int64?
        /// `start` in seconds.
        public var startSeconds: Double?
        /// The session sample after its last sound, when known.
        public var end: Int64?
        /// `end` in seconds.
        public var endSeconds: Double?
        /// Its length in session samples, when known.
        public var frames: Int64?
        /// Its gain (layer + cue) in dB, rounded to 0.01 (null: −∞).
        @DecibelLevel public var gainDB: Double?
        /// How many times it plays (absent: once; 0: forever).
        public var loop: Int?
        /// For a manual cue: frames (session samples) from its go to its first sample.
        public var afterGoFrames: Int64?
        /// For an action cue (`type` other than audio): what it does, e.g. `fade bed`, `stop bed`,
        /// `wait` (absent for an audio cue).
        public var action: String?
        /// The group cue it is in (absent at the top of the cue list).
        public var group: String?

        /// Creates a cue; times in seconds come from `rate`, `gainDB` is rounded.
        public init(name: String, layer: String, file: String, manual: Bool, start: Int64?, end: Int64?, frames: Int64?,
                    gainDB: Double, loop: Int?, afterGoFrames: Int64?, rate: Double) {
            self.name = name
            self.layer = layer
            self.file = file
            self.manual = manual
            self.start = start
            startSeconds = start.map { Double($0) / rate }
            self.end = end
            endSeconds = end.map { Double($0) / rate }
            self.frames = frames
            self.gainDB = JSONSchema.decibels(gainDB)
            self.loop = loop
            self.afterGoFrames = afterGoFrames
        }
    }

    /// One automation point: a layer's gain ramps to `gainDB` from `start` over `rampFrames`
    /// session samples.
    public struct Point: Sendable, Hashable, Codable {
        /// The layer.
        public var layer: String
        /// The session sample the ramp starts on.
        public var start: Int64
        /// `start` in seconds.
        public var startSeconds: Double
        /// The ramp's length in frames (session samples).
        public var rampFrames: Int64
        /// `rampFrames` in seconds.
        public var rampSeconds: Double
        /// The gain reached, in dB rounded to 0.01 (null: −∞).
        @DecibelLevel public var gainDB: Double?

        /// Creates a point; times in seconds come from `rate`, `gainDB` is rounded.
        public init(layer: String, start: Int64, rampFrames: Int64, gainDB: Double, rate: Double) {
            self.layer = layer
            self.start = start
            startSeconds = Double(start) / rate
            self.rampFrames = rampFrames
            rampSeconds = Double(rampFrames) / rate
            self.gainDB = JSONSchema.decibels(gainDB)
        }
    }

    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// Always true (an invalid session gives a ``SessionCheckFailure``).
    public var valid = true
    /// The session file.
    public var file: String
    /// The rate the timeline was resolved at.
    public var sampleRate: Int
    /// The session's channels.
    public var channels: Int
    /// Every layer, in file order.
    public var layers: [Layer]
    /// Every cue, in file order.
    public var cues: [Cue]
    /// Every automation point, by layer then time.
    public var automation: [Point]
    /// The session sample after the last placed cue's end, when known.
    public var end: Int64?
    /// `end` in seconds.
    public var endSeconds: Double?
    /// With `session check --jack`: the outputs on the JACK server and their compensation.
    public var outputs: OutputAlignmentReport?

    /// Creates a report.
    public init(file: String, sampleRate: Int, channels: Int, layers: [Layer], cues: [Cue], automation: [Point], end: Int64?) {
        self.file = file
        self.sampleRate = sampleRate
        self.channels = channels
        self.layers = layers
        self.cues = cues
        self.automation = automation
        self.end = end
        endSeconds = end.map { Double($0) / Double(sampleRate) }
    }
}
