import LockstepSession

/// A change of a running session, published to every subscriber of a ``ControlPublisher``.
///
/// Cue changes carry the session sample they happened on (``position``) and, while the session
/// plays, the device sample that played it (``sampleTime``). A change a seek caused carries the
/// position the seek went to.
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
        /// The timeline broke (xrun, underrun, rate change…): ``detail`` names the kind,
        /// ``sampleTime`` says where.
        case discontinuity
        /// Sent every second while the session runs: ``state``, ``position``, ``sampleTime``.
        case heartbeat
    }

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

    /// Creates an update.
    public init(_ kind: Kind, cue: String? = nil, layer: String? = nil, position: Int64? = nil, sampleTime: Int64? = nil,
                seconds: Double? = nil, decibels: Double? = nil, detail: String? = nil) {
        self.kind = kind
        self.cue = cue
        self.layer = layer
        self.position = position
        self.sampleTime = sampleTime
        self.seconds = seconds
        self.decibels = decibels
        self.detail = detail
    }

    /// The update as one line of JSON.
    public var json: String { ControlJSON.line(self) }
}
