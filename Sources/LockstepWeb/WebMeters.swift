import Foundation
import Lockstep
import LockstepControl
import LockstepSchema
import LockstepSession

/// What the web page's meters show, pushed many times a second: `{"event":"meters", …}`.
///
/// Read from the levels the engine publishes for any thread (the ones the terminal display
/// reads); nothing here touches the realtime thread. Levels are dBFS; nil is silence (−∞).
public struct WebMeters: Sendable, Hashable, Codable {
    /// One meter.
    public struct Meter: Sendable, Hashable, Codable {
        /// The layer's name, or `master`.
        public var name: String
        /// The loudest sample of the last metering window, in dBFS (nil: silence).
        public var peakDB: Double?
        /// The RMS level of the last metering window, in dBFS (nil: silence).
        public var rmsDB: Double?
        /// The loudest sample since the session started, in dBFS (nil: silence).
        public var holdDB: Double?
        /// Whether any sample reached full scale (0 dBFS) since the session started.
        public var clip: Bool
    }

    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// Always `meters`.
    public var event = "meters"
    /// `playing`, `paused` or `stopped`.
    public var state: String
    /// The session sample playing now.
    public var position: Int64
    /// ``position`` in seconds.
    public var seconds: Double
    /// The device sample playing now.
    public var sampleTime: Int64
    /// Seconds to the next cue placed on the timeline (nil: none is placed ahead).
    public var nextInSeconds: Double?
    /// The next cue placed on the timeline.
    public var next: String?
    /// One meter per layer, in file order; when not ``complete``, only the layers whose meter
    /// changed since the message before (a page keeps showing the others as they were).
    public var layers: [Meter]
    /// Whether ``layers`` holds every layer: in the first meters a page gets and once a second.
    /// Among thousands of mostly quiet layers the others hold a few: every layer's meter in every
    /// message was 0.12 MB 25 times a second at 4094 layers.
    public var complete = true
    /// The master output (nil when the engine does not meter it).
    public var master: Meter?
    /// How many discontinuities the engine has seen.
    public var discontinuities: Int

    /// The meters of `player` now.
    public init(player: SessionPlayer) {
        let timeline = player.timeline
        let position = player.position
        state = player.isRunning ? "playing" : (player.isPaused ? "paused" : "stopped")
        self.position = position
        seconds = Double(position) / timeline.rate
        let engine = player.engine
        sampleTime = engine.currentTime().sampleTime
        let coming = timeline.cues.filter { ($0.start ?? -1) > position }.min { $0.start! < $1.start! }
        next = coming?.name
        nextInSeconds = coming.map { Double($0.start! - position) / timeline.rate }
        layers = zip(timeline.layers, player.queues).map { layer, queue in
            let levels = (try? queue.currentLevelMeterDB()) ?? []
            return Self.meter(layer.name, peakDB: levels.map(\.peakPower).max(), rmsDB: levels.map(\.averagePower).max(),
                              hold: queue.peakHold.max())
        }
        if engine.isMasterMeteringEnabled {
            let levels = engine.masterLevels
            master = Self.meter("master", peakDB: levels.map(\.peakPower).max().map(Decibels.fromLinear),
                                rmsDB: levels.map(\.averagePower).max().map(Decibels.fromLinear), hold: engine.masterPeakHold.max())
        }
        discontinuities = engine.discontinuityCount
    }

    private static func meter(_ name: String, peakDB: Float?, rmsDB: Float?, hold: Float?) -> Meter {
        func finite(_ value: Float?) -> Double? { value.flatMap { JSONSchema.decibels($0) } }
        let hold = hold ?? 0
        return Meter(name: name, peakDB: finite(peakDB), rmsDB: finite(rmsDB), holdDB: hold > 0 ? finite(Decibels.fromLinear(hold)) : nil,
                     clip: hold >= 1)
    }

    /// Keeps in ``layers`` only the meters that differ from `previous` (the layers of the message
    /// before, in the same order), and marks the message incomplete; with nil (or another count
    /// of layers), keeps every layer.
    public mutating func keepChanges(since previous: [Meter]?) {
        guard let previous, previous.count == layers.count else { return }
        layers = zip(layers, previous).compactMap { $0 == $1 ? nil : $0 }
        complete = false
    }

    /// The meters as one line of JSON.
    public var json: String { ControlJSON.line(self) }
}

/// The engine's discontinuities, pushed as they happen:
/// `{"event":"discontinuities","schema":1,"total":N,"recent":[{"kind":"xrun","sampleTime":…,"frames":…,"queues":[…]}]}`,
/// each entry a ``DiscontinuityRecord`` as every `--json` writes it.
public struct WebDiscontinuities: Sendable, Hashable, Codable {
    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// Always `discontinuities`.
    public var event = "discontinuities"
    /// How many the engine has seen.
    public var total: Int
    /// The most recent ones (at most 20), oldest first.
    public var recent: [DiscontinuityRecord]

