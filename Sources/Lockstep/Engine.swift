import Dispatch
import Foundation
import Synchronization

/// The heart of Lockstep: owns one device, the output queues that play through it, and the mixer
/// that sums them on the device's timeline.
///
/// Every queue of an engine shares one timeline — the device's sample clock — so queues started at
/// the same device sample time stay sample-aligned forever. The engine's render path (driven by
/// the device) mixes every running queue with its gain (Volume × mixer gain), maps channels,
/// meters, and reports underruns and device discontinuities.
///
/// ```swift
/// let device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 2))
/// let engine = try Engine(device: device)
/// let queue = try engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1)) { queue, buffer in
///     // refill `buffer` and enqueue it again, or stop
/// }
/// ```
///
/// Thread safety: all methods may be called from any thread except the device's realtime thread.
public final class Engine: @unchecked Sendable {
    /// The device that drives the render path.
    public let device: any AudioDevice
    /// Creates converters for queues whose rate differs from the device's, or nil.
    public let rateConverterFactory: SampleRateConverterFactory?
    /// The most queues the engine can hold at once.
    public let maximumQueues: Int
    /// The most buffers one queue can allocate.
    public let maximumBuffersPerQueue: Int
    /// The length of every gain ramp (Volume and mixer-gain changes), in device frames (5 ms).
    public let gainRampFrames: Int

    let core: RenderCore
    let pump: EventPump
    /// Where the queues' buffers live (``RenderMemory``: huge pages, where the kernel gives them,
    /// for an engine of more than ``hugePageQueueCount`` queues).
    let audioMemory: RenderMemory
    /// Where the output queues' render states live, side by side in the order they were created
    /// (which is the order the render loop usually walks them).
    let stateMemory: RenderMemory
    /// Engines for more queues than this keep their buffers and render states in huge pages: a
    /// cycle then reads from so many buffers that small pages would miss the TLB at nearly every
    /// one, while a small engine would only pay for zeroing 2 MiB pages it hardly uses.
    static let hugePageQueueCount = 256
    let discontinuityStreams = StreamRegistry<Discontinuity>()
    let state: Mutex<EngineState>

    struct EngineState: @unchecked Sendable {
        var queues: [OutputQueue?] { didSet { liveQueues = nil; liveNames = nil } }
        /// ``queues`` without the empty slots, and their names, kept until a queue comes or goes:
        /// a device discontinuity names every queue, and at thousands of queues building the
        /// lists for each one was work (and memory) on the callback thread during an xrun.
        var liveQueues: [OutputQueue]?
        var liveNames: [String]?
        var inputQueues: [InputQueue?] = Array(repeating: nil, count: Engine.maximumInputQueues)
        /// The most recent discontinuities, a ring once full: the oldest is at
        /// `discontinuityLogStart` (so a report past capacity overwrites one entry instead of
        /// moving ten thousand).
        var discontinuityLog: [Discontinuity] = []
        var discontinuityLogStart = 0
        var handlers: [Int: @Sendable (Discontinuity) -> Void] = [:]
        var nextToken = 0
        var totalDiscontinuities = 0
        var discontinuitiesByKind: [Discontinuity.Kind: Int] = [:]
        var deviceError: AudioQueueError?
    }

    /// The most input queues one engine holds.
    public static let maximumInputQueues = 64

    /// The most discontinuities ``discontinuities`` keeps (the oldest are dropped first).
    public static let discontinuityLogCapacity = 10_000

