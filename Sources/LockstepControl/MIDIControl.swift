import Lockstep
import LockstepSession
import Synchronization

/// The MIDI control surface: maps each ``Lockstep/MIDIEvent`` through the session's
/// ``MIDITriggers`` to commands on the ``ControlDispatcher``, either as soon as they come (a
/// ``latency`` of nil: as a typed or OSC command, a GO of the standby cue sounds from the next
/// cycle) or placed on a sample fixed relative to the event's own sample time — the event's sample
/// plus ``latency`` — so that the same MIDI always gives the same output, live or rendered offline
/// from a MIDI file.
///
/// With a latency, commands that change cues (go, start, stop, pause and resume of a cue, stop,
/// panic, level, gain) land exactly there when the device can still change that sample (a latency
/// of at least two periods on JACK); otherwise on the first sample it can, and the reply's `late`
/// says by how much. Pause, resume and seek of the whole session move its clock and are carried out
/// as soon as they come. Runs on whatever thread reads the MIDI input, never the realtime thread.
///
/// ```swift
/// let midi = MIDIControl(dispatcher: dispatcher, triggers: try MIDITriggers(session: session), latency: 512)
/// for reply in midi.handle(MIDIEvent(sampleTime: 48_000, bytes: [0x90, 60, 100])) { print(reply.summary) }
/// ```
public final class MIDIControl: Sendable {
    /// Counts of what came in.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Messages read.
        public var received = 0
        /// Messages that sent at least one command.
        public var matched = 0
        /// Well-formed messages no trigger answers (note offs, clock, other SysEx…).
        public var unmatched = 0
        /// Broken messages (wrong length, bad data bytes, unterminated SysEx): dropped.
        public var broken = 0
        /// Commands sent that the session refused (their replies are errors).
        public var refused = 0
        /// Messages ignored because an override switched their kind of input off
        /// (``ShowOverrides/allowsMIDIInput(_:)``).
        public var overridden = 0
    }

    /// The dispatcher commands go to.
    public let dispatcher: ControlDispatcher
    /// The triggers: the session's as read, then as edited (MIDI learn, undo) — read again when
    /// the session's `triggers:` change.
    public var triggers: MIDITriggers { current.withLock { $0 } }
    private let current: Mutex<MIDITriggers>
    /// Samples from a MIDI event to the sample its commands land on; nil: as soon as they come.
    public let latency: Int64?
    private let counts = Mutex(Statistics())
    private let lastProblem = Mutex<String?>(nil)

    /// Creates the surface.
    /// - Parameter latency: samples from each event to its commands' sample (≥ 0; on JACK, two
    ///   periods or more lands every command on its sample), or nil to carry each out as soon as
    ///   it comes.
    public init(dispatcher: ControlDispatcher, triggers: MIDITriggers, latency: Int64?) {
        self.dispatcher = dispatcher
        current = Mutex(triggers)
        self.latency = latency.map { max(0, $0) }
    }

    /// What came in so far.
    public var statistics: Statistics { counts.withLock { $0 } }

    /// The last broken message's problem (with its sample time), nil when none was broken.
    public var lastBrokenMessage: String? { lastProblem.withLock { $0 } }

    /// Carries out the commands `event` triggers and returns their replies (none when no trigger
    /// answers it, or it is broken: then it is counted in ``statistics``).
    public func handle(_ event: MIDIEvent) -> [ControlReply] {
        guard dispatcher.overrides.allowsMIDIInput(event.bytes) else {
            counts.withLock {
                $0.received += 1
                $0.overridden += 1
            }
            return []
        }
        if let message = try? MIDIMessage(bytes: event.bytes), let learned = dispatcher.learn(message) {
            counts.withLock { $0.received += 1 }
            return [learned]
        }
        return handle(event, commands: commands(for: event))
    }

    /// The commands `event` triggers, with their reply addresses; nil for a broken message.
    public func commands(for event: MIDIEvent) -> [(command: ControlCommand, address: String)]? {
        (try? MIDIMessage(bytes: event.bytes)).map { currentTriggers().commands(for: $0) }
    }

    /// The triggers of the session as it is now (edits may have changed its `triggers:`).
    private func currentTriggers() -> MIDITriggers {
        let session = dispatcher.player.editedSession
        return current.withLock { triggers in
            if triggers.entries.map(\.trigger) != session.document.triggers, let fresh = try? MIDITriggers(session: session) {
                triggers = fresh
            }
            return triggers
        }
    }

    /// Carries out `commands` (those ``commands(for:)`` found for `event`).
    func handle(_ event: MIDIEvent, commands: [(command: ControlCommand, address: String)]?) -> [ControlReply] {
        guard let commands else {
            let problem: String
            do { _ = try MIDIMessage(bytes: event.bytes); problem = "unreadable" } catch { problem = error.message }
            counts.withLock {
                $0.received += 1
                $0.broken += 1
            }
            lastProblem.withLock { $0 = "sample \(event.sampleTime): \(problem)" }
            return []
        }
        counts.withLock { counts in
            counts.received += 1
            if commands.isEmpty { counts.unmatched += 1 } else { counts.matched += 1 }
        }
        var replies: [ControlReply] = []
        for (command, address) in commands {
            let placed = latency.flatMap { Self.isPlaceable(command) ? event.sampleTime + $0 : nil }
            // As they come: a GO still never sounds before its event.
            let reply = dispatcher.execute(command, address: address, atSampleTime: placed,
                                           notBefore: latency == nil ? event.sampleTime : nil)
            if !reply.isOK { counts.withLock { $0.refused += 1 } }
            replies.append(reply)
        }
        return replies
    }

    /// Whether `command` changes cues and so is placed on a sample (everything but pause, resume
    /// and seek of the whole session, playhead moves and status).
    public static func isPlaceable(_ command: ControlCommand) -> Bool {
        switch command {
        case .pause, .resume, .seek, .selectNext, .selectPrevious, .selectPlayhead, .status: return false
        default: return true
        }
    }
}

