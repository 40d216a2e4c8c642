import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepSession
import LockstepTimecode
import Synchronization

/// A session played live through a JACK device: the show engine of `lockstep session run`.
///
/// It builds the engine and the ``SessionPlayer`` (layers streamed on their own threads), connects
/// the master and layer ports, records the mix, starts the session or follows JACK transport,
/// plays on at a new rate when the server's rate changes, counts the playing time a duration
/// allows, knows when the show has ended, and fades out on stop. Control surfaces (a
/// `ControlDispatcher` over ``player``) and displays are the caller's.
///
/// Drive it from one thread: ``start()``, then ``step(canStillCommand:)`` every few milliseconds
/// until it returns why the show ends, then ``fadeOut()`` and ``stop()``.
public final class LiveSession {
    /// How to run it.
    public struct Options: Sendable {
        /// Where in the session to start (nil: its start).
        public var from: SessionTime?
        /// How long to play: device frames while the session runs, whatever seeks do to its
        /// position; a pause does not count. Nil: until the show ends.
        public var duration: SessionTime?
        /// Follow JACK transport: session sample = transport frame; rolling plays from the
        /// transport position, stopping halts, relocating while stopped moves the paused position.
        public var followsTransport = false
        /// Where the master outputs go (``JACKDevice/connectMasterOutputs(to:)``).
        public var connections: [String] = []
        /// Record the master mix into this file, from the session's first sample.
        public var recordPath: String?
        /// Seconds between the moment every layer's first buffers are computed and the start.
        public var lead = 0.05
        /// Frames a layer computes ahead per buffer, and buffers per layer.
        public var bufferFrames = 4096, bufferCount = 5
        /// While a control surface can still command: run until stopped (`session run`), rather
        /// than end once everything placed has played and no manual cue waits to be fired for
        /// the first time nor a paused one to be resumed (the default; `--exit-when-done`).
        public var runsUntilStopped = false
        /// The double-GO window, in seconds (``SessionPlayer/doubleGoWindow``; 0: none).
        public var doubleGoSeconds = 0.0
        /// Where auditions play (``audition``): one port takes every channel, several take one
        /// channel each. Empty: no audition output.
        public var auditionPorts: [String] = []
        /// LTC to send on the client's own output `ltc_1`, following session time (nil: none).
        public var timecode: SessionPlayer.TimecodeSetting?
        /// Where `ltc_1` goes (each port connected to it).
        public var timecodeConnections: [String] = []
        /// MIDI time code to send on the device's MIDI output `mtc_out` (``MTCSender/portName``),
        /// following session time (nil: none).
        public var midiTimecode: SessionPlayer.TimecodeSetting?
        /// Where the MIDI output goes (each port connected to it).
        public var midiTimecodeConnections: [String] = []
        /// Chase incoming LTC or MTC (``TimecodeChaser``; nil: none). LTC needs the device's
        /// audio input `in_1`, MTC its MIDI input.
        public var chase: TimecodeChaser.Setting?
        /// Drive JACK transport from the session (``TransportMaster``).
        public var drivesTransport = false
        /// Resume a journaled run (``Resume``; nil: start afresh from ``from``).
        public var resume: Resume?

        /// The defaults: from the start, to the end, no transport, no recording.
        public init() {}
    }

