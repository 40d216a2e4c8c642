import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepSession
import Synchronization

/// Audio files played live as layers through a JACK device, every layer's first frame on one
/// sample (plus its offset): the show engine of `lockstep play`.
///
/// It builds the engine and a ``FilePlayer`` per file (read and decoded on streamer threads, one
/// per processor), connects the ports, records the mix or chosen input ports, starts the layers or
/// follows JACK transport, plays on at a new rate when the server's rate changes, knows when
/// every layer has finished or the duration has played, and fades out on stop.
///
/// Drive it from one thread: ``start()``, then ``step()`` every few milliseconds until it returns
/// why it ends, then ``fadeOut()`` and ``stop()``.
public final class LiveLayers {
    /// One file to play.
    public struct Layer: Sendable {
        /// The audio file.
        public var path: String
        /// Its format (from its header: the file's rate and channels).
        public var format: StreamFormat
        /// Its gain in dB.
        public var gainDB: Double
        /// Time from the common start to its first frame.
        public var offset: SessionTime
        /// How its channels reach the outputs (nil: a downmix when it has more channels).
        public var channelMap: ChannelMap?

        /// A layer of `path` (whose header gave `format`).
        public init(path: String, format: StreamFormat, gainDB: Double = 0, offset: SessionTime = .seconds(0),
                    channelMap: ChannelMap? = nil) {
            self.path = path
            self.format = format
            self.gainDB = gainDB
            self.offset = offset
            self.channelMap = channelMap
        }
    }

    /// How to play them.
    public struct Options: Sendable {
        /// Loop every layer until stopped (or the duration has played).
        public var loop = false
        /// Give every layer its own ports (`<file>_1`…) besides the master mix.
        public var directOutputs = false
        /// Follow JACK transport: rolling starts, stopping stops, relocating seeks.
        public var followsTransport = false
        /// Stop after this long from the start; nil: when every layer has finished.
        public var duration: SessionTime?
        /// Where the master outputs go (``JACKDevice/connectMasterOutputs(to:)``).
        public var connections: [String] = []
        /// Record into this file: the master mix, or the ``recordPorts``.
        public var recordPath: String?
        /// Record these ports (one channel each) instead of the mix.
        public var recordPorts: [String] = []
        /// Seconds from now to the common start.
        public var lead = 0.05

        /// The defaults: once each, from now, no transport, no recording.
        public init() {}
    }

    /// The device they play through (opened with an input per record port).
    public let device: JACKDevice
    /// The engine that mixes them.
    public let engine: Engine
    /// The layers as given.
    public let layers: [Layer]
    /// How they play.
    public let options: Options
    /// The players playing now (made again at the new rate after a rate change).
    public internal(set) var players: [FilePlayer] = []
    /// The device sample of the common start (before a transport roll: a guess, replaced by the
    /// first roll's).
    public private(set) var startSampleTime: Int64 = 0
    /// ``startSampleTime`` on JACK's 32-bit frame clock, read when the layers started (nil
    /// before).
    public private(set) var startJACKFrame: UInt32?
    /// Frames each layer skipped by starting late (0 when on time).
    public private(set) var lateStarts: [Int64]
    /// The rate changes they played on through.
    public internal(set) var rateChanges: [ShowRateChange] = []
    /// The device's rate now.
    public internal(set) var rate: Double

    /// Called (on the thread calling ``step()``) with every note.
    public var onNote: (ShowNote) -> Void = { _ in }
    /// Called when a rate change replaced ``players``.
    public var onPlayersReplaced: ([FilePlayer]) -> Void = { _ in }
    /// Called with every rate change once the layers play on.
    public var onRateChange: (ShowRateChange) -> Void = { _ in }
    /// Called on the engine's callback thread with every event of a layer's queue (its path and
    /// the event).
    public var onLayerEvent: @Sendable (String, QueueEvent) -> Void {
        get { layerEvents.current }
        set { layerEvents.current = newValue }
    }
    private let layerEvents = LayerEventRelay()

    var recorder: FileRecorder?
    var transport: TransportFollower?
    private let monitor: ShowMonitor
    let finished = FinishedQueues()
    var offsetFrames: [Int64] = []
    /// Where each layer is on the timeline (moved by a rate change).
    var anchors: [LayerAnchor] = []
    var end: Int64?

