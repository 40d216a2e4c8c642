import LockstepFiles
import LockstepTimecode

/// A session file as written, after parsing and checking each value on its own (references,
/// files and timing are checked by ``Session``).
///
/// Every element keeps its ``SourceLocation`` so later checks can point at the line.
public struct SessionDocument: Sendable, Hashable {
    /// The session file's path.
    public var path: String
    /// The folder relative audio paths resolve against.
    public var baseDirectory: String
    /// The render rate (`rate`, default 48000); live sessions use the server's rate.
    public var rate: Double
    /// Master channels (`channels`, default 2).
    public var channelCount: Int
    /// The layers, in file order.
    public var layers: [Layer]
    /// The cues, in file order.
    public var cues: [Cue]
    /// The layer gain changes, in file order.
    public var automation: [Automation]
    /// Whether the file declared `layers:` (if not, layers are made from the cues' `layer` names).
    public var declaresLayers: Bool
    /// The MIDI triggers (`triggers:`), in file order.
    public var triggers: [Trigger] = []
    /// The session's timecode (`timecode:`), if it declares one.
    public var timecode: SessionTimecode? = nil
    /// Where the `cues:` list is written (nil: the file has none).
    var cueList: CueListSpan? = nil
    /// Where the `triggers:` list is written (nil: the file has none).
    var triggerList: CueListSpan? = nil

    /// A named output queue with its gain and optional JACK ports.
    public struct Layer: Sendable, Hashable {
        /// The layer's name (its key under `layers:`).
        public var name: String
        /// Gain in dB (default 0).
        public var gainDB: Double
        /// JACK ports the layer's own outputs connect to (its channel i to port i); empty for none.
        public var ports: [String]
        /// Where the layer is declared.
        public var location: SourceLocation
        /// The layer's `channel_map`: how its cues' file channels reach the session's channels
        /// (a cue's own `channel_map` wins); nil for the default downmix.
        public var channelMap: ChannelMap? = nil
        /// Where the layer's `channel_map` value is, if it has one.
        public var channelMapLocation: SourceLocation? = nil
        /// Where its settings are written: their keys (nil: `{}` or nothing), and the value's bytes.
        var source: SourceSpans? = nil
        var settingsBytes: Range<Int>? = nil
    }

    /// When a cue starts.
    public enum Start: Sendable, Hashable {
        /// At a time from the start of the session.
        case at(SessionTime)
        /// On the first sample of this frame of the session's ``SessionDocument/timecode``
        /// (`at: tc 01:00:10:00`).
        case atTimecode(Timecode)
        /// When a `go` command (or `--go` at render) says.
        case manual
        /// The sample the named cue ends, minus ``Cue/crossfade``.
        case after(String)
        /// On the same sample as the named cue.
        case with(String)
        /// Not given: after the previous cue in the list (the first cue starts at 0).
        case afterPrevious
    }

    /// How often a cue's region plays.
    public enum Loop: Sendable, Hashable {
        /// This many times (at least 1).
        case times(Int)
        /// Until the session stops.
        case forever
    }

    /// One entry of the cue list.
    public struct Cue: Sendable, Hashable {
        /// The cue's name (`name`, default: the file name without extension).
        public var name: String
        /// The layer it plays on.
        public var layer: String
        /// The audio file as written.
        public var file: String
        /// The audio file's absolute path.
        public var resolvedFile: String
        /// When it starts.
        public var start: Start
        /// Added to the start (`offset`, ≥ 0).
        public var offset: SessionTime?
        /// Gain in dB, added to the layer's (default 0).
        public var gainDB: Double
        /// Fade-in length (`fade_in`).
        public var fadeIn: SessionTime?
        /// Fade-out length (`fade_out`).
        public var fadeOut: SessionTime?
        /// Start position in the file (`from`; samples are the file's).
        public var from: SessionTime?
        /// End position in the file (`to`; default: the end).
        public var to: SessionTime?
        /// Play count (`loop`).
        public var loop: Loop
        /// Overlap with the cue it follows (`crossfade`, only with `after`).
        public var crossfade: SessionTime?
        /// Where the cue's entry starts.
        public var location: SourceLocation
        /// Where each key's value is, for later errors (`file`, `after`, `to`…).
        public var keyLocations: [String: SourceLocation]
        /// The cue's `channel_map`: how its file's channels reach the session's channels; nil for
        /// its layer's, or the default downmix.
        public var channelMap: ChannelMap? = nil
        /// The cue's number (`number`, as QLab numbers cues: `1`, `2.5`, `A3`): the name MIDI Show
        /// Control and OSC controllers call it by; nil when it has none.
        public var number: String? = nil
        /// Its type and what goes with it (target, fade, waits, continue mode).
        public var action = Action()