    /// Creates an engine that renders through `device`.
    ///
    /// - Parameters:
    ///   - device: the device; it must not belong to another engine.
    ///   - rateConverter: makes converters for queues whose sample rate differs from the device's
    ///     (`SoxrRateConverter.factory` from `LockstepFiles`); nil allows only the device's rate.
    ///   - maximumQueues: capacity of the queue table (1…4096, default 256).
    ///   - maximumBuffersPerQueue: buffers one queue may allocate (1…4096, default 256).
    /// - Throws: ``AudioQueueError/Code/invalidDevice`` if the device is unusable or already
    ///   attached; ``AudioQueueError/Code/invalidParameter`` for capacities out of range.
    public init(device: any AudioDevice, rateConverter: SampleRateConverterFactory? = nil,
                maximumQueues: Int = 256, maximumBuffersPerQueue: Int = 256) throws(AudioQueueError)
    {
        guard (1...4096).contains(maximumQueues) else {
            throw AudioQueueError(.invalidParameter, "maximumQueues \(maximumQueues) is out of range; use 1…4096")
        }
        guard (1...4096).contains(maximumBuffersPerQueue) else {
            throw AudioQueueError(.invalidParameter,
                "maximumBuffersPerQueue \(maximumBuffersPerQueue) is out of range; use 1…4096")
        }
        let channels = device.channelCount
        let frames = device.maximumFramesPerCycle
        guard (0...StreamFormat.maximumChannelCount).contains(channels), frames > 0,
              device.sampleRate.isFinite, device.sampleRate > 0 else {
            throw AudioQueueError(.invalidDevice,
                "device '\(device.name)' reports \(channels) channels, \(frames) frames per cycle at \(device.sampleRate) Hz; it cannot be used")
        }
        self.device = device
        rateConverterFactory = rateConverter
        self.maximumQueues = maximumQueues
        self.maximumBuffersPerQueue = maximumBuffersPerQueue
        gainRampFrames = max(1, Int((device.sampleRate * 0.005).rounded()))
        let huge = maximumQueues > Self.hugePageQueueCount
        audioMemory = RenderMemory(chunkBytes: 32 << 20, hugePages: huge)
        stateMemory = RenderMemory(chunkBytes: 2 << 20, hugePages: huge)

        let slots = UnsafeMutablePointer<UnsafeMutablePointer<QueueRenderState>?>.allocate(capacity: maximumQueues)
        slots.initialize(repeating: nil, count: maximumQueues)
        let engineCommands = UnsafeMutablePointer<SPSCRing>.allocate(capacity: 1)
        engineCommands.initialize(to: SPSCRing(minimumCapacity: maximumQueues * 2))
        let events = UnsafeMutablePointer<SPSCRing>.allocate(capacity: 1)
        // Room for every buffer of every queue coming back at once, with margin for the other
        // events (starts, stops, discontinuities) between two drains.
        events.initialize(to: SPSCRing(minimumCapacity: max(8192, maximumQueues * (maximumBuffersPerQueue + 8))))
        let gainScratch = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        gainScratch.initialize(repeating: 0, count: frames)
        let shared = UnsafeMutablePointer<RenderShared>.allocate(capacity: 1)
        shared.initialize(to: RenderShared(channelCount: channels, meterWindow: Self.meterWindow(device.sampleRate)))
        shared.pointee.deviceRate.store(Int64(device.sampleRate.rounded()), ordering: .relaxed)
        let direct = UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?>.allocate(capacity: maximumQueues)
        direct.initialize(repeating: nil, count: maximumQueues)
        let inputSlots = UnsafeMutablePointer<UnsafeMutablePointer<InputRenderState>?>.allocate(capacity: Self.maximumInputQueues)
        inputSlots.initialize(repeating: nil, count: Self.maximumInputQueues)
        var lanes: UnsafeMutablePointer<RenderLanes>?
        if maximumQueues > RenderLanes.minimumEngineQueues {
            lanes = .allocate(capacity: 1)
            lanes?.initialize(to: RenderLanes(maximumQueues: maximumQueues, channelCount: channels, maximumFrames: frames,
                                              eventsPerQueue: maximumBuffersPerQueue + 8))
        }
        core = RenderCore(channelCount: channels, maximumFrames: frames, maximumQueues: maximumQueues,
                          rampFrames: gainRampFrames, slots: slots, engineCommands: engineCommands,
                          events: events, gainScratch: gainScratch, shared: shared, directOutputs: direct,
                          inputChannelCount: max(0, device.inputChannelCount),
                          maximumInputQueues: Self.maximumInputQueues, inputSlots: inputSlots, lanes: lanes)
        pump = EventPump()
        state = Mutex(EngineState(queues: Array(repeating: nil, count: maximumQueues)))
        pump.engine = self
        try device.attach(DeviceRenderer(core: core, pump: pump))
        if device.callbackDelivery == .callbackThread { pump.startThread() }
    }

    deinit {
        pump.stopThread()
        device.detach()
        // Drain what is left so internal memory is returned, then free everything.
        while core.events.pointee.pop() != nil {}
        let queues = state.withLock { $0.queues }
        for case let queue? in queues { queue.releaseAll() }
        core.slots.deallocate()
        core.directOutputs?.deallocate()
        let inputs = state.withLock { $0.inputQueues }
        for case let queue? in inputs { queue.releaseAll() }
        core.inputSlots.deallocate()
        core.engineCommands.pointee.deallocate()
        core.engineCommands.deallocate()
        core.events.pointee.deallocate()
        core.events.deallocate()
        core.gainScratch.deallocate()
        core.shared.pointee.masterMeter.deallocate()
        core.shared.deinitialize(count: 1)
        core.shared.deallocate()
        if let lanes = core.lanes {
            lanes.pointee.deallocate()
            lanes.deinitialize(count: 1)
            lanes.deallocate()
        }
    }

