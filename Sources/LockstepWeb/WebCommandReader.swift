import NIOCore
import NIOWebSocket
import Synchronization

/// What a WebSocket connection's command reader (``WebCommandReader``, on the event loop) and
/// its reading task (``WebControlServer``'s, which answers) share: one entry per message, in
/// the order they came.
final class WebCommandLink: Sendable {
    /// One message as the reader left it.
    enum Entry: Sendable {
        /// Carried out on the event loop: the reply to send.
        case done(String)
        /// For the reading task to carry out (a state, an edit, a fragmented or binary message,
        /// or one that came while an earlier one waited for the task).
        case pending
    }

    private struct Shared {
        /// In message order (a page's few in flight at most).
        var entries: [Entry] = []
        /// Pending messages not carried out yet: while there is one, later messages wait too,
        /// so every command is carried out in the order it was sent.
        var waiting = 0
    }
    private let shared = Mutex(Shared())

    /// Whether the reading task may take the message in hand only: an earlier one still waits.
    var isWaiting: Bool { shared.withLock { $0.waiting > 0 } }

    /// Adds the next message's entry.
    func append(_ entry: Entry) {
        shared.withLock { shared in
            if case .pending = entry { shared.waiting += 1 }
            shared.entries.append(entry)
        }
    }

    /// The entry of the next message the reading task reads (nil when the reader left none: it
    /// then carries the message out itself).
    func next() -> Entry? {
        shared.withLock { $0.entries.isEmpty ? nil : $0.entries.removeFirst() }
    }

    /// Says that a pending message has been carried out.
    func carriedOut() {
        shared.withLock { $0.waiting = max(0, $0.waiting - 1) }
    }
}

/// Carries out a WebSocket client's commands on the event loop that read them, straight from
/// the frame decoder, as the OSC server does with a datagram: a GO from the page reaches the
/// engine without waiting for another thread or an async task to be scheduled.
///
/// A message whole in one masked text frame whose command belongs on this thread (a GO, a cue's
/// stop, a layer's gain: `carryOut` returns its reply) is carried out here; anything else (a state, an edit,
/// a fragmented or binary message, text that is not UTF-8, and everything after a message that
/// waits for the task) is left to the reading task, in order. Every frame is passed on as it
/// came: hummingbird-websocket still collates the messages and fails the connection on a
/// protocol error, and the reading task sends each reply in turn (``WebCommandLink``).
final class WebCommandReader: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame

    private let link: WebCommandLink
    private let carryOut: (String) -> String?
    /// Inside a message of several frames.
    private var inMessage = false

    /// A reader that leaves its entries in `link` and carries commands out with `carryOut` (the
    /// reply, or nil when the command belongs elsewhere).
    init(link: WebCommandLink, carryOut: @escaping (String) -> String?) {
        self.link = link
        self.carryOut = carryOut
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text where frame.fin && !inMessage && frame.reservedBits.isEmpty && !link.isWaiting:
            let bytes = frame.unmaskedData
            if let text = String(validating: bytes.readableBytesView, as: UTF8.self), let reply = carryOut(text) {
                link.append(.done(reply))
            } else {
                link.append(.pending)
            }
        case .text, .binary:
            if !inMessage { link.append(.pending) }
            inMessage = !frame.fin
        case .continuation:
            if frame.fin { inMessage = false }
        default:
            break
        }
        context.fireChannelRead(data)
    }
}
