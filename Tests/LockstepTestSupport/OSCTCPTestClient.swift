import Foundation
import LockstepOSC

/// A TCP client of an OSC server on 127.0.0.1, for tests: writes raw bytes (SLIP frames, split
/// as a test likes) and reads SLIP frames back, decoding each as an OSC message.
public final class OSCTCPTestClient {
    private let descriptor: Int32
    private var decoder = SLIPDecoder(maximumFrameSize: 1 << 20)
    private var frames: [[UInt8]] = []
    /// Whether the server closed the connection.
    public private(set) var isClosed = false

    /// Connects to `port` on 127.0.0.1.
    public init(port: UInt16) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw OSCError(.cannotBind, "socket: \(String(cString: strerror(errno)))") }
        let server = try OSCPeer.resolve(OSCEndpoint(host: "127.0.0.1", port: port))
        guard server.withSocketAddress({ connect(fd, $0, $1) }) == 0 else {
            let problem = String(cString: strerror(errno))
            close(fd)
            throw OSCError(.cannotBind, "connect to 127.0.0.1:\(port): \(problem)")
        }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Writes bytes as they are.
    public func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// Sends one message, SLIP-framed.
    public func send(_ address: String, _ arguments: [OSCArgument] = []) throws {
        write(SLIP.encode(try OSCMessage(address, arguments).encoded()))
    }

    /// The next SLIP frame (nil after `timeout` seconds, or once the server closed the connection
    /// and every frame was read).
    public func nextFrame(timeout: Double = 5) -> [UInt8]? {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while frames.isEmpty && !isClosed {
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, left) > 0 else { return nil }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { isClosed = true; break }
            for event in decoder.feed(buffer[..<count]) {
                if case .frame(let frame) = event { frames.append(frame) }
            }
        }
        return frames.isEmpty ? nil : frames.removeFirst()
    }

    /// The next message received (nil after `timeout`, or when a frame is not an OSC message).
    public func next(timeout: Double = 5) -> OSCMessage? {
        guard let frame = nextFrame(timeout: timeout) else { return nil }
        return frame.withUnsafeBytes { try? OSCMessage(decoding: $0) }
    }

    /// Waits for the next message to `address` (skipping others) and returns its JSON object.
    public func reply(to address: String, timeout: Double = 5) -> [String: Any]? {
        let deadline = Date().addingTimeInterval(timeout)
        while let message = next(timeout: max(0, deadline.timeIntervalSinceNow)) {
            if message.address == "/reply" + address { return OSCTestPeer.json(message) }
        }
        return nil
    }

    /// Waits until the server has closed the connection (true), reading and dropping what it sent.
    public func waitForClose(timeout: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !isClosed && deadline.timeIntervalSinceNow > 0 { _ = nextFrame(timeout: deadline.timeIntervalSinceNow) }
        return isClosed
    }
}