    /// Builds the engine and a prepared player per layer on `device`, starts the device and
    /// connects the record ports and the master outputs (not started: ``start()``).
    ///
    /// - Throws: ``AudioQueueError`` (the engine, the device, a port), ``FileError`` (a file).
    public init(layers: [Layer], device: JACKDevice, options: Options = Options()) throws {
        // A layer keeps at most six buffers (FilePlayer.Buffering): a small command ring per
        // queue, not the default's room for 256 buffers (56 KiB a queue, 230 MiB at 4096 layers).
        let engine = try Engine(device: device, maximumQueues: max(16, layers.count),
                                maximumBuffersPerQueue: 16)
        engine.isMasterMeteringEnabled = true
        self.layers = layers
        self.device = device
        self.options = options
        self.engine = engine
        rate = engine.sampleRate
        lateStarts = Array(repeating: 0, count: layers.count)
        monitor = ShowMonitor(device: device, engine: engine)
        // Disk reads and decoding of every layer run on threads of their own (one per processor),
        // not the callbacks'.
        let streamer = FileStreamer(threads: FileStreamer.machineThreadCount)
        let bytesPerSecond = layers.reduce(0) { $0 + $1.format.sampleRate * Double(min($1.format.channelCount, 2) * MemoryLayout<Float>.size) }
        let buffering = FilePlayer.Buffering(layersBytesPerSecond: bytesPerSecond)
        for index in layers.indices {
            let routing: FilePlayer.ChannelRouting = layers[index].channelMap.map { .map($0, outputs: engine.channelCount) }
                ?? .downmix(to: engine.channelCount)
            do {
                let player = try FilePlayer(path: layers[index].path, engine: engine, playCount: options.loop ? .forever : .times(1),
                                            bufferDuration: buffering.seconds, bufferCount: buffering.count, truncation: .reject,
                                            streamer: streamer, channels: routing)
                try ready(player, index: index)
                players.append(player)
            } catch let error as AudioQueueError {
                throw AudioQueueError(error.code, "\(layers[index].path): \(error.message)")
            }
        }
        try device.start()
        for (source, destination) in zip(options.recordPorts, device.inputPortNames) {
            try device.connect(source, to: destination)
        }
        try device.connectMasterOutputs(to: options.connections)
    }

    /// Sets a new player's gain, meter and ports, hands its events on and prepares it.
    func ready(_ player: FilePlayer, index: Int) throws {
        try player.queue.setMixerGain(decibels: layers[index].gainDB)
        player.queue.isLevelMeteringEnabled = true
        if options.directOutputs { try player.queue.enableDirectOutputs() }
        // Layers refill on different cycles, not all on one.
        try player.prepare(stagger: FilePlayer.stagger(forLayer: index))
        let path = player.path, finished = finished, relay = layerEvents
        player.queue.addEventHandler { queue, event in
            relay.current(path, event)
            // A layer has finished once its queue really stopped after playing (not merely "not
            // running yet" because its start event has not been delivered).
            if case .stopped = event { finished.insert(ObjectIdentifier(queue)) }
        }
    }

