import Dispatch
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import LockstepControl
import LockstepSession
import NIOCore
import NIOPosix
import NIOHTTP1

import Synchronization

/// The web cue page's server: serves the page (plain HTML, CSS and JavaScript from the package's
/// resources) and a WebSocket at `/ws` that pushes the show's state and takes commands.
///
/// Every message is one JSON object of the schema `--json` and the OSC replies use: a command's
/// answer is a ``LockstepControl/ControlReply`` (`{"address","status","data"}`), a change a
/// ``LockstepControl/ControlUpdate`` (`{"kind",…}`), the state the `status` reply; besides
/// them ``WebMeters`` (`"event":"meters"`, 25 a second) and ``WebDiscontinuities``. Commands
/// are ``LockstepControl/WebCommand`` objects, on the socket or as the body of `POST /api/command`.
///
/// It never touches the realtime thread: commands go through the
/// ``LockstepControl/ControlDispatcher``, and what it shows is read from the published state.
/// Requests that read or drive the show pass ``WebAdmission`` (Host, Origin, token); bodies
/// are limited to ``LockstepControl/WebCommand/maximumSize``; connections, WebSocket clients and what each
/// client may have queued are bounded.
public final class WebControlServer: Sendable {
    /// Where it listens and its limits.
    public struct Options: Sendable, Hashable {
        /// The address to bind (127.0.0.1: this machine only).
        public var host: String
        /// The port (0: any free port, reported once bound).
        public var port: Int
        /// The token every page must carry; nil: none.
        public var token: String?
        /// The token a page must also carry (`?edit=…`) to edit the show (`set`, `undo`, `redo`,
        /// `save`); nil: every page that may run the show may edit it.
        public var editToken: String?
        /// The most WebSocket clients at once (more get 503).
        public var maximumClients: Int
        /// The most HTTP connections open at once (more wait until one closes).
        public var maximumConnections: Int
        /// Seconds an HTTP connection may stay idle, and may take to send a request's head: one
        /// that sends its headers a byte at a time is closed all the same.
        public var idleTimeout: Int
        /// Meter messages a second.
        public var metersPerSecond: Double
        /// Messages that may wait for one WebSocket client (one that does not read them); one
        /// more disconnects it, and the show plays on.
        public var maximumBacklog: Int

        /// The defaults: 127.0.0.1:8080, no token, 32 pages, 1024 connections idle at most 15 s,
        /// meters 25 times a second, 256 messages waiting for a page at most.
        public init(host: String = "127.0.0.1", port: Int = 8080, token: String? = nil, maximumClients: Int = 32,
                    maximumConnections: Int = 1024, idleTimeout: Int = 15, metersPerSecond: Double = 25,
                    maximumBacklog: Int = 256) {
            self.host = host
            self.port = port
            self.token = token
            self.maximumClients = maximumClients
            self.maximumConnections = maximumConnections
            self.idleTimeout = idleTimeout
            self.metersPerSecond = metersPerSecond
            self.maximumBacklog = maximumBacklog
        }
    }

    /// Counts of what the server did, for the run's summary.
    public typealias Statistics = WebStatistics

    /// What it was made with.
    public let options: Options
    let log: @Sendable (String) -> Void
    let state = Mutex(State())
    private let bound = Mutex<(port: Int?, error: String?)>((nil, nil))
    let running = Mutex<Task<Void, Never>?>(nil)
    /// The listening socket and every open connection, for ``stop()`` to close on the event
    /// loop itself.
    let channels = Mutex<(listening: (any Channel)?, open: [ObjectIdentifier: any Channel])>((nil, [:]))
    let ticker = Mutex<Task<Void, Never>?>(nil)
    /// The thread this server's edits and HTTP commands are carried out on, one at a time, in
    /// arrival order: never the server's one thread (``WebServerExecutor/shared``) nor the event
    /// loop, which an edit waiting for the disk would hold up, and with them every connection.
    /// Each server has its own (a command held up holds up no other server).
    let commands = WebServerExecutor(name: "lockstep.web.cmds")

    /// The thread that reads and writes every connection of every web server of the process:
    /// one event loop of its own, so that ``runOnServerThreads(_:)`` can give it a priority.
    static let eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    /// Where the meters, the state and the discontinuities pushed to the clients are computed:
    /// beside the commands, so a GO never waits behind a push.
    private let publishing = DispatchQueue(label: "lockstep.web.publishing", qos: .utility)
    /// Where HTTP reads (the timeline picture, the state, the cue list) are answered, one at a
    /// time: a GO never waits behind a picture of thousands of layers.
    let reading = DispatchQueue(label: "lockstep.web.reading", qos: .utility)

