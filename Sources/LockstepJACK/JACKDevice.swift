import CJack
import Foundation
import Lockstep
import LockstepSchema
import Synchronization

/// The live device: one JACK client whose process callback drives the engine's render path.
///
/// All of an engine's queues play through this one client: its master outputs `out_1…out_N` carry
/// the mix, and queues that ask for it get ports of their own (`<queue name>_1…`, see
/// ``Lockstep/OutputQueue/enableDirectOutputs()``). The device sample time is JACK's frame time
/// counts the frames rendered (and captured) in 64 bits, so it never wraps; it starts equal to
/// JACK's frame time (`jack_frame_time`, extended) and stays mapped to it by an offset that moves
/// whenever JACK's clock jumps against the frames rendered (jackd2 jumps by new − old period at
/// every period change): see ``jackFrameTime(forSampleTime:)``. Host time is JACK's microsecond
/// clock (`jack_get_time`).
///
/// Works with jackd2 and with PipeWire's JACK, through libjack only.
///
/// ```swift
/// let device = try JACKDevice(options: .init(clientName: "lockstep"))
/// let engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory)
/// ```
///
/// Discontinuities (xruns with the frames the clock skipped and JACK's delay, clock jumps with
/// their length, buffer-size and sample-rate changes, freewheel) are measured and reported by the
/// process thread at the first cycle that sees them, on that cycle's sample time; JACK's
/// notification callbacks only record them. A server shutdown is handled by a monitor thread of
/// the device: every queue stops, is-running listeners fire and ``Lockstep/Engine/deviceError``
/// says why.
public final class JACKDevice: AudioDevice, @unchecked Sendable {
    /// How to open the client.
    public struct Options: Sendable, Hashable {
        /// The client name to ask for (JACK may add a suffix if it is taken).
        public var clientName: String
        /// The server to connect to; nil uses `JACK_DEFAULT_SERVER` or JACK's default.
        public var serverName: String?
        /// Master output channels (`out_1…out_N`).
        public var channelCount: Int
        /// Input ports (`in_1…in_N`) that input queues record from; 0 for none.
        public var inputChannelCount: Int
        /// Whether ``start()`` connects the master outputs to the physical playback ports.
        public var connectToPhysicalOutputs: Bool
        /// The most frames one engine render may cover; longer JACK periods render in chunks.
        public var maximumFramesPerRender: Int
        /// Whether every output port (master and per-queue) is delayed so that all reach their
        /// far ends on the same sample: port `p` is delayed by the largest playback latency of
        /// the connected outputs minus its own (JACK's latency ranges, re-read whenever JACK
        /// announces a change). Off by default.
        public var compensatesPlaybackLatency: Bool
        /// Whether the inputs are aligned by their capture latency: input `i` is delayed by the
        /// largest capture latency of the connected inputs minus its own, and
        /// ``JACKDevice/captureLatency`` says how long ago the aligned frames were heard, so input
        /// queues record each frame on the device time it was heard. On by default.
        public var compensatesCaptureLatency: Bool
        /// Whether the device survives a restart of its server: when the server goes away it waits
        /// for a server of the same name to come back (retrying every 250 ms), opens its client
        /// again under the same name, registers the same ports, restores their connections and
        /// renders on. Queues hold while the server is away (nothing stops); the device timeline
        /// continues from the last rendered frame. Off by default: the device then stops for good
        /// and ``Lockstep/Engine/deviceError`` says why.
        public var survivesServerRestart: Bool
        /// The short name of a JACK MIDI input port to register (`midi_in`), read by
        /// ``JACKDevice/midiInput``; nil for none.
        public var midiInputPortName: String?
        /// Whether an engine of more than 256 queues may share its cycles with a helper thread on
        /// a second core (``JACKDevice/hasRenderHelper``). On by default; turn it off to keep the
        /// other cores free for other realtime work (the mix is the same samples either way).
        public var usesRenderHelper: Bool

        /// Creates options; the defaults open client `lockstep` with 2 outputs on the default server.
        public init(clientName: String = "lockstep", serverName: String? = nil, channelCount: Int = 2,
                    inputChannelCount: Int = 0, connectToPhysicalOutputs: Bool = true, maximumFramesPerRender: Int = 8192,
                    compensatesPlaybackLatency: Bool = false, compensatesCaptureLatency: Bool = true,
                    survivesServerRestart: Bool = false, midiInputPortName: String? = nil, usesRenderHelper: Bool = true) {
            self.midiInputPortName = midiInputPortName
            self.usesRenderHelper = usesRenderHelper
            self.clientName = clientName
            self.serverName = serverName
            self.channelCount = channelCount
            self.inputChannelCount = inputChannelCount
            self.connectToPhysicalOutputs = connectToPhysicalOutputs
            self.maximumFramesPerRender = maximumFramesPerRender
            self.compensatesPlaybackLatency = compensatesPlaybackLatency
            self.compensatesCaptureLatency = compensatesCaptureLatency
            self.survivesServerRestart = survivesServerRestart
        }
    }

    /// The MIDI input port (``Options/midiInputPortName``) and the events it receives; nil when
    /// the device has none.
    public let midiInput: JACKMIDIInput?

    /// The options the device was opened with.
    public let options: Options
    /// The client's actual name (JACK may have changed the requested one).
    public let name: String
    /// Master output channels.
    public let channelCount: Int
    /// The most frames one engine render covers.
    public let maximumFramesPerCycle: Int
    /// The master output ports' full names (`client:out_1`, …).
    public let outputPortNames: [String]
    /// The input ports' full names (`client:in_1`, …).
    public let inputPortNames: [String]
    /// Input channels (`in_1…in_N`).
    public let inputChannelCount: Int

    /// The server the client was opened on (nil: JACK's default).
    private let resolvedServerName: String?
    let realtime: UnsafeMutablePointer<JACKRealtimeState>
    let control = Mutex(Control())
    /// The live client: nil while the server is away and after ``detach()``. Every call into
    /// JACK with the client happens under this lock, so it is never used after it was closed.
    private let live: Mutex<LiveClient>

    struct LiveClient: @unchecked Sendable {
        var client: OpaquePointer?
    }

    /// A port handle carried across the client lock.
    struct PortHandle: @unchecked Sendable {
        var pointer: OpaquePointer
    }

    /// A connection made, as returned by the connect helpers.
    struct ConnectionPair: Sendable {
        var source: String
        var destination: String
    }

    /// Latencies and connections measured in one pass under the client lock.
    struct Measured: Sendable {
        var playback: [Int?]
        var capture: [Int?]
        var connections: [Connection]
    }

    /// Runs `body` with the live client under its lock; nil while the server is away or closed.
    func withClient<T: Sendable>(_ body: (OpaquePointer) -> T) -> T? {
        live.withLock { state -> T? in
            guard let client = state.client else { return nil }
            return body(client)
        }
    }
    private let monitorStop = Atomic<Bool>(false)
    /// Set by the monitor thread around each poll, so ``detach()`` can wait for a poll that uses
    /// the engine's renderer to finish before the engine goes away.
    private let monitorPolling = Atomic<Bool>(false)
    private var monitor: Thread?

