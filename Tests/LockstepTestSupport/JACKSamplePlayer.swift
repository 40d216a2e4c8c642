import CJack
import Foundation
import Synchronization

/// A JACK client that plays a buffer of samples once on its output `out_1`, from the first cycle
/// after ``play()``, then silence (silence before too): one period of it per cycle, as every
/// client renders — sample k plays k frames rendered after the cycle of ``firstFrameTime`` (JACK's
/// frame clock can jump against the frames rendered; see ``JACKCapture/clockJumps``). For the chase tests, as a tape machine or a timecode generator would
/// play LTC. The process callback only copies from the buffer allocated when the client opens.
public final class JACKSamplePlayer: @unchecked Sendable {
    /// The output port's full name.
    public let portName: String
    private let core: SamplePlayerCore
    private let lock = NSLock()
    private var client: OpaquePointer?

    /// Opens the client on `server` with `samples` to play, and activates it (playing silence).
    /// - Throws: ``JACKFixtureError``.
    public init(server: JACKServer, samples: [Float], name: String? = nil) throws {
        let client = try JACKFixtureSupport.openClient(named: name ?? JACKFixtureSupport.uniqueClientName("lockstep-player"),
                                                       serverName: server.name)
        let core = SamplePlayerCore(samples: samples)
        core.client = client
        do {
            core.port = try JACKFixtureSupport.registerAudioPort(client, name: "out_1", input: false)
        } catch {
            jack_client_close(client)
            throw error
        }
        portName = JACKFixtureSupport.portName(core.port!)
        let context = Unmanaged.passRetained(core).toOpaque()
        jack_set_process_callback(client, SamplePlayerCore.processCallback, context)
        jack_set_xrun_callback(client, JACKClientCore.xrunCallback, context)
        jack_on_info_shutdown(client, JACKClientCore.shutdownCallback, context)
        let code = jack_activate(client)
        guard code == 0 else {
            jack_client_close(client)
            Unmanaged.passUnretained(core).release()
            throw JACKFixtureError.activationFailed(client: portName, code: code)
        }
        self.core = core
        self.client = client
    }

    deinit { stop() }

    /// Plays the buffer from the next cycle on.
    public func play() { core.armed.store(true, ordering: .releasing) }

    /// The JACK frame time sample 0 played on (nil before it played).
    public var firstFrameTime: UInt32? {
        core.started.load(ordering: .acquiring) ? core.firstFrameTime.load(ordering: .acquiring) : nil
    }

    /// Samples played so far.
    public var played: Int { core.played.load(ordering: .acquiring) }

    /// Whether every sample has played.
    public var isDone: Bool { played >= core.count }

    /// The number of xruns the client saw.
    public var xrunCount: Int { core.xruns.load(ordering: .acquiring) }

    /// Deactivates and closes the client. Idempotent.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard let client else { return }
        if !core.shutdown.load(ordering: .acquiring) { jack_deactivate(client) }
        jack_client_close(client)
        self.client = nil
        Unmanaged.passUnretained(core).release()
    }
}

/// ``JACKSamplePlayer``'s process state.
final class SamplePlayerCore: JACKClientCore, @unchecked Sendable {
    let samples: UnsafeMutablePointer<Float>
    let count: Int
    var client: OpaquePointer?
    var port: OpaquePointer?
    let armed = Atomic<Bool>(false)
    let started = Atomic<Bool>(false)
    let firstFrameTime = Atomic<UInt32>(0)
    let played = Atomic<Int>(0)

    init(samples: [Float]) {
        count = samples.count
        self.samples = .allocate(capacity: max(1, samples.count))
        self.samples.initialize(from: samples, count: samples.count)
    }

    deinit { samples.deallocate() }

    /// The process callback body: realtime-safe (copies from the buffer, or writes zeros).
    func process(_ nframes: jack_nframes_t) {
        guard let port, let raw = jack_port_get_buffer(port, nframes) else { return }
        let out = raw.assumingMemoryBound(to: Float.self)
        let length = Int(nframes)
        guard armed.load(ordering: .acquiring), let client else {
            out.update(repeating: 0, count: length)
            return
        }
        if !started.load(ordering: .relaxed) {
            firstFrameTime.store(jack_last_frame_time(client), ordering: .relaxed)
            started.store(true, ordering: .releasing)
        }
        let from = played.load(ordering: .relaxed)
        let copied = max(0, min(length, count - from))
        if copied > 0 { out.update(from: samples + from, count: copied) }
        if copied < length { (out + copied).update(repeating: 0, count: length - copied) }
        played.store(from + copied, ordering: .releasing)
    }

    static let processCallback: JackProcessCallback = { nframes, context in
        guard let context else { return 0 }
        Unmanaged<SamplePlayerCore>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.process(nframes) }
        return 0
    }
}
