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
    /// What happened to a backup: it joined, left, was refused, or was dropped for not reading;
    /// its output diverged from the main's (or agrees again).
    public struct Event: Sendable, Hashable {
        /// What happened.
        public enum Kind: String, Sendable, Hashable {
            case joined, left, refused, dropped
            /// The backup's output differs from the main's from ``position`` on ``outputs``:
            /// its first differing session sample once both sides' samples of the block are
            /// compared (``exact``), else the block's first sample.
            case diverged
            /// The backup's output is the same as the main's again from ``position``.
            case agrees
        }
        /// What happened.
        public var kind: Kind
        /// The backup's address.
        public var peer: String
        /// One line for the operator's log.
        public var text: String
        /// The session sample of a divergence or an agreement.
        public var position: Int64? = nil
        /// The outputs (numbered from 1) of a divergence.
        public var outputs: [Int]? = nil
        /// Whether a divergence's ``position`` is its first differing sample.
        public var exact: Bool? = nil
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
    /// With `hasher`, the main sends the hashes of its output to each backup and compares them
    /// with the backup's (``OutputComparison``), telling `note` of every divergence. A backup
    /// runs the main's session text as edited, or its file's `fileText` (it then takes the
    /// edits from the welcome).
    public init(host: String, port: Int, passcode: String, player: @escaping @Sendable () -> SessionPlayer,
                moment: @escaping @Sendable (SessionPlayer) -> ShowJournal.Moment, hasher: OutputHasher? = nil,
                fileText: String? = nil, note: @escaping Note) throws(LinkError) {
        let hub = Hub(passcode: passcode, player: player, moment: moment, hasher: hasher, fileText: fileText, note: note)
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

    /// A backup's position as it reports it: milliseconds its session time is ahead of the
    /// main's, and with `--free-clock` parts per million it steers and, of those, the clocks'
    /// difference (``BackupFollower/steeringPPM``, ``BackupFollower/driftPPM``).
    public typealias BackupPosition = (offsetMilliseconds: Double, steeringPPM: Double?, driftPPM: Double?)

    /// The backup furthest from the main, as the backups report themselves: its offset
    /// (milliseconds its session time is ahead of the main's), how it steers and the clocks'
    /// difference it has learnt (nil: no backup has reported yet).
    public var backupPosition: BackupPosition? {
        hub.shared.withLock { $0.positions.values.max { abs($0.offsetMilliseconds) < abs($1.offsetMilliseconds) } }
    }

    /// The comparison of the main's output with its backups', summed over those connected (nil
    /// without a hasher).
    public var tally: OutputComparison.Tally? {
        guard hub.hasher != nil else { return nil }
        let comparisons = hub.shared.withLock { Array($0.comparisons.values) }
        return comparisons.map(\.tally).reduce(into: OutputComparison.Tally()) { sum, tally in
            sum.compared += tally.compared
            sum.differing += tally.differing
            if let first = tally.first, sum.first.map({ first.position < $0.position }) ?? true { sum.first = first }
        }
    }

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
            var comparisons: [ObjectIdentifier: OutputComparison] = [:]
            /// Each backup's offset and steering, as it last reported them.
            var positions: [ObjectIdentifier: BackupPosition] = [:]
            var stopping = false
        }
        let shared = Mutex(Shared())
        let passcode: String
        let player: @Sendable () -> SessionPlayer
        let moment: @Sendable (SessionPlayer) -> ShowJournal.Moment
        let note: Note
        let hasher: OutputHasher?
        let fileText: String?
        private let finished = DispatchSemaphore(value: 0)

        init(passcode: String, player: @escaping @Sendable () -> SessionPlayer,
             moment: @escaping @Sendable (SessionPlayer) -> ShowJournal.Moment, hasher: OutputHasher?, fileText: String?, note: @escaping Note) {
            self.passcode = passcode
            self.fileText = fileText
            self.player = player
            self.moment = moment
            self.hasher = hasher
            self.note = note
        }

        /// Checks a backup's hello: nil to let it in, else the reason to refuse it. Its text is
        /// the main's file's (``fileText``: the backup takes the main's edits from the welcome)
        /// or the main's as edited.
        func refusal(passcode: String, text: String) -> String? {
            guard ShowLink.same(passcode, self.passcode) else { return "wrong link passcode" }
            let mine = player().editedSession.text
            guard text == mine || text == fileText else {
                return "the backup's session file differs from the main's (from the main's to the backup's: \(SessionFile.firstDifference(mine, text))); run both on the same file"
            }
            return nil
        }

        func admit(_ channel: any Channel) {
            shared.withLock { $0.joining.append(channel) }
            player().changes.signal()
        }

        func leave(_ channel: any Channel) {
            let left = shared.withLock { shared in
                shared.comparisons[ObjectIdentifier(channel)] = nil
                shared.positions[ObjectIdentifier(channel)] = nil
                return shared.joined.removeValue(forKey: ObjectIdentifier(channel)) != nil
            }
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
            var lastEdit = player().editedState.editCount
            while true {
                let current = player()
                let changes = current.changeCount
                let (joining, stopping) = shared.withLock { shared in
                    defer { shared.joining = [] }
                    return (shared.joining, shared.stopping)
                }
                let (session, editCount) = current.editedState
                let run = current.runState()
                let moment = moment(current)
                let now = Date()
                for channel in joining {
                    send(.welcome(text: session.text, edits: editCount, run: run, moment: moment), to: [channel])
                    let comparison = hasher.map(OutputComparison.init)
                    shared.withLock { shared in
                        shared.joined[ObjectIdentifier(channel)] = channel
                        shared.comparisons[ObjectIdentifier(channel)] = comparison
                    }
                    note(Event(kind: .joined, peer: Self.peer(channel), text: "link: the backup at \(Self.peer(channel)) joined"))
                }
                let joined = shared.withLock { Array($0.joined.values) }
                if stopping {
                    send(.end, to: joined)
                    break
                }
                // Edits first: the state after them may name cues they added or renamed. (A
                // backup just welcomed skips those its welcome's text holds.)
                let edits = current.edits(after: lastEdit)
                if !edits.isEmpty {
                    send(.edits(edits), to: joined)
                    lastEdit = edits.last!.count
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
                exchangeHashes(with: joined)
                // Woken at once by a change of the run (the backup needs it before its sample).
                _ = current.changes.wait(until: now.addingTimeInterval(ShowJournal.clockInterval)) {
                    current.changeCount != changes || shared.withLock { $0.stopping || !$0.joining.isEmpty }
                }
            }
            finished.signal()
        }

        /// Sends the blocks hashed since the last call to every backup, compares each backup's
        /// with the main's, and sends the main's samples of a block where a divergence starts.
        private func exchangeHashes(with joined: [any Channel]) {
            guard let hasher else { return }
            let fresh = hasher.takeFresh()
            if !fresh.isEmpty { send(.hashes(fresh), to: joined) }
            for channel in joined {
                guard let comparison = shared.withLock({ $0.comparisons[ObjectIdentifier(channel)] }) else { continue }
                let peer = Self.peer(channel)
                for finding in comparison.compare(sending: { send($0, to: [channel]) }) {
                    note(Event(finding, peer: peer, subject: "link: the backup at \(peer)"))
                }
            }
        }

        /// A backup's message after its hello: its hashes, or its samples of a block that differs.
        func received(_ message: ShowLink.Message, from channel: any Channel) {
            if case .position(let offset, let ppm, let drift) = message {
                shared.withLock { shared in
                    if shared.joined[ObjectIdentifier(channel)] != nil { shared.positions[ObjectIdentifier(channel)] = (offset, ppm, drift) }
                }
                return
            }
            guard let comparison = shared.withLock({ $0.comparisons[ObjectIdentifier(channel)] }) else { return }
            switch message {
            case .hashes(let blocks):
                comparison.receive(blocks)
            case .samples(let start, let samples):
                guard let divergence = comparison.exact(start: start, samples: samples) else { return }
                let peer = Self.peer(channel)
                note(Event(divergence, peer: peer, subject: "link: the backup at \(peer)"))
            default:
                return
            }
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

    /// A backup's connection: its hello, then its hashes and samples.
    final class MainHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let hub: Hub
        private let greeted = Atomic<Bool>(false)

        init(hub: Hub) { self.hub = hub }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            let channel = context.channel
            guard !greeted.exchange(true, ordering: .relaxed) else {
                do throws(LinkError) {
                    hub.received(try ShowLink.decode(buffer.readableBytesView), from: channel)
                } catch {
                    hub.note(Event(kind: .dropped, peer: Hub.peer(channel), text: "link: the backup at \(Hub.peer(channel)) sent \(error.message); closing its link"))
                    context.close(promise: nil)
                }
                return
            }
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