    /// The session.
    public let session: Session
    /// The device it plays through.
    public let device: JACKDevice
    /// The engine that mixes its layers.
    public let engine: Engine
    /// The run's show-control overrides (QLab's `/overrides`): give them to the run's
    /// ``LockstepControl`` dispatcher; the MIDI cues, the timecode out and the chase read them.
    public let overrides: ShowOverrides
    /// The LTC output's queue of the player playing now (the override mutes it).
    private let ltcQueue: TimecodeMute
    /// How it runs.
    public let options: Options
    /// The player playing now: made again at the new rate after a sample-rate change
    /// (``onPlayerReplaced`` says so).
    public private(set) var player: SessionPlayer
    /// Where auditions play, apart from the show (nil without ``Options/auditionPorts``): its
    /// outputs (`audition_1`…) are made for each audition and connected to those ports.
    public let audition: CueAudition?
    /// The session sample it started from (at the rate of the first player).
    public let fromPosition: Int64
    /// The device sample its start played on (nil while waiting for transport).
    public private(set) var startSampleTime: Int64?
    /// What the resume of a journaled run did (nil: not resumed).
    public private(set) var resumed: Resumed?
    /// The rate changes it played on through.
    public private(set) var rateChanges: [ShowRateChange] = []
    /// Sends the session's MIDI cues on the device's MIDI output `midi_out`, each on its sample
    /// (nil when the device has no such output or the session no MIDI cue).
    public let midiCues: MIDICueScheduler?
    /// The MTC sender, with ``Options/midiTimecode`` (nil otherwise).
    public let midiTimecode: MTCSender?
    /// The JACK transport follower, when the session follows transport (nil otherwise).
    public var follower: TransportFollower? { transport }
    /// The timecode chaser, with ``Options/chase`` (nil otherwise): made again at the new rate
    /// after a sample-rate change.
    public private(set) var chaser: TimecodeChaser?
    /// The JACK transport master, with ``Options/drivesTransport`` (nil otherwise).
    public let transportMaster: TransportMaster?

    /// Called (on the thread calling ``step(canStillCommand:)``) with every note.
    public var onNote: (ShowNote) -> Void = { _ in }
    /// Called when a rate change replaced ``player``.
    public var onPlayerReplaced: (SessionPlayer) -> Void = { _ in }
    /// Called with every rate change once the session plays on.
    public var onRateChange: (ShowRateChange) -> Void = { _ in }
    /// Called with every lock, loss, jump, relocation and stop of a chase.
    public var onChase: (ChaseEvent) -> Void = { _ in }

    private var recorder: FileRecorder?
    private var transport: TransportFollower?
    private let monitor: ShowMonitor
    private var playedFrames: Int64 = 0
    private var countedUntil: Int64 = 0
    private var lateReported = 0

