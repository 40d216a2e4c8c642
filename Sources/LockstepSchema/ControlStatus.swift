/// A snapshot of a running session: the `status` command's answer.
///
/// As JSON: `schema`, `event` (`"status"`), `state`, `position` (session samples), `seconds`,
/// `sampleTime` (the device sample playing now), `sampleRate`, `cues` (each with its `state`),
/// `next`, `playhead`, `layers` (gain and peak) and `discontinuities`.
public struct ControlStatus: Sendable, Hashable, Codable {
    /// One cue.
    public struct Cue: Sendable, Hashable, Codable {
        /// Its name.
        public var name: String
        /// Its number (position in the session file, from 1).
        public var number: Int
        /// Its layer.
        public var layer: String
        /// Where it stands now: `waiting`, `scheduled`, `playing`, `paused`, `stopped` or `done`.
        public var state: String
        /// Its first session sample, once placed.
        public var start: Int64?
        /// The session sample after its last sound, when known.
        public var end: Int64?

        /// Creates a cue.
        public init(name: String, number: Int, layer: String, state: String, start: Int64?, end: Int64?) {
            self.name = name
            self.number = number
            self.layer = layer
            self.state = state
            self.start = start
            self.end = end
        }
    }

    /// One layer.
    public struct Layer: Sendable, Hashable, Codable {
        /// Its name.
        public var name: String
        /// Its gain now, in dB rounded to 0.01 (nil: −∞).
        @DecibelLevel public var gainDB: Double?
        /// Its peak level in the last metering period, in dBFS rounded to 0.01 (nil: silence).
        @DecibelLevel public var peakDB: Double?

        /// Creates a layer; the levels are rounded.
        public init(name: String, gainDB: Double, peakDB: Double) {
            self.name = name
            self.gainDB = JSONSchema.decibels(gainDB)
            self.peakDB = JSONSchema.decibels(peakDB)
        }
    }

    /// The cue that starts next.
    public struct Next: Sendable, Hashable, Codable {
        /// Its name.
        public var name: String
        /// Seconds until it starts (nil: it waits for go).
        public var inSeconds: Double?
        /// Whether it waits for go.
        public var manual: Bool

        /// Creates an entry.
        public init(name: String, inSeconds: Double?, manual: Bool) {
            self.name = name
            self.inSeconds = inSeconds
            self.manual = manual
        }
    }

    /// How a run that stopped without ending was resumed from its journal (`session run --resume`).
    public struct Resumed: Sendable, Hashable, Codable {
        /// The session sample it played on from (the paused position when resumed paused).
        public var position: Int64
        /// The device sample that played on (nil: resumed paused).
        public var sampleTime: Int64?
        /// Session samples between the last one journaled and ``position``.
        public var gap: Int64
        /// `jack` (the same server's frame clock), `wall` (the system clock), `crash` (the last
        /// record) or `paused`.
        public var clock: String
        /// Seconds between the last record and the restart.
        public var secondsAway: Double

        /// Creates a record.
        public init(position: Int64, sampleTime: Int64?, gap: Int64, clock: String, secondsAway: Double) {
            self.position = position
            self.sampleTime = sampleTime
            self.gap = gap
            self.clock = clock
            self.secondsAway = secondsAway
        }
    }

    /// A show link's side (`session run --main` / `--backup-of`).
    public struct Link: Sendable, Hashable, Codable {
        /// `main` or `backup`.
        public var role: String
        /// The main: the address it listens on; the backup: its main's.
        public var address: String
        /// The main: `listening` (no backup) or `joined`; the backup: `following` its main, or
        /// `alone` (the link is lost: it takes commands).
        public var state: String
        /// The main: how many backups follow it.
        public var backups: Int?
        /// Milliseconds the backup's session time is ahead of the main's (negative: behind), as
        /// it last measured by the system clock: on the backup its own, on the main its backup's
        /// as reported (with several, the furthest).
        public var offsetMilliseconds: Double?
        /// The backup on a free clock (`--free-clock`): parts per million its session plays
        /// faster (positive) or slower than its device's frames, steering to the main (on the
        /// main: as its backup reports it).
        public var steeringPPM: Double?
        /// Of ``steeringPPM``, the part that takes up the difference of the clocks (the steering
        /// loop's integral; the rest corrects the offset of the moment): steadier, it is how much
        /// faster (positive) the backup's session must play than its device's frames to keep
        /// up with the main's clock.
        public var driftPPM: Double?
        /// Blocks of session samples whose output hashes were compared with the other side's
        /// (the main: summed over its backups).
        public var comparedBlocks: Int?
        /// Of those, the blocks that differed.
        public var differingBlocks: Int?
        /// The first session sample found to differ (nil: none yet).
        public var firstDivergence: Int64?

        /// Creates a record.
        public init(role: String, address: String, state: String, backups: Int? = nil, offsetMilliseconds: Double? = nil,
                    comparedBlocks: Int? = nil, differingBlocks: Int? = nil, firstDivergence: Int64? = nil) {
            self.role = role
            self.address = address
            self.state = state
            self.backups = backups
            self.offsetMilliseconds = offsetMilliseconds
            self.comparedBlocks = comparedBlocks
            self.differingBlocks = differingBlocks
            self.firstDivergence = firstDivergence
        }
    }

    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version

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
    public var sampleRate: Int
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
    /// How this run was resumed from its journal (absent: it was not).
    public var resumed: Resumed?
    /// Its show link (absent: none).
    public var link: Link?
    /// The cue being auditioned (`audition CUE`; absent: none).
    public var auditioning: String?
    /// The show-control overrides switched off (`override KEY off`; absent: none).
    public var overridesOff: [String]?

    /// Creates a snapshot.
    public init(state: String, position: Int64, seconds: Double, sampleTime: Int64, sampleRate: Int, cues: [Cue],
                next: Next?, playhead: String?, layers: [Layer], discontinuities: Int) {
        self.state = state
        self.position = position
        self.seconds = seconds
        self.sampleTime = sampleTime
        self.sampleRate = sampleRate
        self.cues = cues
        self.next = next
        self.playhead = playhead
        self.layers = layers
        self.discontinuities = discontinuities
    }
}
