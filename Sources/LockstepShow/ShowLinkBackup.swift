import Foundation
import LockstepSession
import NIOCore
import NIOPosix
import Synchronization

/// The backup's end of a show link (`session run --backup-of HOST:PORT`): it joins a main
/// (``join(host:port:passcode:text:timeout:)``: the passcode and the session's text, answered by
/// the main's run as it stands), then takes the main's messages one by one (``next(timeout:)``)
/// until the link is lost.
public final class ShowLinkBackup: Sendable {
    /// What the main sent when it let the backup in.
    public struct Welcome: Sendable {
        /// The main's session text, as edited.
        public var text: String
        /// The main's edits ``text`` holds (the next one it sends counts one more).
        public var edits: Int
        /// The main's run.
        public var run: SessionPlayer.RunState
        /// Where the main was.
        public var moment: ShowJournal.Moment
    }

    /// What the link delivers.
    public enum Event: Sendable {
        /// A message of the main.
        case message(ShowLink.Message)
        /// The link is gone (the main stopped, crashed, or the network failed), and why.
        case lost(String)
    }

    /// The main's address, as given.
    public let main: String
    private let channel: any Channel
    private let inbox: Inbox

    /// Joins the main at `host`:`port` with `passcode`, for a run of the session file holding
    /// `text`; waits at most `timeout` seconds for the main's answer.
    /// - Throws: ``LinkError``: it cannot connect, the main refused (saying why), or no answer.
    public static func join(host: String, port: Int, passcode: String, text: String,
                            timeout: Double = 10) throws(LinkError) -> (ShowLinkBackup, Welcome) {
        let main = "\(host):\(port)"
        let inbox = Inbox()
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.milliseconds(Int64(timeout * 1000)))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(ShowLink.framing() + [BackupHandler(inbox: inbox)])
                }
            }
        let channel: any Channel
        do { channel = try bootstrap.connect(host: host, port: port).wait() } catch {
            throw LinkError("cannot reach the main at \(main) (\(error)); start it with --main first, and check the address")
        }
        let link = ShowLinkBackup(main: main, channel: channel, inbox: inbox)
        channel.writeAndFlush(channel.allocator.buffer(bytes: ShowLink.encode(.hello(passcode: passcode, text: text))), promise: nil)
        switch link.next(timeout: timeout) {
        case .message(.welcome(let text, let edits, let run, let moment))?:
            return (link, Welcome(text: text, edits: edits, run: run, moment: moment))
        case .message(.refused(let reason))?:
            link.close()
            throw LinkError("the main at \(main) refused this backup: \(reason)")
        case .lost(let why)?:
            throw LinkError("the main at \(main) closed the link before letting this backup in: \(why)")
        case .message(let other)?:
            link.close()
            throw LinkError("the main at \(main) answered \(other) instead of a welcome")
        case nil:
            link.close()
            throw LinkError("the main at \(main) did not answer within \(timeout) s")
        }
    }

    private init(main: String, channel: any Channel, inbox: Inbox) {
        self.main = main
        self.channel = channel
        self.inbox = inbox
    }

    /// The next event, waiting at most `timeout` seconds (nil: none came). After ``Event/lost(_:)``
    /// it returns that again.
    public func next(timeout: Double) -> Event? { inbox.take(timeout: timeout) }

    /// Sends `message` to the main (hashes and samples of the backup's output).
    public func send(_ message: ShowLink.Message) {
        channel.writeAndFlush(channel.allocator.buffer(bytes: ShowLink.encode(message)), promise: nil)
    }

    /// Closes the link.
    public func close() { channel.close(promise: nil) }

    /// Messages in arrival order, then the loss.
    final class Inbox: Sendable {
        private let events = Mutex<(queue: [Event], lost: String?)>(([], nil))
        private let arrived = DispatchSemaphore(value: 0)

        func put(_ message: ShowLink.Message) {
            events.withLock { $0.queue.append(.message(message)) }
            arrived.signal()
        }

        func lose(_ why: String) {
            let first = events.withLock { state in
                defer { if state.lost == nil { state.lost = why } }
                return state.lost == nil
            }
            if first { arrived.signal() }
        }

        func take(timeout: Double) -> Event? {
            let deadline = DispatchTime.now() + timeout
            while true {
                let event = events.withLock { state -> Event? in
                    if !state.queue.isEmpty { return state.queue.removeFirst() }
                    return state.lost.map { .lost($0) }
                }
                if let event { return event }
                if arrived.wait(timeout: deadline) == .timedOut { return nil }
            }
        }
    }

    final class BackupHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let inbox: Inbox

        init(inbox: Inbox) { self.inbox = inbox }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            do throws(LinkError) {
                inbox.put(try ShowLink.decode(buffer.readableBytesView))
            } catch {
                inbox.lose("the main sent \(error.message)")
                context.close(promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            inbox.lose("the connection closed")
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            inbox.lose("\(error)")
            context.close(promise: nil)
        }
    }
}
