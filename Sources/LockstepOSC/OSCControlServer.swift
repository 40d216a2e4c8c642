import LockstepControl
import LockstepSession
import Synchronization

/// The OSC surface of a show, apart from its transport: turns each datagram into a request
/// (``OSCAddressSpace``), has the ``LockstepControl/ControlDispatcher`` carry out show commands,
/// and answers as QLab does — `/reply/{address}` with one string argument, the JSON of the
/// ``LockstepControl/ControlReply`` — to the sender's host at its reply port (53001 unless it
/// sent `/udpReplyPort N`). Clients that sent `/updates 1` also get every
/// ``LockstepControl/ControlUpdate`` as `/update/{kind}` with its JSON.
///
/// A bundle (decoded by liblo, nested bundles too) has each of its messages carried out in order
/// and answered: at once when its time tag is "immediately" or has passed; when it lies ahead, a
/// command that fires a cue (`/go`, `/cue/{cue}/start`, `/cue/{cue}/go`) is placed on the device
/// sample of that time (the wall-clock time tag → host time → the device's sample time), and
/// its reply names that sample. A bundle more than ``Options/maximumScheduleAhead`` seconds
/// ahead, malformed, or holding more than ``OSCBundle/maximumMessages`` messages gets one error
/// reply and nothing of it is carried out.
///
/// Nothing a client sends can crash it: a malformed or oversized datagram, an unknown address,
/// the wrong arguments, or a message without the passcode gets an error reply; a
/// client sending faster than ``Options/messagesPerSecond`` has the excess dropped and counted,
/// with one error reply a second. Clients are known by host and port; the table is bounded.
///
/// ``receive(_:size:from:droppedByKernel:now:)`` is called by one transport thread; updates are
/// pushed from the thread that publishes them. Never on the realtime thread.
public final class OSCControlServer: Sendable {
    /// Limits and the passcode.
    public struct Options: Sendable, Hashable {
        /// The passcode clients must send with `/connect` before anything else; nil: none.
        public var passcode: String?
        /// The port replies go to on the sender's host, until it sends `/udpReplyPort`.
        public var replyPort: UInt16
        /// The largest datagram handled, in bytes; larger ones get an error reply.
        public var maximumDatagramSize: Int
        /// Messages per second a client may send on average…
        public var messagesPerSecond: Double
        /// …and in one burst.
        public var burst: Double
        /// The most clients remembered (the least recently heard one that is neither authorised
        /// nor subscribed makes room for a new one).
        public var maximumClients: Int
        /// How far ahead a bundle's time tag may lie, in seconds.
        public var maximumScheduleAhead: Double
        /// Whether replies go back to the sender itself (a TCP connection) rather than to its
        /// host at the reply port; `/udpReplyPort` is then refused.
        public var repliesToSender: Bool

        /// The defaults: no passcode, replies to port 53001, datagrams up to 8 KiB, 200 messages
        /// a second per client (bursts of 400), 64 clients, bundles up to an hour ahead.
        public init(passcode: String? = nil, replyPort: UInt16 = OSCEndpoint.defaultReplyPort, maximumDatagramSize: Int = 8192,
                    messagesPerSecond: Double = 200, burst: Double = 400, maximumClients: Int = 64,
                    maximumScheduleAhead: Double = 3600, repliesToSender: Bool = false) {
            self.maximumScheduleAhead = maximumScheduleAhead
            self.repliesToSender = repliesToSender
            self.passcode = passcode
            self.replyPort = replyPort
            self.maximumDatagramSize = maximumDatagramSize
            self.messagesPerSecond = messagesPerSecond
            self.burst = burst
            self.maximumClients = maximumClients
        }
    }

    /// What it was made with.
    public let options: Options
    /// Where show commands go.
    public let dispatcher: ControlDispatcher
    /// The run as QLab's clients see it: the workspace, its cue list and cues.
    public let workspace: QLabWorkspace
    private let transmit: @Sendable (OSCPeer, [UInt8]) -> Bool
    private let log: @Sendable (String) -> Void
    private let table: Mutex<Table>
    private let subscription = Mutex<ControlSubscription?>(nil)

