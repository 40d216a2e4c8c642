import CJack
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One process cycle as ``JACKCapture`` recorded it.
public struct JACKCaptureCycle: Sendable, Hashable {
    /// The index of the cycle's first recorded frame.
    public var firstRecordedFrame: Int
    /// The JACK frame time of the cycle's first frame (`jack_last_frame_time`).
    public var frameTime: UInt32
    /// The cycle's length in frames (what was recorded of it; less than the period only when the
    /// buffer filled up).
    public var frames: Int
    /// JACK transport at the start of the cycle: whether it was rolling, and its frame.
    public var transportRolling: Bool = false
    /// The transport frame at the start of the cycle.
    public var transportFrame: UInt32 = 0
}

/// A JACK client that records its input ports into preallocated memory, for end-to-end tests:
/// connect what a client under test plays to it and assert the samples exactly.
///
/// Each input port `in_<n>` is connected to `sources[n-1]` by ``start()``. Recording begins with
/// the first process cycle after activation (before the connections exist, that is silence) and
/// ends when ``stop()`` is called or `maxSeconds` are full (later frames are counted in
/// ``droppedFrames``). For every cycle the capture keeps `jack_last_frame_time`, so each
/// recorded frame maps to a JACK frame time (``frameTime(ofRecordedFrame:)``).
///
/// The process callback is realtime-safe: it copies into memory allocated and touched by the
/// initializer, publishes progress with atomics, and never allocates, locks or logs. The other
/// members may be called from any thread; reading while recording sees a consistent prefix.
public final class JACKCapture: @unchecked Sendable {
    /// The client's name on the server.
    public let clientName: String
    /// The full names of the capture's input ports (`<client>:in_1`, …), one per channel.
    public let portNames: [String]
    /// The ports connected by ``start()``, one per channel.
    public let sources: [String]
    /// The number of channels (input ports).
    public var channelCount: Int { core.channelCount }
    /// The capacity in frames (`maxSeconds` × sample rate).
    public var capacity: Int { core.capacity }
    /// The server's sample rate.
    public let sampleRate: Int

    private let core: CaptureCore
    private let serverName: String
    private let lock = NSLock()
    private var client: OpaquePointer?
    private var active = false
    private var contextReleased = false

    /// Opens a client with one input port per entry of `sources` (or `channels` ports, when
    /// given) and allocates room for `maxSeconds` of audio. Does not activate it: call ``start()``.
    ///
    /// - Parameters:
    ///   - server: The server to join.
    ///   - sources: Output ports to connect to the capture's inputs, in channel order.
    ///   - channels: The number of input ports; at least `sources.count`. Defaults to
    ///     `sources.count`.
    ///   - maxSeconds: How much to record at most.
    ///   - name: The client name; `lockstep-capture-<pid>-<n>` by default.
    ///   - playbackLatencies: Optional, one per channel: the capture then behaves like a
    ///     playback device whose input `i` is heard `playbackLatencies[i]` frames after it
    ///     arrives, and declares that playback latency on the port (JACK's latency API).
    ///   - portPrefix: The ports' short names are `<portPrefix>_1…` (`in` by default; `to_slave`
    ///     makes the client look like a netjack2 slave on a master).
    /// - Throws: ``JACKFixtureError``.
    public convenience init(server: JACKServer, sources: [String], channels: Int? = nil, maxSeconds: Double = 10,
                            name: String? = nil, playbackLatencies: [Int] = [], portPrefix: String = "in") throws {
        let channelCount = channels ?? sources.count
        guard playbackLatencies.isEmpty || (playbackLatencies.count == channelCount && playbackLatencies.allSatisfy { $0 >= 0 }) else {
            throw JACKFixtureError.invalidArgument("give one playback latency (≥ 0) per channel")
        }
        guard server.isRunning else {
            throw JACKFixtureError.serverNotRunning(name: server.name, logTail: server.logTail())
        }
        try self.init(opening: server.name, sources: sources, channelCount: channelCount, maxSeconds: maxSeconds,
                      name: name, playbackLatencies: playbackLatencies, portPrefix: portPrefix)
    }

