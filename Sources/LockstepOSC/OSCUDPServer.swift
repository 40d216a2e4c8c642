import Foundation
import Lockstep
import LockstepControl
import Synchronization

/// An OSC server on UDP for a show: an ``OSCUDPSocket`` read by a thread of its own, each
/// datagram handled by an ``OSCControlServer``.
///
/// ```swift
/// let server = try OSCUDPServer(endpoint: OSCEndpoint(), dispatcher: dispatcher)   // 127.0.0.1:53000
/// if let warning = server.exposureWarning { print(warning) }
/// …
/// server.stop()
/// ```
public final class OSCUDPServer: Sendable {
    /// The socket.
    public let socket: OSCUDPSocket
    /// The protocol: requests, replies, updates, limits.
    public let control: OSCControlServer
    private let finished = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)

    /// Binds `endpoint` and starts answering.
    /// - Throws: ``OSCError`` when the endpoint does not resolve or cannot be bound.
    public convenience init(endpoint: OSCEndpoint, dispatcher: ControlDispatcher, options: OSCControlServer.Options = .init(),
                            log: @escaping @Sendable (String) -> Void = { _ in },
                            threadSetup: @escaping @Sendable () -> Void = {}) throws(OSCError) {
        self.init(socket: try OSCUDPSocket(binding: endpoint), dispatcher: dispatcher, options: options, log: log,
                  threadSetup: threadSetup)
    }

    /// Starts answering on a socket already bound (bind early to fail before anything starts).
    ///
    /// `threadSetup` runs first on the thread that reads the socket: `session run` gives it
    /// realtime priority there (``LockstepJACK/JACKDevice/promoteCurrentThread(below:)``), as the
    /// MIDI reader's, so that a `/go` woken on a busy machine still reaches the next cycle.
    public init(socket: OSCUDPSocket, dispatcher: ControlDispatcher, options: OSCControlServer.Options = .init(),
                log: @escaping @Sendable (String) -> Void = { _ in }, threadSetup: @escaping @Sendable () -> Void = {}) {
        let control = OSCControlServer(dispatcher: dispatcher, options: options,
                                       transmit: { peer, bytes in socket.send(bytes, to: peer) }, log: log)
        self.socket = socket
        self.control = control
        let finished = self.finished
        let thread = Thread {
            ThreadName.setCurrent("lockstep-osc")
            threadSetup()
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(16, options.maximumDatagramSize), alignment: 8)
            defer {
                buffer.deallocate()
                finished.signal()
            }
            while let datagram = socket.receive(into: buffer) {
                control.receive(UnsafeRawBufferPointer(rebasing: buffer[..<min(datagram.size, buffer.count)]), size: datagram.size,
                                from: datagram.sender, droppedByKernel: datagram.droppedByKernel, age: datagram.age)
            }
        }
        thread.name = "lockstep-osc"
        thread.start()
    }

    /// The address it listens on (with the port the system chose, for port 0).
    public var localAddress: OSCPeer { socket.localAddress }

    /// What it has received, answered and dropped so far.
    public var statistics: OSCStatistics { control.statistics }

    /// A warning to print when the server can be reached from other machines (nil on a loopback
    /// address): what it exposes, and how to restrict it.
    public var exposureWarning: String? { control.exposureWarning(for: localAddress, transport: "UDP", option: "--osc") }

    /// Tells subscribers the workspace goes away, stops reading, waits for the thread to finish
    /// the datagram in hand, and stops pushing updates. Calling it again does nothing.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        control.disconnect()                 // subscribers hear that the workspace goes away
        socket.interrupt()
        finished.wait()
        control.close()
    }

    deinit { stop() }
}
