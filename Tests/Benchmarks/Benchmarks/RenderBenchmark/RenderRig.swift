import Foundation
import Lockstep
import Synchronization

/// A device that never renders by itself: it only hands the benchmark the engine's
/// `DeviceRenderer`, so the benchmark can call the realtime entry point directly — no interleaving,
/// no encoding, no event delivery (which `OfflineDevice.render` adds).
final class BenchDevice: AudioDevice, @unchecked Sendable {
    let name = "bench"
    let sampleRate: Double
    let channelCount: Int
    /// Two input channels, recorded by the rig's input queues.
    let inputChannelCount = 2
    let maximumFramesPerCycle: Int
    private(set) var renderer: DeviceRenderer?
    /// The next sample time the benchmark will render (read by `currentTime`).
    let nextSampleTime = Atomic<Int64>(0)

    init(sampleRate: Double, channelCount: Int, framesPerCycle: Int) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        maximumFramesPerCycle = framesPerCycle
    }

    /// Offline: the engine starts no callback thread; the rig delivers events itself, outside
    /// the measured region.
    var isOffline: Bool { true }
    var isRunning: Bool { renderer != nil }

    func attach(_ renderer: DeviceRenderer) throws(AudioQueueError) {
        guard self.renderer == nil else {
            throw AudioQueueError(.invalidDevice, "bench device already belongs to an engine")
        }
        self.renderer = renderer
    }

    func detach() { renderer = nil }

    func start() throws(AudioQueueError) {}
    func stop() {}

    func currentTime() -> DeviceTimeStamp {
        let t = nextSampleTime.load(ordering: .acquiring)
        return DeviceTimeStamp(sampleTime: t, hostTime: hostTime(forSampleTime: t))
    }

    func nearestStartTime(atOrAfter sampleTime: Int64) -> Int64 {
        max(sampleTime, nextSampleTime.load(ordering: .acquiring))
    }

    func hostTime(forSampleTime sampleTime: Int64) -> UInt64 {
        UInt64(max(0, (Double(sampleTime) * 1_000_000 / sampleRate).rounded()))
    }

    func sampleTime(forHostTime hostTime: UInt64) -> Int64 {
        Int64((Double(hostTime) * sampleRate / 1_000_000).rounded())
    }
}

/// Counts what the queues hand back (buffers, underruns): both must stay 0 while measuring, or the
/// benchmark would measure something other than steady-state mixing.
final class RigCounters: Sendable {
    let completedBuffers = Atomic<Int>(0)
}

/// An engine at 48 kHz stereo, 256 frames per cycle, master meter on, with `queueCount` running
/// queues — a mix of mono/stereo and float32/int16, some with Volume set (directly or by a buffer
/// parameter event), a mixer gain, or level metering — ready to render cycle after cycle through
/// `DeviceRenderer.render`.
final class RenderRig: @unchecked Sendable {
    static let sampleRate = 48_000.0
    static let channels = 2
    static let framesPerCycle = 256

    enum Buffers {
        /// One or two buffers of `seconds` each per queue, never completing while measured: the
        /// steady state of mixing.
        case long(seconds: Double)
        /// `count` buffers of `frames` each per queue, re-enqueued from the output callback (run by
        /// `deliverEvents()`, outside the measured region): the render path also pops, finishes
        /// and reports buffers.
        case recycled(frames: Int, count: Int)
    }

    let device: BenchDevice
    let engine: Engine
    let renderer: DeviceRenderer
    let queues: [OutputQueue]
    let counters = RigCounters()
    let buffers: Buffers
    /// Frames every queue has enqueued in its first buffer: in `.long` mode, rendering past it
    /// would complete a buffer, which the measurement must not include.
    let firstBufferFrames: Int64
    private let planar: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let inputPlanar: UnsafeMutablePointer<Float>
    private let input: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Input queues recording the device input and the mix while the outputs play.
    private(set) var inputQueues: [InputQueue] = []
    private(set) var sampleTime: Int64 = 0
    private(set) var cycles = 0