    /// Opens a capture on the running server named `serverName` (one this process did not start,
    /// such as a netjack2 slave), with one input port per entry of `sources` (or `channels`).
    /// Does not activate it: call ``start()``.
    /// - Throws: ``JACKFixtureError``.
    public convenience init(serverName: String, sources: [String], channels: Int? = nil, maxSeconds: Double = 10,
                            name: String? = nil) throws {
        try self.init(opening: serverName, sources: sources, channelCount: channels ?? sources.count, maxSeconds: maxSeconds,
                      name: name, playbackLatencies: [], portPrefix: "in")
    }

    private init(opening serverName: String, sources: [String], channelCount: Int, maxSeconds: Double,
                 name: String?, playbackLatencies: [Int], portPrefix: String) throws {
        guard channelCount >= 1 && channelCount >= sources.count else {
            throw JACKFixtureError.invalidArgument("a capture needs at least one channel and one per source")
        }
        guard maxSeconds > 0 && maxSeconds <= 600 else {
            throw JACKFixtureError.invalidArgument("maxSeconds \(maxSeconds) is outside (0, 600]")
        }
        let requested = name ?? JACKFixtureSupport.uniqueClientName("lockstep-capture")
        let client = try JACKFixtureSupport.openClient(named: requested, serverName: serverName)
        let rate = Int(jack_get_sample_rate(client))
        let capacity = Int((maxSeconds * Double(rate)).rounded(.up))
        let core = CaptureCore(channelCount: channelCount, capacity: capacity)
        core.client = client
        var names: [String] = []
        do {
            for channel in 0..<channelCount {
                let port = try JACKFixtureSupport.registerAudioPort(client, name: "\(portPrefix)_\(channel + 1)", input: true)
                core.ports[channel] = port
                names.append(JACKFixtureSupport.portName(port))
            }
        } catch {
            jack_client_close(client)
            throw error
        }
        let context = Unmanaged.passRetained(core).toOpaque()
        jack_set_process_callback(client, CaptureCore.processCallback, context)
        jack_set_xrun_callback(client, CaptureCore.xrunCallback, context)
        jack_on_info_shutdown(client, CaptureCore.shutdownCallback, context)
        if !playbackLatencies.isEmpty {
            core.declaredLatencies = playbackLatencies
            core.declaredMode = JackPlaybackLatency
            core.declaredPorts = core.ports
            jack_set_latency_callback(client, CaptureCore.latencyCallback, context)
        }

        self.core = core
        self.client = client
        self.clientName = JACKFixtureSupport.clientName(client)
        self.portNames = names
        self.sources = sources
        self.sampleRate = rate
        self.serverName = serverName
    }

    deinit {
        stop()
    }

    /// Activates the client and connects `sources[i]` to input port `i`.
    ///
    /// jackd refuses connections to ports of inactive clients, so the sources' clients must be
    /// active already; otherwise start with no sources and let the other client connect to
    /// ``portNames`` (or call ``connect(_:toChannel:)`` later). Calling it again while active
    /// does nothing.
    /// - Throws: `.activationFailed`, `.connectionFailed`, `.serverNotRunning` (after ``stop()``).
    public func start() throws {
        lock.lock()
        defer { lock.unlock() }
        guard let client else { throw JACKFixtureError.serverNotRunning(name: serverName, logTail: "") }
        guard !active else { return }
        let code = jack_activate(client)
        guard code == 0 else { throw JACKFixtureError.activationFailed(client: clientName, code: code) }
        active = true
        for (channel, source) in sources.enumerated() {
            try JACKFixtureSupport.connect(client, source, portNames[channel])
        }
    }

    /// Connects another output port to input `channel` (for ports that appear after ``start()``,
    /// such as those of a CLI under test). The client must be active.
    public func connect(_ source: String, toChannel channel: Int) throws {
        precondition(channel >= 0 && channel < channelCount, "channel out of range")
        lock.lock()
        defer { lock.unlock() }
        guard let client else { throw JACKFixtureError.serverNotRunning(name: serverName, logTail: "") }
        try JACKFixtureSupport.connect(client, source, portNames[channel])
    }