    private struct Client {
        var peer: OSCPeer
        var replyPort: UInt16
        var authorised = false
        var subscribed = false
        var tokens: Double
        var refilled: ContinuousClock.Instant
        var lastSeen: ContinuousClock.Instant
        var dropped = 0
        var lastDropNotice: ContinuousClock.Instant?

        var replyAddress: OSCPeer { replyPort == 0 ? peer : peer.with(port: replyPort) }
    }

    private struct Table {
        var clients: [OSCPeer: Client] = [:]
        var statistics = OSCStatistics()
        var kernelDropsSeen: UInt32 = 0
        /// Device frames from each untimed GO's arrival to its cue's first sample (the latest
        /// ``OSCControlServer/latencyWindow``).
        var goLatencies: [Int64] = []
    }

    /// How many GO latencies the statistics keep (the latest).
    static let latencyWindow = 100_000

    /// When a packet arrived: how long it had waited in the socket when it was read, and when
    /// it was read.
    private struct Arrival {
        var age: Duration
        var readAt: ContinuousClock.Instant
    }

    /// What to do with one datagram.
    private enum Admission {
        case accept(replyTo: OSCPeer, authorised: Bool)
        case drop(notice: (to: OSCPeer, dropped: Int)?)
        case turnAway
    }

    /// Makes the server; `transmit` sends one datagram (true when the kernel took it), `log`
    /// hears a line for each command carried out and each error answered.
    public init(dispatcher: ControlDispatcher, options: Options = Options(),
                transmit: @escaping @Sendable (OSCPeer, [UInt8]) -> Bool, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.dispatcher = dispatcher
        self.options = options
        workspace = QLabWorkspace(session: dispatcher.player.session, hasPasscode: options.passcode != nil)
        self.transmit = transmit
        self.log = log
        table = Mutex(Table())
        let subscription = dispatcher.updates.subscribe { [weak self] update in self?.push(update) }
        self.subscription.withLock { $0 = subscription }
    }

    /// Tells every subscribed client that the workspace goes away
    /// (`/update/workspace/{id}/disconnect`): the run ends.
    func disconnect() {
        send(update: OSCMessage(workspace.disconnectAddress), to: table.withLock { $0.clients.values.filter(\.subscribed).map(\.replyAddress) })
    }

    /// Stops pushing updates.
    public func close() {
        subscription.withLock { $0?.cancel(); $0 = nil }
    }

    /// What it has received, answered and dropped so far.
    public var statistics: OSCStatistics {
        table.withLock { table in
            var statistics = table.statistics
            statistics.clients = table.clients.count
            statistics.subscribers = table.clients.values.filter(\.subscribed).count
            statistics.goLatency = OSCStatistics.GoLatency(table.goLatencies)
            return statistics
        }
    }

    /// Handles one datagram of `size` bytes from `sender`, of which `packet` holds the first
    /// (all, unless it was larger than ``Options/maximumDatagramSize``); `droppedByKernel` is
    /// the socket's count of datagrams dropped so far, `age` how long it had waited in the
    /// socket (from the kernel's timestamp of its arrival) when it was read — the start of the
    /// GO latency in ``statistics``.
    public func receive(_ packet: UnsafeRawBufferPointer, size: Int, from sender: OSCPeer, droppedByKernel: UInt32 = 0,
                        age: Duration? = nil, now: ContinuousClock.Instant = .now) {
        let arrival = age.map { Arrival(age: $0, readAt: now) }
        switch admit(sender, droppedByKernel: droppedByKernel, now: now) {
        case .turnAway:
            return
        case .drop(let notice):
            guard let notice else { return }
            let address = OSCMessage.address(of: packet) ?? ""
            let message = "too many messages from \(sender): over \(Int(options.messagesPerSecond)) a second; \(notice.dropped) dropped so far. Send less often"
            send(.error(address, .tooManyMessages, message), to: notice.to)
            log("OSC \(sender): \(message)")
        case .accept(let replyTo, let authorised):
            for answer in answer(packet, size: size, from: sender, replyTo: replyTo, authorised: authorised, arrival: arrival) {
                let reply = answer.reply
                send(reply, to: answer.to, workspaceID: answer.applicationLevel || reply.address.isEmpty ? nil : workspace.uniqueID)
                if reply.isOK {
                    if !answer.quiet { log("OSC \(sender): \(reply.summary)") }
                } else {
                    log("OSC \(sender): \(reply.address.isEmpty ? "" : "\(reply.address): ")\(reply.summary)")
                }
            }
        }
    }

