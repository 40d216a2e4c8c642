import CJack
import Foundation
import Synchronization

/// A JACK client with one MIDI output port (`midi_out`) that sends scheduled messages, each on an
/// exact JACK frame time: the process callback writes every message whose frame falls in the
/// current cycle at its offset in that cycle. For tests of MIDI control, as a controller or a
/// console sending MIDI Show Control would.
public final class JACKMIDISender: @unchecked Sendable {
    /// The client's name.
    public let clientName: String
    /// The output port's full name.
    public let portName: String
    private let client: OpaquePointer
    private let core: SenderCore
    private var active = false

    /// Opens the client on `server` (not yet active).
    public init(server: JACKServer, name: String? = nil) throws {
        let requested = name ?? JACKFixtureSupport.uniqueClientName("lockstep-midi")
        client = try JACKFixtureSupport.openClient(named: requested, serverName: server.name)
        guard let port = jack_port_register(client, "midi_out", JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsOutput.rawValue), 0) else {
            jack_client_close(client)
            throw JACKFixtureError.invalidArgument("cannot register a MIDI output port")
        }
        core = SenderCore(port: port, client: client)
        clientName = JACKFixtureSupport.clientName(client)
        portName = JACKFixtureSupport.portName(port)
        jack_set_process_callback(client, SenderCore.processCallback, Unmanaged.passRetained(core).toOpaque())
    }

    deinit { stop() }

    /// Activates the client and connects its port to `destination` (when given).
    public func start(connectingTo destination: String? = nil) throws {
        guard !active else { return }
        let code = jack_activate(client)
        guard code == 0 else { throw JACKFixtureError.activationFailed(client: clientName, code: code) }
        active = true
        if let destination { try JACKFixtureSupport.connect(client, portName, destination) }
    }

    /// JACK's frame time now (`jack_frame_time`).
    public var frameTime: UInt32 { jack_frame_time(client) }

    /// The frame time at the start of the current cycle (`jack_last_frame_time`).
    public var lastFrameTime: UInt32 { jack_last_frame_time(client) }

    /// Sends `bytes` on JACK frame time `frame` (a frame already past goes out at the start of
    /// the next cycle, and is counted in ``lateMessages``).
    public func send(_ bytes: [UInt8], atFrame frame: UInt32) {
        core.remaining.wrappingAdd(1, ordering: .relaxed)
        core.inbox.withLock { $0.append((frame, bytes)) }
        core.waiting.add(1, ordering: .releasing)
    }

    /// Messages written so far.
    public var sentMessages: Int { core.sent.load(ordering: .acquiring) }
    /// Messages whose frame had passed when their cycle came (sent at offset 0 of a later cycle).
    public var lateMessages: Int { core.late.load(ordering: .acquiring) }
    /// The JACK frame time each message was really written on, in the order written.
    public var sentFrames: [UInt32] { core.written }

    /// Waits until every scheduled message has been written (or `timeout` seconds pass).
    public func waitUntilSent(timeout: Double) -> Bool {
        JACKFixtureSupport.poll(timeout: timeout) { core.remaining.load(ordering: .acquiring) == 0 }
    }

    /// Deactivates and closes the client.
    public func stop() {
        guard core.closed.exchange(true, ordering: .acquiringAndReleasing) == false else { return }
        if active { jack_deactivate(client) }
        jack_client_close(client)
    }
}

/// The sender's process state. New messages wait in an inbox guarded by a lock the process
/// callback only tries (and only when messages wait), moved into `pending`, which only the
/// process thread touches; every array the process thread uses has its room reserved up front, so
/// it never allocates (a test client that allocated on its process thread made the server xrun).
/// A message is late only when the callback missed the lock on every cycle from `send` to its
/// frame.
final class SenderCore: @unchecked Sendable {
    static let capacity = 4096
    let port: OpaquePointer
    let client: OpaquePointer
    let inbox = Mutex<[(frame: UInt32, bytes: [UInt8])]>({
        var list: [(frame: UInt32, bytes: [UInt8])] = []
        list.reserveCapacity(SenderCore.capacity)
        return list
    }())
    /// Messages in the inbox.
    let waiting = Atomic<Int>(0)
    /// Scheduled messages, owned by the process thread.
    nonisolated(unsafe) var pending: [(frame: UInt32, bytes: [UInt8])] = []
    /// Messages sent to the sender and not yet written (or dropped by a full port buffer).
    let remaining = Atomic<Int>(0)
    /// The frames messages were written on, ``writtenCount`` of them.
    let writtenFrames: UnsafeMutablePointer<UInt32>
    let writtenCount = Atomic<Int>(0)
    let sent = Atomic<Int>(0)
    let late = Atomic<Int>(0)
    let closed = Atomic<Bool>(false)

    init(port: OpaquePointer, client: OpaquePointer) {
        self.port = port
        self.client = client
        pending.reserveCapacity(Self.capacity)
        writtenFrames = .allocate(capacity: Self.capacity)
        writtenFrames.initialize(repeating: 0, count: Self.capacity)
    }

    deinit { writtenFrames.deallocate() }

    var written: [UInt32] { Array(UnsafeBufferPointer(start: writtenFrames, count: writtenCount.load(ordering: .acquiring))) }

    func process(_ nframes: jack_nframes_t) {
        guard let buffer = jack_port_get_buffer(port, nframes) else { return }
        jack_midi_clear_buffer(buffer)
        let start = jack_last_frame_time(client)
        if waiting.load(ordering: .acquiring) > 0 {
            _ = inbox.withLockIfAvailable { list in
                for message in list where pending.count < Self.capacity { pending.append(message) }
                waiting.subtract(list.count, ordering: .releasing)
                list.removeAll(keepingCapacity: true)
            }
        }
        func offset(_ index: Int) -> Int32 { Int32(bitPattern: pending[index].frame &- start) }
        // The due messages, earliest first (few wait: a scan per message).
        while true {
            var earliest = -1
            for index in pending.indices where offset(index) < Int32(nframes) && (earliest < 0 || offset(index) < offset(earliest)) {
                earliest = index
            }
            guard earliest >= 0 else { return }
            var at = offset(earliest)
            if at < 0 {
                late.wrappingAdd(1, ordering: .relaxed)
                at = 0
            }
            let result = pending[earliest].bytes.withUnsafeBufferPointer {
                jack_midi_event_write(buffer, jack_nframes_t(at), $0.baseAddress, $0.count)
            }
            if result == 0 {
                sent.wrappingAdd(1, ordering: .releasing)
                let count = writtenCount.load(ordering: .relaxed)
                if count < Self.capacity {
                    writtenFrames[count] = start &+ UInt32(at)
                    writtenCount.store(count + 1, ordering: .releasing)
                }
            }
            pending.swapAt(earliest, pending.count - 1)
            pending.removeLast()
            remaining.wrappingSubtract(1, ordering: .releasing)
        }
    }

    static let processCallback: JackProcessCallback = { nframes, context in
        guard let context else { return 0 }
        Unmanaged<SenderCore>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.process(nframes) }
        return 0
    }
}
