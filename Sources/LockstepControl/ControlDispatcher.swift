import Foundation
import Lockstep
import LockstepSession
import Synchronization

/// The one path every control command takes: carries it out on a ``SessionPlayer``, answers
/// with a ``ControlReply``, and publishes what changed to ``updates``.
///
/// Surfaces (typed lines, OSC, later MIDI and the web page) only translate their input into a
/// ``ControlCommand`` and the reply back into their own form. ``execute(_:address:)`` may be
/// called from any thread; commands are carried out one at a time, in the order they arrive.
/// ``poll(now:)``, called a few times a second by whoever runs the session, publishes what the
/// timeline does by itself: cues starting, ending, falling silent after a pause or stop (each
/// with its exact sample), discontinuities, and a heartbeat. None of it runs on the realtime
/// thread.
///
/// ```swift
/// let dispatcher = ControlDispatcher(player: player)
/// let subscription = dispatcher.updates.subscribe { print($0.json) }
/// let reply = dispatcher.execute(.go(nil), address: "go")    // {"address":"go","status":"ok","data":{"cue":…}}
/// ```
public final class ControlDispatcher: Sendable {
    /// How the dispatcher behaves.
    public struct Options: Sendable, Hashable {
        /// Seconds a panic fades every cue out over (a second panic during the fade stops at once).
        public var panicFade: Double
        /// Seconds between two heartbeat updates.
        public var heartbeatInterval: Double

        /// Options with a 1 s panic fade and a heartbeat every second.
        public init(panicFade: Double = 1, heartbeatInterval: Double = 1) {
            self.panicFade = panicFade
            self.heartbeatInterval = heartbeatInterval
        }
    }

    /// The options it was made with.
    public let options: Options
    /// Every change of the session, for subscribers.
    public let updates = ControlPublisher()
    /// The run's show-control overrides (QLab's `/overrides`): every surface and output reads them.
    public let overrides: ShowOverrides
    let state: Mutex<State>
    let resumedStatus = Mutex<ControlStatus.Resumed?>(nil)
    let refusalText = Mutex<String?>(nil)
    let linkSource = Mutex<(@Sendable () -> ControlStatus.Link?)?>(nil)

    struct State {
        var player: SessionPlayer
        /// Each cue's state at the last poll.
        var cueStates: [SessionTimeline.CueState] = []
        /// Each cue's start at the last poll: one placed anew since (fired again) is new to it,
        /// whatever states it went through in between.
        var cueStarts: [Int64?] = []
        /// The timeline's ``LockstepSession/SessionTimeline/structure`` the states are of.
        var structure = 0
        /// The session position at the last poll.
        var lastPosition: Int64 = 0
        var seenDiscontinuities = 0
        /// The player's late starts already published.
        var seenLateStarts = 0
        var lastHeartbeat = ContinuousClock.now
        /// While a panic fade runs: the session sample everything is silent from.
        var panicUntil: Int64?
        /// Where auditions play (nil: the run has no audition output).
        var audition: CueAudition?
        /// The session file as last saved by this run (nil: as read).
        var savedFile: SessionFile.Base?
        /// While MIDI learn waits for a message: the action its trigger will send.
        var learning: String?
        /// The dispatcher's ``ControlDispatcher/overrides``.
        let overrides: ShowOverrides

        init(player: SessionPlayer, overrides: ShowOverrides) {
            self.player = player
            self.overrides = overrides
            seenDiscontinuities = player.engine.discontinuityCount
            seenLateStarts = player.lateStarts.count
            baseline()
        }

        /// Notes cue `name` as placed anew (fired): scheduled, on its new start, so that the next
        /// poll reports its start however soon it plays and ends.
        mutating func placed(_ name: String) {
            let cues = player.timeline.cues
            guard cueStates.count == cues.count, cueStarts.count == cues.count,
                  let index = cues.firstIndex(where: { $0.name == name }) else { return }
            cueStates[index] = .scheduled
            cueStarts[index] = cues[index].start
        }

        /// Takes the cues' states just before the position now as known, so that the next poll
        /// reports only what happens from here (a cue starting on this very sample included).
        mutating func baseline() {
            lastPosition = player.position - 1
            let position = lastPosition
            cueStates = player.timeline.cues.map { $0.state(at: position) }
            cueStarts = player.timeline.cues.map(\.start)
        }
    }

