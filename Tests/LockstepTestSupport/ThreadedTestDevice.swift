import Foundation
import Lockstep
import Synchronization

/// A "live" device for tests: renders from a thread of its own, period after period, at a chosen
/// speed, and records what it rendered. It exercises the engine's callback thread and the
/// cross-thread rings the way a JACK client does, without a server.
public final class ThreadedTestDevice: AudioDevice, @unchecked Sendable {
    public let name = "threaded-test"
    public let sampleRate: Double
    public let channelCount: Int
    public let maximumFramesPerCycle: Int
    public var isOffline: Bool { false }
    public var isRunning: Bool { running.load(ordering: .acquiring) }

    /// Seconds slept between periods.
    public let periodSleep: Double
    private var renderer: DeviceRenderer?
    private let running = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    private let nextSampleTime = Atomic<Int64>(0)
    private let capture = NSLock()
    private var captured: [Float] = []
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    /// Input channels; they record silence.
    public let inputChannelCount: Int

    /// Creates the device; `speed` is how many times faster than real time it renders; `inputs`
    /// silent input channels.
    public init(sampleRate: Double = 48000, channels: Int = 2, period: Int = 256, speed: Double = 1, inputs: Int = 0) {
        self.sampleRate = sampleRate
        channelCount = channels
        inputChannelCount = inputs
        maximumFramesPerCycle = period
        periodSleep = Double(period) / sampleRate / speed
    }

    public func attach(_ renderer: DeviceRenderer) throws(AudioQueueError) { self.renderer = renderer }

    private let directLock = NSLock()
    private var directSets: [DirectOutputs] = []
    private var directCaptured: [String: [Float]] = [:]

    /// Per-queue outputs: captured per output name (see ``directOutput(_:)``).
    public func makeDirectOutputs(name: String, channelCount: Int) throws(AudioQueueError) -> DirectOutputs {
        let names = (1...channelCount).map { "\(name)_\($0)" }
        let outputs = DirectOutputs(channelCount: channelCount, names: names,
                                    context: UncheckedBuffers(count: channelCount * maximumFramesPerCycle))
        directLock.lock()
        directSets.append(outputs)
        directLock.unlock()
        return outputs
    }

    public func releaseDirectOutputs(_ outputs: DirectOutputs) {
        directLock.lock()
        directSets.removeAll { $0 === outputs }
        directLock.unlock()
    }

    /// Everything a per-queue output rendered so far.
    public func directOutput(_ name: String) -> [Float] {
        directLock.lock()
        defer { directLock.unlock() }
        return directCaptured[name] ?? []
    }

    /// Simulates the device dying: rendering stops, then the engine is told.
    public func simulateShutdown() {
        stop()
        renderer?.deviceStopped(at: nextSampleTime.load(ordering: .acquiring),
                                error: AudioQueueError(.invalidDevice, "the test device was shut down"))
    }

    private func prepareDirectBuffers(frames: Int) {
        directLock.lock()
        for set in directSets {
            guard let memory = set.context as? UncheckedBuffers else { continue }
            for c in 0..<set.channelCount {
                let buffer = memory.pointer + c * maximumFramesPerCycle
                buffer.update(repeating: 0, count: frames)
                set.buffers[c] = buffer
            }
        }
        directLock.unlock()
    }

    private func collectDirectBuffers(frames: Int) {
        directLock.lock()
        for set in directSets {
            for c in 0..<set.channelCount {
                guard let buffer = set.buffers[c] else { continue }
                directCaptured[set.names[c], default: []] += UnsafeBufferPointer(start: buffer, count: frames)
            }
        }
        directLock.unlock()
    }

    public func start() throws(AudioQueueError) {
        guard let renderer, !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let period = maximumFramesPerCycle
        let channels = channelCount
        let thread = Thread { [self] in
            let planar = UnsafeMutablePointer<Float>.allocate(capacity: period * channels)
            let pointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
            for c in 0..<channels { pointers[c] = planar + c * period }
            var interleaved = [Float](repeating: 0, count: period * channels)
            while !stopRequested.load(ordering: .acquiring) {
                let t = nextSampleTime.load(ordering: .relaxed)
                prepareDirectBuffers(frames: period)
                renderer.render(frames: period, sampleTime: t, input: nil, output: pointers)
                collectDirectBuffers(frames: period)
                renderer.wakeCallbackThread()
                nextSampleTime.store(t + Int64(period), ordering: .releasing)
                for c in 0..<channels { for i in 0..<period { interleaved[i * channels + c] = pointers[c][i] } }
                capture.lock()
                captured += interleaved
                capture.unlock()
                Thread.sleep(forTimeInterval: periodSleep)
            }
            planar.deallocate()
            pointers.deallocate()
            finished.signal()
        }
        thread.name = "threaded-test-device"
        self.thread = thread
        thread.start()
    }

    public func detach() {
        stop()
        renderer = nil
    }

    public func stop() {
        if running.load(ordering: .acquiring) && !stopRequested.exchange(true, ordering: .acquiringAndReleasing) {
            finished.wait()
            running.store(false, ordering: .releasing)
        }
    }

    public func currentTime() -> DeviceTimeStamp {
        let t = nextSampleTime.load(ordering: .acquiring)
        return DeviceTimeStamp(sampleTime: t, hostTime: hostTime(forSampleTime: t))
    }

    public func nearestStartTime(atOrAfter sampleTime: Int64) -> Int64 {
        max(sampleTime, nextSampleTime.load(ordering: .acquiring) + Int64(maximumFramesPerCycle))
    }

    public func hostTime(forSampleTime sampleTime: Int64) -> UInt64 {
        UInt64(max(0, Double(sampleTime) * 1_000_000 / sampleRate))
    }

    public func sampleTime(forHostTime hostTime: UInt64) -> Int64 {
        Int64(Double(hostTime) * sampleRate / 1_000_000)
    }

    /// Everything rendered so far, interleaved.
    public var output: [Float] {
        capture.lock()
        defer { capture.unlock() }
        return captured
    }

    /// Waits (polling) until `condition` holds or `timeout` seconds pass; returns whether it held.
    public static func wait(timeout: Double = 10, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return condition()
    }
}

/// Memory for a test device's per-queue outputs.
final class UncheckedBuffers: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Float>
    init(count: Int) {
        pointer = .allocate(capacity: count)
        pointer.initialize(repeating: 0, count: count)
    }
    deinit { pointer.deallocate() }
}
