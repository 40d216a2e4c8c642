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
        /// A cue's level was set (``gainDB``, from ``position``).
        case cueLevel = "cue/level"
        /// A cue (``cue``, its name after the edit) was edited from ``position`` on: a page or
        /// controller showing the cue list reads it again.
        case cueEdited = "cue/edited"
        /// A manual cue was loaded to a time (QLab's load-to-time): its next go starts it
        /// ``frames`` samples (``seconds``) in; 0: from its top again.
        case cueLoaded = "cue/loaded"
        /// A layer's gain was set (``gainDB``, from ``position``).
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
        /// The show went back to its top (a reset): every cue waits again, the playhead
        /// (``cue``) is on the first manual cue, and the session plays from ``position`` (0).
        case reset
        /// Every cue fades out (a panic command); silent from ``position``.
        case panic
        /// The timeline broke (xrun, underrun, rate change…): ``discontinuity`` says what and
        /// where (``sampleTime`` repeats its time).
        case discontinuity
        /// Sent every second while the session runs: ``state``, ``position``, ``sampleTime``.
        case heartbeat
        /// `play`: a layer (``file``) began to sound on ``sampleTime``.
        case layerStarted = "layer/started"
        /// `play`: a layer (``file``) stopped on ``sampleTime``.
        case layerEnded = "layer/ended"
        /// `record`: the first frame of ``file`` was captured on ``sampleTime``.
        case recordStarted = "record/started"
        /// `record`: the recording of ``file`` ended; ``frames`` written.
        case recordEnded = "record/ended"
        /// The device's rate changed to ``sampleRate`` at ``sampleTime`` (the layers play on).
        case rateChange = "rate"
        /// A start or a change (a GO, a seek, a resume) came too late for its sample: it was meant
        /// for session sample ``position`` and its audio began on device sample ``sampleTime``,
        /// ``frames`` late, those frames skipped to stay on the session's timeline.
        case late
        /// `session run --chase`: the chase locked, lost the timecode, saw it jump, relocated the
        /// session or stopped it (``state``: `lock`, `loss`, `jump`, `relocate`, `stop`), with
        /// the session sample (``position``) on device sample ``sampleTime`` and the label read
        /// (``timecode``).
        case chase
        /// `session run --main` / `--backup-of`: a backup joined the main or left it (``state``:
        /// `joined`, `left`), or the backup lost its main and now plays alone, taking commands
        /// (`lost`); ``peer`` is the other side's address.
        case link
        /// `session run --main` / `--backup-of`: the outputs of the main and a backup (``peer``)
        /// differ, compared by hashes of blocks of session samples (``state``: `differs`, the
        /// block from ``position``, ``frames`` long; `diverged`, once both sides' samples of that
        /// block are compared: ``position`` is the first session sample that differs), on
        /// ``outputs``; or they are the same again from ``position`` (`agrees`).
        case divergence
    }

    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version

    /// What changed.
    public var kind: Kind
    /// The cue concerned (the cue selected, for ``Kind/playhead``).
    public var cue: String?
    /// The layer concerned, by name (a session's layer).
    public var layer: String?
    /// The file concerned: `play`'s layer, `record`'s output.
    public var file: String?
    /// The session sample it happened on.
    public var position: Int64?
    /// The device sample of ``position`` (while the session plays), or of a discontinuity.
    public var sampleTime: Int64?
    /// ``position`` in seconds.
    public var seconds: Double?
    /// The level (``Kind/cueLevel``) or gain (``Kind/layerGain``) set, in dB rounded to 0.01;
    /// written as `null` for −∞ by those two kinds, left out by the others.
    public var gainDB: Double?
    /// The session's state (`playing`, `paused`, `stopped`), for a heartbeat.
    public var state: String?
    /// A length in frames (what a layer played, what a recording wrote).
    public var frames: Int64?
    /// A new sample rate.
    public var sampleRate: Int?
    /// The break in the timeline, for ``Kind/discontinuity``.
    public var discontinuity: DiscontinuityRecord?
    /// A timecode label, `HH:MM:SS:FF` (``Kind/chase``).
    public var timecode: String?
    /// The other side of a show link, `HOST:PORT` (``Kind/link``, ``Kind/divergence``).
    public var peer: String?
    /// The outputs concerned, numbered from 1 (``Kind/divergence``).
    public var outputs: [Int]?

    /// Creates an update; `gainDB` is rounded as the schema writes levels (−∞ becomes nil).
    public init(_ kind: Kind, cue: String? = nil, layer: String? = nil, file: String? = nil, position: Int64? = nil,
                sampleTime: Int64? = nil, seconds: Double? = nil, gainDB: Double? = nil, state: String? = nil,
                frames: Int64? = nil, sampleRate: Int? = nil, discontinuity: DiscontinuityRecord? = nil, timecode: String? = nil,
                peer: String? = nil, outputs: [Int]? = nil) {
        self.kind = kind
        self.cue = cue
        self.layer = layer
        self.file = file
        self.position = position
        self.sampleTime = sampleTime
        self.seconds = seconds
        self.gainDB = gainDB.flatMap(JSONSchema.decibels)
        self.state = state
        self.frames = frames
        self.sampleRate = sampleRate
        self.discontinuity = discontinuity
        self.timecode = timecode
        self.peer = peer
        self.outputs = outputs
    }

    private enum CodingKeys: String, CodingKey {
        case schema, kind, cue, layer, file, position, sampleTime, seconds, gainDB, state, frames, sampleRate, discontinuity, timecode, peer, outputs
    }

    /// Encodes the update: absent fields are left out, except `gainDB` of a level or gain change,
    /// written as `null` when the level set is −∞.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(schema, forKey: .schema)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(cue, forKey: .cue)
        try container.encodeIfPresent(layer, forKey: .layer)
        try container.encodeIfPresent(file, forKey: .file)
        try container.encodeIfPresent(position, forKey: .position)
        try container.encodeIfPresent(sampleTime, forKey: .sampleTime)
        try container.encodeIfPresent(seconds, forKey: .seconds)
        if kind == .cueLevel || kind == .layerGain {
            try container.encode(gainDB, forKey: .gainDB)
        } else {
            try container.encodeIfPresent(gainDB, forKey: .gainDB)
        }
        try container.encodeIfPresent(state, forKey: .state)
        try container.encodeIfPresent(frames, forKey: .frames)
        try container.encodeIfPresent(sampleRate, forKey: .sampleRate)
        try container.encodeIfPresent(discontinuity, forKey: .discontinuity)
        try container.encodeIfPresent(timecode, forKey: .timecode)
        try container.encodeIfPresent(peer, forKey: .peer)
        try container.encodeIfPresent(outputs, forKey: .outputs)
    }

    /// The update as one line of JSON.
    public var json: String { JSONSchema.line(self) }
}