/// The commands of a MIDI file carried out during an offline render
/// (``LockstepSession/SessionRenderer/control``), through the same triggers and the same
/// ``MIDIControl`` as live MIDI: each event's commands land on its sample plus the latency, so a
/// render equals a live run that received the same MIDI.
///
/// Output sample 0 is the file's time 0. Pause, resume and seek of the whole session cannot be
/// placed on a sample, so a trigger that sends one ends the render with an error naming the event.
public final class MIDIRenderControl: Sendable {
    /// The events, in time order.
    public let events: [MIDIEvent]
    /// The triggers.
    public let triggers: MIDITriggers
    /// Samples from an event to its commands' sample.
    public let latency: Int64
    private let state = Mutex(State())

    private struct State {
        var next = 0
        var control: MIDIControl?
        var replies: [ControlReply] = []
    }

    /// Creates the control for `events` (sample times at the render's rate).
    public init(events: [MIDIEvent], triggers: MIDITriggers, latency: Int64) {
        self.events = events.sorted { $0.sampleTime < $1.sampleTime }
        self.triggers = triggers
        self.latency = max(0, latency)
    }

    /// Every reply so far, in order (errors included: a GO with no cue waiting, say).
    public var replies: [ControlReply] { state.withLock { $0.replies } }

    /// What the MIDI surface counted (nil before the render began).
    public var statistics: MIDIControl.Statistics? { state.withLock { $0.control?.statistics } }

    /// The control to give a ``LockstepSession/SessionRenderer``.
    public var renderControl: SessionRenderer.RenderControl {
        SessionRenderer.RenderControl(lastSample: (events.last?.sampleTime ?? -1) + latency) { [self] player, before in
            try apply(player, before: before)
        }
    }

    /// Carries out the events whose commands land before session sample `before`.
    /// - Throws: ``ControlError`` for a command that moves the session's clock.
    public func apply(_ player: SessionPlayer, before: Int64) throws(ControlError) {
        try state.withLock { state throws(ControlError) in
            let control = state.control ?? MIDIControl(dispatcher: ControlDispatcher(player: player), triggers: triggers,
                                                       latency: latency)
            state.control = control
            while state.next < events.count, events[state.next].sampleTime + latency < before {
                let event = events[state.next]
                let commands = control.commands(for: event)
                for (command, address) in commands ?? [] where !MIDIControl.isPlaceable(command) {
                    switch command {
                    case .pause, .resume, .seek:
                        let seconds = Double(event.sampleTime) / player.rate
                        throw ControlError(.cannotSchedule, "the MIDI event at \(SessionTime.clock(seconds)) (\(address.dropFirst(5))) sends '\(Self.verb(command))', which moves the whole session's clock, so an offline render cannot place it on a sample; render with cue commands instead (e.g. 'pause CUE'), or play it live with session run --midi")
                    default: break
                    }
                }
                state.replies += control.handle(event, commands: commands)
                state.next += 1
            }
        }
    }

    private static func verb(_ command: ControlCommand) -> String {
        switch command {
        case .pause: return "pause"
        case .resume: return "resume"
        default: return "seek"
        }
    }
}
