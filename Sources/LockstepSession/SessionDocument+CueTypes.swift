import Foundation
/// QLab's cue model in the session format: cue types, waits and continue modes.
extension SessionDocument {
    /// What a cue does (`type`; QLab's cue types of the same names).
    public enum CueType: String, Sendable, Hashable, CaseIterable {
        /// Plays a region of an audio file on a layer (the default).
        case audio
        /// Moves a cue's level (`target`) or a layer's gain (`layer`) to `level` over `duration`.
        case fade
        /// Stops the target cue (5 ms fade).
        case stop
        /// Pauses the target cue (5 ms fade).
        case pause
        /// Plays the paused target cue on.
        case resume
        /// Lets the looping target cue play to the end of the pass it is in, then end.
        case devamp
        /// Fires the target manual cue without moving the playhead.
        case start
        /// Puts the playhead on the target manual cue.
        case goto
        /// Loads the target manual cue to `load_time`: its next GO plays it from that time in
        /// (QLab's Load cue).
        case load
        /// Does nothing for `duration`: a gap a chain of cues can follow.
        case wait
        /// Holds cues (`children:`) that start with it: all at once (`mode: timeline`) or one after
        /// another (`mode: playlist`). A stop, pause, resume, devamp or fade of it acts on every
        /// audio cue inside it.
        case group
        /// Sends an OSC message (`message`) over UDP to `destination` (`HOST:PORT`) on its first
        /// sample, live (a render lists it on its sample: ``SessionRenderer/Summary/messages``).
        case network
        /// Sends a MIDI message (`note`, `cc`, `program`, `msc`, …) on the MIDI output port on its
        /// first sample, exact to the sample, live (a render lists it on its sample:
        /// ``SessionRenderer/Summary/messages``).
        case midi

        /// Whether it acts on the cue named by `target`.
        public var takesTarget: Bool { ![.audio, .wait, .group, .network, .midi].contains(self) }
        /// QLab's name of the type (`/cue/{cue}/type`).
        public var qlabName: String {
            switch self {
            case .audio: return "Audio"
            case .fade: return "Fade"
            case .stop: return "Stop"
            case .pause: return "Pause"
            case .resume: return "Resume"
            case .devamp: return "Devamp"
            case .start: return "Start"
            case .goto: return "GoTo"
            case .load: return "Load"
            case .wait: return "Wait"
            case .group: return "Group"
            case .network: return "Network"
            case .midi: return "MIDI"
            }
        }
    }

    /// How a cue carries on into the next cue of the list (`continue`; QLab's continue mode).
    public enum ContinueMode: String, Sendable, Hashable, CaseIterable {
        /// The next cue waits for its own GO (QLab's "do not continue").
        case none
        /// The next cue starts `post_wait` after this one starts.
        case autoContinue = "auto-continue"
        /// The next cue starts when this one ends.
        case autoFollow = "auto-follow"
    }

    /// How a group cue starts the cues it holds (`mode`; QLab's group modes of the same names).
    public enum GroupMode: String, Sendable, Hashable, CaseIterable {
        /// Every cue starts with the group, `at` its own time from the group's start (QLab's
        /// "timeline: start all children simultaneously").
        case timeline
        /// The first cue starts with the group, each next one when the one before ends, overlapped
        /// by the group's `crossfade` (QLab's "playlist").
        case playlist
    }

    /// The shape of a fade cue's move (`curve`).
    public enum FadeCurve: String, Sendable, Hashable, CaseIterable, Codable {
        /// The level moves in dB at a constant rate (as a `gain`/`level` ramp does).
        case linear
        /// In dB along a half cosine: slow at both ends (QLab's default shape).
        case sCurve = "s-curve"
        /// The amplitude (not the dB) moves at a constant rate, as a DAW's linear fade.
        case linearGain = "linear-gain"

        /// Where a move of this shape stands after `fraction` (0…1) of its time, 0…1.
        public func shape(_ fraction: Double) -> Double {
            switch self {
            case .linear, .linearGain: return fraction
            case .sCurve: return (1 - cos(Double.pi * fraction)) / 2
            }
        }
    }

    /// The keys every cue type takes, whatever it does.
    static let commonCueKeys: Set<String> = ["name", "number", "type", "at", "after", "with", "offset", "pre_wait",
                                             "post_wait", "continue"]

    /// The keys a cue of `type` takes besides ``commonCueKeys``.
    static func keys(of type: CueType) -> Set<String> {
        switch type {
        case .audio: return ["layer", "file", "gain", "fade_in", "fade_out", "from", "to", "loop", "crossfade", "channel_map"]
        case .fade: return ["target", "layer", "level", "duration", "curve", "stop_target"]
        case .stop, .pause, .resume, .devamp, .start, .goto: return ["target"]
        case .load: return ["target", "load_time"]
        case .wait: return ["duration"]
        case .group: return ["mode", "children", "crossfade", "loop"]
        case .network: return ["destination", "message"]
        case .midi: return Set(SessionParser.midiCueKeys)
        }
    }
}

extension SessionDocument.Cue {
    /// What the cue does beyond playing a file: its type and the keys that go with it.
    public struct Action: Sendable, Hashable {
        /// The type (`type`, default audio).
        public var type: SessionDocument.CueType = .audio
        /// The cue it acts on (`target`: a name or cue number); nil for none.
        public var target: String?
        /// A fade's level in dB (`level`).
        public var level: Double?
        /// A fade's or wait's length (`duration`).
        public var duration: SessionTime?
        /// A load cue's time (`load_time`, default 0): where its target's next GO plays from.
        public var loadTime: SessionTime?
        /// A fade's shape (`curve`, default s-curve).
        public var curve: SessionDocument.FadeCurve = .sCurve
        /// Whether a fade stops its target cue when done (`stop_target`).
        public var stopsTarget = false
        /// The time between its trigger and its action (`pre_wait`; added to `offset`).
        public var preWait: SessionTime?
        /// With `continue: auto-continue`, the time from its start to the next cue's (`post_wait`).
        public var postWait: SessionTime?
        /// How the next cue of the list starts (`continue`); nil when not given.
        public var continueMode: SessionDocument.ContinueMode?
        /// The group cue (its index in ``SessionDocument/cues``) this cue is in; nil at the top of
        /// the list.
        public var parent: Int?
        /// A group's mode (`mode`, default timeline).
        public var groupMode = SessionDocument.GroupMode.timeline
        /// A network cue's destination (`destination`): `HOST:PORT`, `[IPV6]:PORT`.
        public var destination: String?
        /// A network cue's OSC message (`message`).
        public var message: NetworkMessage?
        /// A MIDI cue's message (`note`, `cc`, `program`, `msc`, …).
        public var midi: MIDICueMessage?
        /// A MIDI cue's keys as read, before they make ``midi``.
        var midiFields = MIDIFields()
        /// Whether `type` named no type (reported once; the cue is then checked no further).
        var hasUnknownType = false

        /// The defaults: an audio cue.
        public init() {}
    }
}
