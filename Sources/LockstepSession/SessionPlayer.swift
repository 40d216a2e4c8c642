import Foundation
import Lockstep
import LockstepSchema
import LockstepFiles
import Synchronization

/// Plays a session on an ``Engine``: one output queue per layer, each fed by a renderer that
/// computes the layer's audio from the session timeline, all started on one sample.
///
/// Works the same on a live device (JACK) and on an ``OfflineDevice``: the audio is a function of
/// session time only, so a live run and an offline render match sample for sample.
///
/// Control (``go(_:at:)``, ``startCue(_:at:)``, ``stopCue(_:)``, ``pauseCue(_:)``, ``resumeCue(_:)``,
/// ``stopAll(fade:)``, ``setCueLevel(_:decibels:ramp:)``, ``setGain(layer:decibels:ramp:)``,
/// ``select(_:)``, ``pause()``, ``resume()``, ``seek(to:)``) may come from any thread. While the
/// session plays, each change lands on the earliest sample the device can still change — half a
/// period to one and a half ahead on JACK (``Engine/nearestStartTime(atOrAfter:)``), the next frame to render
/// offline — however much audio the layers have computed ahead: the layers it touches are cut at
/// that sample (``OutputQueue/truncate(at:)``) and computed again from there, their first buffer at
/// once on the calling thread. Changes are edits of the session's timeline, so the audio stays a
/// function of session time.
public final class SessionPlayer: @unchecked Sendable {
    /// The session being played.
    public let session: Session
    /// The engine it plays on.
    public let engine: Engine
    /// One output queue per layer, in the session's layer order, named after the layer.
    public let queues: [OutputQueue]
    /// Frames per layer buffer.
    public let bufferFrames: Int
    /// Buffers per layer in circulation.
    public let bufferCount: Int

    private let renderers: [LayerRenderer]
    private let state: Mutex<State>
    private let buffers: Mutex<[[QueueBuffer]]>
    /// One per layer: held while the layer's renderer computes and enqueues a buffer (a refill on
    /// the callback thread, or a control change recomputing the layer). Taken before `state`.
    private let layerLocks: [NSLock]

    struct State {
        var timeline: SessionTimeline
        /// Per layer: the next session sample it computes.
        var filled: [Int64]
        /// Whether refills are suspended (during a halt, before a start).
        var halted: Bool = true
        /// The device sample at which session sample `originPosition` plays, while running.
        var originDevice: Int64 = 0
        var originPosition: Int64 = 0
        var running = false
        var paused = false
        var pausedPosition: Int64 = 0
        var error: FileError?
        var lateStarts: [LateStart] = []
        /// What this run added to the session's own timeline: manual cues fired (name, session
        /// sample) and gain changes, to carry them over to another rate.
        var fired: [(name: String, sample: Int64)] = []
        var gainChanges: [(layer: Int, point: SessionTimeline.AutomationPoint)] = []
        /// The selected manual cue (index) a plain `go` fires: nil, or a manual cue waiting.
        var playhead: Int?
        /// The session sample at queue time 0 of this run's layer queues.
        var queueOrigin: Int64 = 0
        /// Per layer: a buffer kept out of circulation, so that a control change can recompute
        /// the layer's next audio at once without waiting for a buffer to come back.
        var spares: [QueueBuffer?] = []
        /// While a control change is applied: the earliest session sample the device can still
        /// change.
        var earliestChangeable: Int64?
        /// Per layer: the earliest session sample the control change being applied altered.
        var touched: [Int: Int64] = [:]

        /// The session sample a control change lands on: the earliest the device can still change
        /// while playing (the first one no layer has computed when that is not known) or the
        /// sample it was placed on when that is later, the paused position while paused.
        var controlSample: Int64 {
            guard running && !paused else { return pausedPosition }
            return max(earliestChangeable ?? (filled.max() ?? 0), requestedSample ?? .min)
        }
        /// While a control change placed on a sample is applied: that session sample (the change
        /// lands there, or on the earliest changeable sample when it lies before it).
        var requestedSample: Int64?

        /// Notes that the audio of `layer` changes from session sample `sample` on.
        mutating func touch(layer: Int, from sample: Int64) {
            touched[layer] = min(touched[layer] ?? .max, sample)
        }

        /// Notes the layers of the cues `indices` (just placed) as changed from each one's start
        /// (`sample` for one without): a cue chained to start later on another layer leaves that
        /// layer's computed audio before its start as it is.
        mutating func touch(cues indices: [Int], from sample: Int64) {
            for index in indices {
                let cue = timeline.cues[index]
                touch(layer: cue.layer, from: cue.start ?? sample)
            }
        }
    }