    static func meterWindow(_ rate: Double) -> Int { max(256, Int(rate / 20)) }

    // MARK: - Device facts

    /// The device's sample rate.
    public var sampleRate: Double { device.sampleRate }
    /// The device's channel count: the mixer's output channels.
    public var channelCount: Int { device.channelCount }

    /// The device time now: Audio Queue's `AudioQueueDeviceGetCurrentTime`.
    public func currentTime() -> DeviceTimeStamp { device.currentTime() }

    /// The earliest device sample time at or after `sampleTime` at which a queue start can be
    /// honoured on that exact frame: Audio Queue's `AudioQueueDeviceGetNearestStartTime`.
    public func nearestStartTime(atOrAfter sampleTime: Int64) -> Int64 {
        device.nearestStartTime(atOrAfter: sampleTime)
    }

    /// Translates a device sample time to host time (µs): part of `AudioQueueDeviceTranslateTime`.
    public func hostTime(forSampleTime sampleTime: Int64) -> UInt64 { device.hostTime(forSampleTime: sampleTime) }

    /// Translates a host time (µs) to a device sample time: part of `AudioQueueDeviceTranslateTime`.
    public func sampleTime(forHostTime hostTime: UInt64) -> Int64 { device.sampleTime(forHostTime: hostTime) }

    /// Whether the mixed output is metered (``masterLevels``). Off by default.
    public var isMasterMeteringEnabled: Bool {
        get { core.shared.pointee.masterMeteringEnabled.load(ordering: .relaxed) }
        set { core.shared.pointee.masterMeteringEnabled.store(newValue, ordering: .relaxed) }
    }

    /// The level of the mixed output per device channel over the most recent metering window
    /// (about 50 ms), linear; zeros while ``isMasterMeteringEnabled`` is off.
    public var masterLevels: [ChannelLevel] { core.shared.pointee.masterMeter.read() }

    /// The master levels with the window they measure (its first device sample time and length).
    public var masterLevelReading: LevelReading { core.shared.pointee.masterMeter.reading() }

    /// The largest master peak per device channel since master metering was enabled (linear).
    public var masterPeakHold: [Float] { core.shared.pointee.masterMeter.readHold() }

    /// The device sample time just past the last frame the engine has rendered (published by the
    /// render thread after each cycle). Unlike ``currentTime()`` — the device's estimate of *now*,
    /// which runs up to a period ahead of what is rendered — every frame before it has been mixed.
    public var renderedSampleTime: Int64 { core.shared.pointee.nextSampleTime.load(ordering: .acquiring) }

    /// Signalled after every delivery of render events (each cycle of a live device while a thread
    /// waits on it, each render of an offline one), once callbacks have run.
    let delivered = ChangeSignal()

    /// Waits until the engine has rendered every frame before device sample time `sampleTime`
    /// and delivered what those cycles caused (callbacks, events), or `timeout` seconds pass.
    /// Woken by each delivery, not by polling. With a device that delivers inline (offline) it
    /// does not wait: the caller's own renders move that clock.
    /// - Returns: whether the engine got there.
    @discardableResult
    public func waitUntilRendered(through sampleTime: Int64, timeout: Double = 2) -> Bool {
        if device.callbackDelivery == .inline { return renderedSampleTime >= sampleTime }
        return waitingForDeliveries {
            delivered.wait(until: Date().addingTimeInterval(timeout)) { renderedSampleTime >= sampleTime }
        }
    }

    /// Runs `body` (a wait on ``delivered``) with every cycle waking the callback thread, which
    /// otherwise sleeps through cycles that leave it nothing.
    private func waitingForDeliveries<T>(_ body: () -> T) -> T {
        core.shared.pointee.deliveryWaiters.wrappingAdd(1, ordering: .relaxed)
        defer { core.shared.pointee.deliveryWaiters.wrappingSubtract(1, ordering: .relaxed) }
        return body()
    }

