import Synchronization

/// Converted audio ready for the render thread: interleaved float at the device rate, in the
/// queue's channel count. One per ``QueueBuffer`` (allocated with it), plus internal segments that
/// carry a rate converter's tail. Written by the user side before it is enqueued, then owned by
/// the render thread until it comes back in a `bufferDone` event.
struct Segment {
    /// Marks a segment that follows the previous one gaplessly.
    static let follow: Int64 = .min

    /// The frames the render thread plays: ``storage``, or — for a float queue at the device's
    /// rate — the enqueued buffer's own memory, borrowed while it is enqueued (no copy).
    var samples: UnsafeMutablePointer<Float>
    /// The segment's own memory (freed with it).
    let storage: UnsafeMutablePointer<Float>
    var capacityFrames: Int
    var frameCount: Int
    var channelCount: Int
    /// Start in queue time (device-rate frames since the queue started), or ``follow``.
    var start: Int64
    /// Volume to apply when the segment starts, or NaN for none.
    var volume: Float
    /// Pan gains (``PanLaw/packed(_:)``) to apply when the segment starts, or ``PanLaw/none``.
    var panGains: UInt64 = PanLaw.none
    /// The pan position those gains stand for (published as the queue's effective pan).
    var pan: Float = 0
    /// Gain ramp length in device frames to use from when the segment starts (0: the engine's
    /// default), or -1 for no change.
    var rampFrames: Int = -1
    /// `Unmanaged<QueueBuffer>` of the owning buffer, or nil for an internal segment.
    var owner: UnsafeMutableRawPointer?
    /// Set by the render thread once it has applied the segment's start parameters.
    var started: Bool
    /// Rendered start (queue time) once resolved by the render thread.
    var resolvedStart: Int64
    /// Frames the render thread cut from the end of the segment (``OutputQueue/truncate(at:)``);
    /// reset when the segment is enqueued. The user side counts them out of its pending frames.
    var truncatedFrames: Int = 0

    static func allocate(capacityFrames: Int, channelCount: Int, owner: UnsafeMutableRawPointer?)
        -> UnsafeMutablePointer<Segment>
    {
        let samples = UnsafeMutablePointer<Float>.allocate(capacity: max(1, capacityFrames * channelCount))
        samples.initialize(repeating: 0, count: max(1, capacityFrames * channelCount))
        let segment = UnsafeMutablePointer<Segment>.allocate(capacity: 1)
        segment.initialize(to: Segment(samples: samples, storage: samples, capacityFrames: capacityFrames, frameCount: 0,
                                       channelCount: channelCount, start: follow, volume: .nan,
                                       owner: owner, started: false, resolvedStart: 0))
        return segment
    }

    static func free(_ segment: UnsafeMutablePointer<Segment>) {
        segment.pointee.storage.deallocate()
        segment.deinitialize(count: 1)
        segment.deallocate()
    }
}

/// A command from the user side to one queue's render state, applied in order at the start of a
/// render cycle.
struct QueueCommand {
    enum Kind: UInt8 {
        case enqueue, start, pause, stopNow, stopWhenDrained, reset, disposeNow, disposeWhenDrained
        /// Cut the enqueued audio at queue time `time` (device frames); see ``OutputQueue/truncate(at:)``.
        case truncate
        /// Hold `segment` as an armed start for its queue time; see ``OutputQueue/arm(_:startTime:)``.
        case arm
        /// Hand every armed segment back; see ``OutputQueue/disarm()``.
        case disarm
    }
    var kind: Kind
    var segment: UnsafeMutablePointer<Segment>?
    /// For `start`: the device sample time to start at, or -1 for the next rendered frame.
    var time: Int64

    init(kind: Kind, segment: UnsafeMutablePointer<Segment>?, time: Int64) {
        self.kind = kind
        self.segment = segment
        self.time = time
    }