    /// Answers `sender` with an error at `/reply` (a transport's own refusal: an oversized or
    /// broken SLIP frame), counting it under `counter`.
    func refuse(_ sender: OSCPeer, _ message: String, counting counter: WritableKeyPath<OSCStatistics, Int>) {
        table.withLock { $0.statistics[keyPath: counter] += 1 }
        send(.error("", .malformed, message), to: sender)
        log("OSC \(sender): \(message)")
    }

    /// A warning to print when a server on `address` can be reached from other machines (nil on
    /// a loopback address): what it exposes, and how to restrict it with `option`.
    func exposureWarning(for address: OSCPeer, transport: String, option: String) -> String? {
        guard !address.isLoopback else { return nil }
        let guardText = options.passcode == nil
            ? "no passcode is set (add --osc-passcode CODE)"
            : "clients need the passcode, which travels unencrypted"
        return "OSC control listens on \(address) (\(transport)), reachable from other machines: anyone who can \(transport == "TCP" ? "connect" : "send") to it can "
            + "fire cues (go, start), stop, pause, panic, seek, change levels and gains, and read the cue list (/lockstep/status); "
            + "\(guardText). Use \(option) 127.0.0.1:\(address.port) to keep it to this machine"
    }

    /// Forgets a client (its connection closed): it no longer gets updates nor holds a place.
    func forget(_ peer: OSCPeer) {
        table.withLock { _ = $0.clients.removeValue(forKey: peer) }
    }

    /// Counts the datagram, finds or makes its client, and applies the rate limit.
    private func admit(_ sender: OSCPeer, droppedByKernel: UInt32, now: ContinuousClock.Instant) -> Admission {
        let options = self.options
        return table.withLock { table in
            table.statistics.received += 1
            if droppedByKernel > table.kernelDropsSeen {
                table.statistics.kernelDropped += Int(droppedByKernel - table.kernelDropsSeen)
                table.kernelDropsSeen = droppedByKernel
            }
            if table.clients[sender] == nil {
                if table.clients.count >= options.maximumClients {
                    let idle = table.clients.values.filter { !$0.subscribed && !$0.authorised }.min { $0.lastSeen < $1.lastSeen }
                    guard let idle else {
                        table.statistics.clientsTurnedAway += 1
                        return .turnAway
                    }
                    table.clients[idle.peer] = nil
                }
                table.clients[sender] = Client(peer: sender, replyPort: options.repliesToSender ? 0 : options.replyPort,
                                               tokens: options.burst, refilled: now, lastSeen: now)
            }
            var client = table.clients[sender]!
            defer { table.clients[sender] = client }
            let elapsed = now - client.refilled
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            client.tokens = min(options.burst, client.tokens + max(0, seconds) * options.messagesPerSecond)
            client.refilled = now
            client.lastSeen = now
            guard client.tokens >= 1 else {
                client.dropped += 1
                table.statistics.floodDropped += 1
                let due = client.lastDropNotice.map { now - $0 >= .seconds(1) } ?? true
                if due { client.lastDropNotice = now }
                return .drop(notice: due ? (client.replyAddress, client.dropped) : nil)
            }
            client.tokens -= 1
            table.statistics.admitted += 1
            return .accept(replyTo: client.replyAddress, authorised: client.authorised || options.passcode == nil)
        }
    }

    /// Adds to one of the counts.
    func count(_ counter: WritableKeyPath<OSCStatistics, Int>, by amount: Int = 1) {
        table.withLock { $0.statistics[keyPath: counter] += amount }
    }

    /// One reply, where it goes, whether QLab answers it for the application (no
    /// `workspace_id`), and whether it goes unlogged when ok (queries, status, thump).
    private struct Answer {
        var reply: ControlReply
        var to: OSCPeer
        var applicationLevel = false
        var quiet = false
    }

