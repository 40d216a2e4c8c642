import Foundation

/// A UDP socket address (IPv4 or IPv6): where a datagram came from, or where one goes.
public struct OSCPeer: Sendable, Hashable, CustomStringConvertible {
    /// The address bytes (`sockaddr_in` or `sockaddr_in6`), exactly `length` of them.
    private let bytes: [UInt8]

    /// Wraps a socket address of `length` bytes.
    public init(address: UnsafeRawPointer, length: Int) {
        bytes = Array(UnsafeRawBufferPointer(start: address, count: min(length, MemoryLayout<sockaddr_storage>.size)))
    }

    /// The first address `endpoint` resolves to (for a server to bind when `passive`: a host
    /// `0.0.0.0` or `::` then means every interface).
    /// - Throws: ``OSCError`` (`.unresolvedHost`) when the host does not resolve.
    public static func resolve(_ endpoint: OSCEndpoint, passive: Bool = false) throws(OSCError) -> OSCPeer {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list)
        guard status == 0, let first = list else {
            throw OSCError(.unresolvedHost, "OSC: cannot resolve '\(endpoint.host)': \(String(cString: gai_strerror(status))); use an address such as 127.0.0.1 or 0.0.0.0")
        }
        defer { freeaddrinfo(list) }
        return OSCPeer(address: first.pointee.ai_addr, length: Int(first.pointee.ai_addrlen))
    }

    /// Binds socket `fd` to `address` (what `endpoint` resolved to).
    /// - Throws: ``OSCError`` (`.cannotBind`) naming the endpoint and `transport`, and saying what
    ///   to change (with `option`, the command-line option that chose it).
    static func bind(_ fd: Int32, to address: OSCPeer, endpoint: OSCEndpoint, transport: String, option: String) throws(OSCError) {
        guard address.withSocketAddress({ Glibc.bind(fd, $0, $1) }) != 0 else { return }
        let code = errno
        let advice = switch code {
        case EADDRINUSE: "the port is in use (QLab, another Lockstep, an OSC tool?); choose another with \(option) HOST:PORT"
        case EACCES: "ports below 1024 need privileges; use QLab's 53000 or another port above 1023"
        case EADDRNOTAVAIL: "'\(endpoint.host)' is not an address of this machine; use 127.0.0.1, 0.0.0.0 or one of its interfaces' addresses"
        default: "check the host and port"
        }
        throw OSCError(.cannotBind, "OSC: cannot listen on \(endpoint) (\(transport)): \(String(cString: strerror(code))); \(advice)")
    }

    /// The address socket `fd` is bound to (with the port the system chose, for port 0).
    static func localAddress(of fd: Int32) -> OSCPeer {
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutablePointer(to: &bound) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        return withUnsafeBytes(of: &bound) { OSCPeer(address: $0.baseAddress!, length: Int(length)) }
    }

    /// The address family (`AF_INET` or `AF_INET6`).
    public var family: Int32 {
        bytes.withUnsafeBytes { Int32($0.load(fromByteOffset: MemoryLayout<sockaddr>.offset(of: \.sa_family)!, as: sa_family_t.self)) }
    }

    /// The port.
    public var port: UInt16 {
        bytes.withUnsafeBytes { raw in
            // sin_port and sin6_port sit at the same offset, in network byte order.
            UInt16(bigEndian: raw.load(fromByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_port)!, as: UInt16.self))
        }
    }

    /// The same host at another port.
    public func with(port: UInt16) -> OSCPeer {
        var copy = bytes
        copy.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: port.bigEndian, toByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_port)!, as: UInt16.self)
        }
        return copy.withUnsafeBytes { OSCPeer(address: $0.baseAddress!, length: $0.count) }
    }

    /// The host as a numeric address (`127.0.0.1`, `::1`).
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let status = withSocketAddress { address, length in
            getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST)
        }
        return status == 0 ? text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : "?"
    }

    /// Whether the host is a loopback address (127.0.0.0/8, `::1`, or 127.x mapped into IPv6).
    public var isLoopback: Bool {
        bytes.withUnsafeBytes { raw in
            if family == AF_INET {
                let address = raw.load(fromByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!, as: UInt32.self)
                return UInt32(bigEndian: address) >> 24 == 127
            }
            let offset = MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!
            let address = Array(raw[offset..<offset + 16])
            let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xff, 0xff]
            return address == Array(repeating: 0, count: 15) + [1] || (Array(address.prefix(12)) == mappedPrefix && address[12] == 127)
        }
    }

    /// `127.0.0.1:53000` or `[::1]:53000`.
    public var description: String { family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Calls `body` with the address as a `sockaddr` pointer and its length.
    public func withSocketAddress<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> T) rethrows -> T {
        try bytes.withUnsafeBytes { raw in
            try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }
}