    /// One WebSocket client: its queue of messages and its connection.
    struct Client {
        var queue: AsyncStream<String>.Continuation
        var channel: any Channel
        /// Whether it was sent meters of every layer: until then it is sent no meters of changes.
        var hasAllMeters = false
    }

    struct State {
        var show: (any WebShow)?
        var subscription: ControlSubscription?
        var clients: [Int: Client] = [:]
        var nextClient = 0
        var statistics = Statistics()
        var statusDue = true
        /// A page came since the last meters: the next holds every layer's.
        var allMetersDue = true
        /// WebSocket clients admitted and not yet gone.
        var places = 0
        /// The command links of connections being upgraded or upgraded, by channel, with
        /// whether the connection may edit.
        var links: [ObjectIdentifier: (link: WebCommandLink, mayEdit: Bool)] = [:]
    }

    /// A server (not yet listening); `log` hears a line for each command and refusal.
    public init(options: Options, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.options = options
        self.log = log
    }

    /// Every task of the server held it: none can ask for the commands' thread any more.
    deinit { commands.finish() }

    /// What it has done so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// The port it listens on, once started.
    public var port: Int? { bound.withLock { $0.port } }

    /// The admission checks, with the port bound.
    public var admission: WebAdmission { WebAdmission(host: options.host, port: port ?? options.port, token: options.token) }