    @inline(__always)
    init?(_ message: RingMessage) {
        guard let kind = Kind(rawValue: message.kind) else { return nil }
        self.init(kind: kind, segment: message.segment, time: message.time)
    }

    var message: RingMessage { RingMessage(kind: kind.rawValue, segment: segment, time: time) }
}

/// Something the render thread reports to the user side.
struct RenderEvent {
    enum Kind: UInt8 {
        case bufferDone, started, stopped, paused, underrun, queueRemoved, deviceDiscontinuity
        case inputStarted, inputPaused, inputStopped, inputOverflow, inputRemoved
    }
    var kind: Kind
    var slot: Int32
    var segment: UnsafeMutablePointer<Segment>?
    /// Device sample time the event happened at.
    var sampleTime: Int64
    /// Kind-specific: underrun length in frames; discontinuity kind and detail.
    var value: Int64
    var detail: Int64
    /// For device discontinuities: their length in frames (signed for clock jumps).
    var length: Int64

    init(kind: Kind, slot: Int32, segment: UnsafeMutablePointer<Segment>?, sampleTime: Int64, value: Int64, detail: Int64,
         length: Int64 = 0) {
        self.kind = kind
        self.slot = slot
        self.segment = segment
        self.sampleTime = sampleTime
        self.value = value
        self.detail = detail
        self.length = length
    }

    init?(_ message: RingMessage) {
        guard let kind = Kind(rawValue: message.kind) else { return nil }
        self.init(kind: kind, slot: message.slot, segment: message.segment, sampleTime: message.time,
                  value: message.value, detail: message.detail, length: message.length)
    }

    var message: RingMessage {
        RingMessage(kind: kind.rawValue, slot: slot, segment: segment, time: sampleTime, value: value, detail: detail,
                    length: length)
    }
}

/// The run states of a queue as the render thread sees them.
enum RenderRunState: UInt8 {
    case stopped = 0, scheduled, running, paused
}

/// The render-thread state of one output queue. Lives in manually allocated memory that the
/// render thread reaches through a pointer; fields without atomics belong to the render thread.
struct QueueRenderState: ~Copyable {
    // The fields are declared (and so laid out) hottest first: what every cycle of a running
    // queue reads and writes comes in the first cache lines, which the render loop prefetches
    // (``RenderCore/prefetchAhead(from:stateLines:)``); what changes only on a command, a
    // segment boundary or a ramp comes after them.

    // Per-cycle, render thread: commands in, the segment playing, where it plays.
    let commands: SPSCRing
    var current: UnsafeMutablePointer<Segment>? = nil
    /// Where the next cycle will read this queue's audio (the end of what it mixed last), how
    /// many bytes of the segment lie from there, and the segment: the render loop prefetches them a
    /// few queues ahead, only while that segment is still ``current`` (its memory is then the
    /// render thread's; a finished segment may already be freed).
    var prefetchHint: UnsafeRawPointer? = nil
    var prefetchBytes = 0
    var prefetchSegment: UnsafeMutablePointer<Segment>? = nil
    var queueTime: Int64 = 0
    /// The device time just past the last cycle this queue was rendered in (-1 before the
    /// first): a later cycle that starts past it means the device's clock skipped frames.
    var renderedUntil: Int64 = -1
    var starvedSince: Int64 = -1
    let slot: Int32
    var runState: RenderRunState = .stopped
    var drainThenStop = false
    var removed = false
    /// After a reset: the next gapless segment starts whenever it arrives, and running dry
    /// until then is not an underrun.
    var awaitingAfterReset = false

    // Gain: current applied linear gain, the target it ramps to, and the ramp.
    var gain: Float = 1
    var gainTarget: Float = 1
    var rampStep: Float = 0
    var volume: Float = 1
    var rampRemaining = 0
    var panLeft: Float = 1
    var panRight: Float = 1
    var panRemaining = 0
    // Generations (32-bit, wrapping: the render thread only asks "changed since I looked?").
    var seenVolumeGeneration: UInt32 = 0
    var seenRampGeneration: UInt32 = 0
    var seenPanGeneration: UInt32 = 0