        /// Where `key`'s value is, or the cue's own location.
        /// Where the cue is written in the file (nil for a cue not read from a file).
        var source: SourceSpans?
        public func location(of key: String) -> SourceLocation { keyLocations[key] ?? location }
    }

    /// A ramped gain change on a layer.
    public struct Automation: Sendable, Hashable {
        /// The layer.
        public var layer: String
        /// When the ramp starts.
        public var at: SessionTime
        /// The gain reached at the end of the ramp, in dB.
        public var gainDB: Double
        /// The ramp's length (0: a step on the exact sample).
        public var ramp: SessionTime
        /// Where the entry is.
        public var location: SourceLocation
        /// Where each key's value is.
        public var keyLocations: [String: SourceLocation]
    }

    /// A MIDI trigger (`triggers:`): a MIDI message that sends a control command.
    public struct Trigger: Sendable, Hashable {
        /// The MIDI message a trigger answers.
        public enum Message: Sendable, Hashable {
            /// A note on (key 0…127) with a velocity above 0; `value` narrows it to one velocity.
            case note(Int)
            /// A control change (controller 0…127); `value` narrows it to one value, else any
            /// value above 0 (a button's press, not its release).
            case controlChange(Int)
            /// A program change (program 0…127, as sent: what desks show as program 1 is 0).
            case programChange(Int)
            /// A MIDI Show Control command (SysEx `F0 7F <device> 02 <format> <command> …`).
            case showControl(ShowControlCommand)
        }

        /// The MIDI Show Control commands a trigger can answer.
        public enum ShowControlCommand: String, Sendable, Hashable, CaseIterable {
            /// GO (01): fires the cue whose number the message carries, or the next cue.
            case go
            /// STOP (02): pauses the cue the message names, or the whole session.
            case stop
            /// RESUME (03): resumes the cue the message names, or the whole session.
            case resume
            /// LOAD (05): makes the cue the message names the standby cue (the playhead's).
            case load
            /// ALL_OFF (08): stops every cue.
            case allOff = "all_off"
            /// RESET (0A): every cue back to waiting, the playhead to the top.
            case reset

            /// The command byte on the wire.
            public var byte: UInt8 {
                switch self {
                case .go: return 0x01
                case .stop: return 0x02
                case .resume: return 0x03
                case .load: return 0x05
                case .allOff: return 0x08
                case .reset: return 0x0A
                }
            }
        }

        /// The message it answers.
        public var message: Message
        /// The MIDI channel (1…16) it listens on; nil for any (not for MIDI Show Control).
        public var channel: Int?
        /// The exact velocity (notes) or value (control changes) it answers; nil for any above 0.
        public var value: Int?
        /// The MIDI Show Control device ID (0…127) it answers; nil for any. Messages to the
        /// all-call ID 127 always match.
        public var device: Int?
        /// The command it sends (`do`), in the typed-line syntax (`go`, `start bell`, `stop`…);
        /// nil for a MIDI Show Control trigger, which then does what its command means.
        public var action: String?
        /// Where the entry is.
        public var location: SourceLocation
        /// Where each key's value is.
        public var keyLocations: [String: SourceLocation]
        /// Where it is written in the file (nil for a trigger not read from a file).
        var source: SourceSpans? = nil

        /// Creates a trigger.
        public init(message: Message, channel: Int? = nil, value: Int? = nil, device: Int? = nil, action: String? = nil,
                    location: SourceLocation, keyLocations: [String: SourceLocation] = [:]) {
            self.message = message
            self.channel = channel
            self.value = value
            self.device = device
            self.action = action
            self.location = location
            self.keyLocations = keyLocations
        }

        /// Where `key`'s value is, or the entry's own location.
        public func location(of key: String) -> SourceLocation { keyLocations[key] ?? location }
    }
}
