import Foundation
import Lockstep
import LockstepFiles
import Synchronization

/// Plays a session on an ``Engine``: one output queue per layer, each fed by a renderer that
/// computes the layer's audio from the session timeline, all started on one sample.
///
/// Works the same on a live device (JACK) and on an ``OfflineDevice``: the audio is a function of
/// session time only, so a live run and an offline render match sample for sample.
///
/// With a ``FileStreamer`` (live), each layer's buffers are computed on the streamer's threads,
/// each layer on its own lane, ahead of the device; the engine's callback thread only hands the
/// buffers back. Without one (offline), they are computed where the queues hand them back.
///
/// Control (``go(_:at:)``, ``startCue(_:at:)``, ``stopCue(_:)``, ``pauseCue(_:)``, ``resumeCue(_:)``,
/// ``stopAll(fade:)``, ``setCueLevel(_:decibels:ramp:)``, ``setGain(layer:decibels:ramp:)``,
/// ``select(_:)``, ``pause()``, ``resume()``, ``seek(to:)``) may come from any thread. While the
/// session plays, each change lands on the earliest sample the device can still change with room
/// to recompute — one period after the nearest start on JACK (``Engine/nearestStartTime(atOrAfter:)``,
/// itself half a period to one and a half ahead; a change asked for a sample keeps it), the next
/// frame to render offline — however much audio the layers have computed ahead: a change edits the session's
/// timeline, then asks each layer it touches to be recomputed from its sample (urgent work on the
/// layer's lane: the queue is cut there with ``OutputQueue/truncate(at:)`` and the layer's next
/// buffer computed from there), and returns once that is done. A layer recomputed too late for
/// its sample keeps its place on the timeline and is reported in ``lateStarts`` with the frames
/// it missed. The audio stays a function of session time.
///
/// A plain ``go(_:at:)`` (the playhead's cue) needs none of that when the cue is armed (live; see
/// `SessionPlayer+Arming.swift`): its layer holds the audio for each of the next cycles, and the
/// render thread starts the one for the next cycle it renders.
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

    /// Where the layers are computed (nil: where the queues hand their buffers back).
    public let streamer: FileStreamer?
    /// Opens each cue's audio.
    public let sources: AudioSourceOpener
    /// Signalled after every change of what plays or when (``SessionPlayer/schedule``).
    public let changes = ChangeSignal()
    let changeCounter = Atomic<Int>(0)
    /// Edits, undos and redos made (``editCount``).
    let editCounter = Atomic<Int>(0)

    let renderers: [LayerRenderer]
    /// The LTC it sends on outputs of its own, when asked for (``TimecodeSetting``).
    let timecodeOutput: SessionTimecodeOutput?
    /// Per layer: the renderer that computes the armed standby cue's pieces (its own open files,
    /// so the layer's refills read on undisturbed); used on the layer's lane only.
    let armingRenderers: [LayerRenderer]
    let state: Mutex<State>
    /// ``State/run``, readable without the lock by the callback thread handing buffers back.
    let currentRun = Atomic<Int>(0)
    let buffers: Mutex<[[QueueBuffer]]>
    /// One per layer: held while the layer's renderer computes and enqueues a buffer (a refill on
    /// the lane's ordinary thread, a control change's recompute or a GO's next buffer on its
    /// urgent thread, a start), and by a GO of the armed standby cue until its layer's timeline
    /// holds the fired cue. Taken before `state`. They inherit priority: a GO or a recompute at
    /// realtime priority never waits behind the ordinary threads for a refill holding one.
    let layerLocks: [PriorityInheritingLock]
    /// Held by a control change from its start to its end, and by a `go` of the armed standby
    /// cue: they apply one at a time, and no piece is armed in between. Inherits priority.
    let controlLock = PriorityInheritingLock()

    /// Where a run is (the player's state).
    enum Phase: Equatable {
        /// Not started, or stopped: nothing is computed.
        case stopped
        /// A start computing its layers' first buffers.
        case starting
        /// Playing: session sample `originPosition` plays at device sample `originDevice`.
        case playing
        /// Its layers stopping, to start again elsewhere (a seek); still on the old origin.
        case halting
        /// Paused at `pausedPosition`: ``SessionPlayer/resume()`` plays on from there.
        case paused

        /// Whether the layers are computed (refills and recomputes go on).
        var computes: Bool { self == .starting || self == .playing }
        /// Whether the session's clock runs (its position moves with the device).
        var isRunning: Bool { self == .playing || self == .halting }
    }

    struct State {
        var timeline: SessionTimeline
        /// The timeline as the session file (with the run's edits) makes it at this run's rate:
        /// what ``SessionPlayer/reset()`` returns to.
        var initial: SessionTimeline
        /// The session as edited during the run (``SessionPlayer/edit(_:_:)``, cues added,
        /// removed, moved): its text is what a save writes.
        var session: Session
        /// Its file as edited.
        var document: SessionDocument { session.document }
        /// The edits made, the last on top, and those undone (``undo()``, ``redo()``).
        var undoStack: [EditStep] = []
        var redoStack: [EditStep] = []
        /// Per layer: the next session sample it computes.
        var filled: [Int64]
        /// Where the run is.
        var phase = Phase.stopped
        /// Counts the starts: a refill handed to the streamer in an earlier run does nothing.
        var run = 0
        /// The device sample at which session sample `originPosition` plays, while running.
        var originDevice: Int64 = 0
        var originPosition: Int64 = 0
        var pausedPosition: Int64 = 0
        /// The latest stretches of device samples that played the session (``PlaySegment``).
        var segments: [PlaySegment] = []
        /// The latest relocation announced.
        var relocation: Relocation?
        /// The latest pause announced.
        var pause: Pause?
        /// The latest edits made (``SessionPlayer/EditRecord``).
        var edits: [EditRecord] = []
        /// Samples a seek, resume or reset starts later than it could (``relocationLead``).
        var relocationLead: Int64 = 0
        var error: FileError?
        var lateStarts: [LateStart] = []
        /// What this run added to the session's own timeline: manual cues fired (name, session
        /// sample) and gain changes, to carry them over to another rate.
        var fired: [(name: String, sample: Int64, offset: Int64)] = []
        /// Manual cues loaded to a time (``SessionPlayer/load(_:at:)``): their next go starts them
        /// that many samples in.
        var loaded: [Int: Int64] = [:]
        var gainChanges: [(layer: Int, point: SessionTimeline.AutomationPoint)] = []
        /// The selected manual cue (index) a plain `go` fires: nil past the last one.
        var playhead: Int?
        /// The session sample the last plain `go` placed its cue on (the double-GO window counts
        /// from there).
        var lastPlainGo: Int64?
        /// Plain `go`s ignored inside the double-GO window.
        var ignoredGos = 0
        /// The window, in samples.
        var doubleGoWindow: Int64 = 0
        /// Samples a live change lands later than it could (``SessionPlayer/changeLead``).
        var changeLead: Int64 = 0
        /// The session sample at queue time 0 of this run's layer queues.
        var queueOrigin: Int64 = 0
        /// Per layer: up to ``SessionPlayer/spareCount`` buffers kept out of circulation, so that a
        /// control change can recompute the layer's next audio at once without waiting for
        /// buffers to come back.
        var spares: [[QueueBuffer]] = []
        /// Changes recomputed on a live device whose cut is not yet known to have been in time.
        var unverified: [Unverified] = []
        /// While a control change is applied: the earliest session sample the device can still
        /// change.
        var earliestChangeable: Int64?
        /// Per layer: the earliest session sample the control change being applied altered.
        var touched: [Int: Int64] = [:]
        /// The standby cue armed on its layer (live).
        var arming = Arming()

        /// The session sample a control change lands on: the earliest the device can still change
        /// while playing (the first one no layer has computed when that is not known) or the
        /// sample it was placed on when that is later, the paused position while paused.
        var controlSample: Int64 {
            guard phase.isRunning else { return pausedPosition }
            return max(earliestChangeable ?? (filled.max() ?? 0), requestedSample ?? .min)
        }
        /// While a control change placed on a sample is applied: that session sample (the change
        /// lands there, or on the earliest changeable sample when it lies before it).
        var requestedSample: Int64?

        /// Notes that the audio of `layer` changes from session sample `sample` on.
        mutating func touch(layer: Int, from sample: Int64) {
            touched[layer] = min(touched[layer] ?? .max, sample)
        }

        /// Places manual cue `cue` (anew: ``SessionTimeline/refire(_:at:fade:)``) on `sample`,
        /// noting the layers it changes.
        /// Carries out the action cues placed with it (a goto's playhead is kept in
        /// ``gotoPlayhead`` for the caller to apply once it has moved the playhead).
        ///
        /// A cue loaded to a time is placed that far before `sample` (and unloaded); what it
        /// changes before `sample` has played already and is left as it is.
        mutating func refire(_ cue: Int, at sample: Int64, fade: Int64) -> [Int] {
            let offset = loaded.removeValue(forKey: cue) ?? timeline.loadedOffset(of: cue, at: sample)
            // (Only audio cues still sounding change when their placement is left.)
            for other in timeline.cues where other.trigger == cue && other.isAudio && other.start != nil && (other.end ?? .max) > sample {
                touch(layer: other.layer, from: sample)
            }
            let placed = timeline.refire(cue, at: sample, fade: fade, offset: offset)
            lastOffset = offset
            for index in placed where timeline.cues[index].isAudio {
                touch(layer: timeline.cues[index].layer, from: max(sample, timeline.cues[index].start ?? sample))
            }
            let outcome = timeline.applyActions(of: placed)
            for (layer, from) in outcome.touched { touch(layer: layer, from: max(sample, from)) }
            if let goto = outcome.playhead { gotoPlayhead = goto }
            return placed + outcome.placed
        }

        /// Where a goto cue placed by the change being applied put the playhead.
        var gotoPlayhead: Int?
        /// The load offset of the cue ``refire(_:at:fade:)`` placed last.
        var lastOffset: Int64 = 0

        /// Moves the playhead after a `go` of cue `fired`: where a goto cue put it, else to the
        /// next manual cue (with `always` false, only when it was on `fired`).
        mutating func movePlayhead(after fired: Int, always: Bool = true) {
            if let goto = gotoPlayhead {
                playhead = goto
            } else if always || playhead == fired {
                playhead = SessionPlayer.manualCue(after: fired, in: timeline)
            }
            gotoPlayhead = nil
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

    /// Every late start so far, oldest first (a late change on a layer is known once the device
    /// has rendered the cycle it was for).
    public var lateStarts: [LateStart] {
        verifyChanges()
        return state.withLock { $0.lateStarts }
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
    ///   - streamer: the threads that compute the layers (each layer on a lane of its own); nil
    ///     (the default) computes them where the queues hand their buffers back — the render
    ///     thread of an offline device, the engine's callback thread of a live one.
    ///   - sources: opens each cue's audio (default: its file, a truncated one refused).
    ///   - timecode: LTC to send, following session time, on a queue of its own (`ltc`, with
    ///     outputs of its own — JACK `ltc_1` — when `directOutputs`), started, stopped and
    ///     relocated with the layers.
    /// - Throws: ``SessionError`` if the timeline cannot be built at this rate;
    ///   ``AudioQueueError`` if the queues cannot be created; ``TimecodeError`` for LTC the rate
    ///   cannot carry.
    public init(session: Session, engine: Engine, directOutputs: Bool = false, bufferFrames: Int = 1024,
                bufferCount: Int = 4, streamer: FileStreamer? = nil, sources: @escaping AudioSourceOpener = AudioSources.files,
                timecode: TimecodeSetting? = nil) throws {
        self.session = session
        self.engine = engine
        self.streamer = streamer
        self.sources = sources
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
            let renderer = LayerRenderer(layer: index, channelCount: timeline.channelCount, rate: engine.sampleRate, open: sources)
            let queue = try engine.makeOutputQueue(format: format, name: layer.name) { _, buffer in
                box.player?.bufferHandedBack(layer: index, buffer: buffer)
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
        timecodeOutput = try timecode.map { setting in
            if directOutputs, let clash = timeline.layers.first(where: { $0.name == SessionTimecodeOutput.name && !$0.ports.isEmpty }) {
                throw AudioQueueError(.invalidParameter, "layer '\(clash.name)' has ports of its own, named as the LTC output's; rename the layer")
            }
            return try SessionTimecodeOutput(setting: setting, engine: engine, directOutputs: directOutputs, bufferFrames: bufferFrames,
                                             bufferCount: bufferCount) { buffer in box.player?.timecodeBufferHandedBack(buffer) }
        }
        armingRenderers = timeline.layers.indices.map {
            LayerRenderer(layer: $0, channelCount: timeline.channelCount, rate: engine.sampleRate, open: sources)
        }
        state = Mutex(State(timeline: timeline, initial: timeline, session: session, filled: Array(repeating: 0, count: queues.count),
                            playhead: timeline.manualCues.first?.index,
                            spares: Array(repeating: [], count: queues.count)))
        var all: [[QueueBuffer]] = []
        for queue in queues {
            var list: [QueueBuffer] = []
            // (Besides those that circulate: the spares a control change recomputes into.)
            for _ in 0..<(bufferCount + Self.spareCount) { list.append(try queue.allocateBuffer(frameCapacity: bufferFrames)) }
            all.append(list)
        }
        buffers = Mutex(all)
        layerLocks = queues.map { _ in PriorityInheritingLock() }
        box.player = self
    }

    /// The timeline as it stands (manual cues fired so far, gain changes added).
    public var timeline: SessionTimeline { state.withLock { $0.timeline } }

    /// The session's rate for this run: the engine's when the player was made (its timeline's
    /// samples are at this rate).
    public let rate: Double

    /// Whether layers that name ports have outputs of their own.
    public let directOutputs: Bool
    /// ``portConnector``'s storage.
    let connectorBox = Mutex<(any LayerPortConnector)?>(nil)

    /// The session sample playing at device sample `deviceTime` (the paused position while
    /// paused or before the start).
    public func position(atDeviceTime deviceTime: Int64) -> Int64 {
        state.withLock { state in
            if !state.phase.isRunning { return state.pausedPosition }
            return max(state.originPosition, state.originPosition + deviceTime - state.originDevice)
        }
    }

    /// A player for the same session on `engine` at the engine's rate now, carrying over what this
    /// run added (``runState()``), every sample moved to the new rate — for a run
    /// whose device changed its rate. Dispose of this player's queues first when layers have
    /// ports of their own (the new queues take the same port names).
    public func carried(to engine: Engine) throws -> SessionPlayer {
        let next = try SessionPlayer(session: editedSession, engine: engine, directOutputs: directOutputs,
                                     bufferFrames: bufferFrames, bufferCount: bufferCount, streamer: streamer,
                                     sources: sources, timecode: timecodeOutput?.setting)
        // (Made from the session as edited: a cue placed before an edit replays with it.)
        next.doubleGoWindow = Int64((Double(doubleGoWindow) * next.rate / rate).rounded())
        next.changeLead = Int64((Double(changeLead) * next.rate / rate).rounded())
        next.relocationLead = Int64((Double(relocationLead) * next.rate / rate).rounded())
        next.restore(runState())
        return next
    }

    /// Stops every layer and disposes of the queues (their ports go); the player cannot play again.
    public func dispose() {
        stop()
        for queue in queues { try? queue.dispose() }
        try? timecodeOutput?.queue.dispose()
    }

    /// The first file error met while playing (that cue plays on as silence), if any.
    public var error: FileError? { state.withLock { $0.error } }

    /// Whether the session is playing (started and not paused).
    public var isRunning: Bool { state.withLock { $0.phase.isRunning } }

    /// Whether the session is paused.
    public var isPaused: Bool { state.withLock { $0.phase == .paused } }

    /// The session sample playing now (the paused position while paused; the start position
    /// before the start).
    public var position: Int64 {
        let now = engine.currentTime().sampleTime
        return state.withLock { state in
            if !state.phase.isRunning { return state.pausedPosition }
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
    func begin(from position: Int64, at deviceTime: Int64?) throws(AudioQueueError) -> Int64 {
        let group = try engine.start(queues + (timecodeOutput.map { [$0.queue] } ?? []), at: deviceTime, ifLate: .skipAhead)
        let origin = group.sampleTime - group.queueTimeAtStart
        state.withLock { state in
            if group.framesLate > 0 {
                state.lateStarts.append(LateStart(position: position, sampleTime: group.sampleTime,
                                                  skippedFrames: group.queueTimeAtStart))
            }
            state.originDevice = origin
            state.originPosition = position
            state.phase = .playing
            state.segments.append(PlaySegment(from: group.sampleTime, until: nil, originDevice: origin, originPosition: position))
            if state.segments.count > Self.segmentHistory { state.segments.removeFirst() }
        }
        noteChange()
        scheduleArming()
        return origin
    }

    /// Moves playback to session sample `position`: stops every layer, recomputes from there and
    /// starts them together again, at device sample `deviceTime` (nil: as soon as possible).
    /// - Throws: ``AudioQueueError`` if the queues cannot restart.
    /// While paused (or before the start), only the position moves: ``resume()`` plays from there.
    /// - Returns: the device sample at which `position` plays (nil while paused).
    @discardableResult
    public func seek(to position: Int64, at deviceTime: Int64? = nil) throws(AudioQueueError) -> Int64? {
        let playing = state.withLock { $0.phase == .playing }
        if !playing {
            state.withLock { $0.pausedPosition = max(0, position) }
            return nil
        }
        let at = deviceTime ?? relocationTime()
        if deviceTime == nil, let at { announceRelocation(to: max(0, position), at: at, isReset: false) }
        try halt()
        return try start(from: max(0, position), at: at)
    }

    /// Stops at once (transport stopped, say) and remembers `position` as the paused position.
    public func halt(at position: Int64) {
        try? halt()
        state.withLock { state in
            state.phase = .paused
            state.pausedPosition = position
        }
        noteChange()
    }

    /// Resumes after ``pause()`` from the paused position.
    /// - Throws: ``AudioQueueError`` if the queues cannot restart.
    public func resume() throws(AudioQueueError) {
        let (paused, at) = state.withLock { ($0.phase == .paused, $0.pausedPosition) }
        guard paused else { return }
        let time = relocationTime()
        if let time { announceRelocation(to: at, at: time, isReset: false) }
        try start(from: at, at: time)
    }

    /// Stops every layer at once and frees the queues' buffers from refills.
    public func stop() {
        try? halt()
        state.withLock { if $0.phase != .paused { $0.phase = .stopped } }
    }

    /// Fires a manual cue: `name`, or the one the playhead selects when nil (at first, the first
    /// manual cue in file order). The playhead then selects the next manual cue after the one
    /// fired, in file order (none after the last: ``reset()`` or a selection brings it back).
    ///
    /// A cue played before is placed anew (its chain too); one still sounding is cut where the new
    /// placement starts (a ``declickSeconds`` fade). A plain `go` within ``doubleGoWindow``
    /// samples of the previous plain `go`'s sample is ignored (``PlayerError/Kind/doubleGo``) and
    /// counted in ``ignoredGoCount``.
    ///
    /// With `position`, the cue is placed on that session sample instead (a time-tagged command),
    /// or on the control sample when `position` lies before it: a sample some layer has already
    /// computed cannot change any more. ``GoResult/start`` says where it went.
    ///
    /// - Parameter notBefore: without `position`, a device sample the cue must not start before
    ///   (a MIDI event's own sample, which can lie ahead of the cycle being rendered); at most
    ///   two periods ahead of now.
    /// - Returns: what was placed and where.
    /// - Throws: ``PlayerError`` when the cue is unknown, not manual or paused, when the playhead
    ///   is past the last manual cue, or for a plain `go` inside the double-GO window.
    @discardableResult
    public func go(_ name: String? = nil, at position: Int64? = nil, notBefore: Int64? = nil) throws(PlayerError) -> GoResult {
        if name == nil { try checkDoubleGo(at: position) }
        if position == nil, let armed = goArmed(named: name, notBefore: notBefore) { return armed }
        let fade = declickFade()
        return try control(at: position) { state throws(PlayerError) -> GoResult in
            let cue: SessionTimeline.Cue
            if let name {
                cue = try Self.manualCue(name, in: state.timeline, verb: "go")
            } else {
                try Self.checkDoubleGo(&state, at: state.controlSample)
                guard let index = state.playhead else {
                    throw PlayerError(.nothingWaiting, "go: the playhead is past the last manual cue; select a cue (playhead, select) or reset")
                }
                cue = try Self.manualCue(state.timeline.cues[index].name, in: state.timeline, verb: "go")
            }
            var result = Self.fire(cue, in: &state, fade: fade)
            if name == nil { state.lastPlainGo = result.start - cue.offsetFromTrigger }
            state.movePlayhead(after: cue.index)
            result.playhead = state.playhead.map { state.timeline.cues[$0].name }
            return result
        }
    }

    /// Fires manual cue `name` without moving the playhead (unless it selected this cue: it then
    /// moves on as after a ``go(_:at:)``). With `position`, on that session sample, or on the
    /// control sample when `position` lies before it (as ``go(_:at:)``).
    /// - Throws: ``PlayerError`` when the cue is unknown, not manual or paused (a paused one takes
    ///   ``resumeCue(_:)``).
    @discardableResult
    public func startCue(_ name: String, at position: Int64? = nil) throws(PlayerError) -> GoResult {
        let fade = declickFade()
        return try control(at: position) { state throws(PlayerError) -> GoResult in
            let cue = try Self.manualCue(name, in: state.timeline, verb: "start")
            var result = Self.fire(cue, in: &state, fade: fade)
            state.movePlayhead(after: cue.index, always: false)
            result.playhead = state.playhead.map { state.timeline.cues[$0].name }
            return result
        }
    }

    /// The manual cue a command names, to be fired (again, if it played): any but a paused one.
    static func manualCue(_ name: String, in timeline: SessionTimeline, verb: String) throws(PlayerError) -> SessionTimeline.Cue {
        let found = try cue(name, in: timeline, verb: verb)
        guard found.isGoTarget else {
            let how = found.trigger.map { "it starts with manual cue '\(timeline.cues[$0].name)'; fire that one" }
                ?? "it has a fixed place in the timeline; only cues with 'at: manual' take \(verb)"
            throw PlayerError(.notManual, "\(verb): cue '\(name)' is not manual (\(how))")
        }
        guard !found.awaitsResume else {
            throw PlayerError(.wrongState, "\(verb): cue '\(name)' is paused; resume it, or stop it and \(verb) it again")
        }
        return found
    }

    /// The cue named `name`.
    static func cue(_ name: String, in timeline: SessionTimeline, verb: String) throws(PlayerError) -> SessionTimeline.Cue {
        guard let found = timeline.cues.first(where: { $0.name == name }) else {
            throw PlayerError(.unknownCue, "\(verb): unknown cue '\(name)'\(Suggest.hint(for: name, in: timeline.cues.map(\.name)))")
        }
        return found
    }

    /// Places `cue` on the control sample (anew if it was placed before: what still sounds of
    /// its chain is cut there over `fade` samples).
    static func fire(_ cue: SessionTimeline.Cue, in state: inout State, fade: Int64) -> GoResult {
        let sample = state.controlSample
        let placed = state.refire(cue.index, at: sample, fade: fade)
        state.fired.append((cue.name, sample, state.lastOffset))
        return GoResult(cue: cue.name, placed: placed.map { state.timeline.cues[$0].name },
                        start: sample - state.lastOffset + cue.offsetFromTrigger, playhead: nil, position: sample)
    }

    /// The first manual cue after cue `index` in file order (nil after the last).
    static func manualCue(after index: Int, in timeline: SessionTimeline) -> Int? {
        timeline.cues[(index + 1)...].first(where: \.isGoTarget)?.index
    }
}


/// Lets the queues' callbacks reach the player without a retain cycle.
private final class PlayerReference: @unchecked Sendable {
    weak var player: SessionPlayer?
}
