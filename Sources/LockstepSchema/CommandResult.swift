/// What a session command did: the `data` of an `ok` ``ControlReply`` to every command but
/// `status` (whose data is a ``ControlStatus``), over OSC, the typed-line surface and the web page.
///
/// Only the fields the command concerns are written:
///
/// | command | fields |
/// | --- | --- |
/// | go, start | `cue`, `start`, `placed`, `playhead` (absent: past the last manual cue), `position`, `seconds`, `sampleTime` |
/// | stop, panic (of every cue) | `cues`, `silentFrom`, `position`, `seconds`, `sampleTime` |
/// | reset | `cues` (stopped), `playhead`, `position` (0), `sampleTime` (where the start plays again) |
/// | load | `cue`, `loadFrames`, `loadSeconds` |
/// | pause, resume, seek | `position`, `seconds`, `sampleTime` |
/// | stop, pause, resume, panic of one cue | `cue`, `start`, `end`, `position`, `seconds`, `sampleTime` |
/// | level, gain | `cue` or `layer`, `gainDB` (`null`: −∞), `rampFrames`, `rampSeconds`, `position`, `seconds`, `sampleTime` |
/// | next, previous, select | `playhead` |
///
/// `sampleTime` (the device sample of `position`) is absent while the session does not play. A
/// time-tagged command adds `requestedSampleTime` (the device sample it was tagged for) and
/// `lateFrames` (how many samples after it the command took effect; 0 when on time).
public struct CommandResult: Sendable, Hashable, Codable {
    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// The cue fired, changed or set.
    public var cue: String?
    /// The layer whose gain was set.
    public var layer: String?
    /// The session sample the command took effect on.
    public var position: Int64?
    /// ``position`` in seconds.
    public var seconds: Double?
    /// The device sample of ``position`` (absent while the session does not play).
    public var sampleTime: Int64?
    /// A fired cue's first session sample; a cue change's first sample.
    public var start: Int64?
    /// The session sample a stopped or paused cue is silent from (after its declick).
    public var end: Int64?
    /// A go's cues placed (the cue and the cues that follow it).
    public var placed: [String]?
    /// The manual cue a plain go fires next (absent: none waits).
    public var playhead: String?
    /// The cues a stop or panic silenced.
    public var cues: [String]?
    /// The session sample a stop or panic is silent from.
    public var silentFrom: Int64?
    /// The level or gain set, in dB rounded to 0.01 (`null`: −∞).
    public var gainDB: Double?
    /// The level or gain ramp, in frames (session samples).
    public var rampFrames: Int64?
    /// ``rampFrames`` in seconds.
    public var rampSeconds: Double?
    /// A time-tagged command: the device sample it was tagged for.
    public var requestedSampleTime: Int64?
    /// A time-tagged command: frames after ``requestedSampleTime`` it took effect (0: on time).
    public var lateFrames: Int64?
    /// A load: the samples into the cue its next go starts it.
    public var loadFrames: Int64?
    /// ``loadFrames`` in seconds.
    public var loadSeconds: Double?
    /// An edit of a cue: the session file's key it changed (`pre_wait`, `to`…).
    public var edited: String?
    /// A MIDI learn under way: the action the next MIDI message becomes a trigger of.
    public var learning: String?
    /// An edit of a cue: true when the cue was placed (scheduled, playing or played) and takes
    /// the edit at its next start; false when it took it at once.
    public var atNextStart: Bool?
    /// An edit of a layer's `ports`: the device sample from which the layer sounds where they
    /// say (out of the master mix onto its own outputs, or back).
    public var routedSampleTime: Int64?
    /// An audition: the frames (at the device's rate) it plays; absent when it loops forever.
    public var frames: Int64?

    /// Creates a result that took effect on session sample `position` (at `rate`), played by
    /// device sample `sampleTime` when the session plays.
    public init(position: Int64?, rate: Double, sampleTime: Int64?) {
        self.position = position
        seconds = position.map { rate > 0 ? Double($0) / rate : 0 }
        self.sampleTime = sampleTime
    }

    /// A level or gain result: `gainDB` (rounded; −∞ is nil) over `rampFrames` at `rate`.
    public mutating func setLevel(gainDB: Double, rampFrames: Int64, rate: Double) {
        self.gainDB = JSONSchema.decibels(gainDB)
        self.rampFrames = rampFrames
        rampSeconds = rate > 0 ? Double(rampFrames) / rate : 0
    }

    private enum CodingKeys: String, CodingKey {
        case schema, cue, layer, position, seconds, sampleTime, start, end, placed, playhead, cues, silentFrom, gainDB,
             rampFrames, rampSeconds, requestedSampleTime, lateFrames, loadFrames, loadSeconds, edited, learning, atNextStart, routedSampleTime, frames
    }

    /// Encodes the result: absent fields are left out, except the `gainDB` of a level or gain
    /// (one with ``rampFrames``), written as `null` for −∞.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(schema, forKey: .schema)
        try container.encodeIfPresent(cue, forKey: .cue)
        try container.encodeIfPresent(layer, forKey: .layer)
        try container.encodeIfPresent(position, forKey: .position)
        try container.encodeIfPresent(seconds, forKey: .seconds)
        try container.encodeIfPresent(sampleTime, forKey: .sampleTime)
        try container.encodeIfPresent(start, forKey: .start)
        try container.encodeIfPresent(end, forKey: .end)
        try container.encodeIfPresent(placed, forKey: .placed)
        try container.encodeIfPresent(playhead, forKey: .playhead)
        try container.encodeIfPresent(cues, forKey: .cues)
        try container.encodeIfPresent(silentFrom, forKey: .silentFrom)
        if rampFrames != nil {
            try container.encode(gainDB, forKey: .gainDB)
        } else {
            try container.encodeIfPresent(gainDB, forKey: .gainDB)
        }
        try container.encodeIfPresent(rampFrames, forKey: .rampFrames)
        try container.encodeIfPresent(rampSeconds, forKey: .rampSeconds)
        try container.encodeIfPresent(requestedSampleTime, forKey: .requestedSampleTime)
        try container.encodeIfPresent(lateFrames, forKey: .lateFrames)
        try container.encodeIfPresent(loadFrames, forKey: .loadFrames)
        try container.encodeIfPresent(loadSeconds, forKey: .loadSeconds)
        try container.encodeIfPresent(edited, forKey: .edited)
        try container.encodeIfPresent(learning, forKey: .learning)
        try container.encodeIfPresent(atNextStart, forKey: .atNextStart)
        try container.encodeIfPresent(routedSampleTime, forKey: .routedSampleTime)
        try container.encodeIfPresent(frames, forKey: .frames)
    }
}
