import CJack
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A JACK client that, on demand, busy-waits inside its process callback to make the cycle late
/// and force an xrun, for tests of xrun handling.
///
/// ``stall(forMicroseconds:)`` arms it; the next process cycle spins for that long (on JACK's
/// realtime thread, so keep it to a few periods) and ``stallCount`` goes up when it finishes.
/// The client has no ports; JACK runs every active client each cycle, so it needs no connections.
public final class JACKStaller: @unchecked Sendable {
    /// The client's name on the server.
    public let clientName: String

    private let core: StallerCore
    private let serverName: String
    private let lock = NSLock()
    private var client: OpaquePointer?
    private var active = false

    /// Opens the client; call ``start()`` to activate it.
    /// - Throws: ``JACKFixtureError``.
    public init(server: JACKServer, name: String? = nil) throws {
        guard server.isRunning else {
            throw JACKFixtureError.serverNotRunning(name: server.name, logTail: server.logTail())
        }
        let requested = name ?? JACKFixtureSupport.uniqueClientName("lockstep-staller")
        let client = try JACKFixtureSupport.openClient(named: requested, serverName: server.name)
        let core = StallerCore()
        let context = Unmanaged.passRetained(core).toOpaque()
        jack_set_process_callback(client, StallerCore.processCallback, context)
        jack_set_xrun_callback(client, StallerCore.xrunCallback, context)
        jack_on_info_shutdown(client, StallerCore.shutdownCallback, context)
        self.core = core
        self.client = client
        self.clientName = JACKFixtureSupport.clientName(client)
        self.serverName = server.name
    }

    deinit { stop() }

    /// Activates the client. Calling it again while active does nothing.
    /// - Throws: `.activationFailed`, `.serverNotRunning` (after ``stop()``).
    public func start() throws {
        lock.lock()
        defer { lock.unlock() }
        guard let client else { throw JACKFixtureError.serverNotRunning(name: serverName, logTail: "") }
        guard !active else { return }
        let code = jack_activate(client)
        guard code == 0 else { throw JACKFixtureError.activationFailed(client: clientName, code: code) }
        active = true
    }

    /// Deactivates and closes the client. Idempotent; also called at deinit.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard let client else { return }
        core.armedMicroseconds.store(0, ordering: .relaxed)
        if active && !core.shutdown.load(ordering: .acquiring) { jack_deactivate(client) }
        jack_client_close(client)
        self.client = nil
        active = false
        Unmanaged.passUnretained(core).release()
    }

    /// Makes the next process cycle busy-wait for `microseconds` (replacing a stall armed but not
    /// yet run). Returns at once; see ``waitForStall(timeout:)``.
    public func stall(forMicroseconds microseconds: Int) {
        precondition(microseconds >= 0 && microseconds <= 2_000_000, "stall must be 0…2 s")
        core.armedMicroseconds.store(microseconds, ordering: .releasing)
    }

    /// Arms a stall and waits until it has run; returns false if no cycle ran it within `timeout`.
    @discardableResult
    public func stallAndWait(forMicroseconds microseconds: Int, timeout: Double = 2) -> Bool {
        let before = stallCount
        stall(forMicroseconds: microseconds)
        return JACKFixtureSupport.poll(timeout: timeout) { stallCount > before }
    }

    /// Waits until no stall is armed any more (the armed one ran); false after `timeout` seconds.
    public func waitForStall(timeout: Double = 2) -> Bool {
        JACKFixtureSupport.poll(timeout: timeout) { core.armedMicroseconds.load(ordering: .acquiring) == 0 }
    }

    /// The number of stalls that ran to completion.
    public var stallCount: Int { core.stalls.load(ordering: .acquiring) }

    /// The number of process cycles the client ran.
    public var cycleCount: Int { core.cycles.load(ordering: .acquiring) }

    /// The number of xrun callbacks the client received.
    public var xrunCount: Int { core.xruns.load(ordering: .acquiring) }

    /// Whether the server shut the client down (`jack_on_info_shutdown` fired).
    public var serverWentAway: Bool { core.shutdown.load(ordering: .acquiring) }
}

/// The state ``JACKStaller``'s callbacks use; retained for the client's lifetime through the
/// callback context pointer.
final class StallerCore: JACKClientCore, @unchecked Sendable {
    let armedMicroseconds = Atomic<Int>(0)
    let stalls = Atomic<Int>(0)
    let cycles = Atomic<Int>(0)

    /// The process callback body: spins if a stall is armed. No allocation, locks or syscalls
    /// beyond the vDSO clock.
    @inline(__always)
    func process() {
        cycles.wrappingAdd(1, ordering: .relaxed)
        let microseconds = armedMicroseconds.exchange(0, ordering: .acquiring)
        guard microseconds > 0 else { return }
        let deadline = JACKFixtureSupport.monotonicNanoseconds() &+ UInt64(microseconds) &* 1000
        while JACKFixtureSupport.monotonicNanoseconds() < deadline {}
        stalls.wrappingAdd(1, ordering: .releasing)
    }

    /// `JackProcessCallback`: context is an unretained `StallerCore`.
    static let processCallback: JackProcessCallback = { _, context in
        guard let context else { return 0 }
        Unmanaged<StallerCore>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.process() }
        return 0
    }

}
