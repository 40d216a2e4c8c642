import Foundation
import Lockstep
import LockstepControl
import Synchronization

/// An OSC server on TCP for a show, with SLIP framing (OSC 1.1, as QLab 5 and Companion use it):
/// each connection is a client; every SLIP frame it sends is handled exactly as a UDP datagram
/// (by an ``OSCControlServer``, messages and bundles alike), and its replies and updates go back
/// on the same connection, SLIP-framed.
///
/// One thread of its own accepts and reads (`poll`); replies are written from that thread,
/// updates from the thread that publishes them, never blocking: a client that does not read is
/// disconnected once more than ``Limits/maximumBacklog`` bytes wait for it on this side (or its
/// connection's send buffer is full), and the show plays on. Limits: ``Limits/maximumClients``
/// connections (one more is sent an error frame and closed), frames up to
/// ``Limits/maximumFrameSize`` bytes (a longer one gets an error reply and the connection is
/// closed); a broken escape gets an error reply. Never on the realtime thread.
///
/// ```swift
/// let server = try OSCTCPServer(endpoint: OSCEndpoint(port: 53000), dispatcher: dispatcher)
/// …
/// server.stop()
/// ```
public final class OSCTCPServer: Sendable {
    /// Limits of the transport.
    public struct Limits: Sendable, Hashable {
        /// The most connections open at once.
        public var maximumClients: Int
        /// The largest SLIP frame (one OSC packet), in bytes.
        public var maximumFrameSize: Int
        /// The most bytes that may wait, sent but not taken by the client's side, on one
        /// connection; a reply or update that would go past it disconnects that client.
        public var maximumBacklog: Int

        /// 64 connections, frames up to 64 KiB, 64 KiB waiting for a client at most.
        public init(maximumClients: Int = 64, maximumFrameSize: Int = 65536, maximumBacklog: Int = 65536) {
            self.maximumClients = maximumClients
            self.maximumFrameSize = maximumFrameSize
            self.maximumBacklog = maximumBacklog
        }
    }

    /// A listening TCP socket, bound early so that a port in use fails before anything starts.
    public final class Listener: Sendable {
        /// The address it listens on (with the port the system chose, for port 0).
        public let localAddress: OSCPeer
        let descriptor: Int32

        /// Binds `endpoint` and listens.
        /// - Throws: ``OSCError`` (`.unresolvedHost`, `.cannotBind`) saying what to change.
        public init(binding endpoint: OSCEndpoint) throws(OSCError) {
            let address = try OSCPeer.resolve(endpoint, passive: true)
            let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { throw OSCError(.cannotBind, "OSC: cannot make a TCP socket: \(String(cString: strerror(errno)))") }
            var on: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            do throws(OSCError) {
                try OSCPeer.bind(fd, to: address, endpoint: endpoint, transport: "TCP", option: "--osc-tcp")
                guard listen(fd, 16) == 0 else {
                    throw OSCError(.cannotBind, "OSC: cannot listen on \(endpoint) (TCP): \(String(cString: strerror(errno))); check the host and port")
                }
            } catch {
                close(fd)
                throw error
            }
            localAddress = OSCPeer.localAddress(of: fd)
            descriptor = fd
        }

        deinit { close(descriptor) }
    }

    /// One client's connection.
    private final class Connection: Sendable {
        let peer: OSCPeer
        /// The socket, -1 once closed (writers and the closer take turns).
        let descriptor: Mutex<Int32>
        /// The most bytes that may wait in the socket's send queue.
        let maximumBacklog: Int
        /// Whether it was shut down for not reading (counted once).
        let stuck = Atomic<Bool>(false)

        init(peer: OSCPeer, descriptor: Int32, maximumBacklog: Int) {
            self.peer = peer
            self.descriptor = Mutex(descriptor)
            self.maximumBacklog = maximumBacklog
        }

