import CJack
import Foundation
import Synchronization

/// A JACK client with one MIDI input port (`midi_in`) that records every event it receives with
/// its JACK frame time (the cycle's `jack_last_frame_time` plus the event's offset): an
/// independent recorder of what a client under test sends on the graph. ``events`` may be read
/// at any time.
public final class JACKMIDIRecorder: @unchecked Sendable {
    /// One recorded event.
    public struct Event: Sendable, Hashable {
        /// Its JACK frame time.
        public var frame: UInt32
        /// Its bytes.
        public var bytes: [UInt8]
    }

    /// The client's name.
    public let clientName: String
    /// The input port's full name.
    public let portName: String
    private let client: OpaquePointer
    private let core: RecorderCore
    private var active = false

    /// Opens the client on `server` (not yet active).
    public init(server: JACKServer, name: String? = nil) throws {
        let requested = name ?? JACKFixtureSupport.uniqueClientName("lockstep-midi-rec")
        client = try JACKFixtureSupport.openClient(named: requested, serverName: server.name)
        guard let port = jack_port_register(client, "midi_in", JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsInput.rawValue), 0) else {
            jack_client_close(client)
            throw JACKFixtureError.invalidArgument("cannot register a MIDI input port")
        }
        core = RecorderCore(port: port, client: client)
        clientName = JACKFixtureSupport.clientName(client)
        portName = JACKFixtureSupport.portName(port)
        jack_set_process_callback(client, RecorderCore.processCallback, Unmanaged.passRetained(core).toOpaque())
    }

    deinit { stop() }

    /// Activates the client.
    public func start() throws {
        guard !active else { return }
        let code = jack_activate(client)
        guard code == 0 else { throw JACKFixtureError.activationFailed(client: clientName, code: code) }
        active = true
    }

    /// The events recorded so far, in the order received.
    public var events: [Event] { core.events }

    /// Waits until at least `count` events were recorded (or `timeout` seconds pass).
    public func wait(forCount count: Int, timeout: Double) -> Bool {
        JACKFixtureSupport.poll(timeout: timeout) { core.count.load(ordering: .acquiring) >= count }
    }

    /// Deactivates and closes the client.
    public func stop() {
        guard core.closed.exchange(true, ordering: .acquiringAndReleasing) == false else { return }
        if active { jack_deactivate(client) }
        jack_client_close(client)
    }
}

/// The recorder's process state: events copied on the process thread into memory allocated up
/// front (never allocating there: a test client that allocated on its process thread made the
/// server xrun), published by an atomic count.
final class RecorderCore: @unchecked Sendable {
    static let capacity = 4096, byteCapacity = 1 << 20
    let port: OpaquePointer
    let client: OpaquePointer
    let frames: UnsafeMutablePointer<UInt32>
    let offsets: UnsafeMutablePointer<Int>
    let lengths: UnsafeMutablePointer<Int>
    let bytes: UnsafeMutablePointer<UInt8>
    /// Events recorded (published), and bytes used (process thread only).
    let count = Atomic<Int>(0)
    nonisolated(unsafe) var used = 0
    let closed = Atomic<Bool>(false)

    init(port: OpaquePointer, client: OpaquePointer) {
        self.port = port
        self.client = client
        frames = .allocate(capacity: Self.capacity)
        frames.initialize(repeating: 0, count: Self.capacity)
        offsets = .allocate(capacity: Self.capacity)
        offsets.initialize(repeating: 0, count: Self.capacity)
        lengths = .allocate(capacity: Self.capacity)
        lengths.initialize(repeating: 0, count: Self.capacity)
        bytes = .allocate(capacity: Self.byteCapacity)
        bytes.initialize(repeating: 0, count: Self.byteCapacity)
    }

    deinit {
        frames.deallocate()
        offsets.deallocate()
        lengths.deallocate()
        bytes.deallocate()
    }

    /// The events recorded so far.
    var events: [JACKMIDIRecorder.Event] {
        (0..<count.load(ordering: .acquiring)).map { i in
            JACKMIDIRecorder.Event(frame: frames[i], bytes: Array(UnsafeBufferPointer(start: bytes + offsets[i], count: lengths[i])))
        }
    }

    func process(_ nframes: jack_nframes_t) {
        guard let buffer = jack_port_get_buffer(port, nframes) else { return }
        let start = jack_last_frame_time(client)
        var event = jack_midi_event_t()
        let total = jack_midi_get_event_count(buffer)
        for index in 0..<total where jack_midi_event_get(&event, buffer, index) == 0 {
            let n = count.load(ordering: .relaxed)
            guard let source = event.buffer, n < Self.capacity, used + event.size <= Self.byteCapacity else { continue }
            frames[n] = start &+ event.time
            offsets[n] = used
            lengths[n] = event.size
            (bytes + used).update(from: source, count: event.size)
            used += event.size
            count.store(n + 1, ordering: .releasing)
        }
    }

    static let processCallback: JackProcessCallback = { nframes, context in
        guard let context else { return 0 }
        Unmanaged<RecorderCore>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.process(nframes) }
        return 0
    }
}