    // Set by the user side, read by the render thread every cycle.
    let volumeGeneration = Atomic<UInt32>(0)
    let rampGeneration = Atomic<UInt32>(0)
    let panGeneration = Atomic<UInt32>(0)
    let mixerGainBits = Atomic<UInt32>(Float(1).bitPattern)
    let meteringEnabled = Atomic<Bool>(false)
    /// The route asked for (``OutputQueue/setRoute(toMaster:directOutputs:)``): a wrapping
    /// 6-bit generation in bits 2…7; bit 0 set: out of the master mix; bit 1 set: the direct
    /// outputs silent. The render thread takes it at the start of a cycle, both at once.
    let routeRequest = Atomic<UInt8>(0)
    /// ``LateBufferPolicy/playInFull``: a segment that starts late (after an underrun) is moved
    /// to the current queue time instead of losing its late part.
    let playsLateInFull = Atomic<Bool>(false)
    /// The route this cycle: ``routeRequest`` as last taken (in the byte before the next field's
    /// alignment, so the hot lines do not grow).
    var seenRoute: UInt8 = 0
    /// Set by the render thread when the device's rate changed under the queue: its audio was
    /// prepared for another rate, so it never renders again (the new rate, or 0).
    let invalidatedByRate = Atomic<Int64>(0)

    // Published clock (a sequence lock over atomics: odd while the render thread writes).
    let clockLock = SeqLock()
    let publishedQueueTime = Atomic<Int64>(0)
    let publishedDeviceTime = Atomic<Int64>(0)
    let publishedRunState = Atomic<UInt8>(0)

    // Metering (its arrays follow the state in its block).
    var meter: LevelAccumulator

    // Less often: on commands, segment boundaries, ramps and reads from the user side.
    let channelCount: Int
    // Render-local FIFO of pending segments.
    let fifo: UnsafeMutablePointer<UnsafeMutablePointer<Segment>?>
    let fifoMask: Int
    var fifoHead = 0
    var fifoCount = 0
    var startAt: Int64 = 0
    var startQueueTime: Int64 = 0
    var startDeviceTime: Int64 = 0
    var lastEnd: Int64 = 0
    var starvedDeviceTime: Int64 = 0
    var alignLateStart = false
    var disposeAfterStop = false

    let userVolumeBits = Atomic<UInt32>(Float(1).bitPattern)
    let effectiveVolumeBits = Atomic<UInt32>(Float(1).bitPattern)

    // Volume ramp time: frames set by the user side (0: the engine's default), published with
    // a generation; the length in use belongs to the render thread.
    let userRampFrames = Atomic<Int>(0)
    var activeRampFrames = 0
    /// The ramp length in effect (frames; 0: the engine's default), for reading back.
    let effectiveRampFrames = Atomic<Int>(0)

    // Pan: gains set by the user side (``PanLaw/packed(_:)``) with a generation; the gains in
    // use (above), their targets and ramp belong to the render thread.
    let userPanGains = Atomic<UInt64>(PanLaw.unity)
    var panTargetLeft: Float = 1
    var panTargetRight: Float = 1
    var panStepLeft: Float = 0
    var panStepRight: Float = 0
    /// The pan position in effect (Float bits), for reading back.
    let effectivePanBits = Atomic<UInt32>(Float(0).bitPattern)

