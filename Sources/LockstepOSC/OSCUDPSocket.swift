import Foundation
import Synchronization

/// A UDP socket bound to one address, for OSC: it receives whole datagrams (reporting the real
/// size of one too large for the buffer, and how many the kernel dropped because they came
/// faster than they were read) and sends without ever blocking.
///
/// Lockstep binds the socket itself rather than through liblo's server, which binds every
/// interface (`getaddrinfo(NULL, …, AI_PASSIVE)`) and so cannot keep a show to this machine.
/// ``receive(into:)`` blocks one thread; ``send(_:to:)`` may be called from any thread.
public final class OSCUDPSocket: Sendable {
    /// One datagram received.
    public struct Datagram: Sendable {
        /// Its real size in bytes (more than the buffer holds when it was too large).
        public var size: Int
        /// Who sent it.
        public var sender: OSCPeer
        /// The kernel's count of datagrams dropped on this socket so far (`SO_RXQ_OVFL`).
        public var droppedByKernel: UInt32
        /// How long it had waited in the socket when it was read: from the kernel's timestamp
        /// of its arrival (`SO_TIMESTAMPNS`) to the return of ``OSCUDPSocket/receive(into:)``;
        /// nil when the kernel gave no timestamp.
        public var age: Duration?
    }

    /// The address the socket is bound to (with the port the system chose, for port 0).
    public let localAddress: OSCPeer
    private let descriptor: Int32
    private let wake: (read: Int32, write: Int32)
    private let interrupted = Atomic<Bool>(false)

    /// Makes a UDP socket bound to `endpoint`.
    /// - Throws: ``OSCError`` (`.unresolvedHost`, `.cannotBind`) saying what to change.
    public init(binding endpoint: OSCEndpoint) throws(OSCError) {
        let address = try OSCPeer.resolve(endpoint, passive: true)
        let fd = socket(address.family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw OSCError(.cannotBind, "OSC: cannot make a UDP socket: \(String(cString: strerror(errno)))") }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, Self.receiveQueueOverflow, &on, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, Self.timestampNanoseconds, &on, socklen_t(MemoryLayout<Int32>.size))
        do throws(OSCError) {
            try OSCPeer.bind(fd, to: address, endpoint: endpoint, transport: "UDP", option: "--osc")
        } catch {
            close(fd)
            throw error
        }
        localAddress = OSCPeer.localAddress(of: fd)
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            close(fd)
            throw OSCError(.cannotBind, "OSC: cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        for end in pipeEnds {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        descriptor = fd
        wake = (pipeEnds[0], pipeEnds[1])
    }

    deinit {
        close(descriptor)
        close(wake.read)
        close(wake.write)
    }

    /// `SO_RXQ_OVFL`: report the socket's dropped-datagram count with each datagram.
    private static let receiveQueueOverflow: Int32 = 40
    /// `SO_TIMESTAMPNS` (and its control message `SCM_TIMESTAMPNS`): the kernel's wall-clock
    /// time of each datagram's arrival.
    private static let timestampNanoseconds: Int32 = 35

    /// Sends one datagram to `peer` without blocking.
    /// - Returns: whether all of it was handed to the kernel (false when the send buffer is full
    ///   or the address is unreachable).
    @discardableResult
    public func send(_ bytes: [UInt8], to peer: OSCPeer) -> Bool {
        let sent = peer.withSocketAddress { address, length in
            bytes.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL), address, length) }
        }
        return sent == bytes.count
    }

    /// Waits for the next datagram and reads it into `buffer` (a larger one is cut to the
    /// buffer; its real size is reported).
    /// - Returns: the datagram, or nil once ``interrupt()`` was called.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) -> Datagram? {
        var control = [UInt8](repeating: 0, count: 128)
        while !interrupted.load(ordering: .acquiring) {
            var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { return nil }
            if fds[1].revents != 0 { return nil }
            guard fds[0].revents != 0 else { continue }
            var sender = sockaddr_storage()
            var vector = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
            let (size, senderLength, controlLength) = withUnsafeMutablePointer(to: &sender) { senderPointer in
                withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    control.withUnsafeMutableBytes { controlBytes in
                        var message = msghdr(msg_name: senderPointer, msg_namelen: socklen_t(MemoryLayout<sockaddr_storage>.size),
                                             msg_iov: vectorPointer, msg_iovlen: 1, msg_control: controlBytes.baseAddress,
                                             msg_controllen: controlBytes.count, msg_flags: 0)
                        let size = recvmsg(descriptor, &message, Int32(MSG_TRUNC) | Int32(MSG_DONTWAIT))
                        return (size, message.msg_namelen, message.msg_controllen)
                    }
                }
            }
            guard size >= 0 else { continue }              // (EAGAIN, EINTR: wait again)
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let peer = withUnsafeBytes(of: &sender) { OSCPeer(address: $0.baseAddress!, length: Int(senderLength)) }
            let age = Self.arrival(control, length: controlLength).map { arrival in
                Duration.seconds(Int64(now.tv_sec) - Int64(arrival.tv_sec)) + .nanoseconds(Int64(now.tv_nsec) - Int64(arrival.tv_nsec))
            }
            return Datagram(size: size, sender: peer, droppedByKernel: Self.droppedCount(control, length: controlLength),
                            age: age.map { max(.zero, $0) })
        }
        return nil
    }

    /// Makes ``receive(into:)`` return nil, now and from then on.
    public func interrupt() {
        interrupted.store(true, ordering: .releasing)
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    /// The `SO_RXQ_OVFL` count in a `recvmsg` control buffer (0 when absent).
    private static func droppedCount(_ control: [UInt8], length: Int) -> UInt32 {
        controlData(control, length: length, type: receiveQueueOverflow, as: UInt32.self) ?? 0
    }

    /// The `SCM_TIMESTAMPNS` arrival time in a `recvmsg` control buffer (nil when absent).
    private static func arrival(_ control: [UInt8], length: Int) -> timespec? {
        controlData(control, length: length, type: timestampNanoseconds, as: timespec.self)
    }

    /// The data of the first `SOL_SOCKET` control message of `type` in a `recvmsg` control buffer.
    private static func controlData<T>(_ control: [UInt8], length: Int, type: Int32, as: T.Type) -> T? {
        let align = MemoryLayout<Int>.size
        func aligned(_ n: Int) -> Int { (n + align - 1) / align * align }
        var offset = 0
        return control.withUnsafeBytes { raw in
            while offset + MemoryLayout<cmsghdr>.size <= min(length, raw.count) {
                let header = raw.loadUnaligned(fromByteOffset: offset, as: cmsghdr.self)
                let data = offset + aligned(MemoryLayout<cmsghdr>.size)
                if header.cmsg_level == SOL_SOCKET && header.cmsg_type == type && data + MemoryLayout<T>.size <= raw.count {
                    return raw.loadUnaligned(fromByteOffset: data, as: T.self)
                }
                guard header.cmsg_len > 0 else { break }
                offset += aligned(Int(header.cmsg_len))
            }
            return nil
        }
    }
}