    /// The page's address, with the token when there is one.
    public var url: String {
        let host = admission.isWildcard ? "127.0.0.1" : options.host
        let token = options.token.map { "?token=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? ""
        return "http://\(WebAdmission.authority(host, port ?? options.port))/\(token)"
    }


    /// Parses `--web`'s `PORT`, `HOST:PORT` or `[IPV6]:PORT` (HOST defaults to 127.0.0.1).
    /// - Throws: ``WebError`` saying how to write it.
    public static func endpoint(_ text: String) throws(WebError) -> (host: String, port: Int) {
        let hint = "write PORT, HOST:PORT or [IPV6]:PORT, e.g. 8080, 127.0.0.1:8080 or 0.0.0.0:8080"
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var host = "127.0.0.1", portText = trimmed
        if let colon = trimmed.lastIndex(of: ":"), !trimmed.hasPrefix("[") || trimmed[trimmed.index(before: colon)] == "]" {
            host = String(trimmed[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            portText = String(trimmed[trimmed.index(after: colon)...])
        }
        guard !host.isEmpty, !host.contains(where: \.isWhitespace), let port = Int(portText), (0...65535).contains(port) else {
            throw WebError("--web '\(text)' is not [HOST:]PORT; \(hint)")
        }
        return (host, port)
    }

    /// A warning to print when the server can be reached from other machines (nil on loopback).
    public var exposureWarning: String? {
        guard !WebAdmission.isLoopback(options.host) else { return nil }
        let guardText = options.token == nil
            ? "no token is set (add --web-token TOKEN)"
            : "the token and everything else travel unencrypted (plain HTTP)"
        return "the web page listens on \(WebAdmission.authority(options.host, port ?? options.port)), reachable from other machines: "
            + "anyone who can reach it can see the cue list, the meters and the timeline, and fire cues (GO), stop, pause, "
            + "panic, seek and change layer gains and cue levels; \(guardText). Use --web 127.0.0.1:\(port ?? options.port) to keep it to this machine"
    }

    /// Binds and starts serving (the page says "starting" until ``attach(_:)``).
    /// - Throws: ``WebError`` when the address cannot be bound.
    public func start() throws(WebError) {
        // On a wildcard bind Host may name this machine: its names are looked up now, not on
        // the first request.
        if admission.isWildcard { _ = WebAdmission.localMachineNames }
        let ready = DispatchSemaphore(value: 0)
        // Its own handler that drops everything: what the page does is reported through `log`
        // (and the process's log level, which a shared handler holds, stays as it is).
        let logger = Logger(label: "lockstep.web", factory: { _ in SwiftLogNoOpLogHandler() })
        // A text frame that is not UTF-8 fails the connection with 1007 (RFC 6455 §8.1).
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: .seconds(Int64(options.idleTimeout))),
            ws: .init(maxFrameSize: WebCommand.maximumSize, autoPing: .enabled(timePeriod: .seconds(15)), validateUTF8: true))
        let shouldUpgrade: @Sendable (HTTPRequest, any Channel, Logger) throws -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> = { [self] head, channel, _ in
            guard (head.path ?? "").split(separator: "?").first == "/ws",
                  self.refuseIfNeeded(head.authority, head.headerFields, target: head.path ?? "/", webSocket: true, reserve: true) == nil
            else { return .dontUpgrade }
            let mayEdit = self.mayEdit(target: head.path ?? "/")
            // The connection's command reader (on the event loop) and its reading task share it.
            let link = WebCommandLink(), key = ObjectIdentifier(channel)
            self.state.withLock { $0.links[key] = (link, mayEdit) }
            channel.closeFuture.whenComplete { _ in self.state.withLock { _ = $0.links.removeValue(forKey: key) } }
            return .upgrade([:]) { inbound, outbound, _ in
                try await self.serve(inbound, outbound, channel: channel, link: link, mayEdit: mayEdit)
            }
        }
        let commandReader: @Sendable (any Channel) -> WebCommandReader? = { [self] channel in
            guard let (link, mayEdit) = state.withLock({ $0.links[ObjectIdentifier(channel)] }) else { return nil }
            return WebCommandReader(link: link) { text in self.carryOutOnEventLoop(text, mayEdit: mayEdit) }
        }
        let application = Application(
            router: router(),
            // hummingbird-websocket's channel, with what it leaves undone before the first request.
            server: HTTPServerBuilder { [options] responder in
                GuardedChannel(HTTP1WebSocketUpgradeChannel(responder: responder, configuration: configuration,
                                                            shouldUpgrade: shouldUpgrade),
                               firstRequestTimeout: .seconds(Int64(options.idleTimeout)), commandReader: commandReader,
                               accepted: { [self] channel in
                                   let key = ObjectIdentifier(channel)
                                   channels.withLock { $0.open[key] = channel }
                                   channel.closeFuture.whenComplete { _ in self.channels.withLock { _ = $0.open.removeValue(forKey: key) } }
                               })
            },
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: "lockstep",
                                 availableConnectionsDelegate: .maximum(options.maximumConnections, logger: logger)),
            onServerRunning: { [self] channel in
                self.bound.withLock { $0.port = channel.localAddress?.port }
                self.channels.withLock { $0.listening = channel }
                ready.signal()
            },
            eventLoopGroupProvider: .shared(Self.eventLoops),
            logger: logger)
        let task = Task.detached(executorPreference: WebServerExecutor.shared) { [self] in
            do { try await application.runService(gracefulShutdownSignals: []) } catch {
                self.bound.withLock { $0.error = "\(error)" }
            }
            ready.signal()
        }
        running.withLock { $0 = task }
        _ = ready.wait(timeout: .now() + 10)
        let (port, error) = bound.withLock { ($0.port, $0.error) }
        guard port != nil else {
            stop()
            let reason = error.map { $0.contains("Address already in use") ? "the port is in use (another Lockstep, a web server?)"
                                     : $0.contains("Cannot assign requested address") ? "no interface of this machine has that address"
                                     : $0 } ?? "it did not start within 10 s"
            throw WebError("--web \(WebAdmission.authority(options.host, options.port)): cannot listen there: \(reason); "
                           + "choose another with --web HOST:PORT (port 0: any free one)")
        }
        ticker.withLock { $0 = Task.detached(executorPreference: WebServerExecutor.shared) { [self] in await self.tick() } }
    }

    /// Shows `show` and takes its commands from now on.
    public func attach(_ show: any WebShow) {
        let subscription = show.dispatcher.updates.subscribe { [weak self] update in
            self?.broadcast(update.json)
            self?.state.withLock { $0.statusDue = true }
        }
        let old = state.withLock { state in
            defer { state.show = show; state.subscription = subscription; state.statusDue = true }
            return state.subscription
        }
        old?.cancel()
    }

    /// Runs `setup` on the thread that reads every connection (and carries out a page's GO, stop
    /// or gain as it reads it: ``WebCommandReader``) and on this server's commands' thread (its
    /// edits), before they go on: `session run` gives both realtime priority under the JACK
    /// client's (``LockstepJACK/JACKDevice/promoteCurrentThread(below:)``), so that a GO from the
    /// page reaches the engine within its period however busy the cores are with layers — as the
    /// OSC and MIDI readers do. The event loop is the process's, shared by every web server.
    ///
    /// Among 1024 layers on a 2-core machine, GO from the page's WebSocket to the cue's first
    /// sample went from p99 414–509 frames at period 256 to 273–287 with both threads promoted,
    /// and to 266–274 with the GO carried out on the event loop.
    public func runOnServerThreads(_ setup: @escaping @Sendable () -> Void) {
        Self.eventLoops.next().execute(setup)
        commands.runOnThread(setup)
    }