    // Armed starts (``OutputQueue/arm(_:startTime:)``): segments held for one queue time each,
    // cold until a fire request; the render thread fires the one for the cycle that sees it.
    let armed: UnsafeMutablePointer<UnsafeMutablePointer<Segment>?>
    var armedCount = 0
    /// Fire requests made (user side) and the last one the render thread answered.
    let fireRequest = Atomic<UInt32>(0)
    var fireSeen: UInt32 = 0
    /// The request's earliest queue time (device frames): cycles starting before it leave the
    /// request for a later one.
    let fireNotBefore = Atomic<Int64>(.min)
    /// The answer to request ``fireOutcomeGeneration``: the queue time fired, or -1 (missed).
    let fireOutcomeTime = Atomic<Int64>(-1)
    let fireOutcomeGeneration = Atomic<UInt32>(0)
    /// The most segments armed at once.
    static let armedCapacity = 16

    /// The generation of the route last taken, and the device sample of the cycle it was taken
    /// on (written on a route change only).
    let routeAppliedGeneration = Atomic<UInt8>(0)
    let routeAppliedAt = Atomic<Int64>(-1)

    let discontinuityCount = Atomic<Int>(0)
    /// Frames of its audio the queue skipped because the device's clock skipped them while it
    /// ran (an xrun), so it stays on the timeline (``LateBufferPolicy/skipToStayAligned``).
    let skippedFrames = Atomic<Int64>(0)
    /// Frames a truncation came too late to cut (the queue had played past its time), summed.
    let lateCutFrames = Atomic<Int64>(0)

    /// The cache lines at the start of a state that a running queue touches every cycle:
    /// everything declared before ``meter``, and the meter's own per-cycle fields (measured on a
    /// state made for the purpose, as key paths — and so `MemoryLayout.offset(of:)` — do not
    /// reach a non-copyable type).
    static let hotLines: Int = {
        let state = UnsafeMutablePointer<QueueRenderState>.allocate(capacity: 1)
        state.initialize(to: QueueRenderState(slot: 0, channelCount: 1, maximumSegments: 1, meterWindow: 1))
        // The meter is the last of the hot fields, and its own hot fields end with its clock.
        let end = withUnsafeMutablePointer(to: &state.pointee.meter.clock) { UnsafeRawPointer($0) - UnsafeRawPointer(state) }
            + MemoryLayout<Int64>.size
        state.pointee.deallocateStorage()
        state.deinitialize(count: 1)
        state.deallocate()
        return (end + 63) / 64
    }()

    init(slot: Int32, channelCount: Int, maximumSegments: Int, meterWindow: Int, meterStorage: UnsafeMutableRawPointer? = nil) {
        self.slot = slot
        self.channelCount = channelCount
        commands = SPSCRing(minimumCapacity: maximumSegments * 2 + 64)
        var capacity = 2
        while capacity < maximumSegments + 16 { capacity <<= 1 }
        fifo = .allocate(capacity: capacity)
        fifo.initialize(repeating: nil, count: capacity)
        fifoMask = capacity - 1
        armed = .allocate(capacity: Self.armedCapacity)
        armed.initialize(repeating: nil, count: Self.armedCapacity)
        meter = LevelAccumulator(channelCount: channelCount, window: meterWindow, storage: meterStorage)
    }

    /// Frees the state's own storage (not the segments, which belong to buffers).
    func deallocateStorage() {
        commands.deallocate()
        fifo.deallocate()
        armed.deallocate()
        meter.deallocate()
    }

    /// Bytes of the meter arrays in front of a state with `channelCount` channels (whole cache
    /// lines, so the state starts on a line).
    static func meterStorageBytes(channelCount: Int) -> Int {
        (LevelAccumulator.storageBytes(channelCount: channelCount) + 63) / 64 * 64
    }

    /// Bytes of the state's block in render memory: its meter's arrays, then the state.
    static func blockBytes(channelCount: Int) -> Int {
        meterStorageBytes(channelCount: channelCount) + MemoryLayout<QueueRenderState>.stride
    }

