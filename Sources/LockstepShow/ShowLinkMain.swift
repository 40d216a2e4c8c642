import Foundation
import LockstepSession
import NIOCore
import NIOPosix
import Synchronization

/// The main's end of a show link (`session run --main HOST:PORT`): it listens for backups, lets
/// in those that give the passcode and run the same session text, and sends each its run —
/// a welcome with the state as it stands, then every change and, while the session plays, where
/// it is every ``ShowJournal/clockInterval`` (``ShowLink``).
///
/// Its own thread watches the player (woken by each change, ``SessionPlayer/changes``) and
/// writes to every backup; a backup that does not read is left behind rather than holding the
/// show up (its connection is closed). Never on the realtime thread.
public final class ShowLinkMain: Sendable {
    /// What happened to a backup: it joined, left, was refused, or was dropped for not reading.
    public struct Event: Sendable, Hashable {
        /// What happened.
        public enum Kind: String, Sendable, Hashable {
            case joined, left, refused, dropped
        }
        /// What happened.
        public var kind: Kind
        /// The backup's address.
        public var peer: String
        /// One line for the operator's log.
        public var text: String
    }
    /// Told each ``Event``.
    public typealias Note = @Sendable (Event) -> Void

    /// The address it listens on (`HOST:PORT`, with the port the system chose for 0).
    public let address: String
    private let channel: any Channel
    private let hub: Hub