    /// Runs `work` on `queue` and returns its result, leaving the server's thread free meanwhile.
    func run<T: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: work()) } }
    }

    // MARK: - HTTP

    private func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: SecurityHeaders())
        // The page's files hold no show data (the token guards what does), but only this server's
        // own Host gets them: a page fetched through a rebound name never loads.
        func file(_ bytes: [UInt8], _ type: String) -> @Sendable (Request, BasicRequestContext) async throws -> Response {
            { [self] request, _ in
                if let refusal = self.refuseIfNeeded(request.head.authority, request.headers, target: request.uri.description,
                                                     webSocket: false, checksToken: false) {
                    return Self.error(refusal.status, refusal.message)
                }
                return Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            }
        }
        router.get("/", use: file(PackageResources.index_html, "text/html; charset=utf-8"))
        router.get("/app.js", use: file(PackageResources.app_js, "text/javascript; charset=utf-8"))
        router.get("/style.css", use: file(PackageResources.style_css, "text/css; charset=utf-8"))
        router.get("/ws") { [self] request, _ -> Response in
            // Reached only when the upgrade was refused: say why.
            if let refusal = self.refuseIfNeeded(request.head.authority, request.headers, target: request.uri.description, webSocket: true) {
                return Self.error(refusal.status, refusal.message)
            }
            return Self.error(426, "this is the show's WebSocket: connect with a WebSocket client (Upgrade: websocket)")
        }
        router.get("/timeline.svg") { [self] request, _ -> Response in
            if let refusal = self.refuseIfNeeded(request.head.authority, request.headers, target: request.uri.description, webSocket: false) {
                return Self.error(refusal.status, refusal.message)
            }
            guard let show = self.state.withLock({ $0.show }) else { return Self.error(503, "the session is starting; reload in a moment") }
            return Response(status: .ok, headers: [.contentType: "image/svg+xml"],
                            body: .init(byteBuffer: ByteBuffer(string: await self.run(on: self.reading) { show.picture().svg })))
        }
        router.get("/api/status") { [self] request, _ -> Response in
            if let refusal = self.refuseIfNeeded(request.head.authority, request.headers, target: request.uri.description, webSocket: false) {
                return Self.error(refusal.status, refusal.message)
            }
            guard let show = self.state.withLock({ $0.show }) else { return Self.error(503, "the session is starting; try again in a moment") }
            return Self.json(200, await self.run(on: self.reading) { show.dispatcher.execute(.status, address: "status").json })
        }
        router.get("/api/cues") { [self] request, _ -> Response in
            if let refusal = self.refuseIfNeeded(request.head.authority, request.headers, target: request.uri.description, webSocket: false) {
                return Self.error(refusal.status, refusal.message)
            }
            guard let show = self.state.withLock({ $0.show }) else { return Self.error(503, "the session is starting; try again in a moment") }
            let editable = self.mayEdit(target: request.uri.description)
            return Self.json(200, await self.run(on: self.reading) {
                var list = show.cueList()
                list.editable = editable
                return list.json
            })
        }
        router.get("/api/media") { [self] request, _ -> Response in
            if let refusal = self.refuseIfNeeded(request.head.authority, request.headers, target: request.uri.description, webSocket: false) {
                return Self.error(refusal.status, refusal.message)
            }
            guard self.mayEdit(target: request.uri.description) else {
                return Self.error(403, "the media folder is listed to who may edit: open the edit URL lockstep printed (it ends in edit=…)")
            }
            guard let show = self.state.withLock({ $0.show }) else { return Self.error(503, "the session is starting; try again in a moment") }
            let folder = show.dispatcher.player.session.document.baseDirectory
            return Self.json(200, await self.run(on: self.reading) {
                WebMediaList(folder: folder, files: Self.mediaFiles(in: folder), ports: show.audioDestinations()).json
            })
        }
        router.post("/api/command") { [self] request, _ -> Response in
            if let refusal = self.refuseIfNeeded(request.head.authority, request.headers, target: request.uri.description, webSocket: false) {
                return Self.error(refusal.status, refusal.message)
            }
            let buffer: ByteBuffer
            do { buffer = try await request.body.collect(upTo: WebCommand.maximumSize) } catch {
                self.count(\.errorReplies)
                return Self.json(413, ControlReply.error("", .malformed, "the body is over \(WebCommand.maximumSize) bytes; send one short JSON command").json)
            }
            let text = String(buffer: buffer)
            let mayEdit = self.mayEdit(target: request.uri.description)
            // (Not on the thread that read it: that is the server's, shared by every connection.)
            let (reply, parsed) = await withTaskExecutorPreference(self.commands) { await self.execute(text, mayEdit: mayEdit) }
            return Self.json(!parsed ? 400 : reply.isOK ? 200 : 422, reply.json)
        }
        return router
    }

    /// Adds the headers that keep the page from being framed or sniffed by another site.
    struct SecurityHeaders: RouterMiddleware {
        func handle(_ request: Request, context: BasicRequestContext,
                    next: (Request, BasicRequestContext) async throws -> Response) async throws -> Response {
            var response = try await next(request, context)
            response.headers[.contentSecurityPolicy] = "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'"
            response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
            response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
            response.headers[.cacheControl] = "no-store"
            return response
        }
    }

    private static func json(_ status: Int, _ text: String) -> Response {
        Response(status: .init(code: status), headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }

    /// An HTTP error carrying a reply whose code says the kind: 401/403 unauthorized, 429 too
    /// many messages, 503 the session is not ready, anything else a malformed request.
    private static func error(_ status: Int, _ message: String) -> Response {
        let code: ControlErrorCode = switch status {
        case 401, 403: .unauthorized
        case 429: .tooManyMessages
        case 503: .wrongState
        default: .malformed
        }
        return json(status, ControlReply.error("", code, message).json)
    }

    /// The refusal of a request that reads or drives the show, counted and logged; nil lets it in.
    /// With `reserve`, an admitted WebSocket client takes its place among
    /// ``Options/maximumClients`` here (``serve(_:_:)`` gives it back).
    private func refuseIfNeeded(_ host: String?, _ headers: HTTPFields, target: String, webSocket: Bool,
                                reserve: Bool = false, checksToken: Bool = true) -> WebAdmission.Refusal? {
        let token = WebAdmission.token(inTarget: target) ?? WebAdmission.token(inAuthorization: headers[.authorization])
        var refusal = admission.refusal(host: host, origin: headers[.origin], token: token, checksToken: checksToken)
        if refusal == nil && webSocket {
            let maximum = options.maximumClients
            let full = state.withLock { state in
                guard state.places < maximum else { return true }
                if reserve { state.places += 1 }
                return false
            }
            if full { refusal = .full(maximum) }
        }
        if let refusal {
            let first = state.withLock { state in
                state.statistics.refused += 1
                return state.statistics.refused <= 5
            }
            if first { log("web: refused \(target.split(separator: "?").first ?? ""): \(refusal.message)") }
        }
        return refusal
    }

    // MARK: - WebSocket

    /// One WebSocket client: its queue of messages, written by one task on the server's thread
    /// (at most ``Options/maximumBacklog`` wait: one more disconnects it); the commands it sends,
    /// read by a task on the event loop that reads the connection (``EventLoopTaskExecutor``) and
    /// carried out as each arrives, in order (there unless its ``Place`` is another), answered on
    /// its queue. A client that sends faster than its commands are carried out is
    /// held back by its connection (its frames are read no faster). A protocol error of the
    /// client (a text frame that is not UTF-8) is thrown on, for hummingbird-websocket to close
    /// with its status.
    private func serve(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, channel: any Channel,
                       link: WebCommandLink, mayEdit: Bool) async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(options.maximumBacklog))
        let (id, show) = state.withLock { state in
            state.nextClient += 1
            state.clients[state.nextClient] = Client(queue: continuation, channel: channel)
            state.statistics.clients += 1
            state.statusDue = true
            state.allMetersDue = true
            return (state.nextClient, state.show)
        }
        defer { state.withLock { state in
            state.clients.removeValue(forKey: id)
            state.places -= 1
        } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await text in stream {
                    do { try await outbound.write(.text(text)) } catch { break }
                }
            }
            group.addTask(executorPreference: commands) { [self] in
                defer { continuation.finish() }
                // The state first: queued before any command's reply. The state (of thousands of
                // layers: a fraction of a second) is made on an ordinary thread, as every state
                // asked for is, not on this one, which may run at realtime priority.
                if let show { deliver(await run(on: reading) { show.dispatcher.execute(.status, address: "status").json }, to: id) }
                for try await message in inbound.messages(maxSize: WebCommand.maximumSize) {
                    // A page that sends and never reads fills its queue with replies and is
                    // disconnected (``deliver(_:to:)``).
                    if case .done(let reply)? = link.next() {
                        deliver(reply, to: id)
                        continue
                    }
                    let text: String
                    switch message {
                    case .text(let string): text = string
                    case .binary(let buffer): text = String(buffer: buffer)
                    }
                    let reply = await execute(text, mayEdit: mayEdit).0.json
                    // Carried out before it is answered: a command sent on its reply is not held
                    // behind it (the event loop takes it again, the replies stay in order).
                    link.carriedOut()
                    deliver(reply, to: id)
                }
            }
            defer { group.cancelAll(); continuation.finish() }
            // Both: the writer ends as soon as the reader finishes the queue, and the reader's
            // error (1007 for a text that is not UTF-8) must reach the close frame.
            try await group.waitForAll()
        }
    }

    /// Queues `text` for client `id`; a client whose queue is full is disconnected (it does not
    /// read: its connection's buffers are full too), counted and logged.
    private func deliver(_ text: String, to id: Int) {
        let dropped = state.withLock { state -> (any Channel)? in
            guard let client = state.clients[id], case .dropped = client.queue.yield(text) else { return nil }
            state.clients.removeValue(forKey: id)
            state.statistics.disconnected += 1
            client.queue.finish()
            return client.channel
        }
        guard let channel = dropped else { return }
        channel.close(promise: nil)
        log("web: disconnected a client that did not read: \(options.maximumBacklog) messages were waiting for it")
    }

    /// Queues `text` for every client.
    private func broadcast(_ text: String) {
        for id in state.withLock({ Array($0.clients.keys) }) { deliver(text, to: id) }
    }

    /// Queues meters for every client that has had every layer's (all of them when `complete`).
    private func broadcastMeters(_ text: String, complete: Bool) {
        let ids = state.withLock { state in
            state.clients.compactMap { id, client -> Int? in
                guard complete || client.hasAllMeters else { return nil }
                state.clients[id]?.hasAllMeters = true
                return id
            }
        }
        for id in ids { deliver(text, to: id) }
    }

    /// Pushes the meters ``Options/metersPerSecond`` times a second (each layer's when it changed,
    /// every layer's once a second and to a page that just came: ``WebMeters/complete``), the state
    /// five times a second (and after a change, at most eight times a second: a state of thousands
    /// of layers is hundreds of kilobytes), the discontinuities when there are new ones.
    private func tick() async {
        let interval = Duration.seconds(1 / max(1, options.metersPerSecond))
        var ticks = 0
        var discontinuities = -1
        let statusEvery = max(1, Int(options.metersPerSecond / 5))
        let statusAfterChange = max(1, Int((options.metersPerSecond / 8).rounded(.up)))
        var allMetersSent = ContinuousClock.now
        var lastStatus = -statusEvery, changed = false
        var sent: [WebMeters.Meter] = []
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            ticks += 1
            let (show, clients, statusDue, allMetersDue) = state.withLock { state in
                defer { (state.statusDue, state.allMetersDue) = (false, false) }
                return (state.show, state.clients.count, state.statusDue, state.allMetersDue)
            }
            guard let show, clients > 0 else { continue }
            // Computed off the server's thread; a push that takes longer than the interval delays
            // the next one instead of piling up.
            changed = changed || statusDue
            let sendStatus = ticks - lastStatus >= (changed ? statusAfterChange : statusEvery)
            if sendStatus { (lastStatus, changed) = (ticks, false) }
            let known = discontinuities
            let now = ContinuousClock.now
            let before = allMetersDue || now - allMetersSent >= .seconds(1) ? nil : sent
            if before == nil { allMetersSent = now }
            let (meters, complete, layers, count, status, breaks) = await run(on: publishing) { () -> (String, Bool, [WebMeters.Meter], Int, String?, String?) in
                var meters = show.meters()
                let layers = meters.layers
                meters.keepChanges(since: before)
                let status = sendStatus ? show.dispatcher.execute(.status, address: "status").json : nil
                let breaks = statusDue || meters.discontinuities != known ? show.discontinuities().json : nil
                return (meters.json, meters.complete, layers, meters.discontinuities, status, breaks)
            }
            sent = layers
            broadcastMeters(meters, complete: complete)
            if let status { broadcast(status) }
            if let breaks {
                discontinuities = count
                broadcast(breaks)
            }
        }
    }
}

/// A web server that could not start, with what to do.
public struct WebError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong and what to do.
    public var message: String
    /// An error with `message`.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