    /// A new state in one block of `memory`, its meter's arrays in the line(s) just before it (a
    /// stereo meter's sums in the very line before), so the render loop finds each queue's
    /// per-cycle fields in a few neighbouring cache lines.
    static func make(in memory: RenderMemory, slot: Int32, channelCount: Int, maximumSegments: Int,
                     meterWindow: Int) -> UnsafeMutablePointer<QueueRenderState> {
        let block = memory.allocate(bytes: blockBytes(channelCount: channelCount))
        let state = (block + meterStorageBytes(channelCount: channelCount)).bindMemory(to: QueueRenderState.self, capacity: 1)
        state.initialize(to: QueueRenderState(slot: slot, channelCount: channelCount, maximumSegments: maximumSegments,
                                              meterWindow: meterWindow, meterStorage: block))
        return state
    }

    /// Frees a state from ``make(in:slot:channelCount:maximumSegments:meterWindow:)``.
    static func free(_ state: UnsafeMutablePointer<QueueRenderState>, in memory: RenderMemory) {
        let channels = state.pointee.channelCount
        state.pointee.deallocateStorage()
        state.deinitialize(count: 1)
        memory.free(UnsafeMutableRawPointer(state) - meterStorageBytes(channelCount: channels),
                    bytes: blockBytes(channelCount: channels))
    }
}

/// Accumulates peak and mean-square levels per channel on the render thread and publishes them
/// through atomics once per window, so any thread can read a consistent recent level.
struct LevelAccumulator: ~Copyable {
    // What every metered cycle touches comes first (through ``clock``); the rest only when a
    // window is published (``QueueRenderState/hotLines`` counts on this order).
    let sumSquares: UnsafeMutablePointer<Float>
    let peaks: UnsafeMutablePointer<Float>
    let window: Int
    var frames = 0
    /// The device sample time just past the last accumulated frame.
    var clock: Int64 = 0
    let channelCount: Int
    /// Published values: for channel c, [2c] = mean-square bits, [2c+1] = peak bits.
    let published: UnsafeMutablePointer<Atomic<UInt32>>
    /// Per channel, the largest peak published since the hold was last reset.
    let hold: UnsafeMutablePointer<Atomic<UInt32>>
    /// Publishes the values and the window's times together.
    let lock = SeqLock()
    /// The published window's first device sample time and length in frames.
    let windowStart = Atomic<Int64>(0)
    let windowFrames = Atomic<Int>(0)

    /// Whether ``deallocate()`` frees the arrays (false: they live in memory the owner frees).
    private let ownsStorage: Bool

    /// Bytes of storage the arrays of `channelCount` channels take (``init(channelCount:window:storage:)``).
    static func storageBytes(channelCount: Int) -> Int { channelCount * 5 * MemoryLayout<UInt32>.stride }

    /// An accumulator whose arrays live in `storage` (``storageBytes(channelCount:)`` bytes,
    /// 4-byte aligned, freed by its owner), or in one allocation of its own when nil.
    init(channelCount: Int, window: Int, storage: UnsafeMutableRawPointer? = nil) {
        self.channelCount = channelCount
        self.window = max(1, window)
        let bytes = max(Self.storageBytes(channelCount: channelCount), 4)
        ownsStorage = storage == nil
        let base = storage ?? UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
        // Published levels and hold first (read by other threads), then the render thread's sums.
        published = base.bindMemory(to: Atomic<UInt32>.self, capacity: channelCount * 3)
        for i in 0..<(channelCount * 3) { (published + i).initialize(to: Atomic<UInt32>(0)) }
        hold = published + channelCount * 2
        let sums = (base + channelCount * 3 * 4).bindMemory(to: Float.self, capacity: channelCount * 2)
        sums.initialize(repeating: 0, count: channelCount * 2)
        sumSquares = sums
        peaks = sums + channelCount
    }

