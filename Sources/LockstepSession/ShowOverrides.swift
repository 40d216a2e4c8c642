import Synchronization

/// QLab's show-control overrides (its Override window, `/overrides/{key}`): the inputs and
/// outputs of show control an operator can switch off for the whole run — all on at the start.
///
/// | key | off: |
/// | --- | --- |
/// | `midiInputEnabled` | MIDI channel messages from the MIDI input fire nothing (nor are learned) |
/// | `mscInputEnabled` | MIDI Show Control messages from the MIDI input fire nothing |
/// | `sysexInputEnabled` | other SysEx messages from the MIDI input fire nothing |
/// | `midiOutputEnabled` | MIDI cues send no channel messages |
/// | `mscOutputEnabled` | MIDI cues send no MIDI Show Control |
/// | `sysexOutputEnabled` | MIDI cues send no other SysEx |
/// | `oscOutputEnabled` | network cues send nothing |
/// | `networkLocalOutputEnabled`, `networkExternalOutputEnabled` | network cues send nothing to this machine, or to others |
/// | `networkLocalInputEnabled`, `networkExternalInputEnabled` | OSC commands from this machine, or from others, are refused (queries, `/connect` and `/overrides` still answer) |
/// | `timecodeInputEnabled` | a chase neither locates, starts nor stops the session |
/// | `timecodeOutputEnabled` | LTC out is silent and MTC out sends nothing |
/// | `artNetEnabled`, `dmxOutputEnabled` | (Lockstep sends no lighting: nothing changes) |
public final class ShowOverrides: Sendable {
    /// An override, named as QLab names it.
    public enum Key: String, CaseIterable, Sendable, Hashable {
        case midiInputEnabled, midiOutputEnabled, mscInputEnabled, mscOutputEnabled, sysexInputEnabled, sysexOutputEnabled
        case oscOutputEnabled, timecodeInputEnabled, timecodeOutputEnabled, artNetEnabled, dmxOutputEnabled
        case networkExternalInputEnabled, networkExternalOutputEnabled, networkLocalInputEnabled, networkLocalOutputEnabled

        /// What switching it off does, for replies.
        public var offMeans: String {
            switch self {
            case .midiInputEnabled: "MIDI channel messages from the MIDI input fire nothing"
            case .mscInputEnabled: "MIDI Show Control from the MIDI input fires nothing"
            case .sysexInputEnabled: "SysEx from the MIDI input fires nothing"
            case .midiOutputEnabled: "MIDI cues send no channel messages"
            case .mscOutputEnabled: "MIDI cues send no MIDI Show Control"
            case .sysexOutputEnabled: "MIDI cues send no SysEx"
            case .oscOutputEnabled: "network cues send nothing"
            case .networkLocalOutputEnabled: "network cues send nothing to this machine"
            case .networkExternalOutputEnabled: "network cues send nothing to other machines"
            case .networkLocalInputEnabled: "OSC commands from this machine are refused"
            case .networkExternalInputEnabled: "OSC commands from other machines are refused"
            case .timecodeInputEnabled: "the chase neither locates, starts nor stops the session"
            case .timecodeOutputEnabled: "LTC out is silent and MTC out sends nothing"
            case .artNetEnabled, .dmxOutputEnabled: "nothing changes: Lockstep sends no lighting"
            }
        }
    }

    /// A set bit: that key (by its position in ``Key/allCases``) is switched off.
    private let off = Atomic<UInt32>(0)
    /// Counts every change: who plans ahead (the MIDI cue scheduler) plans again.
    private let changes = Atomic<Int>(0)
    private let observers = Mutex<[@Sendable (Key, Bool) -> Void]>([])

    /// All on.
    public init() {}

    private static func bit(_ key: Key) -> UInt32 { 1 << UInt32(Key.allCases.firstIndex(of: key)!) }

    /// Whether `key` is on (not overridden).
    public func isEnabled(_ key: Key) -> Bool { off.load(ordering: .acquiring) & Self.bit(key) == 0 }

    /// How many changes were made.
    public var changeCount: Int { changes.load(ordering: .acquiring) }

    /// Switches `key` on or off; the observers hear of a change.
    public func set(_ key: Key, enabled: Bool) {
        let bit = Self.bit(key)
        let before = enabled ? off.bitwiseAnd(~bit, ordering: .acquiringAndReleasing).oldValue
            : off.bitwiseOr(bit, ordering: .acquiringAndReleasing).oldValue
        guard (before & bit == 0) != enabled else { return }
        changes.add(1, ordering: .releasing)
        for observer in observers.withLock({ $0 }) { observer(key, enabled) }
    }

    /// Calls `observer` on every change from now on (on the thread that makes it).
    public func observe(_ observer: @escaping @Sendable (Key, Bool) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// The keys switched off, in ``Key/allCases`` order.
    public var switchedOff: [Key] { Key.allCases.filter { !isEnabled($0) } }

    /// Whether a message from the MIDI input (`bytes`, whole) may fire anything: MIDI Show
    /// Control by `mscInputEnabled`, other SysEx by `sysexInputEnabled`, the rest by
    /// `midiInputEnabled`.
    public func allowsMIDIInput(_ bytes: [UInt8]) -> Bool { isEnabled(Self.midiKey(bytes, input: true)) }

    /// Whether a MIDI cue may send `bytes` (the same three kinds, by the output keys).
    public func allowsMIDIOutput(_ bytes: [UInt8]) -> Bool { isEnabled(Self.midiKey(bytes, input: false)) }

    /// Whether a network cue may send to a destination on this machine (`local`) or another.
    public func allowsNetworkOutput(local: Bool) -> Bool {
        isEnabled(.oscOutputEnabled) && isEnabled(local ? .networkLocalOutputEnabled : .networkExternalOutputEnabled)
    }

    /// Whether an OSC command from this machine (`local`) or another may be carried out.
    public func allowsNetworkInput(local: Bool) -> Bool {
        isEnabled(local ? .networkLocalInputEnabled : .networkExternalInputEnabled)
    }

    static func midiKey(_ bytes: [UInt8], input: Bool) -> Key {
        if bytes.first == 0xF0 {
            // F0 7F <device> 02 …: MIDI Show Control.
            let msc = bytes.count > 3 && bytes[1] == 0x7F && bytes[3] == 0x02
            return msc ? (input ? .mscInputEnabled : .mscOutputEnabled) : (input ? .sysexInputEnabled : .sysexOutputEnabled)
        }
        return input ? .midiInputEnabled : .midiOutputEnabled
    }
}
