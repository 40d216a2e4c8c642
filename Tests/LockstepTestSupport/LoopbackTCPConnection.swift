import Foundation

/// A TCP connection to a server on 127.0.0.1, for test clients that write raw bytes and read
/// whatever comes back (``HTTPTestClient``, ``OSCTCPTestClient``).
public final class LoopbackTCPConnection {
    private let descriptor: Int32

    /// Connects to `port` on 127.0.0.1; `receiveBuffer` sets the socket's receive buffer first
    /// (`SO_RCVBUF`: a client that never reads fills a small one sooner).
    /// - Throws: the `POSIXError` of `socket` or `connect`.
    public init(port: Int, receiveBuffer: Int? = nil) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .ECONNREFUSED)
        }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Writes bytes as they are (stops quietly when the server closed the connection).
    public func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// The next bytes that arrive before `deadline`: nil when none arrived by then, empty once the
    /// server closed the connection.
    public func receive(until deadline: Date) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
        var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        guard poll(&fds, 1, left) > 0 else { return nil }
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count <= 0 ? [] : Array(buffer[..<count])
    }
}
