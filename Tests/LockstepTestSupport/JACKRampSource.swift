import CJack
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A JACK client that plays a known signal on its output ports: a counter ramp whose every
/// frame says which frame it is, or a constant. Pair it with ``JACKCapture`` to test a
/// connection, latency or a recording end to end.
///
/// In ramp mode output frame `n` (counted from the first cycle after activation) holds
/// `Float((start + n) % 2^24) * step` on every channel, which is exact in `Float` when `step` is a
/// power of two; ``frameIndex(ofValue:)`` turns a sample back into `n`. ``firstFrameTime`` is the
/// JACK frame time at which frame 0 was played, so frame `n` played at `firstFrameTime + n` as
/// long as no cycle was skipped.
///
/// The process callback is realtime-safe (no allocation, locks or logging). Other members may be
/// called from any thread.
public final class JACKRampSource: @unchecked Sendable {
    /// What the source plays.
    public enum Signal: Sendable, Hashable {
        /// Frame `n` holds `Float((start + n) % 2^24) * step`.
        case ramp(start: Int, step: Float)
        /// Every frame holds the value.
        case constant(Float)
        /// Frame `n` holds its own JACK frame time, `Float((jack_last_frame_time + offset) % 2^24)`:
        /// a timecode of the server's clock, exact in `Float`, that says on which frame of this
        /// server each sample was played wherever it arrives (a netjack2 slave, a recording).
        case frameTime

        /// The default ramp: counting from 0 in steps of 2^-16 (exact, below 256).
        public static let defaultRamp = Signal.ramp(start: 0, step: 1.0 / 65536)
    }

    /// The client's name on the server.
    public let clientName: String
    /// The full names of the output ports (`<client>:out_1`, …).
    public let portNames: [String]
    /// The signal played.
    public let signal: Signal

    private let core: RampCore
    private let serverName: String
    private let lock = NSLock()
    private var client: OpaquePointer?
    private var active = false

    /// Opens a client with `channels` output ports. Does not activate it: call
    /// ``start(connectingTo:)``.
    ///
    /// With `captureLatencies` (one per channel) the source behaves like a capture device whose
    /// port `i` delivers sound `captureLatencies[i]` frames after it was heard: it declares that
    /// capture latency on the port (JACK's latency API) and plays the signal delayed by as much
    /// (silence before), so frame `n` of the signal is *heard* at `firstFrameTime + n` on every
    /// port.
    /// - Throws: ``JACKFixtureError``.
    public convenience init(server: JACKServer, channels: Int = 1, signal: Signal = .defaultRamp,
                            name: String? = nil, captureLatencies: [Int] = []) throws {
        guard captureLatencies.isEmpty || (captureLatencies.count == channels && captureLatencies.allSatisfy { $0 >= 0 }) else {
            throw JACKFixtureError.invalidArgument("give one capture latency (≥ 0) per channel")
        }
        if case .ramp(let start, let step) = signal, start < 0 || !(step.isFinite) {
            throw JACKFixtureError.invalidArgument("a ramp needs start ≥ 0 and a finite step")
        }
        guard server.isRunning else {
            throw JACKFixtureError.serverNotRunning(name: server.name, logTail: server.logTail())
        }
        try self.init(opening: server.name, channels: channels, signal: signal, name: name,
                      captureLatencies: captureLatencies)
    }

    /// Opens a client with `channels` output ports on the running server named `serverName` (one
    /// this process did not start, such as a netjack2 master). Does not activate it.
    /// - Throws: ``JACKFixtureError``.
    public convenience init(serverName: String, channels: Int = 1, signal: Signal = .defaultRamp, name: String? = nil) throws {
        try self.init(opening: serverName, channels: channels, signal: signal, name: name, captureLatencies: [])
    }