    /// The replies to one admitted packet (one for a message, one for each message of a bundle),
    /// and where they go.
    private func answer(_ packet: UnsafeRawBufferPointer, size: Int, from sender: OSCPeer, replyTo: OSCPeer,
                        authorised: Bool, arrival: Arrival?) -> [Answer] {
        if size > options.maximumDatagramSize {
            count(\.oversized)
            return [Answer(reply: .error(OSCMessage.address(of: packet) ?? "", .malformed,
                            "the \(options.repliesToSender ? "packet" : "datagram") is \(size) bytes; the limit is \(options.maximumDatagramSize). Send one short message at a time"), to: replyTo)]
        }
        if OSCMessage.isBundle(packet) {
            count(\.bundles)
            let bundle: OSCBundle
            do throws(OSCError) {
                bundle = try OSCBundle(decoding: packet)
            } catch {
                count(\.malformed)
                return [Answer(reply: .error("", .malformed, error.message), to: replyTo)]
            }
            guard !bundle.entries.isEmpty else {
                return [Answer(reply: .error("", .malformed, "the bundle holds no messages; put the messages to carry out in it (e.g. /go)"), to: replyTo)]
            }
            let wallNow = OSCTimeTag.wallClock()
            if let far = bundle.entries.first(where: { !$0.timeTag.isImmediate && $0.timeTag.seconds(after: wallNow) > options.maximumScheduleAhead }) {
                count(\.tooFarAhead)
                let ahead = far.timeTag.seconds(after: wallNow)
                return [Answer(reply: .error("", .outOfRange, "the bundle's time tag \(far.timeTag) lies \(Self.duration(ahead)) ahead; the limit is \(Self.duration(options.maximumScheduleAhead)). Check the sender's clock, or send the bundle closer to its time"), to: replyTo)]
            }
            var authorised = authorised
            var replies: [Answer] = []
            // Each time tag ahead is taken to a sample once: the messages of a bundle land together.
            var samples: [OSCTimeTag: Int64] = [:]
            for entry in bundle.entries {
                var sample: Int64?
                if !entry.timeTag.isImmediate && entry.timeTag.seconds(after: OSCTimeTag.wallClock()) > 0 {
                    sample = samples[entry.timeTag] ?? sampleTime(of: entry.timeTag)
                    samples[entry.timeTag] = sample
                }
                let answer = handle(entry.message, placedAt: sample, from: sender, replyTo: replyTo, authorised: authorised,
                                    arrival: arrival)
                if answer.reply.isOK, case .connect = (try? OSCAddressSpace.request(for: entry.message)) { authorised = true }
                replies.append(answer)
            }
            return replies
        }
        let message: OSCMessage
        do throws(OSCError) {
            message = try OSCMessage(decoding: packet)
        } catch {
            count(\.malformed)
            return [Answer(reply: .error(OSCMessage.address(of: packet) ?? "", .malformed, error.message), to: replyTo)]
        }
        return [handle(message, placedAt: nil, from: sender, replyTo: replyTo, authorised: authorised, arrival: arrival)]
    }

    /// `5 s`, `2 h 5 min`…
    static func duration(_ seconds: Double) -> String {
        seconds < 120 ? "\(Int(seconds.rounded())) s" : seconds < 7200 ? "\(Int((seconds / 60).rounded())) min" : "\(Int((seconds / 3600).rounded())) h"
    }

    /// The device sample a time tag ahead names: the wall-clock time → host time (µs, the
    /// device's clock) by one reading of both clocks → the device's sample time.
    func sampleTime(of tag: OSCTimeTag) -> Int64 {
        let engine = dispatcher.player.engine
        let now = engine.currentTime()
        let host = tag.hostTime(wallNow: OSCTimeTag.wallClock(), hostNow: now.hostTime)
        return engine.sampleTime(forHostTime: host)
    }

