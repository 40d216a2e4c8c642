import LockstepSession

/// A session's MIDI triggers (its `triggers:` key), checked and ready to map MIDI messages to
/// control commands.
///
/// ```yaml
/// triggers:
///   - { note: 60, do: go }                    # note on 60, any channel, any velocity
///   - { note: 61, channel: 2, do: start bell }
///   - { cc: 20, value: 127, do: stop }        # only value 127
///   - { program: 4, do: go chorus }           # program change 4 (as sent, 0…127)
///   - { msc: go }                             # MIDI Show Control GO: its cue number, or the next cue
///   - { msc: stop, device: 1 }                # STOP: pause that cue, or the session
/// ```
public struct MIDITriggers: Sendable {
    /// One checked trigger: the session's entry and the command it sends (nil for a MIDI Show
    /// Control trigger without `do:`, whose command comes from the message).
    public struct Entry: Sendable, Hashable {
        /// The entry as the session file gives it.
        public var trigger: SessionDocument.Trigger
        /// The command its `do:` gives.
        public var command: ControlCommand?
    }

    /// Every trigger, in file order.
    public let entries: [Entry]

    /// Checks `session`'s triggers: each `do:` must be a command (the typed-line syntax of
    /// ``ControlLine``) naming cues and layers the session has.
    /// - Throws: ``LockstepSession/SessionError`` with every problem at its `FILE:LINE:COLUMN`.
    public init(session: Session) throws(SessionError) {
        let timeline: SessionTimeline
        do { timeline = try session.timeline(rate: session.document.rate) } catch { throw error }
        let numbers = session.document.cues.map(\.number)
        let layers = timeline.layers.map(\.name)
        var entries: [Entry] = []
        var problems: [SessionDiagnostic] = []
        for (index, trigger) in session.document.triggers.enumerated() {
            guard let action = trigger.action else {
                entries.append(Entry(trigger: trigger, command: nil))
                continue
            }
            let at = trigger.location(of: "do")
            let label = "trigger \(index + 1)"
            do throws(ControlError) {
                let command = try ControlLine.parse(action)
                if let reference = Self.cue(of: command) {
                    let name = try ControlDispatcher.resolve(reference, in: timeline, numbers: numbers)
                    guard timeline.cues.contains(where: { $0.name == name }) else {
                        problems.append(.init(.unknownCue, at: at,
                            "\(label): do '\(SessionParser.excerpt(action))' names no cue of this session\(Suggest.hint(for: name, in: timeline.cues.map(\.name)))"))
                        continue
                    }
                }
                if case .setLayerGain(let layer, _, _) = command, !layers.contains(layer) {
                    problems.append(.init(.unknownLayer, at: at,
                        "\(label): do '\(SessionParser.excerpt(action))' names no layer of this session\(Suggest.hint(for: layer, in: layers)); the layers are \(layers.joined(separator: ", "))"))
                    continue
                }
                entries.append(Entry(trigger: trigger, command: command))
            } catch {
                problems.append(.init(.invalidValue, at: at, "\(label): do '\(SessionParser.excerpt(action))': \(error.message)"))
            }
        }
        if !problems.isEmpty { throw SessionError(problems) }
        self.entries = entries
    }

    /// The cue a command names, if any.
    public static func cue(of command: ControlCommand) -> CueReference? {
        switch command {
        case .go(let reference): return reference
        case .startCue(let reference), .stopCue(let reference), .pauseCue(let reference), .resumeCue(let reference),
             .setCueLevel(let reference, _, _), .selectPlayhead(let reference):
            return reference
        default: return nil
        }
    }

    /// The commands `message` sends, in trigger order, each with the address its replies carry
    /// (`midi note 60 velocity 100 ch 1`). Note offs, other messages and messages no trigger
    /// answers send none.
    public func commands(for message: MIDIMessage) -> [(command: ControlCommand, address: String)] {
        let address = "midi \(message)"
        var result: [(ControlCommand, String)] = []
        for entry in entries {
            let trigger = entry.trigger
            switch (trigger.message, message) {
            case (.note(let note), .noteOn(let channel, let sent, let velocity)):
                guard note == sent, trigger.channel.map({ $0 == channel }) ?? true,
                      trigger.value.map({ $0 == velocity }) ?? true else { continue }
            case (.controlChange(let controller), .controlChange(let channel, let sent, let value)):
                guard controller == sent, trigger.channel.map({ $0 == channel }) ?? true,
                      trigger.value.map({ $0 == value }) ?? (value > 0) else { continue }
            case (.programChange(let program), .programChange(let channel, let sent)):
                guard program == sent, trigger.channel.map({ $0 == channel }) ?? true else { continue }
            case (.showControl(let command), .showControl(let sent)):
                guard command.byte == sent.command,
                      sent.device == ShowControlMessage.allCall || (trigger.device.map { $0 == sent.device } ?? true) else { continue }
                if let command = entry.command {
                    result.append((command, address))
                } else {
                    result.append((Self.showControlCommand(command, cue: sent.cueNumber), address))
                }
                continue
            default:
                continue
            }
            if let command = entry.command { result.append((command, address)) }
        }
        return result
    }

    /// What a MIDI Show Control command does without `do:`, as QLab answers it: GO fires the cue
    /// numbered (or the next), STOP pauses the cue numbered (or the session), RESUME resumes it
    /// (or the session), LOAD puts the playhead on the cue numbered (without one: only a status),
    /// ALL_OFF stops every cue, RESET puts every cue back and the playhead to the top.
    public static func showControlCommand(_ command: SessionDocument.Trigger.ShowControlCommand, cue: String?) -> ControlCommand {
        let reference = cue.map(CueReference.name)
        switch command {
        case .go: return .go(reference)
        case .stop: return reference.map(ControlCommand.pauseCue) ?? .pause
        case .resume: return reference.map(ControlCommand.resumeCue) ?? .resume
        case .load: return reference.map(ControlCommand.selectPlayhead) ?? .status
        case .allOff: return .stop
        case .reset: return .reset
        }
    }
}