    private init(opening serverName: String, channels: Int, signal: Signal, name: String?, captureLatencies: [Int]) throws {
        guard channels >= 1 && channels <= 64 else {
            throw JACKFixtureError.invalidArgument("a source needs 1…64 channels, not \(channels)")
        }
        let requested = name ?? JACKFixtureSupport.uniqueClientName("lockstep-source")
        let client = try JACKFixtureSupport.openClient(named: requested, serverName: serverName)
        let core = RampCore(channelCount: channels, signal: signal, delays: captureLatencies)
        core.client = client
        core.declaredLatencies = captureLatencies
        core.declaredMode = JackCaptureLatency
        core.declaredPorts = core.ports
        var names: [String] = []
        do {
            for channel in 0..<channels {
                let port = try JACKFixtureSupport.registerAudioPort(client, name: "out_\(channel + 1)", input: false)
                core.ports[channel] = port
                names.append(JACKFixtureSupport.portName(port))
            }
        } catch {
            jack_client_close(client)
            throw error
        }
        let context = Unmanaged.passRetained(core).toOpaque()
        jack_set_process_callback(client, RampCore.processCallback, context)
        jack_set_xrun_callback(client, RampCore.xrunCallback, context)
        jack_on_info_shutdown(client, RampCore.shutdownCallback, context)
        if !captureLatencies.isEmpty { jack_set_latency_callback(client, RampCore.latencyCallback, context) }
        self.core = core
        self.client = client
        self.clientName = JACKFixtureSupport.clientName(client)
        self.portNames = names
        self.signal = signal
        self.serverName = serverName
    }

    deinit { stop() }

    /// Activates the client (frame 0 plays in the first cycle after this) and connects output
    /// port `i` to `destinations[i]` (whose clients must be active: jackd refuses connections
    /// to ports of inactive clients). Calling it again while active does nothing.
    /// - Throws: `.activationFailed`, `.connectionFailed`, `.serverNotRunning` (after ``stop()``).
    public func start(connectingTo destinations: [String] = []) throws {
        precondition(destinations.count <= portNames.count, "more destinations than channels")
        lock.lock()
        defer { lock.unlock() }
        guard let client else { throw JACKFixtureError.serverNotRunning(name: serverName, logTail: "") }
        guard !active else { return }
        let code = jack_activate(client)
        guard code == 0 else { throw JACKFixtureError.activationFailed(client: clientName, code: code) }
        active = true
        for (channel, destination) in destinations.enumerated() {
            try JACKFixtureSupport.connect(client, portNames[channel], destination)
        }
    }

    /// Connects output `channel` to the input port `destination`.
    public func connect(channel: Int, to destination: String) throws {
        precondition(channel >= 0 && channel < portNames.count, "channel out of range")
        lock.lock()
        defer { lock.unlock() }
        guard let client else { throw JACKFixtureError.serverNotRunning(name: serverName, logTail: "") }
        try JACKFixtureSupport.connect(client, portNames[channel], destination)
    }

    /// Every port on the server now (through this client), or nothing once stopped.
    public func serverPorts() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        guard let client, !core.shutdown.load(ordering: .acquiring) else { return [] }
        return JACKFixtureSupport.takeStringList(jack_get_ports(client, nil, nil, 0))
    }

    /// Whether output `channel` is connected to `destination` now.
    public func isConnected(channel: Int, to destination: String) -> Bool {
        precondition(channel >= 0 && channel < portNames.count, "channel out of range")
        lock.lock()
        defer { lock.unlock() }
        guard let client, !core.shutdown.load(ordering: .acquiring),
              let port = jack_port_by_name(client, portNames[channel]) else { return false }
        return jack_port_connected_to(port, destination) != 0
    }

    /// Deactivates and closes the client. Idempotent; also called at deinit. Safe after the
    /// server went away.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard let client else { return }
        if active && !core.shutdown.load(ordering: .acquiring) { jack_deactivate(client) }
        jack_client_close(client)
        self.client = nil
        active = false
        Unmanaged.passUnretained(core).release()
    }

    /// The number of frames played so far (per channel).
    public var framesPlayed: Int { core.framesPlayed.load(ordering: .acquiring) }

    /// The JACK frame time of the cycle in which frame 0 was played, or nil before that.
    public var firstFrameTime: UInt32? {
        core.started.load(ordering: .acquiring) ? core.firstFrameTime.load(ordering: .acquiring) : nil
    }

    /// The number of xrun callbacks the client received.
    public var xrunCount: Int { core.xruns.load(ordering: .acquiring) }

    /// Whether the server shut the client down (`jack_on_info_shutdown` fired).
    public var serverWentAway: Bool { core.shutdown.load(ordering: .acquiring) }

    /// The value output frame `frame` holds.
    public func value(atFrame frame: Int) -> Float {
        switch signal {
        case .ramp(let start, let step): return Float((start + frame) & RampCore.counterMask) * step
        case .constant(let value): return value
        case .frameTime: return Float(((firstFrameTime.map(Int.init) ?? 0) + frame) & RampCore.counterMask)
        }
    }

    /// The output frame index (before the 2^24 wrap) a ramp sample encodes, or nil when the
    /// signal is not a ramp or the value is not a whole number of steps.
    public func frameIndex(ofValue value: Float) -> Int? {
        guard case .ramp(let start, let step) = signal, step != 0 else { return nil }
        let count = value / step
        guard count.isFinite, count == count.rounded(), count >= 0 else { return nil }
        return Int(count) - start
    }
}

