import Foundation
import LockstepOSC
import Synchronization

/// An OSC client for tests: a UDP socket on 127.0.0.1 (one port for everything it sends and
/// receives, as Companion or TouchOSC keep theirs) that sends to a server on this machine and
/// keeps every message it receives, decoded by liblo.
public final class OSCTestPeer: @unchecked Sendable {
    /// The socket.
    public let socket: OSCUDPSocket
    /// The server's port on 127.0.0.1.
    public let serverPort: UInt16
    private let inbox = Inbox()
    private let sentCount = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)

    /// The messages received and not taken (kept apart from the peer, which the receiving thread
    /// must not retain).
    private final class Inbox: @unchecked Sendable {
        let condition = NSCondition()
        var messages: [OSCMessage] = []
        var undecodable = 0
    }

    /// Binds 127.0.0.1 on a free port and starts receiving.
    public init(serverPort: UInt16) throws {
        let socket = try OSCUDPSocket(binding: OSCEndpoint(host: "127.0.0.1", port: 0))
        self.socket = socket
        self.serverPort = serverPort
        Thread { [inbox, finished] in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 8)
            defer { buffer.deallocate(); finished.signal() }
            while let datagram = socket.receive(into: buffer) {
                let message = try? OSCMessage(decoding: UnsafeRawBufferPointer(rebasing: buffer[..<min(datagram.size, buffer.count)]))
                inbox.condition.lock()
                if let message { inbox.messages.append(message) } else { inbox.undecodable += 1 }
                inbox.condition.broadcast()
                inbox.condition.unlock()
            }
        }.start()
    }

    deinit {
        socket.interrupt()
        finished.wait()
    }

    /// The port it listens on (send `/udpReplyPort` with it).
    public var port: UInt16 { socket.localAddress.port }

    private var server: OSCPeer { try! OSCPeer.resolve(OSCEndpoint(host: "127.0.0.1", port: serverPort)) }

    /// Datagrams sent to the server that the kernel took.
    public var sent: Int { sentCount.load(ordering: .relaxed) }

    /// Sends a message (encoded by liblo) to the server.
    public func send(_ address: String, _ arguments: [OSCArgument] = []) throws {
        send(bytes: try OSCMessage(address, arguments).encoded())
    }

    /// Sends raw bytes (a malformed or oversized datagram) to the server.
    public func send(bytes: [UInt8]) {
        if socket.send(bytes, to: server) { sentCount.add(1, ordering: .relaxed) }
    }

    /// Sends a message or a bundle (encoded by liblo).
    public func send(_ packet: OSCPacket) throws {
        send(bytes: try packet.encoded())
    }

    /// Waits for the first message not taken yet whose address is `address` and takes it
    /// (nil after `timeout` seconds).
    public func next(_ address: String, timeout: Double = 5) -> OSCMessage? {
        next(timeout: timeout) { $0.address == address }
    }

    /// Waits for the first message not taken yet that `matches` and takes it.
    public func next(timeout: Double = 5, where matches: (OSCMessage) -> Bool) -> OSCMessage? {
        let deadline = Date().addingTimeInterval(timeout)
        inbox.condition.lock()
        defer { inbox.condition.unlock() }
        while true {
            if let index = inbox.messages.firstIndex(where: matches) { return inbox.messages.remove(at: index) }
            guard inbox.condition.wait(until: deadline) else {
                return inbox.messages.firstIndex(where: matches).map { inbox.messages.remove(at: $0) }
            }
        }
    }

    /// Waits for the reply to `address` (`/reply{address}`) and returns its JSON object.
    public func reply(to address: String, timeout: Double = 5) -> [String: Any]? {
        guard let message = next("/reply" + address, timeout: timeout) else { return nil }
        return Self.json(message)
    }

    /// The JSON object in a reply's or update's one string argument.
    public static func json(_ message: OSCMessage) -> [String: Any]? {
        guard message.arguments.count == 1, let text = message.arguments[0].text else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    /// Every message received and not taken, and how many datagrams did not decode.
    public var pending: (messages: [OSCMessage], undecodable: Int) {
        inbox.condition.lock()
        defer { inbox.condition.unlock() }
        return (inbox.messages, inbox.undecodable)
    }
}
