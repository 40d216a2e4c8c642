import CJack
import Foundation
import Lockstep
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
        /// The short names of the JACK MIDI output ports to register (`midi_out`, `mtc_out`; at
        /// most ``JACKDevice/maximumMIDIOutputs``), written through ``JACKDevice/midiOutputs``.
        public var midiOutputPortNames: [String] = []
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
    /// The MIDI output ports (``Options/midiOutputPortNames``, in that order) and the events
    /// scheduled on each.
    public let midiOutputs: [JACKMIDIOutput]
    /// The most MIDI output ports a device has.
    public static let maximumMIDIOutputs = JACKRealtimeState.maximumMIDIOutputs

    /// The MIDI output port of short name `short` (nil: the device has none of that name).
    public func midiOutput(named short: String) -> JACKMIDIOutput? {
        midiOutputs.first { $0.portName.split(separator: ":", maxSplits: 1).last.map(String.init) == short }
    }

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
    let resolvedServerName: String?
    let realtime: UnsafeMutablePointer<JACKRealtimeState>
    let control = Mutex(Control())
    /// The live client: nil while the server is away and after ``detach()``. Every call into
    /// JACK with the client happens under this lock, so it is never used after it was closed.
    let live: Mutex<LiveClient>

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
    let monitorStop = Atomic<Bool>(false)
    /// Set by the monitor thread around each poll, so ``detach()`` can wait for a poll that uses
    /// the engine's renderer to finish before the engine goes away.
    let monitorPolling = Atomic<Bool>(false)
    var monitor: Thread?

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
        /// Registers MIDI port `short` (nil: none), or closes the client and throws.
        func registerMIDI(_ short: String?, output: Bool) throws(AudioQueueError) -> OpaquePointer? {
            guard let short else { return nil }
            let flags = output ? JackPortIsOutput : JackPortIsInput
            guard !short.isEmpty, !short.contains(":"), !output || short != options.midiInputPortName,
                  let port = jack_port_register(client, short, JACK_DEFAULT_MIDI_TYPE, UInt(flags.rawValue), 0) else {
                jack_client_close(client)
                realtime.pointee.deallocate()
                realtime.deallocate()
                throw AudioQueueError(.invalidDevice, "cannot register JACK MIDI port '\(short)' on client '\(clientName)'; choose another port name")
            }
            return port
        }
        let midiIn = try registerMIDI(options.midiInputPortName, output: false)
        let outputNames = options.midiOutputPortNames
        guard Set(outputNames).count == outputNames.count, outputNames.count <= Self.maximumMIDIOutputs else {
            jack_client_close(client)
            realtime.pointee.deallocate()
            realtime.deallocate()
            throw AudioQueueError(.invalidDevice, "MIDI output ports \(outputNames.joined(separator: ", ")): give at most \(Self.maximumMIDIOutputs), each its own name")
        }
        var outputs: [JACKMIDIOutput] = []
        for short in outputNames {
            guard let port = try registerMIDI(short, output: true) else { continue }
            let output = JACKMIDIOutput(portName: String(cString: jack_port_name(port)))
            realtime.pointee.midiOutPorts[outputs.count] = port
            realtime.pointee.midiOutQueues[outputs.count] = output.queue
            outputs.append(output)
        }
        realtime.pointee.midiOutCount = outputs.count
        midiInput = midiIn.map { JACKMIDIInput(portName: String(cString: jack_port_name($0))) }
        midiOutputs = outputs
        realtime.pointee.midiPort = midiIn
        realtime.pointee.midiRing = midiInput?.ring
        Self.setCallbacks(client, realtime)
    }

    /// Registers the device's callbacks on `client`, with the realtime state as their argument.
    static func setCallbacks(_ client: OpaquePointer, _ realtime: UnsafeMutablePointer<JACKRealtimeState>) {
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
}