/// The state ``JACKRampSource``'s callbacks use; retained for the client's lifetime through the
/// callback context pointer.
final class RampCore: JACKClientCore, @unchecked Sendable {
    static let counterMask = (1 << 24) - 1

    let channelCount: Int
    let ports: UnsafeMutablePointer<OpaquePointer?>
    let isRamp: Bool
    let isFrameTime: Bool
    let start: Int
    let step: Float
    let constant: Float
    /// Set once before activation; read by the process callback.
    var client: OpaquePointer?
    /// Only the process callback touches it.
    private var counter = 0
    /// Per channel, how many frames the signal is delayed by.
    let delays: UnsafeMutablePointer<Int>

    let framesPlayed = Atomic<Int>(0)
    let firstFrameTime = Atomic<UInt32>(0)
    let started = Atomic<Bool>(false)

    init(channelCount: Int, signal: JACKRampSource.Signal, delays: [Int] = []) {
        self.channelCount = channelCount
        self.delays = .allocate(capacity: channelCount)
        for c in 0..<channelCount { (self.delays + c).initialize(to: c < delays.count ? delays[c] : 0) }
        ports = .allocate(capacity: channelCount)
        ports.initialize(repeating: nil, count: channelCount)
        switch signal {
        case .ramp(let start, let step):
            isRamp = true
            isFrameTime = false
            self.start = start
            self.step = step
            constant = 0
        case .frameTime:
            isRamp = false
            isFrameTime = true
            start = 0
            step = 1
            constant = 0
        case .constant(let value):
            isRamp = false
            isFrameTime = false
            start = 0
            step = 0
            constant = value
        }
    }

    deinit {
        ports.deallocate()
        delays.deallocate()
    }

    /// The process callback body. Realtime-safe.
    @inline(__always)
    func process(_ nframes: jack_nframes_t) {
        let length = Int(nframes)
        if !started.load(ordering: .relaxed), let client {
            firstFrameTime.store(jack_last_frame_time(client), ordering: .relaxed)
            started.store(true, ordering: .releasing)
        }
        for channel in 0..<channelCount {
            guard let port = ports[channel], let raw = jack_port_get_buffer(port, nframes) else { continue }
            let out = raw.assumingMemoryBound(to: Float.self)
            if isRamp {
                let delay = delays[channel]
                for frame in 0..<length {
                    let n = counter &+ frame &- delay
                    out[frame] = n < 0 ? 0 : Float((start &+ n) & RampCore.counterMask) * step
                }
            } else if isFrameTime, let client {
                let now = Int(jack_last_frame_time(client))
                for frame in 0..<length { out[frame] = Float((now &+ frame) & RampCore.counterMask) }
            } else {
                out.update(repeating: constant, count: length)
            }
        }
        counter &+= length
        framesPlayed.store(counter, ordering: .releasing)
    }

    /// `JackProcessCallback`: context is an unretained `RampCore`.
    static let processCallback: JackProcessCallback = { nframes, context in
        guard let context else { return 0 }
        Unmanaged<RampCore>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.process(nframes) }
        return 0
    }

}
