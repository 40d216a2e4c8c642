import Foundation

/// Who may drive the show through the web server: the checks on every request that reads or
/// changes it (the WebSocket, `/api/…`, the timeline picture).
///
/// - `Host` must name this server (127.0.0.1, localhost or [::1] on a loopback bind; the bound
///   address otherwise; any name on a wildcard bind), so that a site whose name is made to point
///   at 127.0.0.1 (DNS rebinding) is refused.
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

    /// The checks for a server bound on `host`:`port`.
    public init(host: String, port: Int, token: String?) {
        self.host = host
        self.port = port
        self.token = token
    }

    /// Whether `host` is a loopback address or `localhost`.
    public static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    /// Whether the server is bound to every interface (0.0.0.0 or ::).
    public var isWildcard: Bool { ["0.0.0.0", "::", "[::]", "*", ""].contains(host) }

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

    /// Checks one request: its `Host` and `Origin` headers and the token it carries (the
    /// `token` query parameter or the bearer token). Nil when it may go on.
    public func refusal(host requestHost: String?, origin: String?, token presented: String?) -> Refusal? {
        let requestHost = (requestHost ?? "").lowercased()
        if !isWildcard && !hosts.contains(requestHost) { return .host(requestHost) }
        if let origin, origin.lowercased() != "http://" + requestHost { return .origin(origin) }
        if let token, !Self.constantTimeEqual(token, presented ?? "") { return .token }
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
