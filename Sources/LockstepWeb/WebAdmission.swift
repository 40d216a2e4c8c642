import Foundation
import Synchronization

/// Who may drive the show through the web server: the checks on every request that reads or
/// changes it (the WebSocket, `/api/…`, the timeline picture).
///
/// - `Host` must name this server (127.0.0.1, localhost or [::1] on a loopback bind; the bound
///   address otherwise; on a wildcard bind an IP address, `localhost` or one of this machine's
///   own names), with the bound port, so that a site whose name is made to point at this machine
///   (DNS rebinding) is refused.
/// - `Origin`, when the client sends one (a browser always does for a WebSocket and a POST), must
///   be this server itself (`http://` + its `Host`): a page from another site, open in the
///   operator's browser, cannot drive the show.
/// - With a token, the request carries it (`?token=…`, or `Authorization: Bearer …`).
public struct WebAdmission: Sendable, Hashable {
    /// Why a request is refused, with its HTTP status and a message that says what to do.
    public enum Refusal: Sendable, Hashable, Error {
        /// `Host` names another server (403).
        case host(String)
        /// `Origin` is another site (403).
        case origin(String)
        /// The token is missing or wrong (401).
        case token
        /// Too many WebSocket clients (503).
        case full(Int)

        /// The HTTP status code.
        public var status: Int {
            switch self {
            case .host, .origin: 403
            case .token: 401
            case .full: 503
            }
        }

        /// What went wrong and what to do.
        public var message: String {
            switch self {
            case .host(let host): "Host '\(host)' is not this server; open the page at the address lockstep printed"
            case .origin(let origin): "Origin '\(origin)' is another site: only the page this server serves may drive the show"
            case .token: "this show needs its web token: open the URL lockstep printed (it ends in ?token=…)"
            case .full(let limit): "\(limit) pages are connected already, the most allowed; close one and reload"
            }
        }
    }

    /// The bound host (as given to `--web`) and port.
    public var host: String
    /// The port (the one bound, once known).
    public var port: Int
    /// The token every request must carry; nil: none.
    public var token: String?

    /// The names of this machine a wildcard bind accepts in `Host` (lowercase), besides IP
    /// addresses and `localhost`.
    public var machineNames: Set<String>

    /// The checks for a server bound on `host`:`port`; `machineNames` are the names of this
    /// machine a wildcard bind accepts (by default ``localMachineNames``).
    public init(host: String, port: Int, token: String?, machineNames: Set<String>? = nil) {
        self.host = host
        self.port = port
        self.token = token
        self.machineNames = machineNames ?? (Self.isWildcard(host) ? Self.localMachineNames : [])
    }

    /// This machine's own names: its host name (`gethostname`) and, when the resolver gives one
    /// within half a second, its fully qualified name; lowercase. Looked up once.
    public static let localMachineNames: Set<String> = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return [] }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
        guard !name.isEmpty else { return [] }
        var names: Set<String> = [name]
        // The canonical name, from /etc/hosts or DNS: waited for briefly (a resolver that does
        // not answer must not hold up the server).
        final class Found: Sendable { let name = Mutex<String?>(nil) }
        let found = Found()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var hints = addrinfo()
            hints.ai_flags = AI_CANONNAME
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            if getaddrinfo(name, nil, &hints, &list) == 0, let list {
                if let canonical = list.pointee.ai_canonname { found.name.withLock { $0 = String(cString: canonical).lowercased() } }
                freeaddrinfo(list)
            }
            done.signal()
        }
        if done.wait(timeout: .now() + 0.5) == .success, let canonical = found.name.withLock({ $0 }), !canonical.isEmpty {
            names.insert(canonical)
        }
        return names
    }()

    /// Whether `host` is a loopback address or `localhost`.
    public static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    /// Whether the server is bound to every interface (0.0.0.0 or ::).
    public var isWildcard: Bool { Self.isWildcard(host) }

    /// Whether `host` means every interface (0.0.0.0 or ::).
    static func isWildcard(_ host: String) -> Bool { ["0.0.0.0", "::", "[::]", "*", ""].contains(host) }

    /// Whether `text` is an IPv4 address (dotted quad) or an IPv6 address (bare, without brackets).
    public static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// `Host` split into its name (brackets kept off an IPv6 address) and port; the port is nil
    /// when none is written, and the name nil when `Host` is not NAME[:PORT] or [IPV6][:PORT].
    static func split(_ requestHost: String) -> (name: String, port: Int?)? {
        if requestHost.hasPrefix("[") {
            guard let close = requestHost.firstIndex(of: "]") else { return nil }
            let name = String(requestHost[requestHost.index(after: requestHost.startIndex)..<close])
            let rest = requestHost[requestHost.index(after: close)...]
            guard isIPAddress(name), name.contains(":") else { return nil }
            if rest.isEmpty { return (name, nil) }
            guard rest.first == ":", let port = Int(rest.dropFirst()) else { return nil }
            return (name, port)
        }
        let parts = requestHost.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let name = parts.first, !name.isEmpty else { return nil }
        if parts.count == 1 { return (String(name), nil) }
        guard let port = Int(parts[1]) else { return nil }
        return (String(name), port)
    }

    /// Whether a wildcard bind accepts `requestHost` (lowercase): an IP address (IPv6 in
    /// brackets), `localhost` or one of ``machineNames``, with the bound port (or none, on 80).
    func wildcardAccepts(_ requestHost: String) -> Bool {
        guard let (name, given) = Self.split(requestHost), (given ?? 80) == port else { return false }
        if requestHost.hasPrefix("[") { return true }    // split checked it is an IPv6 address
        if name.contains(":") { return false }           // IPv6 without brackets is no Host
        var v4 = in_addr()
        return inet_pton(AF_INET, name, &v4) == 1 || name == "localhost" || machineNames.contains(name)
    }

    /// `host:port` as a URL writes it.
    static func authority(_ host: String, _ port: Int) -> String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The `Host` values that name this server.
    public var hosts: Set<String> {
        var names: Set<String> = [Self.authority(host, port).lowercased()]
        if Self.isLoopback(host) {
            names.formUnion(["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"])
        }
        return names
    }

    /// Checks one request: its `Host` and `Origin` headers and, with `checksToken`, the token it
    /// carries (the `token` query parameter or the bearer token). Nil when it may go on.
    public func refusal(host requestHost: String?, origin: String?, token presented: String?, checksToken: Bool = true) -> Refusal? {
        let requestHost = (requestHost ?? "").lowercased()
        if isWildcard ? !wildcardAccepts(requestHost) : !(hosts.contains(requestHost) || (port == 80 && hosts.contains(requestHost + ":80"))) {
            return .host(requestHost)
        }
        if let origin, origin.lowercased() != "http://" + requestHost { return .origin(origin) }
        if checksToken, let token, !Self.constantTimeEqual(token, presented ?? "") { return .token }
        return nil
    }

    /// The `token` query parameter of a request target (`/ws?token=abc`), percent-decoded.
    public static func token(inTarget target: String) -> String? {
        guard let query = target.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.first == "token" { return parts.count == 2 ? String(parts[1]).removingPercentEncoding ?? String(parts[1]) : "" }
        }
        return nil
    }

    /// The token of an `Authorization: Bearer …` header.
    public static func token(inAuthorization header: String?) -> String? {
        guard let header, header.lowercased().hasPrefix("bearer ") else { return nil }
        return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    /// Compares without stopping at the first difference (the time taken says nothing of the token).
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        var difference = UInt8(truncatingIfNeeded: x.count ^ y.count)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0 && x.count == y.count
    }
}