    /// Builds the engine and the player for `session` on `device` (not started: ``start()``),
    /// starts the device and connects the master outputs and the layers' ports.
    ///
    /// - Throws: ``AudioQueueError`` (the engine, the device, a port), ``SessionError`` (the
    ///   session at the server's rate).
    public init(session: Session, device: JACKDevice, options: Options = Options()) throws {
        let engine = try Engine(device: device,
                                maximumQueues: max(16, session.document.layers.count))
        engine.isMasterMeteringEnabled = true
        // Five buffers of 4096 frames a layer (427 ms at 48 kHz) computed ahead, on a thread per
        // processor (ordinary ones, which the system may hold up for a while; 341 ms are still
        // queued when a buffer comes back); a control change cuts what is queued, so the
        // lookahead adds no latency to it. Each refill has a fixed cost (the layer's lock, the
        // timeline's snapshot, an enqueue, the buffer's return): at 4096 layers on two cores,
        // six buffers of 3072 frames left the streamers short and every layer underran.
        let streamer = FileStreamer(name: "lockstep.layers", threads: FileStreamer.machineThreadCount)
        let player = try SessionPlayer(session: session, engine: engine, directOutputs: true, bufferFrames: options.bufferFrames,
                                       bufferCount: options.bufferCount, streamer: streamer, timecode: options.timecode)
        let overrides = ShowOverrides()
        self.overrides = overrides
        // LTC out silent while its override is off (the queue of the player playing now).
        let ltc = TimecodeMute(player.timecodeQueue)
        ltcQueue = ltc
        overrides.observe { [ltc] key, enabled in
            if key == .timecodeOutputEnabled { ltc.apply(enabled: enabled) }
        }
        try device.start()
        // A change (a GO the armed cue does not carry, a seek, a fade) and a layer's next buffers
        // after a GO are computed at realtime priority under the client's: among 4096 layers an
        // ordinary thread was held up past the change's cycle.
        streamer.runOnUrgentThreads { device.promoteCurrentThread() }
        try device.connectMasterOutputs(to: options.connections)
        try device.connectLayerPorts(of: player)
        // (A steered device resamples its master outputs only: a layer's own ports stay out.)
        if !device.isSteered { player.portConnector = device }
        try Self.connectTimecode(of: player, to: options.timecodeConnections, on: device)
        if let setting = options.midiTimecode {
            guard let output = device.midiOutput(named: MTCSender.portName) else {
                throw AudioQueueError(.invalidDevice, "MTC out needs the MIDI output port '\(MTCSender.portName)'; open the device with it (midiOutputPortNames)")
            }
            for port in options.midiTimecodeConnections {
                do throws(AudioQueueError) { try device.connect(output.portName, to: port) } catch {
                    throw AudioQueueError(error.code, "--mtc-out: \(error.message)")
                }
            }
            midiTimecode = MTCSender(output: output, engine: engine, player: player, setting: setting, overrides: overrides)
        } else {
            midiTimecode = nil
        }
        chaser = try options.chase.map { try TimecodeChaser(setting: $0, device: device, engine: engine) }
        transportMaster = options.drivesTransport ? TransportMaster(device: device, engine: engine) : nil
        self.session = session
        self.device = device
        self.options = options
        self.engine = engine
        self.player = player
        player.doubleGoWindow = Int64((options.doubleGoSeconds * player.rate).rounded())
        fromPosition = options.from?.samples(at: engine.sampleRate) ?? 0
        monitor = ShowMonitor(device: device, engine: engine)
        let ports = options.auditionPorts
        midiCues = device.midiOutput(named: MIDICueScheduler.portName).flatMap { output in
            MIDICueScheduler.isNeeded(for: session) ? MIDICueScheduler(player: player, output: output, overrides: overrides) : nil
        }
        audition = ports.isEmpty ? nil : CueAudition(channels: session.document.channelCount) { [device] outputs in
            for (index, output) in outputs.enumerated() {
                let destination = ports.count == 1 ? ports[0] : ports[index % ports.count]
                do throws(AudioQueueError) { try device.connect(output, to: destination) } catch {
                    throw AudioQueueError(error.code, "--audition: \(error.message)")
                }
            }
        }
    }

    /// Creates the recording (once every port is connected), then starts the session — or, when
    /// following transport, halts it at the start position until the transport rolls.
    ///
    /// - Throws: ``FileError`` (the recording), ``AudioQueueError`` (the start).
    public func start() throws {
        try midiTimecode?.start()
        if let path = options.recordPath {
            recorder = try FileRecorder(engine: engine, path: path, channels: session.document.channelCount, source: .mix)
        }
        if options.followsTransport {
            device.rendersOnlyWhileTransportRolls = true
            if let resume = options.resume { player.restore(resume.run) }
            // Reported as a timecode chase is (`--transport` is `--chase transport`): each roll
            // a lock and a relocate, each stop a stop. (The player playing then: a rate change
            // replaces it.)
            transport = TransportFollower(device: device, engine: engine, roll: { [weak self] frame, start in
                guard let self else { return }
                player.halt(at: frame)
                try player.start(from: frame, at: start)
                report(ChaseEvent(kind: .lock, position: frame, sampleTime: start))
                report(ChaseEvent(kind: .relocate, position: frame, sampleTime: start))
            }, stop: { [weak self, engine] frame in
                guard let self else { return }
                player.halt(at: frame)
                report(ChaseEvent(kind: .stop, position: frame, sampleTime: engine.currentTime().sampleTime))
            }, whileStopped: { [weak self] frame in
                guard let self else { return }
                if player.position != frame { _ = try? player.seek(to: frame) }
            })
            player.halt(at: fromPosition)
            onNote(ShowNote(.notice, "following JACK transport; waiting for it to roll"))
        } else if let chaser {
            if let resume = options.resume { player.restore(resume.run) }
            player.halt(at: fromPosition)
            try chaser.start()
            onNote(ShowNote(.notice, "chasing \(chaser.setting.source); waiting for timecode"))
        } else if let resume = options.resume {
            let resumed = try self.resume(resume)
            self.resumed = resumed
            startSampleTime = resumed.sampleTime
            if let at = resumed.sampleTime { try recorder?.start(at: at) }
        } else {
            let at = try player.start(from: fromPosition, lead: options.lead)
            startSampleTime = at
            try recorder?.start(at: at)
        }
        countedUntil = startSampleTime ?? engine.currentTime().sampleTime
    }

