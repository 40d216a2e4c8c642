import Foundation

/// A raw HTTP/1.1 client on 127.0.0.1 for tests: sends bytes exactly as a test writes them (any
/// `Origin`, `Host`, a broken body, a WebSocket upgrade) and reads the response's head and body.
public final class HTTPTestClient {
    /// A response: its status code, head (status line and headers) and body.
    public struct Response: Sendable {
        /// The status code (0: no response).
        public var status: Int
        /// The status line and headers.
        public var head: String
        /// The body (as much as arrived).
        public var body: String
    }

    private let connection: LoopbackTCPConnection

    /// Connects to `port` on 127.0.0.1.
    public init(port: Int) throws {
        connection = try LoopbackTCPConnection(port: port)
    }

    /// Writes bytes as they are (stops quietly when the server closed the connection).
    public func write(_ bytes: [UInt8]) { connection.write(bytes) }

    /// Reads one response: the head, then the body up to its Content-Length (none for a 101
    /// upgrade), or until the server closes or `timeout` seconds pass.
    public func response(timeout: Double = 5) -> Response {
        let deadline = Date().addingTimeInterval(timeout)
        var data = [UInt8]()
        func complete() -> Bool {
            guard let end = Self.headEnd(data) else { return false }
            let head = String(decoding: data[..<end], as: UTF8.self)
            if head.hasPrefix("HTTP/1.1 101") { return true }
            guard let length = Self.header("content-length", in: head).flatMap(Int.init) else { return false }
            return data.count - end - 4 >= length
        }
        while !complete() {
            guard let bytes = connection.receive(until: deadline), !bytes.isEmpty else { break }
            data += bytes
        }
        guard let end = Self.headEnd(data) else { return Response(status: 0, head: String(decoding: data, as: UTF8.self), body: "") }
        let head = String(decoding: data[..<end], as: UTF8.self)
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return Response(status: status, head: head, body: String(decoding: data[(end + 4)...], as: UTF8.self))
    }

    /// Whether the server closes the connection within `timeout` seconds (bytes that still
    /// arrive are read and dropped).
    public func closes(within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while let bytes = connection.receive(until: deadline) {
            if bytes.isEmpty { return true }
        }
        return false
    }

    /// Sends `request` (CRLF line ends added to a request written with `\n`) and reads the response.
    public static func exchange(port: Int, _ request: String, body: [UInt8] = [], timeout: Double = 5) throws -> Response {
        let client = try HTTPTestClient(port: port)
        client.write(Array(request.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n").utf8) + body)
        return client.response(timeout: timeout)
    }

    /// A GET of `path` with `headers` (`Host` is 127.0.0.1:`port` unless given).
    public static func get(port: Int, _ path: String, headers: [String: String] = [:]) throws -> Response {
        var lines = ["GET \(path) HTTP/1.1"]
        var headers = headers
        if headers["Host"] == nil { headers["Host"] = "127.0.0.1:\(port)" }
        headers["Connection"] = headers["Connection"] ?? "close"
        lines += headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        return try exchange(port: port, lines.joined(separator: "\n") + "\n\n")
    }

    /// A POST of `body` to `path` with `headers`.
    public static func post(port: Int, _ path: String, body: [UInt8], headers: [String: String] = [:]) throws -> Response {
        var lines = ["POST \(path) HTTP/1.1", "Host: 127.0.0.1:\(port)", "Connection: close", "Content-Type: application/json",
                     "Content-Length: \(body.count)"]
        lines += headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        return try exchange(port: port, lines.joined(separator: "\n") + "\n\n", body: body)
    }

    /// A WebSocket upgrade request for `path` with `headers` (the response is 101 when accepted).
    public static func upgrade(port: Int, _ path: String, headers: [String: String] = [:]) throws -> Response {
        var all = ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                   "Sec-WebSocket-Version": "13"]
        all.merge(headers) { $1 }
        return try get(port: port, path, headers: all)
    }

    private static func headEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for index in 0...(data.count - 4) where data[index] == 13 && data[index + 1] == 10 && data[index + 2] == 13 && data[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// The value of header `name` (lowercase) in `head`.
    public static func header(_ name: String, in head: String) -> String? {
        for line in head.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 && parts[0].lowercased() == name { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }
}
