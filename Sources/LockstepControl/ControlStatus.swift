import Lockstep
import LockstepSession

/// A snapshot of a running session: the `status` command's answer.
///
/// As JSON: `event` (`"status"`), `state`, `position` (session samples), `seconds`, `sampleTime`
/// (the device sample playing now), `rate`, `cues` (each with its `state`), `next`, `playhead`,
/// `layers` (gain and peak) and `discontinuities`.
public struct ControlStatus: Sendable, Hashable, Codable {
    /// One cue.
    public struct Cue: Sendable, Hashable, Codable {
        /// Its name.
        public var name: String
        /// Its number (position in the session file, from 1).
        public var number: Int
        /// Its layer.
        public var layer: String
        /// Where it stands now.
        public var state: SessionTimeline.CueState
        /// Its first session sample, once placed.
        public var start: Int64?
        /// The session sample after its last sound, when known.
        public var end: Int64?
    }

    /// One layer.
    public struct Layer: Sendable, Hashable, Codable {
        /// Its name.
        public var name: String
        /// Its gain now, in dB (nil: −∞).
        public var gainDB: Double?
        /// Its peak level in the last metering period, in dBFS (nil: silence).
        public var peakDB: Double?
    }

    /// The cue that starts next.
    public struct Next: Sendable, Hashable, Codable {
        /// Its name.
        public var name: String
        /// Seconds until it starts (nil: it waits for go).
        public var inSeconds: Double?
        /// Whether it waits for go.
        public var manual: Bool
    }

    /// Always `status` (so that a status line is told apart from other JSON lines).
    public var event = "status"
    /// `playing`, `paused` or `stopped`.
    public var state: String
    /// The session sample playing now.
    public var position: Int64
    /// ``position`` in seconds.
    public var seconds: Double
    /// The device sample playing now.
    public var sampleTime: Int64
    /// The session's rate.
    public var rate: Double
    /// Every cue, in file order.
    public var cues: [Cue]
    /// The cue that starts next, if any.
    public var next: Next?
    /// The manual cue a plain go fires.
    public var playhead: String?
    /// Every layer, in file order.
    public var layers: [Layer]
    /// How many discontinuities the engine has seen.
    public var discontinuities: Int

    /// The state of `player` now.
    public init(player: SessionPlayer) {
        let timeline = player.timeline
        let position = player.position
        let rate = timeline.rate
        let playhead = player.playhead
        state = player.isRunning ? "playing" : (player.isPaused ? "paused" : "stopped")
        self.position = position
        seconds = Double(position) / rate
        sampleTime = player.engine.currentTime().sampleTime
        self.rate = rate
        cues = timeline.cues.map { cue in
            Cue(name: cue.name, number: cue.index + 1, layer: timeline.layers[cue.layer].name,
                state: cue.state(at: position), start: cue.start, end: cue.end)
        }
        next = timeline.nextCue(at: position, playhead: timeline.cues.firstIndex { $0.name == playhead }).map { cue in
            Next(name: cue.name, inSeconds: cue.start.map { Double($0 - position) / rate }, manual: cue.start == nil)
        }
        self.playhead = playhead
        layers = zip(timeline.layers.indices, player.queues).map { index, queue in
            let db = timeline.layerGainDB(index, at: position)
            let peak = ((try? queue.currentLevelMeterDB()) ?? []).map(\.peakPower).max() ?? -.infinity
            return Layer(name: timeline.layers[index].name, gainDB: db.isFinite ? db : nil,
                         peakDB: peak.isFinite ? Double(peak) : nil)
        }
        discontinuities = player.engine.discontinuityCount
    }
}