    /// Creates the recording (once every port is connected), then starts every layer on the
    /// common start (layers with the same offset as one group: all on one sample or none) — or,
    /// when following transport, waits for it to roll.
    ///
    /// - Throws: ``FileError`` (the recording), ``AudioQueueError`` (a start).
    public func start() throws {
        if let path = options.recordPath {
            recorder = try FileRecorder(engine: engine, path: path,
                                        channels: options.recordPorts.isEmpty ? 2 : options.recordPorts.count,
                                        source: options.recordPorts.isEmpty ? .mix : .deviceInput)
        }
        offsetFrames = layers.map { $0.offset.samples(at: rate) }
        startSampleTime = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime) + Int64(rate * options.lead)
        anchors = offsetFrames.map { LayerAnchor(deviceTime: startSampleTime + $0, fileFrame: 0) }
        end = options.duration.map { startSampleTime + $0.samples(at: rate) }
        if options.followsTransport {
            followTransport()
            return
        }
        for offset in Set(offsetFrames).sorted() {
            let group = players.indices.filter { offsetFrames[$0] == offset }
            let start = try engine.start(group.map { players[$0].queue }, at: startSampleTime + offset, ifLate: .skipAhead)
            if start.framesLate > 0 {
                for index in group { lateStarts[index] = start.queueTimeAtStart }
                let names = group.map { URL(fileURLWithPath: players[$0].path).lastPathComponent }.joined(separator: ", ")
                let ms = String(format: "%.1f", Double(start.framesLate) * 1000 / rate)
                onNote(ShowNote(.warning, "\(names) started \(start.framesLate) frames (\(ms) ms) late; skipped them to stay on the timeline"))
            }
        }
        try recorder?.start(at: startSampleTime)
        startJACKFrame = device.jackFrameTime(forSampleTime: startSampleTime)
    }

    /// Plays from the transport: every layer so that transport frame F plays file frame
    /// F − offset; stopping stops them.
    private func followTransport() {
        device.rendersOnlyWhileTransportRolls = true
        transport = TransportFollower(device: device, engine: engine, roll: { [unowned self] frameAtStart, start in
            for (index, player) in players.enumerated() {
                let position = frameAtStart - offsetFrames[index]        // device frames into the layer
                try player.reposition(toOutputFrame: max(0, position))
                if ((try? player.queue.prime()) ?? 0) > 0 {
                    try engine.start([player.queue], at: start + max(0, -position), ifLate: .skipAhead)
                }
            }
        }, stop: { [unowned self] _ in
            for player in players { try? player.queue.stop(immediately: true) }
        })
        onNote(ShowNote(.notice, "following JACK transport; waiting for it to roll"))
    }

    /// One step: notes on the server's state, a rate change played through, the transport
    /// followed. Call every few milliseconds.
    ///
    /// - Returns: why the layers end, or nil while they go on.
    /// - Throws: what reading the transport threw.
    public func step() throws -> ShowEnd? {
        // A rate change stops every queue at once (RenderCore.stopForRateChange): the first tells for all.
        let stopped = players.first?.queue.stopError != nil
        switch monitor.check(layersStopped: stopped, followsTransport: transport != nil, note: onNote, playOn: playOn(after:)) {
        case .fine: break
        case .busy: return nil
        case .end(let end): return end
        }
        let now = engine.currentTime().sampleTime
        if let transport {
            try transport.poll()
            guard let first = transport.firstStart else { return nil }
            if end == nil || startSampleTime != first {
                startSampleTime = first
                startJACKFrame = device.jackFrameTime(forSampleTime: first)
                end = options.duration.map { first + $0.samples(at: rate) }
            }
        }
        if let end, now >= end { return .durationReached }
        if players.allSatisfy({ $0.hasEnqueuedEverything && !$0.queue.isRunning })
            && finished.containsAll(players.map { ObjectIdentifier($0.queue) })
            && (transport?.isRolling ?? true) { return .finished }
        return nil
    }

    /// Whether the transport has rolled yet (always true without transport).
    public var hasStarted: Bool { transport.map { $0.firstStart != nil } ?? true }

    /// Fades every layer out (the fade is rendered) and returns the device sample it ended on.
    @discardableResult
    public func fadeOut() -> Int64 {
        engine.fadeOut(players.map(\.queue))
        return engine.currentTime().sampleTime
    }

    /// What the layers left behind once stopped.
    public struct Outcome: Sendable {
        /// The recording, when one was made and closed.
        public var recording: FileRecorder.Summary?
        /// What the recording failed with.
        public var recordError: String?
        /// What stopped the layers: the device's error, or a layer's (a rate change it could not
        /// play on through).
        public var error: AudioQueueError?
    }

    /// Stops every layer (each one's stopped event delivered first) and closes the recording;
    /// the handlers (``onNote``, …) are let go.
    public func stop() -> Outcome {
        let playing = players.filter { $0.queue.isRunning }.map { ObjectIdentifier($0.queue) }
        for player in players { player.stop() }
        engine.waitForDeliveries(timeout: 1) { finished.containsAll(playing) }
        var outcome = Outcome()
        if let recorder {
            do { outcome.recording = try recorder.stop() } catch { outcome.recordError = error.description }
        }
        outcome.error = engine.deviceError ?? players.lazy.compactMap { $0.queue.stopError }.first
        // The handlers may hold what holds this show (a display, a dispatcher): let both go.
        onNote = { _ in }
        onRateChange = { _ in }
        onLayerEvent = { _, _ in }
        onPlayersReplaced = { _ in }
        return outcome
    }
}

/// Where a layer is on the device timeline: at `deviceTime` it plays `fileFrame` (frames of the
/// whole play, at the file's rate; before `deviceTime` it waits).
struct LayerAnchor {
    var deviceTime: Int64
    var fileFrame: Int64
}

/// The handler of layers' queue events, settable while they play.
///
/// The closure sits in a struct: a function value stored in a `Mutex` directly is re-abstracted
/// on every `withLock` (into the generic representation and back, written back on exit), so each
/// event wrapped it in two more thunks and calling it got slower with every event — at 4096
/// layers the callback thread spent 85 % of its time in them and layers ran dry.
final class LayerEventRelay: Sendable {
    private struct Handler: Sendable {
        let call: @Sendable (String, QueueEvent) -> Void
    }
    private let handler = Mutex(Handler(call: { _, _ in }))

    /// The handler now.
    var current: @Sendable (String, QueueEvent) -> Void {
        get { handler.withLock { $0.call } }
        set { handler.withLock { $0 = Handler(call: newValue) } }
    }
}

/// The queues that have stopped after playing, filled from the engine's callback thread.
final class FinishedQueues: Sendable {
    private let stopped = Mutex<Set<ObjectIdentifier>>([])
    func insert(_ id: ObjectIdentifier) { stopped.withLock { _ = $0.insert(id) } }
    /// Whether every one of `queues` has stopped after playing.
    func containsAll(_ queues: [ObjectIdentifier]) -> Bool { stopped.withLock { $0.isSuperset(of: queues) } }
}
