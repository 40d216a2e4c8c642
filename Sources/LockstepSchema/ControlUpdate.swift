/// A change of a running session, published to every subscriber of a ``ControlPublisher``.
///
/// Cue changes carry the session sample they happened on (``position``) and, while the session
/// plays, the device sample that played it (``sampleTime``). A change a seek caused carries the
/// position the seek went to.
///
/// The same object is an OSC update (`/update/{kind}`), a message of the web page and a line of
/// `--json-events` (`play`, `record` and `session run`); it carries ``schema``.
public struct ControlUpdate: Sendable, Hashable, Codable {
    /// What changed. The raw value is the OSC address under `/update/`.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// A cue began to sound (its first sample, or where a seek landed inside it).
        case cueStarted = "cue/started"
        /// A cue played to its end.
        case cueEnded = "cue/ended"
        /// A cue was stopped (or cancelled before it started): silent from ``position``.
        case cueStopped = "cue/stopped"
        /// A cue was paused: silent from ``position``.
        case cuePaused = "cue/paused"
        /// A paused cue plays on from ``position``.
        case cueResumed = "cue/resumed"
        /// A cue's level was set (``decibels``, from ``position``).
        case cueLevel = "cue/level"
        /// A layer's gain was set (``decibels``, from ``position``).
        case layerGain = "layer/gain"
        /// The playhead moved (``cue``: the manual cue a plain go fires next; nil: none waits).
        case playhead
        /// The session paused at ``position``.
        case paused
        /// The session plays on from ``position``.
        case resumed
        /// The session moved to ``position``.
        case seeked
        /// Every cue was stopped (a stop command).
        case stopped
        /// Every cue fades out (a panic command); silent from ``position``.
        case panic
        /// The timeline broke (xrun, underrun, rate change…): ``discontinuity`` says what and
        /// where (``detail`` repeats its kind, ``sampleTime`` its time).
        case discontinuity
        /// Sent every second while the session runs: ``state``, ``position``, ``sampleTime``.
        case heartbeat
        /// `play`: a layer (``layer``: its file) began to sound on ``sampleTime``.
        case layerStarted = "layer/started"
        /// `play`: a layer played to its end; ``frames`` it played.
        case layerEnded = "layer/ended"
        /// `record`: the first frame was captured on ``sampleTime``.
        case recordStarted = "record/started"
        /// `record`: the recording ended; ``frames`` written.
        case recordEnded = "record/ended"
        /// The device's rate changed to ``sampleRate`` at ``sampleTime`` (the layers play on).
        case rateChange = "rate"
    }

    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version

    /// What changed.
    public var kind: Kind
    /// The cue concerned (the cue selected, for ``Kind/playhead``).
    public var cue: String?
    /// The layer concerned.
    public var layer: String?
    /// The session sample it happened on.
    public var position: Int64?
    /// The device sample of ``position`` (while the session plays), or of a discontinuity.
    public var sampleTime: Int64?
    /// ``position`` in seconds.
    public var seconds: Double?
    /// The level or gain set, in dB.
    public var decibels: Double?
    /// The session's state (`playing`, `paused`, `stopped`) for a heartbeat; the discontinuity's
    /// kind.
    public var detail: String?
    /// A length in frames (what a layer played, what a recording wrote).
    public var frames: Int64?
    /// A new sample rate.
    public var sampleRate: Int?
    /// The break in the timeline, for ``Kind/discontinuity``.
    public var discontinuity: DiscontinuityRecord?

    /// Creates an update.
    public init(_ kind: Kind, cue: String? = nil, layer: String? = nil, position: Int64? = nil, sampleTime: Int64? = nil,
                seconds: Double? = nil, decibels: Double? = nil, detail: String? = nil, frames: Int64? = nil,
                sampleRate: Int? = nil, discontinuity: DiscontinuityRecord? = nil) {
        self.kind = kind
        self.cue = cue
        self.layer = layer
        self.position = position
        self.sampleTime = sampleTime
        self.seconds = seconds
        self.decibels = decibels
        self.detail = detail
        self.frames = frames
        self.sampleRate = sampleRate
        self.discontinuity = discontinuity
    }

    /// The update as one line of JSON.
    public var json: String { JSONSchema.line(self) }
}