    /// Stops recording: deactivates and closes the client. The recording stays readable.
    /// Idempotent; also called at deinit. Safe after the server went away.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard let client else { return }
        core.recording.store(false, ordering: .releasing)
        if active && !core.shutdown.load(ordering: .acquiring) { jack_deactivate(client) }
        jack_client_close(client)
        self.client = nil
        active = false
        // No callback can run after jack_client_close returned.
        if !contextReleased {
            Unmanaged.passUnretained(core).release()
            contextReleased = true
        }
    }

    /// JACK's estimate of the current frame time (`jack_frame_time`), or nil once stopped.
    public var currentFrameTime: UInt32? {
        lock.lock()
        defer { lock.unlock() }
        guard let client, !core.shutdown.load(ordering: .acquiring) else { return nil }
        return jack_frame_time(client)
    }

    /// The number of frames recorded so far (per channel).
    public var frames: Int { core.writeIndex.load(ordering: .acquiring) }

    /// The number of process cycles recorded so far.
    public var cycleCount: Int { core.cycleCount.load(ordering: .acquiring) }

    /// The number of xrun callbacks the client received.
    public var xrunCount: Int { core.xruns.load(ordering: .acquiring) }

    /// Frames that arrived after the buffer was full (or after too many cycles) and were not kept.
    public var droppedFrames: Int { core.droppedFrames.load(ordering: .acquiring) }

    /// Whether the server shut the client down (`jack_on_info_shutdown` fired): it stopped,
    /// was killed, or dropped the client.
    public var serverWentAway: Bool { core.shutdown.load(ordering: .acquiring) }

    /// The reason JACK gave with the shutdown callback, if it fired.
    public var shutdownReason: String? {
        guard serverWentAway else { return nil }
        return String(cString: core.shutdownReason)
    }

    /// The recorded samples of channel `channel`.
    public func channel(_ channel: Int) -> [Float] {
        precondition(channel >= 0 && channel < channelCount, "channel out of range")
        let count = frames
        return Array(UnsafeBufferPointer(start: core.samples[channel], count: count))
    }

    /// The last `count` (or fewer) recorded samples of channel `channel`, without copying the rest.
    public func latest(channel: Int, frames count: Int) -> ArraySlice<Float> {
        precondition(channel >= 0 && channel < channelCount, "channel out of range")
        let end = frames
        let start = max(0, end - count)
        return ArraySlice(UnsafeBufferPointer(start: core.samples[channel] + start, count: end - start))
    }

    /// The recorded cycles, in order.
    public var cycles: [JACKCaptureCycle] {
        let count = cycleCount
        return (0..<count).map {
            JACKCaptureCycle(firstRecordedFrame: core.cycleStarts[$0], frameTime: core.cycleFrameTimes[$0],
                             frames: core.cycleLengths[$0], transportRolling: core.cycleTransportRolling[$0],
                             transportFrame: core.cycleTransportFrames[$0])
        }
    }

    /// The JACK frame time of recorded frame 0, or nil before anything was recorded.
    public var firstFrameTime: UInt32? {
        cycleCount > 0 ? core.cycleFrameTimes[0] : nil
    }

    /// The JACK frame time of recorded frame `index` (which must be below ``frames``).
    public func frameTime(ofRecordedFrame index: Int) -> UInt32 {
        let cycle = cycleIndex(containing: index)
        return core.cycleFrameTimes[cycle] &+ UInt32(truncatingIfNeeded: index - core.cycleStarts[cycle])
    }

    /// The frame time of recorded frame `index` as a 64-bit value that does not wrap: the
    /// 32-bit ``firstFrameTime`` plus the frames elapsed since, counted across wraps.
    public func extendedFrameTime(ofRecordedFrame index: Int) -> Int64 {
        let cycle = cycleIndex(containing: index)
        let first = core.cycleFrameTimes[0]
        let sinceFirst = Int64(core.cycleFrameTimes[cycle] &- first)
        return Int64(first) + sinceFirst + Int64(index - core.cycleStarts[cycle])
    }

    /// The recorded frame captured at JACK frame time `time` (compared in 32 bits), or nil when
    /// no recorded cycle holds it.
    public func recordedIndex(atFrameTime time: Int64) -> Int? {
        let target = UInt32(truncatingIfNeeded: time)
        for cycle in cycles {
            let offset = target &- cycle.frameTime
            if offset < UInt32(cycle.frames) { return cycle.firstRecordedFrame + Int(offset) }
        }
        return nil
    }

    /// The index of the first recorded frame of `channel` whose magnitude exceeds `threshold`.
    public func firstNonSilentRecordedFrame(channel: Int, threshold: Float = 0) -> Int? {
        precondition(channel >= 0 && channel < channelCount, "channel out of range")
        let count = frames
        let samples = core.samples[channel]
        for index in 0..<count where abs(samples[index]) > threshold { return index }
        return nil
    }

    /// The JACK frame time of the first frame of `channel` whose magnitude exceeds `threshold`.
    public func firstNonSilentFrame(channel: Int, threshold: Float = 0) -> UInt32? {
        firstNonSilentRecordedFrame(channel: channel, threshold: threshold).map { frameTime(ofRecordedFrame: $0) }
    }

    /// Like ``firstNonSilentFrame(channel:threshold:)``, as a non-wrapping 64-bit frame time
    /// (see ``extendedFrameTime(ofRecordedFrame:)``).
    public func firstNonSilentExtendedFrameTime(channel: Int, threshold: Float = 0) -> Int64? {
        firstNonSilentRecordedFrame(channel: channel, threshold: threshold)
            .map { extendedFrameTime(ofRecordedFrame: $0) }
    }

    /// The number of places where a cycle's frame time does not follow the previous cycle's
    /// frame time plus its length (frame time jumps, as after an xrun).
    public var frameTimeDiscontinuities: Int {
        let all = cycles
        guard all.count > 1 else { return 0 }
        return (1..<all.count).filter { all[$0].frameTime != all[$0 - 1].frameTime &+ UInt32(all[$0 - 1].frames) }.count
    }

    /// Waits until at least `count` frames are recorded; returns false after `timeout` seconds, or
    /// as soon as the server went away or the capture is full.
    public func waitForFrames(_ count: Int, timeout: Double) -> Bool {
        JACKFixtureSupport.poll(timeout: timeout, interval: 0.002) {
            frames >= count || serverWentAway || frames >= capacity
        } && frames >= count
    }

    /// Waits until the capture has recorded `margin` frames past JACK frame time `time` (compared
    /// in 32 bits): what a client played up to `time` is all in; false after `timeout` seconds.
    public func waitForRecording(past time: Int64, margin: Int = 512, timeout: Double = 5) -> Bool {
        let target = UInt32(truncatingIfNeeded: time + Int64(margin))
        return wait(timeout: timeout) {
            let end = frames
            return end > 0 && Int32(bitPattern: frameTime(ofRecordedFrame: end - 1) &- target) >= 0
        }
    }

    /// Waits until the last `count` recorded frames of `channel` all satisfy `predicate`: the
    /// output shows a change (a gain, a pause) that a command made; false after `timeout` seconds.
    public func waitForLatest(channel: Int = 0, frames count: Int = 256, timeout: Double = 5,
                              _ predicate: (Float) -> Bool) -> Bool {
        precondition(channel >= 0 && channel < channelCount && count > 0, "channel or count out of range")
        return wait(timeout: timeout) {
            let end = frames
            guard end >= count else { return false }
            let samples = core.samples[channel]
            return (end - count..<end).allSatisfy { predicate(samples[$0]) }
        }
    }

    /// Waits until `condition` holds, polling every 2 ms; returns false after `timeout` seconds.
    public func wait(timeout: Double, until condition: () -> Bool) -> Bool {
        JACKFixtureSupport.poll(timeout: timeout, interval: 0.002, condition)
    }

    /// The cycles whose frame time is not the previous cycle's plus its frames: JACK's frame
    /// clock jumped against the frames rendered (a late dummy driver catching up, an xrun), or
    /// cycles went unrecorded. Frame times across them do not count frames rendered.
    public var clockJumps: Int {
        let cycles = self.cycles
        return zip(cycles, cycles.dropFirst()).filter { $1.frameTime != $0.frameTime &+ UInt32($0.frames) }.count
    }

    /// The recorded cycle that holds recorded frame `index`.
    public func cycleIndex(containing index: Int) -> Int {
        let count = cycleCount
        precondition(count > 0 && index >= 0 && index < frames, "recorded frame \(index) out of range")
        var low = 0
        var high = count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if core.cycleStarts[middle] <= index { low = middle } else { high = middle - 1 }
        }
        return low
    }
}