    /// Creates a dispatcher for `player` (started, or halted at its first position).
    /// `overrides`: the run's (``LockstepShow``'s live session has them), or a set of its own.
    public init(player: SessionPlayer, options: Options = Options(), overrides: ShowOverrides = ShowOverrides()) {
        self.options = options
        self.overrides = overrides
        state = Mutex(State(player: player, overrides: overrides))
    }

    /// The player commands go to.
    public var player: SessionPlayer { state.withLock { $0.player } }

    /// Sends commands to `player` from now on (the player made again after a sample-rate
    /// change). What it already did is not published again.
    public func replacePlayer(_ player: SessionPlayer) {
        state.withLock { state in
            state.audition?.stop()      // (it played on the old engine)
            state.player = player
            state.panicUntil = nil
            state.seenLateStarts = 0
            state.baseline()
        }
    }

    /// Carries out `command` and answers; `address` is how the surface named it (`/go`, `go`).
    /// Updates the command caused are published before this returns.
    public func execute(_ command: ControlCommand, address: String) -> ControlReply {
        execute(command, address: address, atSampleTime: nil)
    }

    /// Carries out `command` on device sample `sampleTime` (a time-tagged command, such as an OSC
    /// bundle's), or as soon as it can when nil.
    ///
    /// Every command that changes cues can be placed on a sample: go, cue start, stop, pause and
    /// resume, stop, panic, cue level and layer gain. They need the session playing; a sample
    /// the device can no longer change (before ``Lockstep/Engine/nearestStartTime(atOrAfter:)``:
    /// half a period to a period and a half ahead of now on JACK) moves to
    /// the first one it can. The reply's data then holds `requestedSampleTime` and `late`
    /// (samples after it, 0 when on time) beside `sampleTime`, the device sample the change
    /// starts on. Playhead moves and status have no sample and are carried out as they come;
    /// pause, resume and seek of the whole session move its clock and get an error reply saying
    /// to send them untimed.
    ///
    /// `notBefore` (with no `sampleTime`) is a device sample a GO must not sound before: a MIDI
    /// event's own sample, which can lie ahead of the cycle being rendered.
    public func execute(_ command: ControlCommand, address: String, atSampleTime sampleTime: Int64?,
                        notBefore: Int64? = nil) -> ControlReply {
        // The state changes nothing and reads only the player, which is safe to read from any
        // thread: built outside the lock, a status of thousands of layers never holds up a GO.
        if command == .status {
            return Self.statusReply(of: player, address: address, resumed: resumed, link: link?(), auditioning: audition?.cue,
                                    overrides: overrides)
        }
        if let refusal { return .error(address, ControlError(.wrongState, "\(address): \(refusal)")) }
        let (reply, updates) = state.withLock { state -> (ControlReply, [ControlUpdate]) in
            // What the session did since the last poll is reported first: a reset, seek, pause
            // or edit would otherwise hide a cue that started and ended in between. (Not for a
            // GO, whose latency counts: it notes its own cue, and leaves the others be.)
            let seen: [ControlUpdate] = switch command {
            case .go, .startCue: []
            default: Self.observe(&state, now: .now, options: options)
            }
            do throws(ControlError) {
                let (reply, updates) = try Self.run(command, address: address, sampleTime: sampleTime, notBefore: notBefore,
                                                    state: &state, options: options)
                return (reply, seen + updates)
            } catch {
                return (.error(address, error), seen)
            }
        }
        // A pause's fade is rendered, and its layers stopped, once the lock is free: the show
        // link's hub reads the run between commands, and tells a backup of the pause before its
        // fade begins.
        if command == .pause { player.finishPause() }
        self.updates.publish(updates)
        return reply
    }

    /// Publishes what the session did by itself since the last poll: cue state changes with
    /// their samples, discontinuities, and a heartbeat when one is due.
    public func poll(now: ContinuousClock.Instant = .now) {
        let updates = state.withLock { state in Self.observe(&state, now: now, options: options) }
        self.updates.publish(updates)
    }

    // MARK: - Commands