    /// Fades `queues` out (their volume to 0, ramped over ``gainRampFrames``) and waits until the
    /// engine has rendered the whole fade, so that what follows — a stop, the end of a recording —
    /// cannot click or cut a sound short. Not on the realtime or callback thread.
    /// - Returns: whether the fade was rendered within `timeout` seconds.
    @discardableResult
    public func fadeOut(_ queues: [OutputQueue], timeout: Double = 1) -> Bool {
        let end = currentTime().sampleTime + Int64(gainRampFrames) + Int64(max(1, device.periodFrames))
        for queue in queues { try? queue.setVolume(0) }
        return waitUntilRendered(through: end, timeout: timeout)
    }

    /// Waits until `condition` holds, checking it every quarter of a millisecond, or until
    /// `timeout` seconds pass: for a condition the render thread itself makes true (an atomic it
    /// stores in its cycle), which the thread that delivers the render events — an ordinary one,
    /// held up for tens of milliseconds on cores busy with thousands of layers — would report late.
    /// With a device that delivers inline (``OfflineDevice``) the condition is checked once.
    /// - Returns: whether the condition holds.
    @discardableResult
    public func waitForRenderThread(timeout: Double = 2, until condition: () -> Bool) -> Bool {
        if device.callbackDelivery == .inline { return condition() }
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            usleep(250)
        }
        return true
    }

    /// Waits until `condition` holds, re-checking it after every delivery of render events
    /// (each cycle), or until `timeout` seconds pass. For conditions that callbacks and render
    /// events make true (a queue stopped, its buffers handed back).
    /// - Returns: whether the condition holds.
    @discardableResult
    public func waitForDeliveries(timeout: Double = 2, until condition: () -> Bool) -> Bool {
        if device.callbackDelivery == .inline { return condition() }
        return waitingForDeliveries { delivered.wait(until: Date().addingTimeInterval(timeout), for: condition) }
    }

    /// Runs `work` on the thread that delivers the engine's callbacks, after the render events
    /// pending now: on the engine's callback thread, woken at once (not at the next cycle), or —
    /// for a device that delivers inline, such as ``OfflineDevice`` — inside its next render.
    /// Work scheduled from scheduled work runs in the same round. Layers on top of the queues use
    /// it to hand audio to a callback as soon as a buffer arrives, without calling the callback
    /// from inside the enqueue that made it possible.
    ///
    /// Thread safety: any thread except the realtime thread (it takes a lock).
    public func performOnCallbackThread(_ work: @escaping @Sendable () -> Void) {
        pump.schedule(work)
    }

    /// Render events that could not be reported because the event ring was full (should stay 0).
    public var droppedEventCount: Int { core.shared.pointee.droppedEvents.load(ordering: .relaxed) }

    /// How this engine's render cycles were shared with a helper thread (see
    /// ``DeviceRenderer/runRenderHelper()``): cycles rendered in chunks of 128 queue slots, and the
    /// chunks the helper rendered. Both stay 0 for an engine of at most 256 queues, or while its
    /// queues occupy only the first 128 slots: those render on the device's thread alone.
    public var renderSharing: (sharedCycles: Int, helperChunks: Int) {
        guard let lanes = core.lanes else { return (0, 0) }
        return (lanes.pointee.sharedCycles.load(ordering: .relaxed), lanes.pointee.helperChunks.load(ordering: .relaxed))
    }

    // MARK: - Queues

    /// Creates an output (playback) queue: Audio Queue's `AudioQueueNewOutput`.
    ///
    /// - Parameters:
    ///   - format: the format of the buffers you will enqueue (any rate, 1…64 channels, 16/24/32-bit
    ///     integer or 32/64-bit float, interleaved). A rate different from the device's needs the
    ///     engine's rate converter.
    ///   - name: a name used in discontinuity reports and port names (default `queue-N`).
    ///   - callbackExecutor: where the output callback and listeners run (default: the engine's
    ///     callback thread).
    ///   - callback: called with each buffer the queue has finished with; refill and re-enqueue it
    ///     there, or stop the queue.
    /// - Throws: ``AudioQueueError/Code/unsupportedFormat`` for an invalid format or a rate the
    ///   engine cannot convert; ``AudioQueueError/Code/invalidParameter`` when the engine is full.
    public func makeOutputQueue(format: StreamFormat, name: String? = nil,
                                callbackExecutor: CallbackExecutor = .engineThread,
                                callback: @escaping @Sendable (OutputQueue, QueueBuffer) -> Void)
        throws(AudioQueueError) -> OutputQueue
    {
        try format.validate()
        var converter: (any SampleRateConverter)?
        if format.sampleRate != device.sampleRate {
            guard let factory = rateConverterFactory else {
                throw AudioQueueError(.unsupportedFormat,
                    "queue rate \(format.sampleRate) Hz differs from the device's \(device.sampleRate) Hz and the engine has no rate converter; create the Engine with rateConverter: SoxrRateConverter.factory (LockstepFiles) or use \(device.sampleRate) Hz")
            }
            do {
                converter = try factory(format.sampleRate, device.sampleRate, format.channelCount)
            } catch let error as AudioQueueError {
                // The converter's own sentence already names both rates: pass it on once.
                throw AudioQueueError(.unsupportedFormat, error.message)
            } catch {
                throw AudioQueueError(.unsupportedFormat,
                    "cannot convert \(Int(format.sampleRate)) Hz to \(Int(device.sampleRate)) Hz (\(error)); use rates closer together")
            }
        }
        let sendableConverter = UncheckedBox(converter)
        let result: Result<OutputQueue, AudioQueueError> = state.withLock { state in
            guard let slot = state.queues.firstIndex(where: { $0 == nil }) else {
                return .failure(AudioQueueError(.invalidParameter,
                    "the engine already holds \(maximumQueues) queues; dispose of one or create the Engine with a larger maximumQueues"))
            }
            let queueName = name ?? "queue-\(slot + 1)"
            let renderState = QueueRenderState.make(in: stateMemory, slot: Int32(slot), channelCount: format.channelCount,
                                                    maximumSegments: maximumBuffersPerQueue + 64,
                                                    meterWindow: Self.meterWindow(device.sampleRate))
            let queue = OutputQueue(engine: self, name: queueName, format: format, slot: Int32(slot),
                                    renderState: renderState, converter: sendableConverter.value,
                                    callbackExecutor: callbackExecutor, callback: callback)
            guard core.engineCommands.pointee.push(EngineCommand(kind: .addQueue, slot: Int32(slot), state: renderState).message) else {
                queue.releaseAll()
                return .failure(AudioQueueError(.invalidRunState,
                    "too many queue changes are waiting for the device to render; start the device"))
            }
            state.queues[slot] = queue
            return .success(queue)
        }
        return try result.get()
    }

    func installDirectOutputs(_ outputs: DirectOutputs?, slot: Int32) -> Bool {
        state.withLock { _ in
            core.engineCommands.pointee.push(EngineCommand(kind: .setDirectOutputs, slot: slot, state: nil,
                                                           direct: outputs?.buffers).message)
        }
    }

    /// The queues the engine holds (not yet disposed of), in slot order.
    public var queues: [OutputQueue] { state.withLock { Self.liveQueues(&$0) } }

    static func liveQueues(_ state: inout EngineState) -> [OutputQueue] {
        if let queues = state.liveQueues { return queues }
        let queues = state.queues.compactMap { $0 }
        state.liveQueues = queues
        return queues
    }

    /// The queues and their names (shared, not rebuilt, while no queue comes or goes).
    var queuesAndNames: (queues: [OutputQueue], names: [String]) {
        state.withLock { state in
            let queues = Self.liveQueues(&state)
            if let names = state.liveNames { return (queues, names) }
            let names = queues.map(\.name)
            state.liveNames = names
            return (queues, names)
        }
    }

    /// What a group start does when its requested time has already passed.
    public enum LateStartPolicy: String, Sendable, Hashable, CaseIterable {
        /// Start at the earliest possible time instead; the queues play from their beginning.
        case startLate
        /// Start at the earliest possible time, skipping the frames already missed, so the queues
        /// play as if they had started on time (they stay on the requested timeline).
        case skipAhead
        /// Start nothing and throw ``AudioQueueError/Code/cannotStart``.
        case fail
    }

    /// The outcome of ``start(_:at:ifLate:)``.
    public struct GroupStart: Sendable, Hashable {
        /// The device sample time at which every queue's first rendered frame plays.
        public var sampleTime: Int64
        /// The queue time (device frames) every queue has at ``sampleTime``: 0, or the frames
        /// skipped under ``LateStartPolicy/skipAhead``.
        public var queueTimeAtStart: Int64
        /// How many frames after the requested time the group really starts (0 when on time).
        public var framesLate: Int64
    }

    /// Starts several queues so that every one's first frame lands on the same device sample time,
    /// or fails as a whole.
    ///
    /// - Parameters:
    ///   - queues: the queues; none may be disposed of.
    ///   - sampleTime: the device sample time; nil for the earliest time a start can be honoured
    ///     exactly (``nearestStartTime(atOrAfter:)`` of now).
    ///   - ifLate: what to do if `sampleTime` is earlier than that (default: start late).
    /// - Returns: when the group starts and how late.
    /// - Throws: ``AudioQueueError`` from the first queue that cannot start, or
    ///   ``AudioQueueError/Code/cannotStart`` for a late start under ``LateStartPolicy/fail``. The
    ///   start is atomic: all queues start on one sample or none does (each queue is locked from
    ///   its check until every start command is sent, so none can be disposed of in between). A
    ///   queue listed twice starts once.
    @discardableResult
    public func start(_ queues: [OutputQueue], at sampleTime: Int64? = nil,
                      ifLate policy: LateStartPolicy = .startLate) throws(AudioQueueError) -> GroupStart {
        var seen = Set<ObjectIdentifier>()
        var group: [OutputQueue] = []
        for queue in queues where seen.insert(ObjectIdentifier(queue)).inserted {
            try queue.checkStartable()
            guard queue.engine === self else {
                throw AudioQueueError(.invalidQueueType, "queue '\(queue.name)' belongs to another engine")
            }
            group.append(queue)
        }
        group.sort { $0.slot < $1.slot }
        if let sampleTime, sampleTime < 0 {
            throw AudioQueueError(.invalidParameter, "start time \(sampleTime) is negative; device sample time starts at 0")
        }
        try startDevice()
        let earliest = device.nearestStartTime(atOrAfter: device.currentTime().sampleTime)
        let requested = sampleTime ?? earliest
        var start = GroupStart(sampleTime: requested, queueTimeAtStart: 0, framesLate: 0)
        if requested < earliest {
            start.framesLate = earliest - requested
            switch policy {
            case .fail:
                throw AudioQueueError(.cannotStart,
                    "start time \(requested) has passed (the earliest possible is \(earliest), \(earliest - requested) frames later); choose a later time or another late-start policy")
            case .startLate:
                start.sampleTime = earliest
            case .skipAhead:
                start.sampleTime = earliest
                start.queueTimeAtStart = earliest - requested
            }
        }
        if let error = OutputQueue.pushStarts(group[...], at: start.sampleTime, queueTimeAtStart: start.queueTimeAtStart,
                                              stayAligned: true) {
            throw error
        }
        return start
    }

    /// The error that stopped the device for good (its server went away, say), or nil.
    public var deviceError: AudioQueueError? { state.withLock { $0.deviceError } }

    func deviceDidStop(at sampleTime: Int64, error: AudioQueueError) {
        let first = state.withLock { state -> Bool in
            defer { state.deviceError = state.deviceError ?? error }
            return state.deviceError == nil
        }
        guard first else { return }
        core.stopEverything(at: sampleTime)
        deviceDiscontinuity(.shutdown, sampleTime: sampleTime, detail: 0)
        if device.callbackDelivery == .inline { pump.drain() }
    }

    /// Records a device-level discontinuity reported outside the render thread.
    func deviceDiscontinuity(_ kind: Discontinuity.Kind, sampleTime: Int64, length: Int64 = 0, detail: Double) {
        let queues = self.queues
        for queue in queues { queue.renderState.pointee.discontinuityCount.wrappingAdd(1, ordering: .relaxed) }
        let discontinuity = Discontinuity(kind: kind, sampleTime: sampleTime, length: length, queues: queues.map(\.name),
                                          detail: detail)
        record(discontinuity)
        for queue in queues {
            queue.deliverDiscontinuity(discontinuity)
            if kind == .sampleRateChange { queue.notifyListeners(.deviceSampleRate) }
        }
    }

    func startDevice() throws(AudioQueueError) {
        if let error = deviceError {
            throw AudioQueueError(.cannotStart, "device '\(device.name)' has stopped for good: \(error.message)")
        }
        if !device.isRunning {
            do { try device.start() } catch {
                throw AudioQueueError(.cannotStart, "device '\(device.name)' cannot start: \(error.message)")
            }
        }
    }
}

/// What an input queue records.
public enum InputSource: Sendable, Hashable {
    /// The device's inputs (JACK: the client's input ports).
    case deviceInput
    /// The engine's own mix, exactly as it goes to the device's outputs, on the same sample.
    case mix
}

/// Carries a non-Sendable value across an isolation boundary the caller knows is safe.
struct UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
