import Foundation
import Lockstep
import LockstepJACK
import LockstepSession
import Synchronization

/// Sends a session's MIDI cues (`type: midi`) on a device's MIDI output, each on the device
/// sample its session sample plays on — the same sample as audio placed there, live as offline.
///
/// A thread of its own schedules every MIDI cue whose sample lies in the next ``horizon``
/// seconds on the output (``JACKMIDIOutput``); whenever the player changes (a GO, a stop, a
/// seek, a pause, an edit: ``SessionPlayer/changes``) it is woken at once, cancels what it
/// scheduled from the last sample it saw rendered and schedules again from the new timeline — a
/// change lands at least a period ahead, so the new schedule reaches the process thread before
/// its cycle. A cue sent again after a seek back, a reset or a re-fire is a new event; the same
/// event scheduled again (an unrelated change) is not sent twice.
public final class MIDICueScheduler: Sendable {
    /// One MIDI cue that went out.
    public struct Sent: Sendable, Hashable {
        /// The MIDI cue.
        public var cue: String
        /// The session sample it is placed on.
        public var position: Int64
        /// The device sample it went out on (its frame in the cycle that rendered it).
        public var sampleTime: Int64
        /// The message.
        public var message: MIDICueMessage
        /// Frames after ``sampleTime`` it really went out (0: on its sample).
        public var lateFrames: Int64
    }

    /// The short name of the MIDI output MIDI cues go to (`<client>:midi_out`).
    public static let portName = "midi_out"

    /// Seconds ahead of the rendered sample that MIDI cues are scheduled.
    public let horizon: Double
    /// The output.
    public let output: JACKMIDIOutput

    private struct Shared {
        var player: SessionPlayer
        var playerGeneration = 0
        var stopping = false
        /// Events scheduled whose sample has not been rendered yet, by key.
        var waiting: [Int64: Sent] = [:]
        /// Events rendered, not yet taken.
        var sent: [Sent] = []
        /// The keys of events rendered, with their samples: scheduled again (a re-plan from before
        /// them), they are not reported twice.
        var rendered: [Int64: Int64] = [:]
    }
    private let shared: Mutex<Shared>
    private let engine: Engine
    private let done = DispatchSemaphore(value: 0)

    /// Whether `session` has MIDI cues (else no scheduler, nor a MIDI output, is needed).
    public static func isNeeded(for session: Session) -> Bool {
        session.document.cues.contains { $0.action.type == .midi }
    }

    /// The run's overrides: a MIDI cue whose kind of output is switched off sends nothing.
    public let overrides: ShowOverrides

    /// Starts scheduling `player`'s MIDI cues on `output`, as `overrides` allow.
    public init(player: SessionPlayer, output: JACKMIDIOutput, overrides: ShowOverrides = ShowOverrides(), horizon: Double = 0.25) {
        self.output = output
        self.overrides = overrides
        self.horizon = horizon
        engine = player.engine
        shared = Mutex(Shared(player: player))
        let thread = Thread { [self] in run() }
        thread.name = "lockstep.midi-out"
        thread.qualityOfService = .userInteractive
        thread.start()
        // An override switched: plan again at once.
        overrides.observe { [self] _, _ in shared.withLock { $0.player }.changes.signal() }
    }

    /// Schedules from `player` from now on (the player made again after a rate change).
    public func replacePlayer(_ player: SessionPlayer) {
        let old = shared.withLock { shared in
            defer {
                shared.player = player
                shared.playerGeneration += 1
            }
            return shared.player
        }
        old.changes.signal()
    }

    /// Stops the thread (what is scheduled still goes out; waits for the thread at most 1 s).
    public func stop() {
        let player = shared.withLock { shared in
            shared.stopping = true
            return shared.player
        }
        player.changes.signal()
        _ = done.wait(timeout: .now() + 1)
    }

    /// The MIDI cues that went out since the last call, in time order.
    public func takeSent() -> [Sent] {
        let rendered = engine.renderedSampleTime
        let late = Dictionary(output.takeLateEvents().map { ($0.key, $0.lateFrames) }, uniquingKeysWith: max)
        return shared.withLock { shared in
            for (key, value) in late { shared.waiting[key]?.lateFrames = value }
            for (key, event) in shared.waiting where event.sampleTime < rendered {
                shared.sent.append(event)
                shared.waiting[key] = nil
                shared.rendered[key] = event.sampleTime
            }
            defer { shared.sent = [] }
            return shared.sent.sorted { ($0.sampleTime, $0.cue) < ($1.sampleTime, $1.cue) }
        }
    }

    private func run() {
        var seenChanges = -1, seenGeneration = -1, seenOverrides = -1
        var scheduledUntil: Int64 = .min
        var lastRendered = engine.renderedSampleTime
        while true {
            let (player, generation, stopping) = shared.withLock { ($0.player, $0.playerGeneration, $0.stopping) }
            if stopping { break }
            let schedule = player.schedule
            let rendered = engine.renderedSampleTime
            var entries: [JACKMIDIOutput.Entry] = []
            var events: [Int64: Sent] = [:]
            var from = scheduledUntil
            let overridden = overrides.changeCount
            if schedule.changes != seenChanges || generation != seenGeneration || overridden != seenOverrides {
                // Anything scheduled from the last sample seen rendered may have changed.
                from = lastRendered
                entries.append(.cancel(from: from))
                seenChanges = schedule.changes
                seenGeneration = generation
                seenOverrides = overridden
            }
            var until = rendered + Int64(horizon * player.rate)
            var due = schedule.cueMessages(from: from, until: until, midi: true, network: false, generation: generation)
            // A batch fits the ring with room to spare: what does not waits for the next pass.
            if due.count > Self.batchLimit {
                until = due[Self.batchLimit].sampleTime
                due = due.filter { $0.sampleTime < until }
            }
            for message in due {
                guard case .midi(let midi) = message.payload, overrides.allowsMIDIOutput(midi.bytes) else { continue }
                entries.append(.event(key: message.key, sampleTime: message.sampleTime, bytes: midi.bytes))
                events[message.key] = Sent(cue: message.cue, position: message.position, sampleTime: message.sampleTime, message: midi, lateFrames: 0)
            }
            if entries.isEmpty {
                scheduledUntil = until
                lastRendered = rendered
            } else if output.schedule(entries) {
                shared.withLock { shared in
                    if case .cancel(let from) = entries.first {
                        shared.waiting = shared.waiting.filter { $0.value.sampleTime < from }
                        // (No plan reaches back before `from` any more.)
                        shared.rendered = shared.rendered.filter { $0.value >= from }
                    }
                    shared.waiting.merge(events.filter { shared.rendered[$0.key] == nil }) { old, _ in old }
                }
                scheduledUntil = until
                lastRendered = rendered
            } else {
                seenChanges = -1    // the ring is full: all of it again on the next pass
            }
            // Woken by a change at once; else once a tenth of the horizon.
            let deadline = Date().addingTimeInterval(horizon / 10)
            player.changes.wait(until: deadline) {
                player.changeCount != seenChanges || overrides.changeCount != seenOverrides
                    || shared.withLock { $0.playerGeneration != seenGeneration || $0.stopping }
            }
        }
        done.signal()
    }

    /// The most events one batch carries.
    static let batchLimit = 256
}