    struct Control: @unchecked Sendable {
        var active = false
        var closed = false
        var attached = false
        /// The engine's render helper (see ``attach(_:)``): its thread and the renderer it runs.
        var renderHelper: (thread: jack_native_thread_t, renderer: UnsafeMutablePointer<DeviceRenderer>)?
        var directRecords: [ObjectIdentifier: (index: Int, record: UnsafeMutablePointer<JACKDirectRecord>, names: [String])] = [:]
        var shutdownHandled = false
        /// While the server is away (``Options/survivesServerRestart``): since when, the next
        /// attempt to reconnect, and the device time rendering stopped at.
        var awaySince: Date?
        var nextAttempt = Date.distantPast
        /// The connections of the device's ports as last seen (restored after a restart), and
        /// those still to restore with the time to give up.
        var connections: [Connection] = []
        var pendingConnections: [Connection] = []
        var restoreDeadline = Date.distantPast
        /// The connections made through ``JACKDevice/connect(_:to:)`` and not undone: made again
        /// when a port they name comes back (a netjack2 slave that restarted).
        var wanted: [Connection] = []
        /// Per output port, what the last latency measurement found and the delay it set.
        var compensation: [OutputCompensation] = []
        /// Whether the outputs' outages and changes are recorded (``JACKDevice/beginOutputHistory()``),
        /// and what was recorded per output port (full name).
        var recordsHistory = false
        var history: [String: PortHistory] = [:]
        /// The sample times the process thread stamped on the monitor's marks, by mark.
        var markTimes: [Int: Int64] = [:]
        var resolvedMark = 0
        /// Counts the measurements that moved a compensation delay line (playback, capture), and
        /// the latencies last published with a mark.
        var playbackDelayGeneration = 0
        var captureDelayGeneration = 0
        var publishedLatencies: (playback: Int, capture: Int) = (0, 0)
    }

    /// What happened to one output port since ``JACKDevice/beginOutputHistory()``; times are
    /// marks (stamped by the process thread) with the device time the monitor noticed as fallback.
    struct PortHistory: Sendable {
        struct Outage: Sendable {
            var destination: String
            /// The port the wanted connection names now (the destination, or its successor).
            var following: String
            var lost: Stamp
            var rejoined: Stamp?
            var rejoinedAs: String?
        }
        struct Change: Sendable {
            var at: Stamp
            var latency: Int?
            var delay: Int
        }
        struct Stamp: Sendable {
            var mark: Int
            var noticed: Int64
        }
        var latency: Int?
        var delay: Int
        var outages: [Outage] = []
        var changes: [Change] = []
    }

    /// One connection of one of the device's ports: its short name, the other port, the direction.
    struct Connection: Hashable, Sendable {
        var ours: String
        var other: String
        var oursIsOutput: Bool
    }