    init(queueCount: Int, buffers: Buffers, warmupCycles: Int = 64) throws {
        let rate = Self.sampleRate
        self.buffers = buffers
        device = BenchDevice(sampleRate: rate, channelCount: Self.channels, framesPerCycle: Self.framesPerCycle)
        // The default queue table (256 slots) unless more queues are asked for; the render loop
        // walks every slot, so the 64-queue benchmarks keep the default.
        engine = try Engine(device: device, maximumQueues: max(256, queueCount))
        guard let renderer = device.renderer else { fatalError("the engine did not attach to the bench device") }
        self.renderer = renderer
        // Meter the mix too (off by default): the whole render path, as a mixer UI would use it.
        engine.isMasterMeteringEnabled = true

        planar = .allocate(capacity: Self.channels * Self.framesPerCycle)
        planar.initialize(repeating: 0, count: Self.channels * Self.framesPerCycle)
        output = .allocate(capacity: Self.channels)
        for c in 0..<Self.channels {
            (output + c).initialize(to: planar + c * Self.framesPerCycle)
        }
        inputPlanar = .allocate(capacity: 2 * Self.framesPerCycle)
        for i in 0..<(2 * Self.framesPerCycle) { (inputPlanar + i).initialize(to: Float(0.01 * sin(Double(i)))) }
        input = .allocate(capacity: 2)
        for c in 0..<2 { (input + c).initialize(to: inputPlanar + c * Self.framesPerCycle) }

        let frames: Int
        switch buffers {
        case .long(let seconds): frames = Int(seconds * rate)
        case .recycled(let recycledFrames, _): frames = recycledFrames
        }
        firstBufferFrames = Int64(frames)
        // One sine per channel layout, reused for every queue (each queue's buffer encodes it in
        // its own sample format).
        let mono = (0..<frames).map { Float(0.05 * sin(2 * Double.pi * 220 * Double($0) / rate)) }
        var stereo = [Float](repeating: 0, count: frames * 2)
        for i in 0..<frames {
            stereo[2 * i] = mono[i]
            stereo[2 * i + 1] = -mono[i]
        }

        let counters = self.counters
        let recycle: Bool
        if case .recycled = buffers { recycle = true } else { recycle = false }
        var made: [OutputQueue] = []
        made.reserveCapacity(queueCount)
        for i in 0..<queueCount {
            let channels = i % 2 == 0 ? 1 : 2
            let sampleFormat: SampleFormat = (i / 2) % 2 == 0 ? .float32 : .int16
            let format = StreamFormat(sampleRate: rate, channelCount: channels, sampleFormat: sampleFormat)
            let queue = try engine.makeOutputQueue(format: format, name: "bench-\(i)") { queue, buffer in
                counters.completedBuffers.add(1, ordering: .relaxed)
                if recycle {
                    do { try queue.enqueue(buffer) } catch { fatalError("re-enqueue failed: \(error)") }
                }
            }
            let bufferCount: Int
            switch buffers {
            case .long: bufferCount = i % 3 == 0 ? 2 : 1
            case .recycled(_, let count): bufferCount = count
            }
            for b in 0..<bufferCount {
                let buffer = try queue.allocateBuffer(frameCapacity: frames)
                buffer.fill(from: channels == 1 ? mono : stereo)
                // Some buffers carry a Volume parameter event (applied when they start).
                let parameters = (i % 5 == 1 && b == 0) ? [ParameterEvent(.volume, 0.8)] : []
                try queue.enqueue(buffer, parameters: parameters)
            }
            if i % 4 == 0 { try queue.setVolume(0.5) }
            if i % 6 == 2 { try queue.setMixerGain(decibels: -3) }
            if i % 2 == 1 { queue.isLevelMeteringEnabled = true }
            made.append(queue)
        }
        queues = made
        // Four recording queues: stereo and mono from the device input (one metered), and the mix;
        // rings long enough that the measured cycles never overflow them (nothing drains them
        // inside the measured region).
        let stereoIn = StreamFormat(sampleRate: rate, channelCount: 2)
        let monoIn = StreamFormat(sampleRate: rate, channelCount: 1)
        for (format, source, map) in [(stereoIn, InputSource.deviceInput, [0, 1]), (monoIn, .deviceInput, [1]),
                                      (stereoIn, .mix, [0, 1]), (monoIn, .deviceInput, [0])] {
            let queue = try engine.makeInputQueue(format: format, source: source, channelMap: map, ringSeconds: 90) { queue, buffer, _, _ in
                try? queue.enqueue(buffer)
            }
            for _ in 0..<3 { try queue.enqueue(try queue.allocateBuffer(frameCapacity: 4096)) }
            queue.isLevelMeteringEnabled = inputQueues.count % 2 == 0
            inputQueues.append(queue)
        }
        try engine.start(queues, at: 0)
        for queue in inputQueues { try queue.start(at: 0) }

        // Warm up: starts, gain ramps, caches. Then deliver the events (starts) the warm-up
        // caused, so the measured cycles find an empty event ring.
        for _ in 0..<warmupCycles {
            cycle()
            if recycle { deliverEvents() }
        }
        deliverEvents()
    }

    deinit {
        output.deinitialize(count: Self.channels)
        output.deallocate()
        planar.deallocate()
        input.deinitialize(count: 2)
        input.deallocate()
        inputPlanar.deallocate()
    }

    /// Cycles that can still be rendered before the first buffer of some queue completes
    /// (unbounded with recycled buffers).
    var remainingCycles: Int {
        if case .recycled = buffers { return .max }
        return Int((firstBufferFrames - sampleTime) / Int64(Self.framesPerCycle)) - 1
    }

    /// Delivers the callbacks and events the render caused (the offline device's job).
    func deliverEvents() { renderer.deliverPendingEvents() }

    /// Renders one cycle through the engine's realtime entry point.
    @inline(__always)
    func cycle() {
        renderer.render(frames: Self.framesPerCycle, sampleTime: sampleTime, input: input, output: output)
        sampleTime &+= Int64(Self.framesPerCycle)
        cycles &+= 1
        device.nextSampleTime.store(sampleTime, ordering: .releasing)
    }

    /// The first output sample of the last cycle (to keep the optimiser honest).
    var firstSample: Float { planar[0] }

    /// Toggles Volume on a few queues (outside the measured region), so the measured cycles
    /// include gain ramps.
    func toggleVolumes(_ round: Int) throws {
        let value: Float = round % 2 == 0 ? 0.25 : 0.75
        for i in stride(from: 3, to: queues.count, by: 8) { try queues[i].setVolume(value) }
    }

    /// Delivers pending events and checks the measured cycles did what they should: no underrun,
    /// and no completed buffer (long buffers) or some (recycled ones).
    func verify() -> String? {
        deliverEvents()
        let completed = counters.completedBuffers.load(ordering: .relaxed)
        let discontinuities = engine.discontinuityCount
        let dropped = engine.droppedEventCount
        switch buffers {
        case .long:
            if completed != 0 || discontinuities != 0 || dropped != 0 {
                return "the measured cycles were not steady state: \(completed) buffers completed, \(discontinuities) discontinuities, \(dropped) dropped events (render fewer cycles or longer buffers)"
            }
        case .recycled:
            if completed == 0 || discontinuities != 0 || dropped != 0 {
                return "recycling went wrong: \(completed) buffers completed, \(discontinuities) discontinuities, \(dropped) dropped events"
            }
        }
        return nil
    }
}