    /// A start (or restart after a seek, a resume, a transport roll) that came too late for its
    /// requested device sample: the layers started at the earliest possible sample instead,
    /// skipping `skippedFrames` frames so that they stay on the session's timeline. The record the
    /// `session run --json` summary lists (LockstepSchema's type).
    public typealias LateStart = SessionRunReport.LateStart

    /// Every late start so far, oldest first.
    public var lateStarts: [LateStart] { state.withLock { $0.lateStarts } }

    /// What a `go` did.
    public struct GoResult: Sendable, Hashable {
        /// The manual cue fired.
        public var cue: String
        /// The cues it placed (itself and those chained to it).
        public var placed: [String]
        /// The session sample it starts.
        public var start: Int64
        /// The manual cue the playhead selects afterwards (nil when none waits).
        public var playhead: String?
    }

    /// What a change of one cue (stop, pause, resume) did.
    public struct CueChange: Sendable, Hashable {
        /// The cue.
        public var cue: String
        /// The session sample the change begins: a fade-out (stop, pause) or the fade-in (resume).
        public var start: Int64
        /// The session sample it is silent from (stop, pause) or fully back (resume).
        public var end: Int64
    }

    /// The fade of a cue's pause, resume or stop while playing (5 ms), so that nothing clicks.
    public static let declickSeconds = 0.005

    /// Creates the layer queues on `engine` and builds the timeline at the engine's rate.
    ///
    /// - Parameters:
    ///   - session: a loaded session.
    ///   - engine: the engine; its device's rate is the session's rate for this run.
    ///   - directOutputs: give each layer that names `ports` its own device outputs (JACK ports
    ///     `<layer>_1…`); those layers then stay out of the master mix.
    ///   - bufferFrames: frames per layer buffer (default 1024).
    ///   - bufferCount: buffers per layer (default 4).
    /// - Throws: ``SessionError`` if the timeline cannot be built at this rate;
    ///   ``AudioQueueError`` if the queues cannot be created.
    public init(session: Session, engine: Engine, directOutputs: Bool = false, bufferFrames: Int = 1024,
                bufferCount: Int = 4) throws {
        self.session = session
        self.engine = engine
        self.bufferFrames = bufferFrames
        self.bufferCount = bufferCount
        self.directOutputs = directOutputs
        rate = engine.sampleRate
        let timeline = try session.timeline(rate: engine.sampleRate)
        let format = StreamFormat(sampleRate: engine.sampleRate, channelCount: timeline.channelCount, sampleFormat: .float32)
        var queues: [OutputQueue] = []
        var renderers: [LayerRenderer] = []
        let box = PlayerReference()
        for (index, layer) in timeline.layers.enumerated() {
            let renderer = LayerRenderer(layer: index, channelCount: timeline.channelCount, rate: engine.sampleRate)
            let queue = try engine.makeOutputQueue(format: format, name: layer.name) { _, buffer in
                box.player?.refill(layer: index, buffer: buffer)
            }
            queue.isLevelMeteringEnabled = true
            if directOutputs && !layer.ports.isEmpty {
                try queue.enableDirectOutputs()
                queue.mixesIntoMaster = false
            }
            queues.append(queue)
            renderers.append(renderer)
        }
        self.queues = queues
        self.renderers = renderers
        state = Mutex(State(timeline: timeline, filled: Array(repeating: 0, count: queues.count),
                            playhead: timeline.waitingCues.first?.index,
                            spares: Array(repeating: nil, count: queues.count)))
        var all: [[QueueBuffer]] = []
        for queue in queues {
            var list: [QueueBuffer] = []
            // (One more than circulate: the spare a control change recomputes into.)
            for _ in 0...bufferCount { list.append(try queue.allocateBuffer(frameCapacity: bufferFrames)) }
            all.append(list)
        }
        buffers = Mutex(all)
        layerLocks = queues.map { _ in NSLock() }
        box.player = self
    }

    /// The timeline as it stands (manual cues fired so far, gain changes added).
    public var timeline: SessionTimeline { state.withLock { $0.timeline } }

    /// The session's rate for this run: the engine's when the player was made (its timeline's
    /// samples are at this rate).
    public let rate: Double

    /// Whether layers that name ports have outputs of their own.
    public let directOutputs: Bool

    /// The session sample playing at device sample `deviceTime` (the paused position while
    /// paused or before the start).
    public func position(atDeviceTime deviceTime: Int64) -> Int64 {
        state.withLock { state in
            if state.paused || !state.running { return state.pausedPosition }
            return max(state.originPosition, state.originPosition + deviceTime - state.originDevice)
        }
    }