        /// Writes a whole frame without blocking; when the frame would take the bytes waiting for
        /// the client past the backlog, on a full send buffer or an error, shuts the socket down
        /// (the reader then closes it) and returns false.
        func write(_ frame: [UInt8]) -> Bool {
            descriptor.withLock { fd in
                guard fd >= 0 else { return false }
                // Bytes in the send queue not yet taken by the client's side (Linux's SIOCOUTQ):
                // what a client that does not read leaves here.
                var queued: Int32 = 0
                if ioctl(fd, UInt(TIOCOUTQ), &queued) == 0, Int(queued) + frame.count > maximumBacklog {
                    stuck.store(true, ordering: .relaxed)
                    shutdown(fd, Int32(SHUT_RDWR))
                    return false
                }
                var offset = 0
                while offset < frame.count {
                    let sent = frame.withUnsafeBytes { raw in
                        Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
                    }
                    if sent > 0 { offset += sent; continue }
                    if sent < 0 && errno == EINTR { continue }
                    // A partial frame cannot be taken back: the stream is broken for this client.
                    if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { stuck.store(true, ordering: .relaxed) }
                    shutdown(fd, Int32(SHUT_RDWR))
                    return false
                }
                return true
            }
        }

        /// Closes the socket (once).
        func close() {
            descriptor.withLock { fd in
                if fd >= 0 { Glibc.close(fd) }
                fd = -1
            }
        }
    }