    /// One step of the show: notes on the server's state, a rate change played through, the
    /// transport followed, late starts noted, playing time counted. Call every few milliseconds.
    ///
    /// - Parameter canStillCommand: whether a control surface could still fire a manual cue or
    ///   resume a paused one: the show waits for them while it can.
    /// - Returns: why the show ends, or nil while it goes on.
    /// - Throws: what reading the transport threw.
    public func step(canStillCommand: Bool) throws -> ShowEnd? {
        // A rate change stops every queue at once (RenderCore.stopForRateChange): the first
        // tells for all (a scan of every queue, 200 times a second, cost 4096 layers 6 % of a core).
        let stopped = player.queues.first?.stopError != nil
        switch monitor.check(layersStopped: stopped, followsTransport: transport != nil, note: onNote, playOn: playOn(after:)) {
        case .fine: break
        case .busy: return nil
        case .end(let end): return end
        }
        try transport?.poll()
        if let chaser { try followChase(chaser) }
        transportMaster?.poll(player)
        noteLateStarts()
        let now = engine.currentTime().sampleTime
        if player.isRunning && now > countedUntil { playedFrames += now - countedUntil }
        countedUntil = max(countedUntil, now)
        if let duration = options.duration, playedFrames >= duration.samples(at: player.rate) { return .durationReached }
        // Done when everything placed has played and no command can come (or, unless it runs
        // until stopped, when no manual cue waits for its first go nor a paused one to be
        // resumed; a transport follower runs until stopped) — against what has been rendered,
        // not the estimate of now: the fade-out that follows must not reach the last frames of
        // the last cue.
        let timeline = player.timeline
        if transport == nil, chaser == nil, let end = timeline.end, player.position(atDeviceTime: engine.renderedSampleTime) >= end {
            if !canStillCommand { return .finished }
            if !options.runsUntilStopped && timeline.waitingCues.isEmpty && timeline.pausedCues.isEmpty { return .finished }
        }
        return nil
    }

    /// Fades every layer out (the fade is rendered) and returns the session position it ended at.
    @discardableResult
    public func fadeOut() -> Int64 {
        let position = player.position
        engine.fadeOut(player.queues)
        return position
    }

    /// What the show left behind once stopped.
    public struct Outcome: Sendable {
        /// The recording, when one was made and closed.
        public var recording: FileRecorder.Summary?
        /// What went wrong: the device's or a layer's error, a file error, the recording's.
        public var error: String?
    }

    /// Stops every layer and closes the recording; notes the late starts not noted yet, then
    /// lets the handlers (``onNote``, …) go.
    public func stop() -> Outcome {
        chaser?.stop()
        transportMaster?.stop()
        player.stop()
        midiCues?.stop()
        midiTimecode?.stop()
        var outcome = Outcome()
        var recordError: String?
        if let recorder {
            do { outcome.recording = try recorder.stop() } catch { recordError = error.description }
        }
        noteLateStarts()
        outcome.error = engine.deviceError?.message ?? player.queues.lazy.compactMap { $0.stopError?.message }.first
            ?? player.error?.description ?? recordError
        // The handlers may hold what holds this show (a display, a dispatcher): let both go.
        onNote = { _ in }
        onRateChange = { _ in }
        onChase = { _ in }
        onPlayerReplaced = { _ in }
        return outcome
    }

    /// Connects `player`'s LTC output to each of `ports`.
    private static func connectTimecode(of player: SessionPlayer, to ports: [String], on device: JACKDevice) throws {
        for output in player.timecodeOutputNames {
            for port in ports {
                do throws(AudioQueueError) { try device.connect(output, to: port) } catch {
                    throw AudioQueueError(error.code, "--ltc-out: \(error.message)")
                }
            }
        }
    }