    /// A player for the same session on `engine` at the engine's rate now, carrying over what this
    /// run added (manual cues fired, gain changes), every sample moved to the new rate — for a run
    /// whose device changed its rate. Dispose of this player's queues first when layers have
    /// ports of their own (the new queues take the same port names).
    public func carried(to engine: Engine) throws -> SessionPlayer {
        let next = try SessionPlayer(session: session, engine: engine, directOutputs: directOutputs,
                                     bufferFrames: bufferFrames, bufferCount: bufferCount)
        let factor = next.rate / rate
        let (fired, gains) = state.withLock { ($0.fired, $0.gainChanges) }
        for (name, sample) in fired {
            try? next.go(name, atPosition: Int64((Double(sample) * factor).rounded()))
        }
        for (layer, point) in gains {
            let moved = SessionTimeline.AutomationPoint(start: Int64((Double(point.start) * factor).rounded()),
                                                        ramp: Int64((Double(point.ramp) * factor).rounded()),
                                                        gainDB: point.gainDB)
            next.state.withLock { state in
                state.timeline.addAutomation(layer: layer, moved)
                state.gainChanges.append((layer, moved))
            }
        }
        let (cues, playhead) = state.withLock { ($0.timeline.cues, $0.playhead) }
        func move(_ sample: Int64) -> Int64 { Int64((Double(sample) * factor).rounded()) }
        next.state.withLock { state in
            for cue in cues {
                state.timeline.cues[cue.index].interruptions = cue.interruptions.map {
                    SessionTimeline.Interruption(fadeStart: move($0.fadeStart), fade: move($0.fade),
                                                 resume: $0.resume.map(move), isStop: $0.isStop)
                }
                state.timeline.cues[cue.index].levelChanges = cue.levelChanges.map {
                    SessionTimeline.AutomationPoint(start: move($0.start), ramp: move($0.ramp), gainDB: $0.gainDB)
                }
            }
            state.playhead = playhead
        }
        return next
    }

    /// Stops every layer and disposes of the queues (their ports go); the player cannot play again.
    public func dispose() {
        stop()
        for queue in queues { try? queue.dispose() }
    }

    /// The first file error met while playing (that cue plays on as silence), if any.
    public var error: FileError? { state.withLock { $0.error } }

    /// Whether the session is playing (started and not paused).
    public var isRunning: Bool { state.withLock { $0.running } }

    /// Whether the session is paused.
    public var isPaused: Bool { state.withLock { $0.paused } }

    /// The session sample playing now (the paused position while paused; the start position
    /// before the start).
    public var position: Int64 {
        let now = engine.currentTime().sampleTime
        return state.withLock { state in
            if state.paused || !state.running { return state.pausedPosition }
            return max(state.originPosition, state.originPosition + now - state.originDevice)
        }
    }

    /// The device sample at which session sample `position` plays (while running).
    public func deviceTime(forPosition position: Int64) -> Int64 {
        state.withLock { $0.originDevice + position - $0.originPosition }
    }

    /// Starts the session at session sample `position` (0: the start; later, everything already
    /// under way plays from the right place), with that sample playing at device sample
    /// `deviceTime` (nil: as soon as possible).
    ///
    /// - Returns: the device sample at which `position` plays.
    /// - Throws: ``AudioQueueError`` if the queues cannot start.
    @discardableResult
    public func start(from position: Int64 = 0, at deviceTime: Int64? = nil) throws(AudioQueueError) -> Int64 {
        try prepare(from: position)
        return try begin(from: position, at: deviceTime)
    }