/// The state ``JACKCapture``'s callbacks use; retained for the client's lifetime through the
/// callback context pointer.
final class CaptureCore: JACKClientCore, @unchecked Sendable {
    let channelCount: Int
    let capacity: Int
    let cycleCapacity: Int
    let ports: UnsafeMutablePointer<OpaquePointer?>
    let samples: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let cycleStarts: UnsafeMutablePointer<Int>
    let cycleFrameTimes: UnsafeMutablePointer<UInt32>
    let cycleLengths: UnsafeMutablePointer<Int>
    let cycleTransportFrames: UnsafeMutablePointer<UInt32>
    let cycleTransportRolling: UnsafeMutablePointer<Bool>
    let shutdownReason: UnsafeMutablePointer<CChar>
    let shutdownReasonCapacity = 256
    /// Set once before activation; read by the process callback.
    var client: OpaquePointer?

    let writeIndex = Atomic<Int>(0)
    let cycleCount = Atomic<Int>(0)
    let droppedFrames = Atomic<Int>(0)
    let recording = Atomic<Bool>(true)

    init(channelCount: Int, capacity: Int) {
        self.channelCount = channelCount
        self.capacity = capacity
        // JACK's smallest period is 16 frames; a few spare entries cover a short last cycle.
        cycleCapacity = capacity / 16 + 64
        ports = .allocate(capacity: channelCount)
        ports.initialize(repeating: nil, count: channelCount)
        samples = .allocate(capacity: channelCount)
        for channel in 0..<channelCount {
            (samples + channel).initialize(to: JACKFixtureSupport.allocateZeroed(Float.self, count: capacity, zero: 0))
        }
        cycleStarts = JACKFixtureSupport.allocateZeroed(Int.self, count: cycleCapacity, zero: 0)
        cycleFrameTimes = JACKFixtureSupport.allocateZeroed(UInt32.self, count: cycleCapacity, zero: 0)
        cycleLengths = JACKFixtureSupport.allocateZeroed(Int.self, count: cycleCapacity, zero: 0)
        cycleTransportFrames = JACKFixtureSupport.allocateZeroed(UInt32.self, count: cycleCapacity, zero: 0)
        cycleTransportRolling = JACKFixtureSupport.allocateZeroed(Bool.self, count: cycleCapacity, zero: false)
        shutdownReason = JACKFixtureSupport.allocateZeroed(CChar.self, count: shutdownReasonCapacity, zero: 0)
    }