    /// Opens a client on a running JACK server (it never starts a server itself).
    ///
    /// - Throws: ``Lockstep/AudioQueueError/Code/invalidDevice`` when no server runs (naming the
    ///   server and what to do) or the client cannot be set up;
    ///   ``Lockstep/AudioQueueError/Code/invalidParameter`` for bad options.
    public init(options: Options = Options()) throws(AudioQueueError) {
        guard (0...StreamFormat.maximumChannelCount).contains(options.inputChannelCount) else {
            throw AudioQueueError(.invalidParameter, "input channel count \(options.inputChannelCount) is out of range; use 0…\(StreamFormat.maximumChannelCount)")
        }
        guard (0...StreamFormat.maximumChannelCount).contains(options.channelCount) else {
            throw AudioQueueError(.invalidParameter, "channel count \(options.channelCount) is out of range; use 0…\(StreamFormat.maximumChannelCount)")
        }
        guard !options.clientName.isEmpty, options.clientName.utf8.count < Int(jack_client_name_size()) else {
            throw AudioQueueError(.invalidParameter, "client name '\(options.clientName)' is empty or longer than JACK allows (\(jack_client_name_size() - 1) bytes)")
        }
        self.options = options
        var status = jack_status_t(rawValue: 0)
        let serverName = options.serverName ?? ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"]
        JACKGraph.quietLibjack()
        guard let client = lockstep_jack_client_open(options.clientName, serverName, 1, &status) else {
            throw AudioQueueError(.invalidDevice, Self.describeOpenFailure(status: status, server: serverName))
        }
        resolvedServerName = serverName
        live = Mutex(LiveClient(client: client))
        name = String(cString: jack_get_client_name(client))
        channelCount = options.channelCount
        let period = Int(jack_get_buffer_size(client))
        maximumFramesPerCycle = max(options.maximumFramesPerRender, 64)
        realtime = .allocate(capacity: 1)
        realtime.initialize(to: JACKRealtimeState(client: client, channelCount: options.channelCount,
                                                  inputCount: options.inputChannelCount,
                                                  maximumFrames: maximumFramesPerCycle,
                                                  compensatesPlayback: options.compensatesPlaybackLatency,
                                                  compensatesCapture: options.compensatesCaptureLatency))
        inputChannelCount = options.inputChannelCount
        realtime.pointee.periodFrames.store(period, ordering: .relaxed)
        realtime.pointee.bufferSize.store(period, ordering: .relaxed)
        realtime.pointee.sampleRate.store(Int(jack_get_sample_rate(client)), ordering: .relaxed)

        let clientName = name
        let realtime = self.realtime
        func register(_ prefix: String, count: Int, flags: JackPortFlags,
                      into table: UnsafeMutablePointer<OpaquePointer?>) throws(AudioQueueError) -> [String] {
            var names: [String] = []
            for c in 0..<count {
                let short = "\(prefix)_\(c + 1)"
                guard let port = jack_port_register(client, short, JACK_DEFAULT_AUDIO_TYPE, UInt(flags.rawValue), 0) else {
                    jack_client_close(client)
                    realtime.pointee.deallocate()
                    realtime.deallocate()
                    throw AudioQueueError(.invalidDevice, "cannot register JACK port '\(short)' on client '\(clientName)'")
                }
                table[c] = port
                names.append(String(cString: jack_port_name(port)))
            }
            return names
        }
        outputPortNames = try register("out", count: options.channelCount, flags: JackPortIsOutput, into: realtime.pointee.ports)
        inputPortNames = try register("in", count: options.inputChannelCount, flags: JackPortIsInput,
                                      into: realtime.pointee.inputPorts)
        if let short = options.midiInputPortName {
            guard !short.isEmpty, !short.contains(":"),
                  let port = jack_port_register(client, short, JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsInput.rawValue), 0) else {
                jack_client_close(client)
                realtime.pointee.deallocate()
                realtime.deallocate()
                throw AudioQueueError(.invalidDevice, "cannot register JACK MIDI port '\(short)' on client '\(clientName)'; choose another port name")
            }
            let input = JACKMIDIInput(portName: String(cString: jack_port_name(port)))
            realtime.pointee.midiPort = port
            realtime.pointee.midiRing = input.ring
            midiInput = input
        } else {
            midiInput = nil
        }
        Self.setCallbacks(client, realtime)
    }

    /// Registers the device's callbacks on `client`, with the realtime state as their argument.
    private static func setCallbacks(_ client: OpaquePointer, _ realtime: UnsafeMutablePointer<JACKRealtimeState>) {
        let argument = UnsafeMutableRawPointer(realtime)
        jack_set_process_callback(client, jackProcessCallback, argument)
        jack_set_xrun_callback(client, jackXrunCallback, argument)
        jack_set_buffer_size_callback(client, jackBufferSizeCallback, argument)
        jack_set_sample_rate_callback(client, jackSampleRateCallback, argument)
        jack_set_freewheel_callback(client, jackFreewheelCallback, argument)
        jack_on_info_shutdown(client, jackShutdownCallback, argument)
        jack_set_latency_callback(client, jackLatencyCallback, argument)
        jack_set_port_registration_callback(client, jackPortRegistrationCallback, argument)
    }

    deinit {
        detach()
        realtime.pointee.deallocate()
        realtime.deinitialize(count: 1)
        realtime.deallocate()
    }

    static func describeOpenFailure(status raw: jack_status_t, server: String?) -> String {
        let status = JACKStatus(raw)
        let serverText = server.map { "'\($0)'" } ?? "the default JACK server"
        if !status.isDisjoint(with: [.serverFailed, .serverError]) {
            // libjack says the same when a running server refused the client: tell them apart by
            // the server's socket (jackd2's, in /dev/shm), which a running server accepts.
            if socketAccepts("/dev/shm/jack_\(server ?? "default")_\(getuid())_0") {
                return "\(serverText) is running but did not accept the client; a client of the same name opening at the same moment on another JACK server of this machine makes that happen (jackd2 names a client's socket after the client alone): use a client name of its own, or try again"
            }
            return "cannot connect to \(serverText): no server is running; start one (jackd -d alsa, or jackd -d dummy on a machine without a sound card) or let lockstep start one"
        }
        if status.contains(.versionError) {
            return "the JACK server \(serverText) speaks another protocol version than this libjack; use matching jackd and libjack"
        }
        if status.contains(.nameNotUnique) {
            return "the client name is taken on \(serverText); choose another client name"
        }
        return "cannot open a JACK client on \(serverText) (status \(status)); check that the server runs and accepts clients"
    }

    /// Whether a Unix socket at `path` accepts a connection (one left by a server that was killed
    /// refuses it). The connection is closed at once.
    static func socketAccepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    // MARK: - AudioDevice

    /// The server's sample rate.
    public var sampleRate: Double { Double(realtime.pointee.sampleRate.load(ordering: .acquiring)) }
    /// The server's current period (frames per process cycle).
    public var periodFrames: Int { realtime.pointee.bufferSize.load(ordering: .acquiring) }
    /// Always false: JACK renders from its own realtime thread.
    public var isOffline: Bool { false }
    /// The engine's callback thread, woken by the process callback after every cycle.
    public var callbackDelivery: CallbackDelivery { .callbackThread }
    /// Whether the client is active and the server is there.
    public var isRunning: Bool {
        control.withLock { $0.active } && !realtime.pointee.isShutDown.load(ordering: .acquiring)
    }
    /// Whether the server went away.
    public var serverWentAway: Bool { realtime.pointee.isShutDown.load(ordering: .acquiring) }

    /// How long the JACK process callback took, cycle by cycle, since the device opened.
    public struct CallbackTimes: Sendable, Hashable {
        /// Callbacks measured.
        public var cycles: Int
        /// The median callback, in seconds (to the 25 µs step it is counted in).
        public var median: Double
        /// The 99th percentile, in seconds (to 25 µs).
        public var p99: Double
        /// The longest callback, in seconds (to the microsecond).
        public var longest: Double
        /// Callbacks that took longer than their period (each one an xrun of this client's own
        /// making, or a stall of the machine while it ran).
        public var overPeriod: Int
    }

    /// The process callback's durations so far: how much of each period the engine's render
    /// takes, and how far its slowest cycles come from the deadline. Counted on the process
    /// thread (two clock reads and a counter a cycle); read from any thread.
    public var callbackTimes: CallbackTimes {
        let state = realtime
        let buckets = JACKRealtimeState.callbackBuckets, width = JACKRealtimeState.callbackBucketMicroseconds
        var counts = [Int](repeating: 0, count: buckets)
        for i in 0..<buckets { counts[i] = Int(state.pointee.callbackHistogram[i].load(ordering: .relaxed)) }
        let total = counts.reduce(0, +)
        let longest = state.pointee.callbackLongest.load(ordering: .relaxed)
        func percentile(_ p: Double) -> Double {
            guard total > 0 else { return 0 }
            let rank = Int((Double(total) * p).rounded(.up))
            var seen = 0
            for (i, count) in counts.enumerated() {
                seen += count
                if seen >= rank { return Double(min((i + 1) * width, max(longest, i * width))) / 1e6 }
            }
            return Double(longest) / 1e6
        }
        return CallbackTimes(cycles: total, median: percentile(0.5), p99: percentile(0.99), longest: Double(longest) / 1e6,
                             overPeriod: state.pointee.callbackOverPeriod.load(ordering: .relaxed))
    }

    /// Called by the engine.
    public func attach(_ renderer: DeviceRenderer) throws(AudioQueueError) {
        let already = control.withLock { state -> Bool in
            defer { state.attached = true }
            return state.attached
        }
        if already { throw AudioQueueError(.invalidDevice, "JACK device '\(name)' already belongs to an engine") }
        realtime.pointee.renderer = renderer
        startRenderHelper(renderer)
    }

    /// Whether the engine of this device has a helper thread sharing its render cycles (an engine
    /// of more than 256 queues, a server running realtime, a second core): see
    /// ``DeviceRenderer/runRenderHelper()``.
    public var hasRenderHelper: Bool { control.withLock { $0.renderHelper != nil } }

    /// Starts the engine's render helper: a thread JACK creates at the client's realtime
    /// priority (`jack_client_create_thread`), when the options allow it
    /// (``Options/usesRenderHelper``), the engine can share its cycles, the server
    /// runs realtime and the machine has a second core online. Without realtime scheduling there
    /// is no helper: the process thread would spin on a thread ordinary ones may preempt.
    private func startRenderHelper(_ renderer: DeviceRenderer) {
        guard options.usesRenderHelper, renderer.canShareRendering, sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2 else { return }
        let context = UnsafeMutablePointer<DeviceRenderer>.allocate(capacity: 1)
        context.initialize(to: renderer)
        let started = withClient { client -> jack_native_thread_t? in
            guard jack_is_realtime(client) == 1 else { return nil }
            let priority = jack_client_real_time_priority(client)
            guard priority > 0 else { return nil }
            var thread = jack_native_thread_t()
            guard jack_client_create_thread(client, &thread, priority, 1, Self.renderHelperMain, context) == 0 else { return nil }
            return thread
        } ?? nil
        guard let started else {
            context.deinitialize(count: 1)
            context.deallocate()
            return
        }
        control.withLock { $0.renderHelper = (started, context) }
    }

    /// Ends the render helper and joins its thread (after the process callback has stopped).
    private func stopRenderHelper() {
        guard let helper = control.withLock({ state -> (thread: jack_native_thread_t, renderer: UnsafeMutablePointer<DeviceRenderer>)? in
            defer { state.renderHelper = nil }
            return state.renderHelper
        }) else { return }
        helper.renderer.pointee.stopRenderHelper()
        pthread_join(helper.thread, nil)
        helper.renderer.deinitialize(count: 1)
        helper.renderer.deallocate()
    }

    /// The render helper thread's body (a C function: JACK starts it).
    private static let renderHelperMain: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
        context?.assumingMemoryBound(to: DeviceRenderer.self).pointee.runRenderHelper()
        return nil
    }

    /// Activates the client (JACK starts calling the process callback), connects the master
    /// outputs to the physical playback ports if the options say so, and starts the monitor.
    public func start() throws(AudioQueueError) {
        let error: AudioQueueError? = control.withLock { state in
            if state.closed { return AudioQueueError(.invalidDevice, "JACK client '\(name)' is closed") }
            if state.active { return nil }
            if realtime.pointee.isShutDown.load(ordering: .acquiring) {
                return AudioQueueError(.cannotStart, "the JACK server went away; restart it and create a new device")
            }
            // A client that ran before keeps its mapping: the time it was inactive passed.
            if realtime.pointee.started { realtime.pointee.resync.store(true, ordering: .releasing) }
            guard withClient({ jack_activate($0) }) == 0 else {
                return AudioQueueError(.cannotStart, "cannot activate JACK client '\(name)'; check the server")
            }
            state.active = true
            return nil
        }
        if let error { throw error }
        updateLatencies()
        startMonitor()
        // Wait for the first process cycle, so the clock (and every start time computed from it)
        // comes from JACK's cycles, not from an estimate made before the graph ran.
        let deadline = Date().addingTimeInterval(2)
        while realtime.pointee.cycleStart.load(ordering: .acquiring) < 0 && Date() < deadline
                && !realtime.pointee.isShutDown.load(ordering: .acquiring) {
            usleep(1000)
        }
        if options.connectToPhysicalOutputs { connectToPhysicalOutputs() }
        updateLatencies()
    }

    /// Deactivates the client (the process callback stops). Idempotent.
    public func stop() {
        control.withLock { state in
            guard state.active, !state.closed else { return }
            if !realtime.pointee.isShutDown.load(ordering: .acquiring) { _ = withClient { jack_deactivate($0) } }
            state.active = false
        }
    }

    /// Deactivates and closes the client; the device cannot be used afterwards.
    public func detach() {
        monitorStop.store(true, ordering: .sequentiallyConsistent)
        realtime.pointee.monitorWake.signal()
        if Thread.current.name != "lockstep.jack-monitor" {
            while monitorPolling.load(ordering: .sequentiallyConsistent) { usleep(200) }
        }
        stop()
        stopRenderHelper()
        control.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            realtime.pointee.renderer = nil
            live.withLock { live in
                if let client = live.client {
                    if realtime.pointee.isShutDown.load(ordering: .acquiring) { Self.closeDeadClient(client) } else { jack_client_close(client) }
                }
                live.client = nil
            }
        }
    }

    /// Closes a client whose server has gone away, waiting at most 2 s. libjack's close of such a
    /// client can block for ever on a lock its own (dead) client thread holds; the close then
    /// goes on on a thread of its own and the client's memory is abandoned rather than the
    /// program hanging.
    static func closeDeadClient(_ client: OpaquePointer) {
        final class Closing: @unchecked Sendable {
            let client: OpaquePointer
            let done = DispatchSemaphore(value: 0)
            init(_ client: OpaquePointer) { self.client = client }
        }
        let closing = Closing(client)
        let thread = Thread {
            jack_client_close(closing.client)
            closing.done.signal()
        }
        thread.name = "lockstep.jack-close"
        thread.start()
        _ = closing.done.wait(timeout: .now() + 2)
    }

    /// The device time now: JACK's current frame time mapped to the device timeline, and
    /// `jack_get_time`.
    public func currentTime() -> DeviceTimeStamp {
        let rt = realtime
        if rt.pointee.isShutDown.load(ordering: .acquiring) {
            let last = max(0, rt.pointee.cycleStart.load(ordering: .acquiring))
            return DeviceTimeStamp(sampleTime: last, hostTime: 0)
        }
        let now = jack_get_time()
        guard let frame32 = withClient({ jack_frame_time($0) }) else {
            return DeviceTimeStamp(sampleTime: max(0, rt.pointee.cycleStart.load(ordering: .acquiring)), hostTime: now)
        }
        guard let cycle = rt.pointee.clock() else {
            return DeviceTimeStamp(sampleTime: Int64(frame32), hostTime: now)
        }
        let delta = Int64(Int32(bitPattern: frame32 &- UInt32(truncatingIfNeeded: cycle.jackFrame)))
        // Trust JACK's estimate only near the last cycle (some servers answer oddly between
        // cycles); otherwise extrapolate from the last cycle with the host clock.
        let period = Int64(max(1, cycle.period))
        if delta < 0 || delta > 8 * period + Int64(sampleRate / 10) {
            let elapsed = now > cycle.hostTime ? Double(now - cycle.hostTime) * sampleRate / 1_000_000 : 0
            return DeviceTimeStamp(sampleTime: cycle.sampleTime + min(Int64(elapsed), 8 * period), hostTime: now)
        }
        return DeviceTimeStamp(sampleTime: cycle.sampleTime + delta, hostTime: now)
    }

    /// The first cycle whose callback has not begun and will not begin for at least half a
    /// period: a change posted now reaches it in time, so a start there lands on its exact frame.
    ///
    /// The cycle under way (or last rendered) began at the device's latest cycle start `F`; the
    /// next callback begins at `F + period`. While JACK's clock says that is more than half a
    /// period away, the earliest start is `F + period` (0.5 to 1 period from now); later in the
    /// period it is `F + 2 × period` (1 to 1.5 periods). Callers that compute before they post
    /// (``Lockstep/Engine``'s group starts, the session player's edits) check afterwards that no
    /// cycle began meanwhile, and compute again if one did.
    public func nearestStartTime(atOrAfter sampleTime: Int64) -> Int64 {
        guard let cycle = realtime.pointee.clock() else {
            return max(sampleTime, currentTime().sampleTime + 2 * Int64(max(1, periodFrames)))
        }
        let period = Int64(max(1, cycle.period))
        let next = cycle.sampleTime + period
        let now = currentTime().sampleTime
        return max(sampleTime, now < next - period / 2 ? next : next + period)
    }

    /// JACK's estimate of when `sampleTime` is (or was) at the start of its cycle, through the
    /// current mapping of device time to JACK frame time.
    public func hostTime(forSampleTime sampleTime: Int64) -> UInt64 {
        let frame = realtime.pointee.jackFrame(forDeviceTime: sampleTime)
        return withClient { jack_frames_to_time($0, frame) } ?? 0
    }

    /// JACK's estimate of the device sample time at `hostTime`.
    public func sampleTime(forHostTime hostTime: UInt64) -> Int64 {
        guard let frame = withClient({ jack_time_to_frames($0, hostTime) }) else { return currentTime().sampleTime }
        return realtime.pointee.deviceTime(forJACKFrame: frame)
    }

    /// The JACK frame time (`jack_frame_time`'s clock, 32 bits as JACK's API takes it) of a device
    /// sample time, by the current mapping: for times exchanged with other JACK clients (MIDI
    /// event times, transport, `jack_capture` recordings).
    ///
    /// The device timeline counts the frames really rendered; JACK's frame clock jumps against it
    /// (jackd2 moves it by new − old period at every period change, reported as a
    /// ``Lockstep/Discontinuity/Kind/clockJump``), so the mapping is exact for times near the
    /// current cycle and shifts by each jump's length.
    public func jackFrameTime(forSampleTime sampleTime: Int64) -> UInt32 {
        realtime.pointee.jackFrame(forDeviceTime: sampleTime)
    }

    /// The device sample time of a JACK frame time near the current cycle (the inverse of
    /// ``jackFrameTime(forSampleTime:)``).
    public func sampleTime(forJACKFrameTime frame: UInt32) -> Int64 {
        realtime.pointee.deviceTime(forJACKFrame: frame)
    }

    /// JACK's frame time minus the device sample time: 0 until JACK's clock first jumps against
    /// the frames rendered, then the sum of the jumps.
    public var jackFrameOffset: Int64 {
        guard let cycle = realtime.pointee.clock() else { return 0 }
        return cycle.jackFrame - cycle.sampleTime
    }

    // MARK: - Transport

    /// JACK transport as seen at the start of a process cycle.
    public struct TransportSnapshot: Sendable, Hashable {
        /// Whether transport is rolling (or starting), as opposed to stopped.
        public var isRolling: Bool
        /// Whether it is starting (`JackTransportStarting`): asked to roll, waiting for slow-sync
        /// clients; its frame does not move until it rolls.
        public var isStarting: Bool = false
        /// The transport frame at the start of the cycle.
        public var frame: Int64
        /// The device sample time of the start of that cycle.
        public var sampleTime: Int64
        /// The period of that cycle.
        public var period: Int
    }

    /// The transport state and position at the start of the latest process cycle, with that
    /// cycle's device sample time, read consistently; nil before the first cycle.
    public func transportSnapshot() -> TransportSnapshot? {
        let rt = realtime
        let (start, state, frame, period) = rt.pointee.clockLock.read {
            (rt.pointee.cycleStart.load(ordering: .relaxed), rt.pointee.transportState.load(ordering: .relaxed),
             rt.pointee.transportFrame.load(ordering: .relaxed), rt.pointee.periodFrames.load(ordering: .relaxed))
        }
        if start < 0 { return nil }
        let rolling = state == JackTransportRolling.rawValue || state == JackTransportStarting.rawValue
        return TransportSnapshot(isRolling: rolling, isStarting: state == JackTransportStarting.rawValue, frame: Int64(frame),
                                 sampleTime: start, period: period)
    }

    /// Whether the engine renders only while JACK transport rolls: while it is stopped the outputs
    /// are silent and no queue time passes (every queue holds where it is, as if paused). Off by
    /// default. `lockstep play --transport` turns it on.
    public var rendersOnlyWhileTransportRolls: Bool {
        get { realtime.pointee.transportGate.load(ordering: .relaxed) }
        set { realtime.pointee.transportGate.store(newValue, ordering: .relaxed) }
    }

    /// Starts JACK transport rolling (`jack_transport_start`).
    public func startTransport() { _ = withClient { jack_transport_start($0) } }
    /// Stops JACK transport (`jack_transport_stop`).
    public func stopTransport() { _ = withClient { jack_transport_stop($0) } }
    /// Moves JACK transport to `frame` (`jack_transport_locate`).
    public func locateTransport(to frame: Int64) {
        _ = withClient { jack_transport_locate($0, jack_nframes_t(clamping: max(0, frame))) }
    }

    /// Gives the calling thread realtime scheduling (JACK's `jack_acquire_real_time_scheduling`)
    /// at `below` steps under the client's own realtime priority: for a thread that must act
    /// within a period of being woken by the process thread, such as the reader of
    /// ``midiInput`` whose commands land two periods after their event. It still may allocate
    /// and lock; it only runs before ordinary threads.
    /// - Returns: whether the priority was granted (not on a server without realtime scheduling,
    ///   or without the rights to it: the thread then runs on as before).
    @discardableResult
    public func promoteCurrentThread(below: Int32 = 10) -> Bool {
        withClient { client -> Bool in
            let priority = jack_client_real_time_priority(client)
            guard priority > 0 else { return false }
            return jack_acquire_real_time_scheduling(pthread_self(), max(1, priority - below)) == 0
        } ?? false
    }

    // MARK: - Per-queue ports

    /// Registers ports `<name>_1…<name>_N` and has the process callback refresh their buffers.
    public func makeDirectOutputs(name queueName: String, channelCount: Int) throws(AudioQueueError) -> DirectOutputs {
        let base = Self.portSafe(queueName)
        let registered: Result<[PortHandle], AudioQueueError> = withClient { client in
            var ports: [PortHandle] = []
            for c in 0..<channelCount {
                let short = "\(base)_\(c + 1)"
                guard let port = jack_port_register(client, short, JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput.rawValue), 0) else {
                    for p in ports { jack_port_unregister(client, p.pointer) }
                    return .failure(AudioQueueError(.invalidDevice, "cannot register JACK port '\(short)' (is the name taken or too long?); rename the queue"))
                }
                ports.append(PortHandle(pointer: port))
            }
            return .success(ports)
        } ?? .failure(AudioQueueError(.invalidDevice, "the JACK server is away; per-queue ports can be made once it is back"))
        let handles = try registered.get()
        let ports = handles.map(\.pointer)
        let names = ports.map { String(cString: jack_port_name($0)) }
        let outputs = DirectOutputs(channelCount: channelCount, names: names)
        let portArray = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: max(1, channelCount))
        for (c, port) in ports.enumerated() { portArray[c] = port }
        let record = UnsafeMutablePointer<JACKDirectRecord>.allocate(capacity: 1)
        var delays: UnsafeMutablePointer<JACKDelayBank>?
        if options.compensatesPlaybackLatency {
            let bank = UnsafeMutablePointer<JACKDelayBank>.allocate(capacity: 1)
            bank.initialize(to: JACKDelayBank(count: channelCount))
            delays = bank
        }
        record.initialize(to: JACKDirectRecord(ports: portArray, buffers: outputs.buffers, channelCount: channelCount,
                                               delays: delays))
        let error: AudioQueueError? = control.withLock { state in
            let used = Set(state.directRecords.values.map(\.index))
            guard let index = (0..<JACKRealtimeState.maximumDirectSets).first(where: { !used.contains($0) }) else {
                return AudioQueueError(.invalidDevice, "too many queues with their own ports (\(JACKRealtimeState.maximumDirectSets))")
            }
            state.directRecords[ObjectIdentifier(outputs)] = (index, record, names)
            realtime.pointee.directSets[index].store(UInt(bitPattern: record), ordering: .releasing)
            return nil
        }
        if let error {
            _ = withClient { client in for p in handles { jack_port_unregister(client, p.pointer) } }
            portArray.deallocate()
            Self.freeDelays(record.pointee.delays)
            record.deallocate()
            throw error
        }
        realtime.pointee.latencyDirty.store(true, ordering: .releasing)
        realtime.pointee.monitorWake.signal()
        return outputs
    }

    /// Unregisters a queue's ports once the process callback has let go of them.
    public func releaseDirectOutputs(_ outputs: DirectOutputs) {
        guard let entry = control.withLock({ $0.directRecords.removeValue(forKey: ObjectIdentifier(outputs)) }) else { return }
        realtime.pointee.directSets[entry.index].store(0, ordering: .releasing)
        waitForCycle()
        if !serverWentAway {
            let ports = (0..<entry.record.pointee.channelCount).compactMap { entry.record.pointee.ports[$0].map(PortHandle.init) }
            _ = withClient { client in for port in ports { jack_port_unregister(client, port.pointer) } }
        }
        entry.record.pointee.ports.deallocate()
        Self.freeDelays(entry.record.pointee.delays)
        entry.record.deallocate()
        realtime.pointee.latencyDirty.store(true, ordering: .releasing)
        realtime.pointee.monitorWake.signal()
    }

    private static func freeDelays(_ bank: UnsafeMutablePointer<JACKDelayBank>?) {
        guard let bank else { return }
        bank.pointee.deallocate()
        bank.deinitialize(count: 1)
        bank.deallocate()
    }

    /// Waits until the process callback has finished any cycle that may have started before now.
    private func waitForCycle() {
        guard isRunning else {
            while realtime.pointee.inRender.load(ordering: .sequentiallyConsistent) { usleep(200) }
            return
        }
        let start = realtime.pointee.cycles.load(ordering: .acquiring)
        let deadline = Date().addingTimeInterval(1)
        while realtime.pointee.cycles.load(ordering: .acquiring) - start < 2 && Date() < deadline && isRunning {
            usleep(500)
        }
    }

    static func portSafe(_ name: String) -> String {
        let cleaned = name.map { $0 == ":" || $0 == "/" ? "-" : $0 }
        return String(String(cleaned).prefix(200))
    }

    // MARK: - Connections

    /// Connects the master outputs, in order, to the physical playback ports (`system:playback_1`, …).
    /// - Returns: the connections made.
    @discardableResult
    public func connectToPhysicalOutputs() -> [(String, String)] {
        let outputs = outputPortNames
        let made: [ConnectionPair] = withClient { client in
            let physical = JACKGraph.ports(client: client, pattern: nil, flags: UInt(JackPortIsPhysical.rawValue | JackPortIsInput.rawValue))
            return zip(outputs, physical).filter { jack_connect(client, $0.0, $0.1) == 0 }.map { ConnectionPair(source: $0.0, destination: $0.1) }
        } ?? []
        return made.map { ($0.source, $0.destination) }
    }

    /// Connects the input ports, in order, to the physical capture ports (`system:capture_1`, …).
    @discardableResult
    public func connectToPhysicalInputs() -> [(String, String)] {
        let inputs = inputPortNames
        let made: [ConnectionPair] = withClient { client in
            let physical = JACKGraph.ports(client: client, pattern: nil, flags: UInt(JackPortIsPhysical.rawValue | JackPortIsOutput.rawValue))
            return zip(physical, inputs).filter { jack_connect(client, $0.0, $0.1) == 0 }.map { ConnectionPair(source: $0.0, destination: $0.1) }
        } ?? []
        return made.map { ($0.source, $0.destination) }
    }

    /// A port's latency from JACK's latency API, in frames.
    public struct PortLatency: Sendable, Hashable {
        /// How long ago the audio arriving at the port entered the graph (from a capture device).
        public var capture: ClosedRange<Int>
        /// How long until audio leaving the port reaches a playback device.
        public var playback: ClosedRange<Int>
    }

    /// The capture and playback latency of `portName` (`jack_port_get_latency_range`), or nil for
    /// an unknown port. To align a recording made while playing, shift it by the playback latency
    /// of what you played plus the capture latency of what you recorded.
    public func latency(ofPort portName: String) -> PortLatency? {
        withClient { client -> PortLatency? in
            guard let port = jack_port_by_name(client, portName) else { return nil }
            var capture = jack_latency_range_t()
            var playback = jack_latency_range_t()
            jack_port_get_latency_range(port, JackCaptureLatency, &capture)
            jack_port_get_latency_range(port, JackPlaybackLatency, &playback)
            return PortLatency(capture: Int(capture.min)...Int(max(capture.min, capture.max)),
                               playback: Int(playback.min)...Int(max(playback.min, playback.max)))
        } ?? nil
    }

    /// The compensated capture latency in frames: how long before the device time at which an
    /// input frame is captured it was heard at its source (the largest capture latency of the
    /// ports connected to the inputs; the others are delayed to match). 0 without inputs, with
    /// nothing connected, or with ``Options/compensatesCaptureLatency`` off.
    public var captureLatency: Int { realtime.pointee.captureLatency.load(ordering: .acquiring) }

    /// The playback latency in frames from the device time at which a frame is rendered to the
    /// moment it is heard at the far end of the connected outputs: the largest playback latency
    /// of the connected outputs. With ``Options/compensatesPlaybackLatency`` on, every output
    /// reaches its far end after exactly this long; with it off, outputs of smaller latency are
    /// heard earlier.
    public var playbackLatency: Int { realtime.pointee.playbackLatency.load(ordering: .acquiring) }

    /// The delay in frames applied to each master output (`out_1…`) for playback compensation.
    public var outputDelays: [Int] {
        guard let bank = realtime.pointee.outputDelays else { return Array(repeating: 0, count: channelCount) }
        return (0..<channelCount).map { bank.pointee.delay(channel: $0) }
    }

    /// One output port of the device as the latest latency measurement saw it (LockstepSchema's
    /// record, as `--json` writes it).
    public typealias OutputCompensation = LockstepSchema.OutputCompensation

    /// Every output port (master, then per-queue) with its connections, playback latency and the
    /// compensation delay it applies, as measured when JACK last announced a latency change (or
    /// ports were connected through the device). Any thread.
    public var outputCompensation: [OutputCompensation] { control.withLock { $0.compensation } }

    /// The spread of the connected outputs' playback latencies in frames (largest − smallest): how
    /// far apart their far ends hear one rendered frame without compensation. 0 with one port
    /// connected or all alike.
    public var playbackLatencySpread: Int { realtime.pointee.playbackLatencySpread.load(ordering: .acquiring) }

    /// The delay in frames applied to each input (`in_1…`) for capture alignment.
    public var inputDelays: [Int] {
        guard let bank = realtime.pointee.inputDelays else { return Array(repeating: 0, count: inputChannelCount) }
        return (0..<inputChannelCount).map { bank.pointee.delay(channel: $0) }
    }

    /// The largest latency range (in `mode`) of the ports connected to `port`, or nil when
    /// nothing is connected.
    private func connectedLatency(of port: OpaquePointer, mode: jack_latency_callback_mode_t, client: OpaquePointer) -> Int? {
        guard let connections = jack_port_get_all_connections(client, port) else { return nil }
        defer { jack_free(UnsafeMutableRawPointer(connections)) }
        var largest: Int?
        var i = 0
        while let name = connections[i] {
            if let other = jack_port_by_name(client, name) {
                var range = jack_latency_range_t()
                jack_port_get_latency_range(other, mode, &range)
                largest = max(largest ?? 0, Int(max(range.min, range.max)))
            }
            i += 1
        }
        return largest
    }

    /// Re-reads the latencies of everything connected to the device's ports and sets the
    /// compensation delays (monitor thread, `start()`, after port changes).
    /// One output port of the device (a master output or a per-queue output) with its delay line.
    private typealias PlaybackOutput = (port: OpaquePointer, bank: UnsafeMutablePointer<JACKDelayBank>?, channel: Int, name: String)

    /// Every output port of the device: master outputs, then per-queue outputs in order.
    private func playbackOutputs() -> [PlaybackOutput] {
        var outputs: [PlaybackOutput] = []
        for c in 0..<channelCount {
            if let port = realtime.pointee.ports[c] { outputs.append((port, realtime.pointee.outputDelays, c, outputPortNames[c])) }
        }
        let records = control.withLock { $0.directRecords.values.sorted { $0.index < $1.index }.map { ($0.record, $0.names) } }
        for (record, names) in records {
            for c in 0..<record.pointee.channelCount {
                if let port = record.pointee.ports[c] { outputs.append((port, record.pointee.delays, c, c < names.count ? names[c] : "")) }
            }
        }
        return outputs
    }

    /// Sets, before output connections are made again, the delays the outputs will need once they
    /// are: each output's latency as it is measured now, or, where one of `destinations` (full
    /// port names, by our output's short name) is about to be connected, as large as that port's
    /// playback latency. The first frame that reaches a returning destination is then on its
    /// sample (connected first, the output would go out for a cycle or more with the delay it had
    /// while it had nowhere to go). Published and reported by the measurement after the
    /// connections (``updateLatencies()``), which finds the same values. Monitor thread, with
    /// the client.
    private func presetDelays(for destinations: [String: [String]], outputs: [PlaybackOutput], client: OpaquePointer) {
        let predicted = outputs.map { output -> Int? in
            let short = output.name.split(separator: ":", maxSplits: 1).last.map(String.init) ?? output.name
            var latency = connectedLatency(of: output.port, mode: JackPlaybackLatency, client: client)
            for name in destinations[short] ?? [] {
                guard let other = jack_port_by_name(client, name) else { continue }
                var range = jack_latency_range_t()
                jack_port_get_latency_range(other, JackPlaybackLatency, &range)
                latency = max(latency ?? 0, Int(max(range.min, range.max)))
            }
            return latency
        }
        let alignment = JACKGraph.alignmentDelays(predicted)
        for (i, output) in outputs.enumerated() {
            output.bank?.pointee.setDelay(alignment.delays[i], channel: output.channel)
        }
    }

    func updateLatencies() {
        let closed = control.withLock { $0.closed }
        guard !closed, !serverWentAway else { return }
        realtime.pointee.latencyDirty.store(false, ordering: .releasing)
        // Playback: master outputs and per-queue outputs.
        let outputs = playbackOutputs()
        let handles = outputs.map { PortHandle(pointer: $0.port) }
        let inputs = (0..<inputChannelCount).map { realtime.pointee.inputPorts[$0].map(PortHandle.init) }
        let midi = realtime.pointee.midiPort.map { [(PortHandle(pointer: $0), false)] } ?? []
        let all = handles.map { ($0, true) } + inputs.compactMap { $0.map { ($0, false) } } + midi
        guard let measured = withClient({ client -> Measured in
            Measured(playback: handles.map { self.connectedLatency(of: $0.pointer, mode: JackPlaybackLatency, client: client) },
                     capture: inputs.map { $0.flatMap { self.connectedLatency(of: $0.pointer, mode: JackCaptureLatency, client: client) } },
                     connections: Self.connections(of: all, client: client))
        }) else { return }
        let playback = measured.playback
        let alignment = JACKGraph.alignmentDelays(playback)
        let playbackMax = alignment.latency
        var playbackDelaysChanged = false
        var compensation: [OutputCompensation] = []
        // A delay counts as changed against what was last published (a delay preset before a
        // connection was made again is reported here, with the measurement that confirms it).
        let published = Dictionary(control.withLock { $0.compensation }.map { ($0.port, $0.delay) }, uniquingKeysWith: { a, _ in a })
        for (i, (output, latency)) in zip(outputs, playback).enumerated() {
            if output.bank?.pointee.setDelay(alignment.delays[i], channel: output.channel) == true
                || (output.bank != nil && published[output.name] != nil && published[output.name] != alignment.delays[i]) {
                playbackDelaysChanged = true
            }
            let short = output.name.split(separator: ":", maxSplits: 1).last.map(String.init) ?? output.name
            compensation.append(OutputCompensation(
                port: output.name, connections: measured.connections.filter { $0.oursIsOutput && $0.ours == short }.map(\.other),
                latency: latency, delay: output.bank?.pointee.delay(channel: output.channel) ?? 0))
        }
        control.withLock {
            $0.connections = measured.connections
            $0.compensation = compensation
        }
        realtime.pointee.playbackLatencySpread.store(alignment.delays.max() ?? 0, ordering: .releasing)
        realtime.pointee.playbackLatency.store(playbackMax, ordering: .releasing)
        // Capture: the inputs.
        let capture = measured.capture
        var captureMax = 0
        var captureDelaysChanged = false
        if let bank = realtime.pointee.inputDelays {
            captureMax = capture.compactMap { $0 }.max() ?? 0
            for (c, latency) in capture.enumerated() where bank.pointee.setDelay(latency.map { captureMax - $0 } ?? 0, channel: c) {
                captureDelaysChanged = true
            }
        }
        realtime.pointee.captureLatency.store(captureMax, ordering: .releasing)
        recordHistory(compensation: compensation, connections: measured.connections,
                      latencies: (playbackMax, captureMax), playbackDelaysChanged: playbackDelaysChanged,
                      captureDelaysChanged: captureDelaysChanged)
    }

    /// The connections of `ports` (each with whether it is an output), by the port's short name.
    private static func connections(of ports: [(PortHandle, Bool)], client: OpaquePointer) -> [Connection] {
        var result: [Connection] = []
        for (port, isOutput) in ports {
            guard let list = jack_port_get_all_connections(client, port.pointer) else { continue }
            defer { jack_free(UnsafeMutableRawPointer(list)) }
            let short = String(cString: jack_port_short_name(port.pointer))
            var i = 0
            while let other = list[i] {
                result.append(Connection(ours: short, other: String(cString: other), oursIsOutput: isOutput))
                i += 1
            }
        }
        return result
    }

    /// Connects two ports by full name (`client:port`).
    /// - Throws: ``Lockstep/AudioQueueError/Code/invalidParameter`` naming the ports when JACK refuses.
    public func connect(_ source: String, to destination: String) throws(AudioQueueError) {
        let result = withClient { jack_connect($0, source, destination) } ?? -1
        if result != 0 && result != EEXIST {
            throw AudioQueueError(.invalidParameter, "cannot connect '\(source)' to '\(destination)'; check both port names with `lockstep ports`")
        }
        if let connection = ownConnection(source, destination) {
            control.withLock { if !$0.wanted.contains(connection) { $0.wanted.append(connection) } }
        }
        updateLatencies()
    }

    /// The connection between `source` and `destination` as seen from the device's side, when
    /// one of them is a port of this client.
    private func ownConnection(_ source: String, _ destination: String) -> Connection? {
        let prefix = name + ":"
        if source.hasPrefix(prefix) { return Connection(ours: String(source.dropFirst(prefix.count)), other: destination, oursIsOutput: true) }
        if destination.hasPrefix(prefix) { return Connection(ours: String(destination.dropFirst(prefix.count)), other: source, oursIsOutput: false) }
        return nil
    }

    /// Disconnects two ports by full name.
    public func disconnect(_ source: String, from destination: String) throws(AudioQueueError) {
        if let connection = ownConnection(source, destination) {
            control.withLock { $0.wanted.removeAll { $0 == connection } }
        }
        if (withClient { jack_disconnect($0, source, destination) } ?? -1) != 0 {
            throw AudioQueueError(.invalidParameter, "cannot disconnect '\(source)' from '\(destination)'; are they connected?")
        }
        updateLatencies()
    }

    /// The ports on the server and their connections.
    public func graph() -> [JACKGraph.Port] { withClient { JACKGraph.describe(client: $0) } ?? [] }

    // MARK: - Server restarts

    /// Whether the server went away and the device waits for it to come back
    /// (``Options/survivesServerRestart``).
    public var isWaitingForServer: Bool { control.withLock { $0.awaySince != nil } }

    /// The server is away: the first time, close the dead client and report `serverLost`; then,
    /// every 250 ms, try to open the client again on a server of the same name. Monitor thread.
    private func waitForServer(_ renderer: DeviceRenderer) {
        let rt = realtime
        let now = Date()
        let first = control.withLock { state -> Bool in
            guard state.awaySince == nil else { return false }
            state.awaySince = now
            state.nextAttempt = now.addingTimeInterval(0.25)
            return true
        }
        if first {
            while rt.pointee.inRender.load(ordering: .sequentiallyConsistent) { usleep(100) }
            live.withLock { live in
                if let client = live.client { Self.closeDeadClient(client) }
                live.client = nil
            }
            // The process thread is gone: its clock fields are ours to read.
            let last = rt.pointee.previousDeviceTime + Int64(rt.pointee.previousFrames)
            renderer.reportDiscontinuityFromNotificationThread(.serverLost, sampleTime: last, detail: 0)
            return
        }
        let due = control.withLock { state -> Bool in
            guard now >= state.nextAttempt else { return false }
            state.nextAttempt = now.addingTimeInterval(0.25)
            return true
        }
        guard due else { return }
        reopen(awaySince: control.withLock { $0.awaySince } ?? now)
    }

    /// Opens the client again under the same name, registers the same ports, resets the realtime
    /// state for it and activates it; on any failure closes it again (the next attempt retries).
    private func reopen(awaySince: Date) {
        let rt = realtime
        var status = jack_status_t(rawValue: 0)
        JACKGraph.quietLibjack()
        guard let client = lockstep_jack_client_open(name, resolvedServerName, 1, &status) else { return }
        guard String(cString: jack_get_client_name(client)) == name else {
            jack_client_close(client)          // the name is taken: our port names would change
            return
        }
        func register(_ short: String, output: Bool) -> OpaquePointer? {
            jack_port_register(client, short, JACK_DEFAULT_AUDIO_TYPE,
                               UInt((output ? JackPortIsOutput : JackPortIsInput).rawValue), 0)
        }
        var master: [OpaquePointer] = []
        var inputs: [OpaquePointer] = []
        for c in 0..<channelCount {
            guard let port = register("out_\(c + 1)", output: true) else { jack_client_close(client); return }
            master.append(port)
        }
        for c in 0..<inputChannelCount {
            guard let port = register("in_\(c + 1)", output: false) else { jack_client_close(client); return }
            inputs.append(port)
        }
        var midiPort: OpaquePointer?
        if let short = options.midiInputPortName {
            midiPort = jack_port_register(client, short, JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsInput.rawValue), 0)
            if midiPort == nil { jack_client_close(client); return }
        }
        let records = control.withLock { $0.directRecords.values.map { ($0.record, $0.names) } }
        var direct: [(UnsafeMutablePointer<JACKDirectRecord>, [OpaquePointer])] = []
        for (record, names) in records {
            var ports: [OpaquePointer] = []
            for full in names {
                let short = full.split(separator: ":", maxSplits: 1).last.map(String.init) ?? full
                guard let port = register(short, output: true) else { jack_client_close(client); return }
                ports.append(port)
            }
            direct.append((record, ports))
        }
        // No process callback runs now (the old client is closed, the new one inactive).
        for (c, port) in master.enumerated() { rt.pointee.ports[c] = port }
        for (c, port) in inputs.enumerated() { rt.pointee.inputPorts[c] = port }
        rt.pointee.midiPort = midiPort
        for (record, ports) in direct {
            for (c, port) in ports.enumerated() { record.pointee.ports[c] = port }
        }
        rt.pointee.client = client
        rt.pointee.lastFrame32 = 0
        rt.pointee.high = 0
        rt.pointee.shutdownReason[0] = 0
        rt.pointee.sampleRate.store(Int(jack_get_sample_rate(client)), ordering: .releasing)
        rt.pointee.bufferSize.store(Int(jack_get_buffer_size(client)), ordering: .releasing)
        rt.pointee.awayMilliseconds.store(Int(Date().timeIntervalSince(awaySince) * 1000), ordering: .releasing)
        rt.pointee.restartSync.store(true, ordering: .releasing)
        rt.pointee.isShutDown.store(false, ordering: .sequentiallyConsistent)
        Self.setCallbacks(client, rt)
        let closed = control.withLock { $0.closed }
        if closed {                            // detached meanwhile
            jack_client_close(client)
            return
        }
        live.withLock { $0.client = client }
        let active = control.withLock { $0.active }
        if active && withClient({ jack_activate($0) }) != 0 {
            rt.pointee.isShutDown.store(true, ordering: .sequentiallyConsistent)
            live.withLock { live in
                if let client = live.client { jack_client_close(client) }
                live.client = nil
            }
            return
        }
        control.withLock { state in
            state.awaySince = nil
            state.pendingConnections = state.connections
            state.restoreDeadline = Date().addingTimeInterval(10)
        }
        restoreConnections()
        rt.pointee.latencyDirty.store(true, ordering: .releasing)
        rt.pointee.monitorWake.signal()
    }

    /// Makes the connections the device's ports had before the server went away, as far as the
    /// other ports exist yet (retried by the monitor for 10 s after a restart).
    ///
    /// A port that is gone is followed to its successor (``JACKGraph/successor(of:among:)``): a
    /// netjack2 slave that rejoined as `<name>-01` is connected there, and the connection is
    /// wanted under the new name from then on.
    private func restoreConnections() {
        let (pending, deadline) = control.withLock { ($0.pendingConnections, $0.restoreDeadline) }
        guard !pending.isEmpty else { return }
        let name = self.name
        // Read before taking the client (it takes the control lock, never inside the client's).
        let outputs = playbackOutputs()
        let outcome: (left: [Connection], moved: [(from: Connection, to: String)]) = withClient { client in
            let existing = JACKGraph.ports(client: client, pattern: nil, flags: 0)
            var left: [Connection] = []
            var moved: [(from: Connection, to: String)] = []
            // The delays the outputs need once connected, set before they are.
            var returning: [String: [String]] = [:]
            for connection in pending where connection.oursIsOutput {
                if let other = JACKGraph.successor(of: connection.other, among: existing) { returning[connection.ours, default: []].append(other) }
            }
            if !returning.isEmpty { self.presetDelays(for: returning, outputs: outputs, client: client) }
            for connection in pending {
                guard let other = JACKGraph.successor(of: connection.other, among: existing) else {
                    left.append(connection)
                    continue
                }
                let ours = "\(name):\(connection.ours)"
                let result = connection.oursIsOutput ? jack_connect(client, ours, other) : jack_connect(client, other, ours)
                if result != 0 && result != EEXIST {
                    left.append(connection)
                } else if other != connection.other {
                    moved.append((connection, other))
                }
            }
            return (left, moved)
        } ?? (pending, [])
        control.withLock { state in
            state.pendingConnections = Date() < deadline ? outcome.left : []
            for (old, other) in outcome.moved {
                var new = old
                new.other = other
                state.wanted = state.wanted.map { $0 == old ? new : $0 }
                state.connections = state.connections.map { $0 == old ? new : $0 }
                let port = "\(name):\(old.ours)"
                if var history = state.history[port] {
                    for i in history.outages.indices where history.outages[i].rejoined == nil && history.outages[i].following == old.other {
                        history.outages[i].following = other
                    }
                    state.history[port] = history
                }
            }
        }
    }

    // MARK: - Monitor

    private func startMonitor() {
        guard monitor == nil else { return }
        let thread = Thread { [weak self] in
            while let self {
                // Announce the poll, then check for a stop (detach sets the stop, then waits for
                // the announcement to clear): a poll never runs after detach returned.
                self.monitorPolling.store(true, ordering: .sequentiallyConsistent)
                if self.monitorStop.load(ordering: .sequentiallyConsistent) {
                    self.monitorPolling.store(false, ordering: .sequentiallyConsistent)
                    break
                }
                self.poll()
                self.monitorPolling.store(false, ordering: .sequentiallyConsistent)
                // Woken by JACK's latency and shutdown callbacks and by detach; it also looks
                // every 250 ms, and every 20 ms while a server restart is awaited or connections
                // wait to be restored.
                let busy = self.realtime.pointee.isShutDown.load(ordering: .acquiring)
                    || !self.control.withLock { $0.pendingConnections.isEmpty }
                let wake = self.realtime.pointee.monitorWake
                _ = wake.wait(timeout: .now() + .milliseconds(busy ? 20 : 250))
            }
        }
        thread.name = "lockstep.jack-monitor"
        monitor = thread
        thread.start()
    }

    /// Handles a server shutdown, a latency change and connections to restore (everything else
    /// JACK's callbacks record is reported by the process thread, on its sample).
    func poll() {
        guard let renderer = realtime.pointee.renderer else { return }
        let rt = realtime
        if rt.pointee.portsRegistered.exchange(false, ordering: .acquiringAndReleasing) && isRunning {
            // A port appeared or went away: measure (a destination that is gone is noted), then
            // the connections the device made that are missing (their other port went away, as a
            // netjack2 slave's do when the master gives it up) are made again, to the port's
            // successor where it came back under another name.
            updateLatencies()
            control.withLock { state in
                let missing = state.wanted.filter { !state.connections.contains($0) }
                guard !missing.isEmpty else { return }
                state.pendingConnections = missing
                state.restoreDeadline = Date().addingTimeInterval(1)
            }
        }
        if rt.pointee.latencyDirty.load(ordering: .acquiring) && isRunning { updateLatencies() }
        resolveMarks()
        if !control.withLock({ $0.pendingConnections.isEmpty }) {
            restoreConnections()
            updateLatencies()
        }
        if rt.pointee.isShutDown.load(ordering: .sequentiallyConsistent) && options.survivesServerRestart
            && !control.withLock({ $0.closed }) {
            waitForServer(renderer)
            return
        }
        if rt.pointee.isShutDown.load(ordering: .sequentiallyConsistent) {
            let first = control.withLock { state -> Bool in
                defer { state.shutdownHandled = true }
                return !state.shutdownHandled
            }
            guard first else { return }
            while rt.pointee.inRender.load(ordering: .sequentiallyConsistent) { usleep(100) }
            let reason = String(cString: rt.pointee.shutdownReason)
            let period = Int64(max(1, rt.pointee.periodFrames.load(ordering: .acquiring)))
            let last = max(0, rt.pointee.cycleStart.load(ordering: .acquiring)) + period
            renderer.deviceStopped(at: last, error: AudioQueueError(.invalidDevice,
                "the JACK server went away" + (reason.isEmpty ? "" : " (\(reason))") + "; restart it and play again"))
        }
    }
}
