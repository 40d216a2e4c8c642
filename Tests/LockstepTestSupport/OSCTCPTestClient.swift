import Foundation
import LockstepOSC

/// A TCP client of an OSC server on 127.0.0.1, for tests: writes raw bytes (SLIP frames, split
/// as a test likes) and reads SLIP frames back, decoding each as an OSC message.
public final class OSCTCPTestClient {
    private let connection: LoopbackTCPConnection
    private var decoder = SLIPDecoder(maximumFrameSize: 1 << 20)
    private var frames: [[UInt8]] = []
    /// Whether the server closed the connection.
    public private(set) var isClosed = false

    /// Connects to `port` on 127.0.0.1 (`receiveBuffer`: the socket's `SO_RCVBUF`).
    public init(port: UInt16, receiveBuffer: Int? = nil) throws {
        do { connection = try LoopbackTCPConnection(port: Int(port), receiveBuffer: receiveBuffer) } catch {
            throw OSCError(.cannotBind, "connect to 127.0.0.1:\(port): \(error.localizedDescription)")
        }
    }

    /// Writes bytes as they are.
    public func write(_ bytes: [UInt8]) { connection.write(bytes) }

    /// Sends one message, SLIP-framed.
    public func send(_ address: String, _ arguments: [OSCArgument] = []) throws {
        write(SLIP.encode(try OSCMessage(address, arguments).encoded()))
    }

    /// The next SLIP frame (nil after `timeout` seconds, or once the server closed the connection
    /// and every frame was read).
    public func nextFrame(timeout: Double = 5) -> [UInt8]? {
        let deadline = Date().addingTimeInterval(timeout)
        while frames.isEmpty && !isClosed {
            guard let bytes = connection.receive(until: deadline) else { return nil }
            if bytes.isEmpty { isClosed = true; break }
            for event in decoder.feed(bytes) {
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