    deinit {
        for channel in 0..<channelCount { samples[channel].deallocate() }
        samples.deallocate()
        ports.deallocate()
        cycleStarts.deallocate()
        cycleFrameTimes.deallocate()
        cycleLengths.deallocate()
        cycleTransportFrames.deallocate()
        cycleTransportRolling.deallocate()
        shutdownReason.deallocate()
    }

    /// The process callback body. Realtime-safe: copies into preallocated memory, stores atomics.
    @inline(__always)
    func process(_ nframes: jack_nframes_t) {
        guard recording.load(ordering: .relaxed), let client else { return }
        let length = Int(nframes)
        let start = writeIndex.load(ordering: .relaxed)
        let cycle = cycleCount.load(ordering: .relaxed)
        let count = cycle < cycleCapacity ? min(length, capacity - start) : 0
        if count < length { droppedFrames.wrappingAdd(length - count, ordering: .relaxed) }
        guard count > 0 else { return }
        for channel in 0..<channelCount {
            guard let port = ports[channel], let buffer = jack_port_get_buffer(port, nframes) else {
                (samples[channel] + start).update(repeating: 0, count: count)
                continue
            }
            (samples[channel] + start).update(from: buffer.assumingMemoryBound(to: Float.self), count: count)
        }
        cycleStarts[cycle] = start
        cycleFrameTimes[cycle] = jack_last_frame_time(client)
        cycleLengths[cycle] = count
        var position = jack_position_t()
        let transport = jack_transport_query(client, &position)
        cycleTransportFrames[cycle] = position.frame
        cycleTransportRolling[cycle] = transport == JackTransportRolling
        cycleCount.store(cycle + 1, ordering: .releasing)
        writeIndex.store(start + count, ordering: .releasing)
    }

    /// `JackProcessCallback`: context is an unretained `CaptureCore`.
    static let processCallback: JackProcessCallback = { nframes, context in
        guard let context else { return 0 }
        Unmanaged<CaptureCore>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.process(nframes) }
        return 0
    }

    override func serverWentAway(reason: UnsafePointer<CChar>?) {
        if let reason { strncpy(shutdownReason, reason, shutdownReasonCapacity - 1) }
        super.serverWentAway(reason: reason)
    }
}