    /// Listens on `host`:`port` for backups of the run `player` gives (the current player: a
    /// rate change replaces it), whose moments `moment` takes; `note` is told what happens to
    /// each backup.
    /// - Throws: ``LinkError`` when it cannot listen there.
    public init(host: String, port: Int, passcode: String, player: @escaping @Sendable () -> SessionPlayer,
                moment: @escaping @Sendable (SessionPlayer) -> ShowJournal.Moment, note: @escaping Note) throws(LinkError) {
        let hub = Hub(passcode: passcode, player: player, moment: moment, note: note)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(ShowLink.framing() + [MainHandler(hub: hub)])
                }
            }
        do {
            channel = try bootstrap.bind(host: host, port: port).wait()
        } catch {
            throw LinkError("cannot listen on \(host):\(port) for a backup (\(error)); choose another address with --main HOST:PORT")
        }
        let local = channel.localAddress
        address = "\(local?.ipAddress ?? host):\(local?.port ?? port)"
        self.hub = hub
        let thread = Thread { [hub] in hub.watch() }
        thread.name = "lockstep-link"
        thread.start()
    }

    /// The backups let in and still connected.
    public var backups: Int { hub.shared.withLock { $0.joined.count } }

    /// Sends `end` to every backup (the run ended normally), stops listening and closes the link.
    public func stop() {
        hub.stop()
        try? channel.close().wait()
    }

    /// The state the listening socket's handlers and the watching thread share.
    final class Hub: Sendable {
        struct Shared {
            /// Backups let in, waiting for their welcome (sent by the watching thread, so that
            /// no change falls between it and the first state).
            var joining: [any Channel] = []
            var joined: [ObjectIdentifier: any Channel] = [:]
            var stopping = false
        }
        let shared = Mutex(Shared())
        let passcode: String
        let player: @Sendable () -> SessionPlayer
        let moment: @Sendable (SessionPlayer) -> ShowJournal.Moment
        let note: Note
        private let finished = DispatchSemaphore(value: 0)

        init(passcode: String, player: @escaping @Sendable () -> SessionPlayer,
             moment: @escaping @Sendable (SessionPlayer) -> ShowJournal.Moment, note: @escaping Note) {
            self.passcode = passcode
            self.player = player
            self.moment = moment
            self.note = note
        }

        /// Checks a backup's hello: nil to let it in, else the reason to refuse it.
        func refusal(passcode: String, text: String) -> String? {
            guard ShowLink.same(passcode, self.passcode) else { return "wrong link passcode" }
            let mine = player().editedSession.text
            guard text == mine else {
                return "the backup's session file differs from the main's (from the main's to the backup's: \(SessionFile.firstDifference(mine, text))); run both on the same file"
            }
            return nil
        }

        func admit(_ channel: any Channel) {
            shared.withLock { $0.joining.append(channel) }
            player().changes.signal()
        }

        func leave(_ channel: any Channel) {
            let left = shared.withLock { $0.joined.removeValue(forKey: ObjectIdentifier(channel)) != nil }
            if left { note(Event(kind: .left, peer: Self.peer(channel), text: "link: the backup at \(Self.peer(channel)) left")) }
        }

        static func peer(_ channel: any Channel) -> String {
            channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
        }

        func stop() {
            let wasStopping = shared.withLock { shared in
                defer { shared.stopping = true }
                return shared.stopping
            }
            guard !wasStopping else { return }
            player().changes.signal()
            finished.wait()
        }

        /// The watching thread: welcomes, state after each change, clock while playing, end.
        func watch() {
            var lastRun: SessionPlayer.RunState?
            var lastClock = Date.distantPast
            while true {
                let current = player()
                let changes = current.changeCount
                let (joining, stopping) = shared.withLock { shared in
                    defer { shared.joining = [] }
                    return (shared.joining, shared.stopping)
                }
                let run = current.runState()
                let moment = moment(current)
                let now = Date()
                for channel in joining {
                    send(.welcome(text: current.editedSession.text, run: run, moment: moment), to: [channel])
                    shared.withLock { $0.joined[ObjectIdentifier(channel)] = channel }
                    note(Event(kind: .joined, peer: Self.peer(channel), text: "link: the backup at \(Self.peer(channel)) joined"))
                }
                let joined = shared.withLock { Array($0.joined.values) }
                if stopping {
                    send(.end, to: joined)
                    break
                }
                if run != lastRun {
                    // (Those just welcomed have this run whole already.)
                    send(.state(change: ShowLink.Change(from: lastRun, to: run), moment: moment),
                         to: joined.filter { channel in !joining.contains { $0 === channel } })
                    lastRun = run
                    lastClock = now
                } else if moment.isPlaying && now.timeIntervalSince(lastClock) >= ShowJournal.clockInterval * 0.9 {
                    send(.clock(moment: moment), to: joined)
                    lastClock = now
                }
                // Woken at once by a change of the run (the backup needs it before its sample).
                _ = current.changes.wait(until: now.addingTimeInterval(ShowJournal.clockInterval)) {
                    current.changeCount != changes || shared.withLock { $0.stopping || !$0.joining.isEmpty }
                }
            }
            finished.signal()
        }

        /// Writes `message` to `channels`; one whose peer does not read (its buffers full) is
        /// closed instead.
        private func send(_ message: ShowLink.Message, to channels: [any Channel]) {
            guard !channels.isEmpty else { return }
            let bytes = ShowLink.encode(message)
            for channel in channels {
                guard channel.isWritable else {
                    note(Event(kind: .dropped, peer: Self.peer(channel),
                               text: "link: the backup at \(Self.peer(channel)) does not read what is sent; closing its link"))
                    channel.close(promise: nil)
                    continue
                }
                channel.writeAndFlush(channel.allocator.buffer(bytes: bytes), promise: nil)
            }
        }
    }

    /// A backup's connection: its hello, then nothing more is read.
    final class MainHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let hub: Hub
        private let greeted = Atomic<Bool>(false)

        init(hub: Hub) { self.hub = hub }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !greeted.exchange(true, ordering: .relaxed) else { return }
            let buffer = unwrapInboundIn(data)
            let channel = context.channel
            let refusal: String?
            do throws(LinkError) {
                guard case .hello(let passcode, let text) = try ShowLink.decode(buffer.readableBytesView) else {
                    throw LinkError("its first line is not a hello")
                }
                refusal = hub.refusal(passcode: passcode, text: text)
            } catch {
                refusal = error.message
            }
            if let refusal {
                hub.note(Event(kind: .refused, peer: Hub.peer(channel), text: "link: refused the backup at \(Hub.peer(channel)): \(refusal)"))
                let bytes = ShowLink.encode(.refused(reason: refusal))
                context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes))).whenComplete { _ in channel.close(promise: nil) }
                return
            }
            hub.admit(channel)
        }

        func channelInactive(context: ChannelHandlerContext) {
            hub.leave(context.channel)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

extension ShowLinkMain.MainHandler {
    typealias OutboundOut = ByteBuffer
}