    /// Adds `frames` interleaved frames (stride `stride` samples, first channel at `samples`).
    @inline(__always)
    mutating func accumulate(_ samples: UnsafePointer<Float>, frames count: Int, stride: Int, at sampleTime: Int64) {
        for c in 0..<channelCount {
            var sum: Float = 0
            var peak = peaks[c]
            var p = samples + c
            for _ in 0..<count {
                let v = p.pointee
                sum += v * v
                let a = abs(v)
                if a > peak { peak = a }
                p += stride
            }
            sumSquares[c] += sum
            peaks[c] = peak
        }
        frames += count
        clock = sampleTime &+ Int64(count)
        if frames >= window { publish() }
    }

    /// Adds planar frames of one channel; call ``finishPlanar(frames:at:)`` after all channels.
    @inline(__always)
    func accumulatePlanar(channel c: Int, _ samples: UnsafePointer<Float>, frames count: Int) {
        var sum: Float = 0
        var peak = peaks[c]
        for i in 0..<count {
            let v = samples[i]
            sum += v * v
            let a = abs(v)
            if a > peak { peak = a }
        }
        sumSquares[c] += sum
        peaks[c] = peak
    }

    /// Ends a chunk of `count` frames whose first frame plays at device sample time `sampleTime`.
    @inline(__always)
    mutating func finishPlanar(frames count: Int, at sampleTime: Int64) {
        frames += count
        clock = sampleTime &+ Int64(count)
        if frames >= window { publish() }
    }

    /// Publishes the accumulated window (silence counts as a zero level) and starts a new one.
    @inline(__always)
    mutating func publish() {
        let n = Float(max(frames, 1))
        let token = lock.beginWrite()
        windowStart.store(clock &- Int64(frames), ordering: .relaxed)
        windowFrames.store(frames, ordering: .relaxed)
        for c in 0..<channelCount {
            published[2 * c].store((sumSquares[c] / n).bitPattern, ordering: .relaxed)
            published[2 * c + 1].store(peaks[c].bitPattern, ordering: .relaxed)
            if peaks[c] > Float(bitPattern: hold[c].load(ordering: .relaxed)) {
                hold[c].store(peaks[c].bitPattern, ordering: .relaxed)
            }
            sumSquares[c] = 0
            peaks[c] = 0
        }
        lock.endWrite(token)
        frames = 0
    }

    /// Reads the last published levels (any thread).
    func read() -> [ChannelLevel] { reading().levels }

    /// Reads the last published levels with the window they measure, consistently (any thread).
    func reading() -> LevelReading {
        lock.read {
            LevelReading(sampleTime: windowStart.load(ordering: .relaxed), frames: windowFrames.load(ordering: .relaxed),
                         levels: (0..<channelCount).map { c in
                             ChannelLevel(averagePower: Float(bitPattern: published[2 * c].load(ordering: .relaxed)).squareRoot(),
                                          peakPower: Float(bitPattern: published[2 * c + 1].load(ordering: .relaxed)))
                         })
        }
    }

    /// The largest peak per channel since ``resetHold()`` (any thread).
    func readHold() -> [Float] {
        (0..<channelCount).map { Float(bitPattern: hold[$0].load(ordering: .relaxed)) }
    }

    /// Starts a new peak hold (any thread).
    func resetHold() {
        for c in 0..<channelCount { hold[c].store(0, ordering: .relaxed) }
    }

    /// Clears accumulated and published levels, keeping the peak hold (render thread, or while
    /// not rendering); a partial window is published first so the hold sees it.
    mutating func clear() {
        if frames > 0 { publish() }
        let token = lock.beginWrite()
        for c in 0..<channelCount {
            sumSquares[c] = 0
            peaks[c] = 0
            published[2 * c].store(0, ordering: .relaxed)
            published[2 * c + 1].store(0, ordering: .relaxed)
        }
        windowStart.store(clock, ordering: .relaxed)
        windowFrames.store(0, ordering: .relaxed)
        lock.endWrite(token)
        frames = 0
    }

    func deallocate() {
        for i in 0..<(channelCount * 3) { (published + i).deinitialize(count: 1) }
        if ownsStorage { UnsafeMutableRawPointer(published).deallocate() }
    }
}