    /// Starts the session at session sample `position`, `lead` seconds after the earliest device
    /// sample it can start on once every layer's first buffers are computed — so that however
    /// many layers there are to compute (that takes a while for hundreds), the start is not
    /// late and nothing of it is skipped. Start a recording of the run on the sample it returns.
    ///
    /// - Returns: the device sample at which `position` plays.
    /// - Throws: ``AudioQueueError`` if the queues cannot start.
    @discardableResult
    public func start(from position: Int64 = 0, lead: Double) throws(AudioQueueError) -> Int64 {
        try prepare(from: position)
        let at = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime) + Int64((max(0, lead) * rate).rounded())
        return try begin(from: position, at: at)
    }

    /// Starts the prepared layers together with session sample `position` at `deviceTime`.
    private func begin(from position: Int64, at deviceTime: Int64?) throws(AudioQueueError) -> Int64 {
        let group = try engine.start(queues, at: deviceTime, ifLate: .skipAhead)
        let origin = group.sampleTime - group.queueTimeAtStart
        state.withLock { state in
            if group.framesLate > 0 {
                state.lateStarts.append(LateStart(position: position, sampleTime: group.sampleTime,
                                                  skippedFrames: group.queueTimeAtStart))
            }
            state.originDevice = origin
            state.originPosition = position
            state.running = true
            state.paused = false
        }
        return origin
    }

    /// Moves playback to session sample `position`: stops every layer, recomputes from there and
    /// starts them together again, at device sample `deviceTime` (nil: as soon as possible).
    /// - Throws: ``AudioQueueError`` if the queues cannot restart.
    /// While paused (or before the start), only the position moves: ``resume()`` plays from there.
    /// - Returns: the device sample at which `position` plays (nil while paused).
    @discardableResult
    public func seek(to position: Int64, at deviceTime: Int64? = nil) throws(AudioQueueError) -> Int64? {
        let playing = state.withLock { $0.running && !$0.paused }
        if !playing {
            state.withLock { $0.pausedPosition = max(0, position) }
            return nil
        }
        try halt()
        return try start(from: max(0, position), at: deviceTime)
    }

    /// Stops at once (transport stopped, say) and remembers `position` as the paused position.
    public func halt(at position: Int64) {
        try? halt()
        state.withLock { state in
            state.running = false
            state.paused = true
            state.pausedPosition = position
        }
    }

    /// Pauses: fades out over 5 ms and stops every layer, keeping the position.
    public func pause() {
        let wasRunning = state.withLock { $0.running && !$0.paused }
        guard wasRunning else { return }
        let at = position
        for queue in queues { try? queue.setVolume(0) }
        // The 5 ms fade is rendered (plus a period in flight) before the layers stop.
        let fadeEnd = engine.currentTime().sampleTime + Int64(engine.sampleRate * 0.005) + Int64(engine.device.maximumFramesPerCycle)
        engine.waitUntilRendered(through: fadeEnd, timeout: 1)
        try? halt()
        for queue in queues { try? queue.setVolume(1) }
        state.withLock { state in
            state.paused = true
            state.running = false
            state.pausedPosition = at
        }
    }

    /// Resumes after ``pause()`` from the paused position.
    /// - Throws: ``AudioQueueError`` if the queues cannot restart.
    public func resume() throws(AudioQueueError) {
        let (paused, at) = state.withLock { ($0.paused, $0.pausedPosition) }
        guard paused else { return }
        try start(from: at)
    }

    /// Stops every layer at once and frees the queues' buffers from refills.
    public func stop() {
        try? halt()
        state.withLock { $0.running = false }
    }

    /// Fires a manual cue: `name`, or the one the playhead selects when nil (at first, the first
    /// manual cue in file order). The playhead then selects the next manual cue waiting after
    /// the one fired (in file order; the first one waiting when none waits after it).
    ///
    /// With `position`, the cue is placed on that session sample instead (a time-tagged command),
    /// or on the control sample when `position` lies before it: a sample some layer has already
    /// computed cannot change any more. ``GoResult/start`` says where it went.
    ///
    /// - Returns: what was placed and where.
    /// - Throws: ``PlayerError`` when the cue is unknown, not manual, or already fired, or when
    ///   no manual cue is left.
    @discardableResult
    public func go(_ name: String? = nil, at position: Int64? = nil) throws(PlayerError) -> GoResult {
        try control(at: position) { state throws(PlayerError) -> GoResult in
            let cue: SessionTimeline.Cue
            if let name {
                cue = try Self.manualCue(name, in: state.timeline, verb: "go")
            } else {
                guard let index = state.playhead ?? state.timeline.waitingCues.first?.index else {
                    throw PlayerError("go: no manual cue is waiting")
                }
                cue = state.timeline.cues[index]
            }
            var result = Self.fire(cue, in: &state)
            state.playhead = Self.waitingCue(after: cue.index, in: state.timeline)
            result.playhead = state.playhead.map { state.timeline.cues[$0].name }
            return result
        }
    }

    /// Fires manual cue `name` without moving the playhead (unless it selected this cue: it then
    /// moves on as after a ``go(_:at:)``). With `position`, on that session sample, or on the
    /// control sample when `position` lies before it (as ``go(_:at:)``).
    /// - Throws: ``PlayerError`` when the cue is unknown, not manual or already fired (a cue
    ///   plays once per run; a paused one takes ``resumeCue(_:)``).
    @discardableResult
    public func startCue(_ name: String, at position: Int64? = nil) throws(PlayerError) -> GoResult {
        try control(at: position) { state throws(PlayerError) -> GoResult in
            let cue = try Self.manualCue(name, in: state.timeline, verb: "start")
            var result = Self.fire(cue, in: &state)
            if state.playhead == cue.index { state.playhead = Self.waitingCue(after: cue.index, in: state.timeline) }
            result.playhead = state.playhead.map { state.timeline.cues[$0].name }
            return result
        }
    }

    /// The manual cue waiting to be fired that a command names.
    private static func manualCue(_ name: String, in timeline: SessionTimeline, verb: String) throws(PlayerError) -> SessionTimeline.Cue {
        let found = try cue(name, in: timeline, verb: verb)
        guard found.trigger == found.index else {
            let how = found.trigger.map { "it starts with manual cue '\(timeline.cues[$0].name)'; fire that one" }
                ?? "it has a fixed place in the timeline; only cues with 'at: manual' take \(verb)"
            throw PlayerError("\(verb): cue '\(name)' is not manual (\(how))")
        }
        guard found.start == nil else {
            let paused = found.awaitsResume ? " and is paused; resume it" : "; a cue plays once per run"
            throw PlayerError("\(verb): cue '\(name)' has already been fired\(paused)")
        }
        return found
    }

    /// The cue named `name`.
    private static func cue(_ name: String, in timeline: SessionTimeline, verb: String) throws(PlayerError) -> SessionTimeline.Cue {
        guard let found = timeline.cues.first(where: { $0.name == name }) else {
            throw PlayerError("\(verb): unknown cue '\(name)'\(Suggest.hint(for: name, in: timeline.cues.map(\.name)))")
        }
        return found
    }

    /// Places `cue` on the control sample.
    private static func fire(_ cue: SessionTimeline.Cue, in state: inout State) -> GoResult {
        let sample = state.controlSample
        let placed = state.timeline.fire(cue.index, at: sample)
        state.touch(cues: placed, from: sample)
        state.fired.append((cue.name, sample))
        return GoResult(cue: cue.name, placed: placed.map { state.timeline.cues[$0].name },
                        start: sample + cue.offsetFromTrigger, playhead: nil)
    }

    /// The first manual cue waiting after cue `index` in file order, else the first one waiting.
    private static func waitingCue(after index: Int, in timeline: SessionTimeline) -> Int? {
        let waiting = timeline.waitingCues
        return (waiting.first { $0.index > index } ?? waiting.first)?.index
    }

    // MARK: - Cues

    /// Stops cue `name` where the control lands (on session sample `position` when given and not
    /// yet computed): a playing cue fades out over ``declickSeconds``, a paused one ends, a
    /// scheduled one is cancelled (it will not play).
    /// - Throws: ``PlayerError`` for an unknown cue, or one that waits for go, has ended or is
    ///   stopped already.
    @discardableResult
    public func stopCue(_ name: String, at position: Int64? = nil) throws(PlayerError) -> CueChange {
        try interrupt(name, stop: true, at: position)
    }

    /// Pauses cue `name` where the control lands, or on session sample `position` when given and
    /// not yet computed (fading out over ``declickSeconds``); the rest of the session plays on. ``resumeCue(_:)`` plays it on from there.
    /// - Throws: ``PlayerError`` for an unknown cue or one that is not playing.
    @discardableResult
    public func pauseCue(_ name: String, at position: Int64? = nil) throws(PlayerError) -> CueChange {
        try interrupt(name, stop: false, at: position)
    }

    /// Stops or pauses one cue where the control lands.
    private func interrupt(_ name: String, stop: Bool, at position: Int64?) throws(PlayerError) -> CueChange {
        let verb = stop ? "stop" : "pause"
        return try control(at: position) { state throws(PlayerError) -> CueChange in
            let cue = try Self.cue(name, in: state.timeline, verb: verb)
            let sample = state.controlSample
            let cueState = cue.state(at: sample)
            let allowed: [SessionTimeline.CueState] = stop ? [.scheduled, .playing, .paused] : [.playing]
            guard allowed.contains(cueState), stop || !cue.awaitsResume else {
                let why = !stop && cue.awaitsResume ? "is paused already" : Self.describe(cueState)
                throw PlayerError("\(verb): cue '\(name)' \(why); only a \(stop ? "scheduled, playing or paused cue can be stopped" : "playing cue can be paused")")
            }
            let fade = cueState == .playing ? declickFade(state) : 0
            state.timeline.interrupt(cue.index, .init(fadeStart: sample, fade: fade, isStop: stop))
            state.touch(layer: cue.layer, from: sample)
            return CueChange(cue: name, start: sample, end: sample + fade)
        }
    }

    /// Plays paused cue `name` on from where it paused, fading in over ``declickSeconds``, from
    /// where the control lands (or session sample `position`, when given and not yet computed).
    /// - Throws: ``PlayerError`` for an unknown cue or one that is not paused.
    @discardableResult
    public func resumeCue(_ name: String, at position: Int64? = nil) throws(PlayerError) -> CueChange {
        try control(at: position) { state throws(PlayerError) -> CueChange in
            let cue = try Self.cue(name, in: state.timeline, verb: "resume")
            guard let at = state.timeline.resume(cue.index, at: state.controlSample) else {
                throw PlayerError("resume: cue '\(name)' is not paused (it \(Self.describe(cue.state(at: state.controlSample)))); pause it first")
            }
            let fade = state.timeline.cues[cue.index].interruptions.last { $0.resume == at }?.fade ?? 0
            state.touch(layer: cue.layer, from: at)
            return CueChange(cue: name, start: at, end: at + fade)
        }
    }

    /// What a stop of every cue did.
    public struct StopResult: Sendable, Hashable {
        /// The cues stopped (or cancelled), in file order.
        public var cues: [String]
        /// The session sample the fade-outs begin.
        public var start: Int64
        /// The session sample from which everything they played is silent.
        public var silentFrom: Int64
    }

    /// Stops every cue that is scheduled, playing or paused where the control lands (or on
    /// session sample `position`, when given and not yet computed): playing
    /// cues fade out over `fade` seconds (at least ``declickSeconds``; none while the session is
    /// paused), the others end at once. Manual cues waiting for go stay ready.
    /// - Returns: the cues stopped and where.
    @discardableResult
    public func stopAll(fade seconds: Double = SessionPlayer.declickSeconds, at position: Int64? = nil) -> StopResult {
        let rate = self.rate
        return control(at: position) { state in
            let sample = state.controlSample
            let playingFade = declickFade(state) == 0 ? 0 : Int64((max(seconds, Self.declickSeconds) * rate).rounded())
            var result = StopResult(cues: [], start: sample, silentFrom: sample)
            for cue in state.timeline.cues {
                let cueState = cue.state(at: sample)
                guard [.scheduled, .playing, .paused].contains(cueState) else { continue }
                let fade = cueState == .playing ? playingFade : 0
                state.timeline.interrupt(cue.index, .init(fadeStart: sample, fade: fade, resume: nil, isStop: true))
                state.touch(layer: cue.layer, from: sample)
                result.cues.append(cue.name)
                result.silentFrom = max(result.silentFrom, sample + fade)
            }
            return result
        }
    }

    /// Changes cue `name`'s own level to `decibels` over `ramp` seconds, from where the control
    /// lands or session sample `position` (when given and not yet computed); its layer's gain
    /// applies on top.
    /// - Returns: the session sample the change starts.
    /// - Throws: ``PlayerError`` for an unknown cue or a bad level or ramp.
    @discardableResult
    public func setCueLevel(_ name: String, decibels: Double, ramp: Double = 0, at position: Int64? = nil) throws(PlayerError) -> Int64 {
        try Self.check(decibels: decibels, ramp: ramp, verb: "level")
        let rate = self.rate
        return try control(at: position) { state throws(PlayerError) -> Int64 in
            let cue = try Self.cue(name, in: state.timeline, verb: "level")
            let sample = state.controlSample
            state.timeline.addLevelChange(cue.index, .init(start: sample, ramp: Int64((ramp * rate).rounded()), gainDB: decibels))
            state.touch(layer: cue.layer, from: sample)
            return sample
        }
    }

    // MARK: - Playhead

    /// The manual cue a plain ``go(_:at:)`` fires next; nil when none waits.
    public var playhead: String? {
        state.withLock { state in state.playhead.map { state.timeline.cues[$0].name } }
    }

    /// Selects manual cue `name` (waiting for go) as the one a plain ``go(_:at:)`` fires next.
    /// - Throws: ``PlayerError`` for an unknown cue or one that does not wait for go.
    @discardableResult
    public func select(_ name: String) throws(PlayerError) -> String {
        try state.withLock { state throws(PlayerError) -> String in
            let cue = try Self.manualCue(name, in: state.timeline, verb: "playhead")
            state.playhead = cue.index
            return cue.name
        }
    }

    /// Moves the playhead to the next manual cue waiting (`forward`) or the previous one, in file
    /// order.
    /// - Returns: the cue selected.
    /// - Throws: ``PlayerError`` when there is none in that direction.
    @discardableResult
    public func selectAdjacent(forward: Bool) throws(PlayerError) -> String {
        try state.withLock { state throws(PlayerError) -> String in
            let waiting = state.timeline.waitingCues
            let current = state.playhead
            let candidate = forward ? waiting.first { current == nil || $0.index > current! }
                                    : waiting.last { current == nil || $0.index < current! }
            guard let cue = candidate else {
                let here = current.map { " \(forward ? "after" : "before") '\(state.timeline.cues[$0].name)'" } ?? ""
                throw PlayerError("select: no manual cue waits\(here); the playhead stays")
            }
            state.playhead = cue.index
            return cue.name
        }
    }

    /// The fade for a pause, resume or stop: ``declickSeconds`` while playing, 0 while paused.
    private func declickFade(_ state: State) -> Int64 {
        state.running && !state.paused ? Int64((Self.declickSeconds * rate).rounded()) : 0
    }

    /// "has ended", "waits for go"… for error messages.
    private static func describe(_ state: SessionTimeline.CueState) -> String {
        switch state {
        case .waiting: return "waits for go"
        case .scheduled: return "has not started yet"
        case .playing: return "is playing"
        case .paused: return "is paused"
        case .stopped: return "is stopped"
        case .done: return "has ended"
        }
    }

    /// Checks a level or gain and its ramp (``ControlRange``: the same ranges and messages as
    /// every control surface), before either becomes samples.
    private static func check(decibels: Double, ramp: Double, verb: String) throws(PlayerError) {
        do throws(ControlRangeError) {
            try ControlRange.gain(decibels, for: verb)
            try ControlRange.checkRamp(seconds: ramp, for: verb)
        } catch {
            throw PlayerError(error.message)
        }
    }

    /// Fires manual cue `name` at session sample `sample` exactly (offline renders, tests).
    /// - Throws: ``PlayerError`` if the cue is unknown, not manual or already fired.
    public func go(_ name: String, atPosition sample: Int64) throws(PlayerError) {
        try control { state throws(PlayerError) in
            guard let cue = state.timeline.cues.first(where: { $0.name == name }) else {
                throw PlayerError("unknown cue '\(name)'\(Suggest.hint(for: name, in: state.timeline.cues.map(\.name)))")
            }
            guard cue.trigger == cue.index, cue.start == nil else {
                throw PlayerError("cue '\(name)' is not a manual cue waiting for go; only cues with 'at: manual' can be placed")
            }
            state.touch(cues: state.timeline.fire(cue.index, at: sample), from: sample)
            state.fired.append((name, sample))
            if state.playhead == cue.index { state.playhead = Self.waitingCue(after: cue.index, in: state.timeline) }
        }
    }

    /// Ramps a layer's gain to `decibels` over `ramp` seconds, starting at the first sample not
    /// yet computed, or at session sample `position` when that is later.
    /// - Returns: the session sample the ramp starts.
    /// - Throws: ``PlayerError`` for an unknown layer or a bad gain or ramp.
    @discardableResult
    public func setGain(layer name: String, decibels: Double, ramp: Double = 0, at position: Int64? = nil) throws(PlayerError) -> Int64 {
        try Self.check(decibels: decibels, ramp: ramp, verb: "gain")
        let rate = self.rate
        return try control(at: position) { state throws(PlayerError) -> Int64 in
            guard let layer = state.timeline.layers.firstIndex(where: { $0.name == name }) else {
                throw PlayerError("gain: unknown layer '\(name)'\(Suggest.hint(for: name, in: state.timeline.layers.map(\.name))); the layers are \(state.timeline.layers.map(\.name).joined(separator: ", "))")
            }
            let sample = state.controlSample
            let point = SessionTimeline.AutomationPoint(start: sample, ramp: Int64((ramp * rate).rounded()), gainDB: decibels)
            state.timeline.addAutomation(layer: layer, point)
            state.gainChanges.append((layer, point))
            state.touch(layer: layer, from: sample)
            return sample
        }
    }

    /// Stops refilling without waiting for the buffers (an offline render that is done: its
    /// device renders no more, so the buffers would never come back).
    func finishRendering() {
        state.withLock { state in
            state.halted = true
            state.running = false
        }
    }

    // MARK: - Refills

    private func prepare(from position: Int64) throws(AudioQueueError) {
        let all = buffers.withLock { $0 }
        state.withLock { state in
            state.filled = Array(repeating: position, count: queues.count)
            state.halted = false
            state.pausedPosition = position
            state.queueOrigin = position
            state.spares = all.map(\.last)
        }
        // Under each layer's lock: a refill that passed its halted check before the halt may
        // still be computing that layer on the callback thread (its buffer is already back, so
        // the halt did not wait for it), and the renderer's open cues are not to be shared.
        for (layer, renderer) in renderers.enumerated() {
            layerLocks[layer].lock()
            renderer.reset()
            layerLocks[layer].unlock()
        }
        for (layer, list) in all.enumerated() {
            for buffer in list.dropLast() { refill(layer: layer, buffer: buffer) }
        }
    }

    /// Applies a control change: `body` edits the state (timeline, playhead…) with the control
    /// sample set to the earliest sample the device can still change, noting the layers it
    /// touches; then every touched layer that has computed audio past its change is cut there
    /// and computed again from there — its first buffer at once, into the layer's spare.
    private func control<T, E: Error>(at requested: Int64? = nil, _ body: (inout State) throws(E) -> T) throws(E) -> T {
        var earliestDevice = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime)
        for lock in layerLocks { lock.lock() }
        defer { for lock in layerLocks.reversed() { lock.unlock() } }
        let frames = bufferFrames
        typealias Repair = (layer: Int, from: Int64, spare: QueueBuffer?)
        var attempt = 0
        while true {
            attempt += 1
            if attempt > 1 { earliestDevice = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime) }
            let outcome: Result<(T, [Repair], SessionTimeline, Int64, State, Int64), E> = state.withLock { state in
                let before = state
                let live = state.running && !state.paused && !state.halted
                state.earliestChangeable = live
                    ? max(state.originPosition, state.originPosition + earliestDevice - state.originDevice) : nil
                state.touched = [:]
                state.requestedSample = requested
                defer {
                    state.earliestChangeable = nil
                    state.requestedSample = nil
                    state.touched = [:]
                }
                let result: T
                do throws(E) { result = try body(&state) } catch { return .failure(error) }
                var repairs: [Repair] = []
                if live {
                    for (layer, sample) in state.touched.sorted(by: { $0.key < $1.key }) where sample < state.filled[layer] {
                        let from = max(sample, state.queueOrigin)
                        let spare = state.spares[layer]
                        state.spares[layer] = nil
                        state.filled[layer] = from + (spare == nil ? 0 : Int64(frames))
                        repairs.append((layer, from, spare))
                    }
                }
                return .success((result, repairs, state.timeline, state.queueOrigin, before,
                                 state.originDevice - state.originPosition))
            }
            let (result, repairs, timeline, origin, before, deviceOffset) = try outcome.get()
            // The layers' new audio, computed before anything reaches the queues.
            for repair in repairs {
                if let spare = repair.spare { render(layer: repair.layer, timeline: timeline, position: repair.from, into: spare) }
            }
            // Still in time? A change reaches the device at the start of a cycle not yet begun:
            // if the earliest changeable sample moved while it was computed (a cycle began, or
            // the next one came close — a busy machine) past what it changes, it is undone and
            // made again on the earliest sample now, so that what is reported is what plays.
            if let first = repairs.map(\.from).min(), attempt < 4 {
                let earliestNow = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime)
                if earliestNow != earliestDevice && first + deviceOffset < earliestNow {
                    state.withLock { state in
                        // (What other threads changed meanwhile — a halt, an error — stays.)
                        let (halted, running, paused, error) = (state.halted, state.running, state.paused, state.error)
                        state = before
                        (state.halted, state.running, state.paused, state.error) = (halted, running, paused, error)
                    }
                    continue
                }
            }
            for repair in repairs {
                let queue = queues[repair.layer]
                try? queue.truncate(at: repair.from - origin)
                if let spare = repair.spare { _ = try? queue.enqueue(spare, startTime: repair.from - origin) }
            }
            return result
        }
    }

    /// Computes `buffer` (all its frames) of `layer` from session sample `position`.
    private func render(layer: Int, timeline: SessionTimeline, position: Int64, into buffer: QueueBuffer) {
        let renderer = renderers[layer]
        let frames = buffer.frameCapacity
        buffer.withFloatSamples { samples in
            renderer.render(timeline, position: position, frames: frames, into: samples.baseAddress!)
        }
        buffer.frameCount = frames
        if let problem = renderer.error {
            state.withLock { if $0.error == nil { $0.error = problem } }
        }
    }

    /// Stops every queue at once and waits until all buffers are back.
    private func halt() throws(AudioQueueError) {
        state.withLock { $0.halted = true }
        for queue in queues { try? queue.stop(immediately: true) }
        let deadline = ContinuousClock.now + .seconds(2)
        var lastStop = ContinuousClock.now
        while buffers.withLock({ $0.joined().contains { $0.isInFlight } }) {
            // A refill that was under way when the halt began may enqueue after the stop:
            // stop again so that buffer comes back too.
            if ContinuousClock.now - lastStop > .milliseconds(20) {
                for queue in queues { try? queue.stop(immediately: true) }
                lastStop = ContinuousClock.now
            }
            if ContinuousClock.now > deadline {
                throw AudioQueueError(.invalidRunState, "the layer queues did not hand their buffers back within 2 s; is the engine's callback thread blocked?")
            }
            // Woken by the next delivery of render events (the buffers come back through them).
            engine.waitForDeliveries(timeout: 0.02) { !buffers.withLock { $0.joined().contains { $0.isInFlight } } }
        }
    }

    /// Computes the layer's next buffer into `buffer` (back from the queue) and enqueues it on
    /// its sample; keeps it as the layer's spare when the layer has none.
    func refill(layer: Int, buffer: QueueBuffer) {
        let lock = layerLocks[layer]
        lock.lock()
        defer { lock.unlock() }
        guard let (timeline, position, origin) = state.withLock({ state -> (SessionTimeline, Int64, Int64)? in
            if state.halted { return nil }
            if state.spares[layer] == nil {
                state.spares[layer] = buffer
                return nil
            }
            let position = state.filled[layer]
            state.filled[layer] += Int64(buffer.frameCapacity)
            return (state.timeline, position, state.queueOrigin)
        }) else { return }
        render(layer: layer, timeline: timeline, position: position, into: buffer)
        _ = try? queues[layer].enqueue(buffer, startTime: position - origin)
    }
}

/// A control command that cannot be carried out (unknown cue, a cue already fired…).
public struct PlayerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong and what to do.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

/// Lets the queues' callbacks reach the player without a retain cycle.
private final class PlayerReference: @unchecked Sendable {
    weak var player: SessionPlayer?
}