    /// Keeps the GO latency of an untimed GO or cue start carried out: from the arrival of its
    /// packet (the host clock then, translated to the device's frames) to the cue's first sample.
    private func measure(_ reply: ControlReply, of command: ControlCommand, arrival: Arrival) {
        switch command {
        case .go, .startCue: break
        default: return
        }
        guard reply.isOK, let start = reply.data?["sampleTime"]?.integerValue else { return }
        let engine = dispatcher.player.engine
        let now = engine.currentTime()
        let waited = arrival.age + (ContinuousClock.now - arrival.readAt)
        let microseconds = UInt64(max(0, waited / .microseconds(1)))
        guard now.hostTime > microseconds else { return }
        let arrived = engine.sampleTime(forHostTime: now.hostTime - microseconds)
        table.withLock { table in
            if table.goLatencies.count >= Self.latencyWindow { table.goLatencies.removeFirst(table.goLatencies.count / 2) }
            table.goLatencies.append(start - arrived)
        }
    }

    /// The reply to one message (alone, or of a bundle: `placedAt` is the device sample of its
    /// time tag when that lies ahead), and where it goes.
    private func handle(_ message: OSCMessage, placedAt: Int64?, from sender: OSCPeer, replyTo: OSCPeer,
                        authorised: Bool, arrival: Arrival?) -> Answer {
        let request: OSCRequest
        do throws(ControlError) {
            request = try OSCAddressSpace.request(for: message)
        } catch {
            return Answer(reply: .error(message.address, error), to: replyTo)
        }
        let address = message.address
        /// Carries out a show command, on the sample of the time tag if it has one.
        func execute(_ command: ControlCommand) -> ControlReply {
            count(\.commands)
            guard let placedAt else {
                let reply = dispatcher.execute(command, address: address)
                if let arrival { measure(reply, of: command, arrival: arrival) }
                return reply
            }
            count(\.scheduled)
            return dispatcher.execute(command, address: address, atSampleTime: placedAt)
        }
        switch request {
        case .connect(let code):
            guard let passcode = options.passcode else {
                return Answer(reply: .ok(address, .string("ok"), summary: "connected (no passcode is needed)"), to: replyTo)
            }
            guard let code, Self.same(code, passcode) else {
                count(\.refused)
                return Answer(reply: .error(address, .unauthorized, "wrong passcode; send /connect with the passcode lockstep was started with (--osc-passcode)"), to: replyTo)
            }
            update(sender) { $0.authorised = true }
            return Answer(reply: .ok(address, .string("ok"), summary: "connected with the passcode"), to: replyTo)
        case .replyPort where options.repliesToSender:
            return Answer(reply: .error(address, .unsupported, "replies come back on this connection; /udpReplyPort is for UDP"), to: replyTo, applicationLevel: true)
        case .replyPort(let port):
            update(sender) { $0.replyPort = port }
            return Answer(reply: .ok(address, .integer(Int64(port)), summary: "replies to port \(port)"), to: replyTo.with(port: port),
                          applicationLevel: true)
        case .query(let query) where query.isApplicationLevel || authorised:
            // /version and /workspaces need no passcode (as QLab's): a client learns from them that one is needed.
            do throws(ControlError) {
                let value = try workspace.answer(query, in: QLabWorkspace.Snapshot(player: dispatcher.player, auditioning: dispatcher.audition?.cue))
                return Answer(reply: .ok(address, value, summary: "answered \(address)"), to: replyTo,
                              applicationLevel: query.isApplicationLevel, quiet: true)
            } catch {
                return Answer(reply: .error(address, error), to: replyTo, applicationLevel: query.isApplicationLevel)
            }
        case _ where !authorised:
            count(\.refused)
            return Answer(reply: .error(address, .unauthorized, "this show needs a passcode: send /connect PASSCODE first"), to: replyTo)
        case .updates(let on):
            update(sender) { $0.subscribed = on }
            return Answer(reply: .ok(address, .bool(on), summary: on ? "subscribed to updates" : "unsubscribed from updates"), to: replyTo)
        case .updatesState:
            let on = table.withLock { $0.clients[sender]?.subscribed ?? false }
            return Answer(reply: .ok(address, .bool(on), summary: on ? "subscribed to updates" : "not subscribed to updates"), to: replyTo, quiet: true)
        case .thump:
            return Answer(reply: .ok(address, .string("thump"), summary: "thump"), to: replyTo, quiet: true)
        case .query:
            preconditionFailure("answered above")
        case .command(let command) where !Self.passesOverrides(command) && !dispatcher.overrides.allowsNetworkInput(local: sender.isLoopback):
            count(\.refused)
            return Answer(reply: Self.overridden(address, local: sender.isLoopback), to: replyTo)
        case .cueCommand where !dispatcher.overrides.allowsNetworkInput(local: sender.isLoopback):
            count(\.refused)
            return Answer(reply: Self.overridden(address, local: sender.isLoopback), to: replyTo)
        case .command(let command):
            return Answer(reply: execute(command), to: replyTo, quiet: command == .status)
        case .cueCommand(let target, let action):
            do throws(ControlError) {
                let command = try workspace.command(action, on: target, in: QLabWorkspace.Snapshot(player: dispatcher.player, auditioning: dispatcher.audition?.cue))
                return Answer(reply: execute(command), to: replyTo)
            } catch {
                return Answer(reply: .error(address, error), to: replyTo)
            }
        }
    }