    /// The listening socket.
    public let listener: Listener
    /// The protocol: requests, replies, updates, limits (replies to the sender itself).
    public let control: OSCControlServer
    /// The transport's limits.
    public let limits: Limits
    /// The open connections by client address (for the writers on other threads).
    private final class Registry: Sendable {
        let connections = Mutex<[OSCPeer: Connection]>([:])
    }
    private let registry = Registry()
    private let wake: (read: Int32, write: Int32)
    private let finished = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)
    private let log: @Sendable (String) -> Void

    /// Binds `endpoint` and starts answering.
    /// - Throws: ``OSCError`` when the endpoint does not resolve or cannot be bound.
    public convenience init(endpoint: OSCEndpoint, dispatcher: ControlDispatcher, options: OSCControlServer.Options = .init(),
                            limits: Limits = .init(), log: @escaping @Sendable (String) -> Void = { _ in }) throws(OSCError) {
        try self.init(listener: Listener(binding: endpoint), dispatcher: dispatcher, options: options, limits: limits, log: log)
    }

    /// Starts answering on a listener already bound. `options.maximumDatagramSize` and
    /// `options.repliesToSender` are set from `limits` and TCP's nature.
    /// - Throws: ``OSCError`` (`.cannotBind`) when the wake-up pipe cannot be made.
    public init(listener: Listener, dispatcher: ControlDispatcher, options: OSCControlServer.Options = .init(),
                limits: Limits = .init(), log: @escaping @Sendable (String) -> Void = { _ in }) throws(OSCError) {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            throw OSCError(.cannotBind, "OSC: cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        for end in pipeEnds {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        wake = (pipeEnds[0], pipeEnds[1])
        var options = options
        options.maximumDatagramSize = limits.maximumFrameSize
        options.repliesToSender = true
        options.maximumClients = max(options.maximumClients, limits.maximumClients)
        let registry = self.registry
        control = OSCControlServer(dispatcher: dispatcher, options: options, transmit: { peer, bytes in
            guard let connection = registry.connections.withLock({ $0[peer] }) else { return false }
            return connection.write(SLIP.encode(bytes))
        }, log: log)
        self.listener = listener
        self.limits = limits
        self.log = log
        let thread = Thread { [self] in
            ThreadName.setCurrent("lockstep-osc-tcp")
            defer { self.finished.signal() }
            self.serve()
        }
        thread.name = "lockstep-osc-tcp"
        thread.start()
    }

    deinit {
        close(wake.read)
        close(wake.write)
    }

    /// The address it listens on.
    public var localAddress: OSCPeer { listener.localAddress }

    /// What it has received, answered and dropped so far (``OSCStatistics/connections``
    /// counts the connections accepted).
    public var statistics: OSCStatistics { control.statistics }

    /// Connections open now.
    public var connectionCount: Int { registry.connections.withLock { $0.count } }

    /// A warning to print when the server can be reached from other machines (nil on a loopback
    /// address).
    public var exposureWarning: String? { control.exposureWarning(for: localAddress, transport: "TCP", option: "--osc-tcp") }

    /// Tells subscribers the workspace goes away, stops accepting and reading, closes every
    /// connection and stops pushing updates. Calling it again does nothing.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        control.disconnect()                 // subscribers hear that the workspace goes away
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        finished.wait()
        control.close()
    }

    /// The accept-and-read loop (the server's thread).
    private func serve() {
        let bufferSize = 16384
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 8)
        defer { buffer.deallocate() }
        var decoders: [OSCPeer: SLIPDecoder] = [:]
        var open: [(peer: OSCPeer, fd: Int32)] = []
        func drop(_ peer: OSCPeer) {
            guard let connection = registry.connections.withLock({ $0.removeValue(forKey: peer) }) else { return }
            if connection.stuck.load(ordering: .relaxed) {
                control.count(\.disconnected)
                log("OSC \(peer) (TCP): disconnected: it did not read its replies (more than \(limits.maximumBacklog) bytes were waiting for it)")
            }
            connection.close()
            decoders[peer] = nil
            open.removeAll { $0.peer == peer }
            control.forget(peer)
        }
        defer { for (peer, _) in open { drop(peer) } }
        while !stopped.load(ordering: .acquiring) {
            var fds = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: listener.descriptor, events: Int16(POLLIN), revents: 0)]
            fds += open.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), -1) >= 0 || errno == EINTR else { return }
            if fds[0].revents != 0 { return }
            if fds[1].revents & Int16(POLLIN) != 0 { accept(into: &open, decoders: &decoders) }
            for (index, entry) in zip(fds.indices.dropFirst(2), open) where fds[index].revents != 0 {
                let count = recv(entry.fd, buffer.baseAddress, bufferSize, Int32(MSG_DONTWAIT))
                if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                guard count > 0 else {                        // closed by the client, or broken
                    drop(entry.peer)
                    continue
                }
                let events = decoders[entry.peer]?.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count])) ?? []
                for event in events {
                    switch event {
                    case .frame(let frame):
                        frame.withUnsafeBytes { control.receive($0, size: $0.count, from: entry.peer) }
                    case .badEscape(let byte):
                        control.refuse(entry.peer, "a SLIP frame holds ESC (0xDB) followed by 0x\(String(byte, radix: 16, uppercase: true)), "
                                       + "which is neither ESC_END (0xDC) nor ESC_ESC (0xDD); the frame was dropped. Frame each packet with SLIP as OSC 1.1 says",
                                       counting: \.malformed)
                    case .oversized:
                        control.refuse(entry.peer, "a SLIP frame is over \(limits.maximumFrameSize) bytes, the limit; the connection is closed. "
                                       + "Send one message or bundle of at most \(limits.maximumFrameSize) bytes per frame, each frame ending with END (0xC0)",
                                       counting: \.oversized)
                        control.count(\.disconnected)
                        drop(entry.peer)
                    }
                    if case .oversized = event { break }
                }
            }
        }
    }

    /// Accepts the connections waiting (turning away those over the limit).
    private func accept(into open: inout [(peer: OSCPeer, fd: Int32)], decoders: inout [OSCPeer: SLIPDecoder]) {
        while true {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.accept(listener.descriptor, $0, &length)
                }
            }
            guard fd >= 0 else { return }                      // (EAGAIN: none left)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            let peer = withUnsafeBytes(of: &address) { OSCPeer(address: $0.baseAddress!, length: Int(length)) }
            var on: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            guard open.count < limits.maximumClients else {
                let text = "too many OSC clients: \(limits.maximumClients) are connected, the limit; try again when one has disconnected"
                if let bytes = try? OSCMessage("/reply", [.string(ControlReply.error("", .tooManyMessages, text).json)]).encoded() {
                    let frame = SLIP.encode(bytes)
                    _ = frame.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
                }
                close(fd)
                control.count(\.clientsTurnedAway)
                log("OSC \(peer) (TCP): turned away: \(text)")
                continue
            }
            registry.connections.withLock { $0[peer] = Connection(peer: peer, descriptor: fd, maximumBacklog: limits.maximumBacklog) }
            decoders[peer] = SLIPDecoder(maximumFrameSize: limits.maximumFrameSize)
            open.append((peer, fd))
            control.count(\.connections)
        }
    }
}