    /// The discontinuities `engine` has logged.
    public init(engine: Engine) {
        let (last, total) = engine.discontinuities(after: engine.discontinuityCount - 20)
        self.total = total
        recent = last.suffix(20).map(DiscontinuityRecord.init)
    }

    /// As one line of JSON.
    public var json: String { ControlJSON.line(self) }
}

/// The cue list as the page's table needs it beyond the status: each cue's number, whether it
/// waits for go, and its length. `GET /api/cues`.
public struct WebCueList: Sendable, Hashable, Codable {
    /// One cue.
    public struct Cue: Sendable, Hashable, Codable {
        /// Its name.
        public var name: String
        /// Its `number:` in the session file, or its position there (from 1).
        public var number: String
        /// Its layer.
        public var layer: String
        /// Whether a go places it (itself, or the cue it chains to).
        public var manual: Bool
        /// Its length in session samples (nil: it loops forever).
        public var frames: Int64?
        /// For a cue placed by another cue's go (chained to it, or continued into): that manual
        /// cue's name; nil for a manual cue itself and a cue with a time.
        public var goOf: String?
        /// For an action cue: what it does (`fade bed`, `stop bed`, `wait`…).
        public var action: String?
        /// The group cue it is in; nil at the top of the cue list.
        public var group: String?
        /// Its type (`audio`, `fade`, `wait`…).
        public var type: String
        /// The MIDI triggers whose action names it (`note 60 ch 1`, `msc go`), in file order.
        public var triggers: [String] = []
        /// Its keys and values as the session file (with the run's edits) writes them
        /// (``LockstepSession/Session/writtenValues(ofCue:)``).
        public var values: [String: String]
    }

    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// The session's sample rate.
    public var sampleRate: Double
    /// The cues, in file order.
    public var cues: [Cue]
    /// The session's layers, in file order.
    public var layers: [String] = []
    /// Each layer's settings as the session file writes them (`gain`, `ports`, `channel_map`), by name.
    public var layerValues: [String: [String: String]] = [:]
    /// Every key a cue takes (``LockstepSession/CueValue/keys``), for an editor.
    public var keys: [String] = CueValue.keys
    /// Whether the request that asked may edit the show.
    public var editable = false

    /// The cues of `player`'s session.
    public init(player: SessionPlayer) {
        let timeline = player.timeline
        let session = player.editedSession
        let document = session.document.cues
        let numbers = document.map(\.number)
        layers = timeline.layers.map(\.name)
        for (index, layer) in session.document.layers.enumerated() { layerValues[layer.name] = session.writtenValues(ofLayer: index) }
        sampleRate = timeline.rate
        cues = timeline.cues.map { cue in
            Cue(name: cue.name, number: (cue.index < numbers.count ? numbers[cue.index] : nil) ?? String(cue.index + 1),
                layer: timeline.layers[cue.layer].name, manual: cue.isManual, frames: cue.length,
                goOf: cue.trigger.flatMap { $0 == cue.index ? nil : timeline.cues[$0].name },
                action: timeline.actionSummary(cue), group: cue.group.map { timeline.cues[$0].name },
                type: cue.index < document.count ? document[cue.index].action.type.rawValue : "audio",
                values: cue.index < document.count ? session.writtenValues(ofCue: cue.index) : [:])
        }
        for trigger in session.document.triggers {
            guard let action = trigger.action, let command = try? ControlLine.parse(action),
                  let reference = MIDITriggers.cue(of: command),
                  let name = try? ControlDispatcher.resolve(reference, in: timeline, numbers: numbers),
                  let index = cues.firstIndex(where: { $0.name == name }) else { continue }
            cues[index].triggers.append(Self.describe(trigger))
        }
    }

    /// A trigger's message as the page shows it: `note 60 ch 1`, `cc 20`, `program 4`, `msc go`.
    static func describe(_ trigger: SessionDocument.Trigger) -> String {
        var text: String
        switch trigger.message {
        case .note(let note): text = "note \(note)"
        case .controlChange(let controller): text = "cc \(controller)"
        case .programChange(let program): text = "program \(program)"
        case .showControl(let command): text = "msc \(command.rawValue)"
        }
        if let value = trigger.value { text += "=\(value)" }
        if let channel = trigger.channel { text += " ch \(channel)" }
        return text
    }

    /// As one line of JSON.
    public var json: String { ControlJSON.line(self) }
}