    /// Notes every late start not noted yet.
    private func noteLateStarts() {
        let starts = player.lateStarts
        guard starts.count > lateReported else { return }
        for late in starts[lateReported...] {
            let ms = String(format: "%.1f", Double(late.skippedFrames) * 1000 / player.rate)
            onNote(ShowNote(.warning, "started \(late.skippedFrames) frames (\(ms) ms) late at sample \(late.sampleTime); "
                                      + "skipped them to stay on the session's timeline"))
        }
        lateReported = starts.count
    }

    /// Makes the player again at the engine's new rate after `change` and plays on from the same
    /// place in the session (paused stays paused).
    private func playOn(after change: Discontinuity) throws {
        let old = player
        let factor = engine.sampleRate / old.rate
        let position = Int64((Double(old.position(atDeviceTime: change.sampleTime)) * factor).rounded())
        let wasPaused = old.isPaused
        old.dispose()
        // The old queues' own ports must be gone before the new ones take the names.
        let gone = Set((old.queues + [old.timecodeQueue].compactMap { $0 }).map { ObjectIdentifier($0) })
        let deadline = Date().addingTimeInterval(2)
        while engine.queues.contains(where: { gone.contains(ObjectIdentifier($0)) }) && Date() < deadline { usleep(2_000) }
        let next = try old.carried(to: engine)
        try device.connectLayerPorts(of: next)
        if !device.isSteered { next.portConnector = device }
        try Self.connectTimecode(of: next, to: options.timecodeConnections, on: device)
        var resumedAt: Int64?
        if let old = chaser {
            // The timecode's frames are samples at the old rate: read it again at the new one,
            // halted until it locks again.
            old.stop()
            let fresh = try TimecodeChaser(setting: old.setting, device: device, engine: engine)
            try fresh.start()
            chaser = fresh
            next.halt(at: position)
            onNote(ShowNote(.notice, "chasing \(fresh.setting.source) at \(Int(next.rate)) Hz; waiting for the timecode to lock again"))
        } else if wasPaused {
            next.halt(at: position)
        } else {
            resumedAt = try next.start(from: position, lead: options.lead)
        }
        onNote(ShowNote(.notice, "the server's rate changed from \(Int(old.rate)) Hz to \(Int(next.rate)) Hz at sample \(change.sampleTime); "
                                 + "the session plays on from \(SessionTime.clock(Double(position) / next.rate))"))
        let record = ShowRateChange(sampleTime: change.sampleTime, sampleRate: Int(next.rate), position: position,
                                    resumedSampleTime: resumedAt,
                                    resumedJACKFrame: resumedAt.map { device.jackFrameTime(forSampleTime: $0) })
        rateChanges.append(record)
        playedFrames = Int64((Double(playedFrames) * factor).rounded())
        countedUntil = max(countedUntil, resumedAt ?? engine.currentTime().sampleTime)
        lateReported = 0
        player = next
        ltcQueue.replace(next.timecodeQueue, enabled: overrides.isEnabled(.timecodeOutputEnabled))
        midiCues?.replacePlayer(next)
        midiTimecode?.replacePlayer(next)
        onPlayerReplaced(next)
        onRateChange(record)
    }
}

/// The LTC output's queue of the player playing now, muted while `timecodeOutputEnabled` is off.
final class TimecodeMute: Sendable {
    private let queue: Mutex<OutputQueue?>

    init(_ queue: OutputQueue?) { self.queue = Mutex(queue) }

    /// Sounds or mutes the queue.
    func apply(enabled: Bool) { try? queue.withLock { $0 }?.setVolume(enabled ? 1 : 0) }

    /// Follows `queue` from now on (a player made again at another rate), as `enabled` says.
    func replace(_ queue: OutputQueue?, enabled: Bool) {
        self.queue.withLock { $0 = queue }
        if !enabled { apply(enabled: false) }
    }
}