    /// Whether `command` is carried out whatever the network-input overrides say: `status` and
    /// the overrides themselves (an operator switches input back on over OSC too).
    static func passesOverrides(_ command: ControlCommand) -> Bool {
        switch command {
        case .status, .override: true
        default: false
        }
    }

    /// The reply to a command a network-input override refuses.
    static func overridden(_ address: String, local: Bool) -> ControlReply {
        let key: ShowOverrides.Key = local ? .networkLocalInputEnabled : .networkExternalInputEnabled
        return .error(address, .wrongState, "the override \(key.rawValue) is off (\(key.offMeans)); switch it on with /overrides/\(key.rawValue) 1")
    }

    /// Changes the record of a client (if it is still known).
    private func update(_ peer: OSCPeer, _ change: (inout Client) -> Void) {
        table.withLock { table in
            if var client = table.clients[peer] {
                change(&client)
                table.clients[peer] = client
            }
        }
    }

    /// A reply as QLab writes it: `workspace_id` (when the reply comes from the workspace),
    /// `address`, `status`, `data`.
    private struct ReplyJSON: Encodable {
        var workspace_id: String?
        var address: String
        var status: ControlReply.Status
        var data: ControlValue?
        var code: ControlErrorCode?
    }

    /// Sends `/reply{address}` with the reply's JSON, naming the workspace when `workspaceID` is
    /// given.
    func send(_ reply: ControlReply, to destination: OSCPeer, workspaceID: String? = nil) {
        let json = ControlJSON.line(ReplyJSON(workspace_id: workspaceID, address: reply.address, status: reply.status, data: reply.data, code: reply.code))
        let sent = (try? OSCMessage("/reply" + reply.address, [.string(json)]).encoded()).map { transmit(destination, $0) } ?? false
        table.withLock { table in
            if sent {
                table.statistics.replies += 1
                if !reply.isOK { table.statistics.errorReplies += 1 }
            } else {
                table.statistics.sendFailures += 1
            }
        }
    }

    /// Sends an update to every subscribed client as `/update/{kind}` with its JSON, followed by
    /// the QLab-style updates it makes (``QLabWorkspace/updates(for:)``).
    private func push(_ update: ControlUpdate) {
        let targets = table.withLock { $0.clients.values.filter(\.subscribed).map(\.replyAddress) }
        guard !targets.isEmpty else { return }
        send(update: OSCMessage("/update/" + update.kind.rawValue, [.string(update.json)]), to: targets)
        for (address, arguments) in workspace.updates(for: update, document: dispatcher.player.document) {
            send(update: OSCMessage(address, arguments), to: targets)
        }
    }

    /// Sends one update message to `targets`, counting what was sent and what failed.
    private func send(update message: OSCMessage, to targets: [OSCPeer]) {
        guard !targets.isEmpty, let bytes = try? message.encoded() else { return }
        let sent = targets.filter { transmit($0, bytes) }.count
        table.withLock { table in
            table.statistics.updatesSent += sent
            table.statistics.sendFailures += targets.count - sent
        }
    }

    /// Compares two passcodes in time that does not depend on where they differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = x.count ^ y.count
        for i in 0..<max(x.count, y.count) {
            difference |= Int((i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0))
        }
        return difference == 0
    }
}
