import Foundation

/// A raw WebSocket client on 127.0.0.1 for tests: the RFC 6455 handshake, then frames exactly as
/// a test writes them (masked or not, any payload, valid UTF-8 or not), and the server's frames
/// as they come back.
public final class WebSocketTestClient {
    /// One frame from the server.
    public struct Frame: Sendable, Hashable {
        /// The opcode: 1 text, 2 binary, 8 close, 9 ping, 10 pong.
        public var opcode: UInt8
        /// The payload (servers do not mask).
        public var payload: [UInt8]
        /// A text frame's payload as text.
        public var text: String { String(decoding: payload, as: UTF8.self) }
        /// A close frame's status code (nil for another frame, or a close without one).
        public var closeCode: UInt16? {
            opcode == 8 && payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
        }
    }

    /// The status line and headers of the handshake's response.
    public let handshake: String
    private let connection: LoopbackTCPConnection
    private var pending: [UInt8] = []
    private var closed = false

    /// Connects to `port`, asks to upgrade `path` (with `headers`, Host 127.0.0.1:`port` unless
    /// given) and reads the response's head; ``handshake`` holds it (101 when accepted).
    /// - Throws: the `POSIXError` of connecting.
    public init(port: Int, path: String = "/ws", headers: [String: String] = [:], receiveBuffer: Int? = nil) throws {
        connection = try LoopbackTCPConnection(port: port, receiveBuffer: receiveBuffer)
        var all = ["Host": "127.0.0.1:\(port)", "Upgrade": "websocket", "Connection": "Upgrade",
                   "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13"]
        all.merge(headers) { $1 }
        let request = (["GET \(path) HTTP/1.1"] + all.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }).joined(separator: "\r\n")
        connection.write(Array((request + "\r\n\r\n").utf8))
        let deadline = Date().addingTimeInterval(5)
        var head = ""
        while true {
            if let end = Self.headEnd(pending) {
                head = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeFirst(end + 4)
                break
            }
            guard let bytes = connection.receive(until: deadline), !bytes.isEmpty else { break }
            pending += bytes
        }
        handshake = head
    }

    /// Whether the server accepted the upgrade (101 Switching Protocols).
    public var isUpgraded: Bool { handshake.hasPrefix("HTTP/1.1 101") }

    /// Sends one frame (``frame(opcode:_:masked:fin:)``).
    public func send(opcode: UInt8 = 1, _ payload: [UInt8], masked: Bool = true, fin: Bool = true) {
        connection.write(Self.frame(opcode: opcode, payload, masked: masked, fin: fin))
    }

    /// Sends `frames` (``frame(opcode:_:masked:fin:)``) in one write: the server reads them at once.
    public func send(frames: [[UInt8]]) { connection.write(frames.flatMap { $0 }) }

    /// One frame: FIN set unless `fin` is false (a fragment: continuation frames, opcode 0,
    /// follow), `opcode`, `payload` masked with a fixed key unless `masked` is false (a client
    /// must mask; RFC 6455 §5.1).
    public static func frame(opcode: UInt8 = 1, _ payload: [UInt8], masked: Bool = true, fin: Bool = true) -> [UInt8] {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let mask: UInt8 = masked ? 0x80 : 0
        switch payload.count {
        case ..<126: frame.append(mask | UInt8(payload.count))
        case ..<65536: frame += [mask | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: frame.append(mask | 127); frame += (0..<8).reversed().map { UInt8(truncatingIfNeeded: payload.count >> ($0 * 8)) }
        }
        if masked {
            let key: [UInt8] = [0x12, 0x34, 0x56, 0x78]
            frame += key
            frame += payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
        } else {
            frame += payload
        }
        return frame
    }

    /// Sends `text` as one text frame.
    public func send(text: String, masked: Bool = true) { send(opcode: 1, Array(text.utf8), masked: masked) }

    /// The next frame from the server within `timeout` seconds; nil when none came, or the
    /// connection closed first.
    public func next(timeout: Double = 5) -> Frame? {
        let deadline = Date().addingTimeInterval(timeout)
        while !closed {
            if let frame = parse() { return frame }
            guard let bytes = connection.receive(until: deadline) else { return nil }
            if bytes.isEmpty { closed = true } else { pending += bytes }
        }
        return parse()
    }

    /// The next frame that is not a ping, pong or text frame of `kind` (the meters and status the
    /// page is sent all along), within `timeout` seconds.
    public func next(skipping kinds: [String], timeout: Double = 5) -> Frame? {
        let deadline = Date().addingTimeInterval(timeout)
        while let frame = next(timeout: max(0, deadline.timeIntervalSinceNow)) {
            if frame.opcode == 9 || frame.opcode == 10 { continue }
            if frame.opcode == 1, kinds.contains(where: { frame.text.contains("\"event\":\"\($0)\"") }) { continue }
            return frame
        }
        return nil
    }

    /// Whether the server closes the connection within `timeout` seconds (frames still arriving
    /// are read and dropped).
    public func closes(within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !closed {
            guard let bytes = connection.receive(until: deadline) else { return false }
            if bytes.isEmpty { closed = true }
        }
        return true
    }

    private func parse() -> Frame? {
        guard pending.count >= 2 else { return nil }
        var length = Int(pending[1] & 0x7F), offset = 2
        if length == 126 {
            guard pending.count >= 4 else { return nil }
            length = Int(pending[2]) << 8 | Int(pending[3])
            offset = 4
        } else if length == 127 {
            guard pending.count >= 10 else { return nil }
            length = pending[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        guard pending.count >= offset + length else { return nil }
        let frame = Frame(opcode: pending[0] & 0x0F, payload: Array(pending[offset..<(offset + length)]))
        pending.removeFirst(offset + length)
        return frame
    }

    private static func headEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for index in 0...(data.count - 4) where data[index] == 13 && data[index + 1] == 10 && data[index + 2] == 13 && data[index + 3] == 10 {
            return index
        }
        return nil
    }
}
