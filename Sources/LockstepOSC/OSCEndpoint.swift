import Foundation

/// Where an OSC server listens: a host (an address or a name) and a UDP port, as `--osc` writes it.
public struct OSCEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The port QLab listens on, and Lockstep by default.
    public static let defaultPort: UInt16 = 53000
    /// The port QLab sends replies to, and Lockstep by default.
    public static let defaultReplyPort: UInt16 = 53001

    /// The host to bind: `127.0.0.1` (only this machine), `0.0.0.0` (every IPv4 interface),
    /// `::1`, an interface's address, or a name that resolves to one.
    public var host: String
    /// The UDP port (0: any free port, which the server reports once bound).
    public var port: UInt16

    /// An endpoint; by default this machine only, on QLab's port.
    public init(host: String = "127.0.0.1", port: UInt16 = OSCEndpoint.defaultPort) {
        self.host = host
        self.port = port
    }

    /// Parses `PORT`, `HOST:PORT`, `[IPV6]:PORT` or `HOST` (on the default port), given with
    /// the command-line `option` (named in errors).
    /// - Throws: ``OSCError`` (`.invalidEndpoint`) saying how to write it.
    public static func parse(_ text: String, option: String = "--osc") throws(OSCError) -> OSCEndpoint {
        let hint = "write PORT, HOST:PORT or [IPV6]:PORT, e.g. 53000, 127.0.0.1:53000 or 0.0.0.0:53000"
        func port(_ value: Substring) throws(OSCError) -> UInt16 {
            guard let number = UInt16(value) else {
                throw OSCError(.invalidEndpoint, "\(option) '\(text)': '\(value)' is not a port (0 to 65535); \(hint)")
            }
            return number
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw OSCError(.invalidEndpoint, "\(option) is empty; \(hint)") }
        if trimmed.allSatisfy(\.isNumber) { return OSCEndpoint(port: try port(Substring(trimmed))) }
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else {
                throw OSCError(.invalidEndpoint, "\(option) '\(text)': the IPv6 address has no closing ']'; \(hint)")
            }
            let host = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
            let rest = trimmed[trimmed.index(after: close)...]
            if rest.isEmpty { return OSCEndpoint(host: host) }
            guard rest.hasPrefix(":") else { throw OSCError(.invalidEndpoint, "\(option) '\(text)': expected ':PORT' after ']'; \(hint)") }
            return OSCEndpoint(host: host, port: try port(rest.dropFirst()))
        }
        let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: return OSCEndpoint(host: trimmed)
        case 2 where !parts[0].isEmpty: return OSCEndpoint(host: String(parts[0]), port: try port(parts[1]))
        default: throw OSCError(.invalidEndpoint, "\(option) '\(text)' is not [HOST:]PORT (an IPv6 address goes in brackets); \(hint)")
        }
    }

    /// `127.0.0.1:53000`, `[::1]:53000`.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