    private static func run(_ command: ControlCommand, address: String, sampleTime: Int64?, notBefore: Int64?, state: inout State,
                            options: Options) throws(ControlError) -> (ControlReply, [ControlUpdate]) {
        let player = state.player
        // Its numbers' ranges first, before any becomes samples: a command made in code may hold
        // any value (every surface's commands pass).
        let command = try command.checked(address: address)
        // A time-tagged command: the session sample device sample `sampleTime` plays.
        var requested: Int64?
        // Playhead moves and status change no audio: carried out as they come.
        let sampleTime: Int64? = switch command {
        case .selectNext, .selectPrevious, .selectPlayhead, .status, .loadCue, .editCue, .restructure, .learnMIDI, .audition, .stopAudition, .save, .undo, .redo, .override: nil
        default: sampleTime
        }
        if let sampleTime {
            switch command {
            case .pause, .resume, .seek, .reset:
                throw ControlError(.cannotSchedule, "\(address) moves the whole session's clock, so it cannot be placed on a sample; send it without a time tag (cue commands, stop, panic, level and gain can be placed)")
            default: break
            }
            guard player.isRunning else {
                throw ControlError(.wrongState, "\(address): the session is \(player.isPaused ? "paused" : "not playing"), so a time has no sample yet; resume it first, or send the command without a time tag")
            }
            requested = player.position(atDeviceTime: sampleTime)
        }
        let rate = player.rate
        let timeline = player.timeline
        /// What a command that took effect on session sample `position` did (its device sample
        /// while playing), with where it was asked for when it was time-tagged.
        func result(_ position: Int64?, start: Int64? = nil) -> CommandResult {
            var result = CommandResult(position: position, rate: rate,
                                       sampleTime: position.flatMap { player.isRunning ? player.deviceTime(forPosition: $0) : nil })
            if let sampleTime, let requested, let start {
                result.requestedSampleTime = sampleTime
                result.lateFrames = max(0, start - requested)
            }
            return result
        }
        func ok(_ result: CommandResult, _ summary: String) -> ControlReply {
            .ok(address, encoding: result, summary: summary)
        }
        func when(_ position: Int64) -> String { "\(SessionTime.clock(Double(position) / rate)) (sample \(position))" }
        func update(_ kind: ControlUpdate.Kind, cue: String? = nil, layer: String? = nil, _ position: Int64? = nil,
                    gainDB: Double? = nil) -> ControlUpdate {
            ControlUpdate(kind, cue: cue, layer: layer, position: position,
                          sampleTime: position.flatMap { player.isRunning ? player.deviceTime(forPosition: $0) : nil },
                          seconds: position.map { Double($0) / rate }, gainDB: gainDB)
        }
        func cue(_ reference: CueReference) throws(ControlError) -> String {
            try resolve(reference, in: timeline, numbers: player.document.cues.map(\.number))
        }
        /// For a time-tagged command: as asked, or how late.
        func lateness(_ start: Int64) -> String {
            guard let requested else { return "" }
            return start > requested ? ", \(start - requested) samples after its time tag (the layers had computed past it)" : ", as time-tagged"
        }
        /// For a cue loaded to a time: how far in it starts.
        func loaded(_ fired: SessionPlayer.GoResult) -> String {
            fired.start < fired.position ? ", \(SessionTime.clock(Double(fired.position - fired.start) / rate)) in (loaded)" : ""
        }
        /// The data of a go or start.
        func fired(_ fired: SessionPlayer.GoResult) -> CommandResult {
            var data = result(fired.start, start: fired.position)
            data.cue = fired.cue
            data.placed = fired.placed
            data.start = fired.start
            data.playhead = fired.playhead
            return data
        }
        /// The data of a cue's stop, pause or resume.
        func changed(_ change: SessionPlayer.CueChange) -> CommandResult {
            var data = result(change.start, start: change.start)
            data.cue = change.cue
            data.start = change.start
            data.end = change.end
            return data
        }

        switch command {
        case .go(let reference):
            let name = try reference.map { reference throws(ControlError) in try cue(reference) }
            let result = try attempt { () throws(PlayerError) in try player.go(name, at: requested, notBefore: notBefore) }
            state.placed(result.cue)
            return (ok(fired(result), "go \(result.cue) at \(when(max(result.start, result.position)))\(loaded(result))\(lateness(result.position))"),
                    [update(.playhead, cue: result.playhead)])
        case .startCue(let reference):
            let name = try cue(reference)
            let result = try attempt { () throws(PlayerError) in try player.startCue(name, at: requested) }
            state.placed(result.cue)
            return (ok(fired(result), "start \(result.cue) at \(when(max(result.start, result.position)))\(loaded(result))\(lateness(result.position))"),
                    [update(.playhead, cue: result.playhead)])
        case .stop, .panic, .panicIn:
            let panicFade: Double? = switch command {
            case .panic: options.panicFade
            case .panicIn(let time): Double(time.samples(at: rate)) / rate
            default: nil
            }
            let again = panicFade != nil && state.panicUntil.map { player.position < $0 } ?? false
            let fade = again ? SessionPlayer.declickSeconds : panicFade ?? SessionPlayer.declickSeconds
            let stopped = player.stopAll(fade: fade, at: requested)
            state.panicUntil = panicFade != nil && !again ? stopped.silentFrom : nil
            var data = result(stopped.start, start: stopped.start)
            data.cues = stopped.cues
            data.silentFrom = stopped.silentFrom
            let what = "\(stopped.cues.count) cue\(stopped.cues.count == 1 ? "" : "s") silent from \(when(stopped.silentFrom))"
            let how = panicFade == nil ? "stop" : again ? "panic again: stopped at once" : "panic: fading out over \(fade) s"
            return (ok(data, "\(how), \(what)\(lateness(stopped.start))"),
                    [update(panicFade == nil ? .stopped : .panic, stopped.start)])
        case .panicCue(let reference, let time):
            let name = try cue(reference)
            let seconds = time.map { Double($0.samples(at: rate)) / rate } ?? options.panicFade
            let change = try attempt { () throws(PlayerError) in try player.stopCue(name, at: requested, fade: seconds) }
            return (ok(changed(change), "panic \(name): fading out over \(Double(change.end - change.start) / rate) s, silent from \(when(change.end))\(lateness(change.start))"),
                    [])
        case .loadCue(let reference, let time, let change):
            let name = try cue(reference)
            let offset = try attempt { () throws(PlayerError) in try player.load(name, at: time.samples(at: rate), change: change) }
            var data = CommandResult(position: nil, rate: rate, sampleTime: nil)
            data.cue = name
            data.loadFrames = offset
            data.loadSeconds = Double(offset) / rate
            let how = offset == 0 ? "its next go starts it from its top" : "its next go starts it \(SessionTime.clock(Double(offset) / rate)) in"
            return (ok(data, "load \(name) at \(SessionTime.clock(Double(offset) / rate)) (\(offset) samples): \(how)"),
                    [ControlUpdate(.cueLoaded, cue: name, seconds: Double(offset) / rate, frames: offset)])
        case .pause:
            guard player.isRunning else {
                throw ControlError(.wrongState, "pause: the session is not playing (it is \(player.isPaused ? "paused already; resume plays it on" : "stopped"))")
            }
            let position = player.beginPause(at: requested) ?? player.position
            return (ok(result(position), "paused at \(when(position))"), [update(.paused, position)])
        case .resume:
            guard player.isPaused else { throw ControlError(.wrongState, "resume: the session is not paused; pause it first") }
            let position = player.position
            do { try player.resume() } catch { throw ControlError(.failed, "resume: \(error.message)") }
            return (ok(result(position), "resumed at \(when(position))"), [update(.resumed, position)])
        case .stopCue(let reference):
            let name = try cue(reference)
            let change = try attempt { () throws(PlayerError) in try player.stopCue(name, at: requested) }
            return (ok(changed(change), "stop \(name): silent from \(when(change.end))\(lateness(change.start))"), [])
        case .pauseCue(let reference):
            let name = try cue(reference)
            let change = try attempt { () throws(PlayerError) in try player.pauseCue(name, at: requested) }
            return (ok(changed(change), "pause \(name): silent from \(when(change.end))\(lateness(change.start))"), [])
        case .resumeCue(let reference):
            let name = try cue(reference)
            let change = try attempt { () throws(PlayerError) in try player.resumeCue(name, at: requested) }
            return (ok(changed(change), "resume \(name) at \(when(change.start))\(lateness(change.start))"), [])
        case .setCueLevel(_, let decibels, let ramp), .setLayerGain(_, let decibels, let ramp):
            // A ramp in samples counts at the session's rate; the player takes seconds and
            // rounds back to the same count.
            let rampFrames = ramp.samples(at: rate)
            let rampSeconds = Double(rampFrames) / rate
            try inRange { () throws(ControlRangeError) in try ControlRange.checkRamp(seconds: rampSeconds, for: address) }
            let isCue: Bool
            let name: String
            let start: Int64
            if case .setCueLevel(let reference, _, _) = command {
                name = try cue(reference)
                isCue = true
                start = try attempt { () throws(PlayerError) in
                    try player.setCueLevel(name, decibels: decibels, ramp: rampSeconds, at: requested)
                }
            } else {
                guard case .setLayerGain(let layer, _, _) = command else { preconditionFailure() }
                name = layer
                isCue = false
                start = try attempt { () throws(PlayerError) in
                    try player.setGain(layer: layer, decibels: decibels, ramp: rampSeconds, at: requested)
                }
            }
            var data = result(start, start: start)
            if isCue { data.cue = name } else { data.layer = name }
            data.setLevel(gainDB: decibels, rampFrames: rampFrames, rate: rate)
            let rampText = if case .samples(let count) = ramp { "\(count) samples (\(rampSeconds) s)" } else { "\(ramp.seconds(at: rate)) s" }
            let summary = "\(isCue ? "level" : "gain") \(name) to \(SessionGain.format(decibels)) over \(rampText) from \(when(start))\(lateness(start))"
            return (ok(data, summary),
                    [isCue ? update(.cueLevel, cue: name, start, gainDB: decibels)
                           : update(.layerGain, layer: name, start, gainDB: decibels)])
        case .selectNext, .selectPrevious, .selectPlayhead:
            let selected: String
            if case .selectPlayhead(let reference) = command {
                let name = try cue(reference)
                selected = try attempt { () throws(PlayerError) in try player.select(name) }
            } else {
                let forward = command == .selectNext
                selected = try attempt { () throws(PlayerError) in try player.selectAdjacent(forward: forward) }
            }
            var data = CommandResult(position: nil, rate: rate, sampleTime: nil)
            data.playhead = selected
            return (ok(data, "playhead on \(selected)"), [update(.playhead, cue: selected)])
        case .reset:
            let reset: SessionPlayer.ResetResult
            do { reset = try player.reset() } catch { throw ControlError(.failed, "reset: \(error.message)") }
            var data = result(0)
            data.sampleTime = reset.sampleTime
            data.cues = reset.stopped
            data.playhead = reset.playhead
            let stopped = reset.stopped.isEmpty ? "nothing was sounding" : "\(reset.stopped.count) cue\(reset.stopped.count == 1 ? "" : "s") stopped"
            let top = reset.sampleTime.map { "; the session plays from its start at device sample \($0)" } ?? "; the session waits at its start"
            return (ok(data, "reset: \(stopped), every cue waits, playhead on \(reset.playhead ?? "nothing")\(top)"),
                    [update(.reset, cue: reset.playhead, 0), update(.playhead, cue: reset.playhead)])
        case .audition(let reference):
            guard let audition = state.audition else {
                throw ControlError(.unsupported, "\(address): this run has no audition output; start it with --audition PORT (where auditions play, apart from the show)")
            }
            guard let name = try reference.map(cue) ?? player.playhead else {
                throw ControlError(.nothingWaiting, "\(address): no cue is at the playhead; name the cue to audition")
            }
            let started = try attempt { () throws(PlayerError) in try audition.play(name, of: player) }
            var data = CommandResult(position: nil, rate: rate, sampleTime: nil)
            data.cue = started.cue
            data.frames = started.frames
            let length = started.frames.map { "\(SessionTime.clock(Double($0) / rate))" } ?? "looping"
            return (ok(data, "audition \(started.cue) on \(started.outputs.joined(separator: ", ")) (\(length)), apart from the show"), [])
        case .stopAudition:
            guard let audition = state.audition else {
                throw ControlError(.unsupported, "\(address): this run has no audition output (--audition PORT)")
            }
            let stopped = audition.stop()
            return (ok(CommandResult(position: nil, rate: rate, sampleTime: nil), stopped ? "audition stopped" : "no audition was playing"), [])
        case .editCue(let reference, let change):
            let name = try cue(reference)
            let edit = try attempt { () throws(PlayerError) in try player.edit(name, change) }
            var data = result(edit.sample)
            data.cue = edit.cue
            data.edited = edit.key
            data.atNextStart = edit.atNextStart
            let how = edit.atNextStart ? "it plays on as it was and takes the edit at its next start" : "at once"
            return (ok(data, "set \(name) \(edit.key) to \(change.valueText): \(how), from \(when(edit.sample))"), [update(.cueEdited, cue: edit.cue, edit.sample)])
        case .restructure(let change):
            var named: String?
            switch change {
            case .set(let reference, _), .duplicate(let reference), .delete(let reference), .move(let reference, _),
                 .group(let reference, _), .unlearn(let reference): named = try cue(reference)
            case .add, .addTrigger, .setLayer: break
            }
            let edit = try attempt { () throws(PlayerError) in
                switch change {
                case .set(_, let changes): return try player.setValues(named!, changes)
                case .add(let values, let place): return try player.addCue(values, at: place)
                case .duplicate: return try player.duplicateCue(named!)
                case .delete: return try player.deleteCue(named!)
                case .move(_, let place): return try player.moveCue(named!, to: place)
                case .group(_, let name): return try player.groupCue(named!, as: name)
                case .addTrigger(let values): return try player.addTrigger(values)
                case .setLayer(let layer, let changes): return try player.setLayerValues(layer, changes)
                case .unlearn: return try player.removeTriggers(Self.triggers(naming: named!, in: player), of: named!)
                }
            }
            var data = result(edit.sample)
            data.cue = edit.cue
            data.edited = edit.key
            data.atNextStart = edit.atNextStart
            let how = edit.atNextStart ? "it plays on as it was and takes the edit at its next start" : "at once"
            let what: String = switch change {
            case .set(_, let changes): "set \(edit.cue) " + changes.map { "\($0.key) to \($0.value ?? "nothing (removed)")" }.joined(separator: ", ")
            case .add: "added \(edit.cue)"
            case .duplicate(let reference): "duplicated \(reference) as \(edit.cue)"
            case .delete: "deleted \(edit.cue)"
            case .move: "moved \(edit.cue)"
            case .group(let reference, _): "put \(reference) in the new group \(edit.cue)"
            case .unlearn: "forgot the MIDI triggers of \(edit.cue)"
            case .setLayer(let layer, let changes): "set layer \(layer) " + changes.map { "\($0.key) to \($0.value ?? "nothing (removed)")" }.joined(separator: ", ")
            case .addTrigger(let values): "learned " + values.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            }
            data.routedSampleTime = edit.routedSampleTime
            let heard = edit.routedSampleTime.map { "; it sounds where its ports say from device sample \($0)" } ?? ""
            return (ok(data, "\(what): \(how), from \(when(edit.sample))\(heard)"), [update(.cueEdited, cue: edit.cue, edit.sample)])
        case .learnMIDI(let action):
            guard let action else {
                let was = state.learning
                state.learning = nil
                return (ok(result(nil), was.map { "MIDI learn of '\($0)' cancelled" } ?? "no MIDI learn was waiting"), [])
            }
            let command = try ControlLine.parse(action)
            if let reference = MIDITriggers.cue(of: command) {
                let name = try cue(reference)
                guard timeline.cues.contains(where: { $0.name == name }) else {
                    throw ControlError(.unknownCue, "learn: '\(action)' names no cue of this session\(Suggest.hint(for: name, in: timeline.cues.map(\.name)))")
                }
            }
            state.learning = action
            var data = result(nil)
            data.learning = action
            return (ok(data, "learning: the next note, control change, program change or MIDI Show Control message from the MIDI input becomes a trigger of '\(action)'"), [])
        case .undo, .redo:
            let isUndo = command == .undo
            let edit = try attempt { () throws(PlayerError) in try isUndo ? player.undo() : player.redo() }
            var data = result(edit.sample)
            data.cue = edit.cue
            data.edited = edit.key
            data.atNextStart = edit.atNextStart
            let how = edit.atNextStart ? "it plays on as it was and takes it at its next start" : "at once"
            return (ok(data, "\(isUndo ? "undid" : "redid") \(edit.key) of \(edit.cue): \(how), from \(when(edit.sample))"), [update(.cueEdited, cue: edit.cue, edit.sample)])
        case .save(let force):
            let base = state.savedFile ?? SessionFile.Base(player.session)
            let (saved, next): (SessionFile.Saved, SessionFile.Base)
            do { (saved, next) = try SessionFile.save(player.editedSession, base: base, force: force) } catch {
                throw ControlError(.failed, "save: \(error.message)")
            }
            state.savedFile = next
            var parts: [String] = []
            if saved.changes > 0 { parts.append("\(saved.changes) value\(saved.changes == 1 ? "" : "s") changed") }
            if saved.added > 0 { parts.append("\(saved.added) cue\(saved.added == 1 ? "" : "s") added") }
            if saved.removed > 0 { parts.append("\(saved.removed) cue\(saved.removed == 1 ? "" : "s") removed") }
            let what = parts.isEmpty ? (base.text == next.text ? "nothing changed since the last save" : "cues moved") : parts.joined(separator: ", ")
            return (ok(CommandResult(position: nil, rate: rate, sampleTime: nil),
                       "saved \(saved.path): \(what); the previous version is \(saved.backupPath)"), [])
        case .seek(let time):
            let position = time.samples(at: rate)
            do { try player.seek(to: position) } catch { throw ControlError(.failed, "seek: \(error.message)") }
            return (ok(result(position), "seek to \(when(position))"), [update(.seeked, position)])
        case .status:
            return (statusReply(of: player, address: address, resumed: nil, link: nil, auditioning: nil, overrides: state.overrides), [])
        case .override(let key, nil):
            let on = state.overrides.isEnabled(key)
            return (.ok(address, .bool(on), summary: "\(key.rawValue) is \(on ? "on" : "off: \(key.offMeans)")"), [])
        case .override(let key, let enabled?):
            state.overrides.set(key, enabled: enabled)
            return (.ok(address, .bool(enabled), summary: "\(key.rawValue) \(enabled ? "on" : "off: \(key.offMeans)")"), [])
        }
    }

