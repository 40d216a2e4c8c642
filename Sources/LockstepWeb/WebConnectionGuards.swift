import HummingbirdCore
import Logging
import LockstepControl
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// The web server's connection channel: hummingbird-websocket's, with what it leaves undone until
/// the first request has been read — a connection that sends bytes that are not HTTP gets `400`
/// and is closed (``NotHTTPHandler``), one that takes longer than the timeout to send the first
/// request's head is closed (``FirstRequestTimeout``), and an upgraded WebSocket fails on an
/// unmasked client frame (``UnmaskedFrameGuard``); after that guard, the connection's
/// ``WebCommandReader``.
struct GuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    /// How long a connection may take to send its first request's head.
    let firstRequestTimeout: TimeAmount
    /// The command reader of an upgraded connection (nil: none, its task reads the commands).
    let commandReader: @Sendable (any Channel) -> WebCommandReader?
    /// Told of every connection as it is accepted (the server closes them at its stop).
    let accepted: @Sendable (any Channel) -> Void

    init(_ inner: Inner, firstRequestTimeout: TimeAmount, commandReader: @escaping @Sendable (any Channel) -> WebCommandReader?,
         accepted: @escaping @Sendable (any Channel) -> Void) {
        self.inner = inner
        self.firstRequestTimeout = firstRequestTimeout
        self.commandReader = commandReader
        self.accepted = accepted
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        accepted(channel)
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandlers([NotHTTPHandler(), FirstRequestTimeout(firstRequestTimeout, commandReader: commandReader)])
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Answers an HTTP parse error before the first request with `400 Bad Request` (a JSON error
/// saying so) and closes the connection; steps out of the pipeline once anything is read.
///
/// hummingbird-websocket's channel turns NIO's own error handling off and catches nothing while
/// it waits for the first request (the upgrade handler buffers it): bytes the HTTP parser
/// refuses left the connection open, unanswered, until the idle timeout.
final class NotHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundOut = HTTPServerResponsePart
    private var answered = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError, !answered else {
            context.fireErrorCaught(error)
            return
        }
        answered = true
        let body = ByteBuffer(string: ControlReply.error("", .malformed, "this is not an HTTP request; open the page at the address lockstep printed").json + "\n")
        let head = HTTPResponseHead(version: .http1_1, status: .badRequest,
                                    headers: ["Content-Type": "application/json", "Content-Length": String(body.readableBytes),
                                              "Connection": "close"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// Closes a connection that has not sent its first request's head (request line and headers)
/// within the timeout: a client sending them a byte at a time (slowloris) is cut off.
///
/// Hummingbird's idle timeout (`HTTP1Channel.Configuration.idleTimeout`, which this server sets)
/// closes a connection that sends nothing whole for that long — counted from its last complete
/// request part, so it covers a slow head after the first request — but hummingbird-websocket's
/// channel adds it only once the first head has been read and the upgrade decided. Until then
/// this handler keeps the same time. It leaves the pipeline as soon as the first head is through:
/// a request read, or the upgrade to a WebSocket complete (when it also puts an
/// ``UnmaskedFrameGuard`` after the WebSocket frame decoder, and the ``WebCommandReader`` after
/// that, before any frame is read).
final class FirstRequestTimeout: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let timeout: TimeAmount
    private let commandReader: @Sendable (any Channel) -> WebCommandReader?
    private var deadline: Scheduled<Void>?

    init(_ timeout: TimeAmount, commandReader: @escaping @Sendable (any Channel) -> WebCommandReader?) {
        self.timeout = timeout
        self.commandReader = commandReader
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A request part reaches this far only once the upgrade handler has read the whole head.
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .upgradeComplete? = event as? HTTPServerUpgradeEvents else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        // The frames the upgrade handler buffered are passed on only after this event.
        if let decoder = try? context.pipeline.syncOperations.context(handlerType: ByteToMessageHandler<WebSocketFrameDecoder>.self) {
            let guardHandler = UnmaskedFrameGuard()
            try? context.pipeline.syncOperations.addHandler(guardHandler, position: .after(decoder.handler))
            if let reader = commandReader(context.channel) {
                try? context.pipeline.syncOperations.addHandler(reader, position: .after(guardHandler))
            }
        }
        context.fireUserInboundEventTriggered(event)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

/// Fails a WebSocket connection on an unmasked client frame, as RFC 6455 §5.1 requires: a close
/// frame with status 1002 (protocol error), then the connection is closed; the frame is not
/// passed on. Neither NIO's frame decoder nor swift-websocket checks the mask, nor can they be
/// told to.
final class UnmaskedFrameGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame
    private var failed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        guard unwrapInboundIn(data).maskKey == nil else {
            context.fireChannelRead(data)
            return
        }
        failed = true
        var status = context.channel.allocator.buffer(capacity: 2)
        status.write(webSocketErrorCode: .protocolError)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: status)))
            .whenComplete { _ in channel.close(promise: nil) }
    }
}
