import Foundation
import Lockstep
import LockstepSession
import Synchronization

/// Editing from the control surfaces: MIDI learn (the next MIDI message becomes a trigger), the
/// triggers that name a cue, and the file a save compares against.
extension ControlDispatcher {
    /// The indices of the MIDI triggers of `player`'s session whose action names cue `name`.
    static func triggers(naming name: String, in player: SessionPlayer) -> [Int] {
        let session = player.editedSession
        let numbers = session.document.cues.map(\.number)
        let timeline = player.timeline
        return session.document.triggers.indices.filter { index in
            guard let action = session.document.triggers[index].action, let command = try? ControlLine.parse(action),
                  let reference = MIDITriggers.cue(of: command) else { return false }
            return (try? resolve(reference, in: timeline, numbers: numbers)) == name
        }
    }

    /// The session file as last saved by this run (nil: as the player's session was read): what
    /// `save` checks the file on disk against. Set it when the session plays edits that are not in
    /// the file (recovered from a journal).
    public var savedFile: SessionFile.Base? {
        get { state.withLock { $0.savedFile } }
        set { state.withLock { $0.savedFile = newValue } }
    }

    /// MIDI learn (``ControlCommand/learnMIDI(_:)``): when a learn waits and `message` can be a
    /// trigger (a note on, a control change with a value above 0, a program change, an MSC command
    /// a trigger answers), it becomes one — written into the session's `triggers:` as any edit —
    /// and the reply of that edit is returned; nil when no learn waits or the message cannot be one
    /// (it then goes on to the triggers).
    public func learn(_ message: MIDIMessage, address: String = "learn") -> ControlReply? {
        var values: [CueValue]
        switch message {
        case .noteOn(let channel, let note, _): values = [CueValue(key: "note", value: "\(note)"), CueValue(key: "channel", value: "\(channel)")]
        case .controlChange(let channel, let controller, let value) where value > 0:
            values = [CueValue(key: "cc", value: "\(controller)"), CueValue(key: "channel", value: "\(channel)")]
        case .programChange(let channel, let program):
            values = [CueValue(key: "program", value: "\(program)"), CueValue(key: "channel", value: "\(channel)")]
        case .showControl(let show):
            guard let command = SessionDocument.Trigger.ShowControlCommand.allCases.first(where: { $0.byte == show.command }) else { return nil }
            values = [CueValue(key: "msc", value: command.rawValue)]
        default: return nil
        }
        guard let action = state.withLock({ state -> String? in
            defer { state.learning = nil }
            return state.learning
        }) else { return nil }
        values.append(CueValue(key: "do", value: action))
        return execute(.restructure(.addTrigger(values)), address: address)
    }
}