    /// The `status` reply: the state of `player` now.
    private static func statusReply(of player: SessionPlayer, address: String, resumed: ControlStatus.Resumed?,
                                    link: ControlStatus.Link?, auditioning: String?, overrides: ShowOverrides) -> ControlReply {
        var status = ControlStatus(player: player)
        let off = overrides.switchedOff
        status.overridesOff = off.isEmpty ? nil : off.map(\.rawValue)
        status.resumed = resumed
        status.link = link
        status.auditioning = auditioning
        let seconds = Double(status.position) / Double(max(1, status.sampleRate))
        return .ok(address, encoding: status, summary: "status at \(SessionTime.clock(seconds)) (sample \(status.position))")
    }

    /// Runs a range check, turning its error into a ``ControlError``.
    private static func inRange<T>(_ body: () throws(ControlRangeError) -> T) throws(ControlError) -> T {
        do { return try body() } catch { throw ControlError(.outOfRange, error.message) }
    }

    /// Runs a player call, turning its error into a ``ControlError``.
    private static func attempt<T>(_ body: () throws(PlayerError) -> T) throws(ControlError) -> T {
        do { return try body() } catch { throw ControlError(error) }
    }

    /// The name of the cue `reference` names: the cue with that name, else the cue with that
    /// `number:` (`numbers`, one per cue in file order), else — in a session that numbers none of
    /// its cues — the cue at that position in file order. A name no cue has is passed on, for
    /// the player to say it is unknown and suggest one.
    public static func resolve(_ reference: CueReference, in timeline: SessionTimeline,
                               numbers: [String?]) throws(ControlError) -> String {
        switch reference {
        case .name(let name):
            if timeline.cues.contains(where: { $0.name == name }) { return name }
            if let index = numbers.firstIndex(of: name), timeline.cues.indices.contains(index) { return timeline.cues[index].name }
            if numbers.allSatisfy({ $0 == nil }), let number = Int(name), timeline.cues.indices.contains(number - 1) {
                return timeline.cues[number - 1].name
            }
            return name
        case .number(let number):
            guard timeline.cues.indices.contains(number - 1) else {
                throw ControlError(.unknownCue, "there is no cue number \(number); the cues are numbered 1 to \(timeline.cues.count) in file order")
            }
            return timeline.cues[number - 1].name
        }
    }
}
