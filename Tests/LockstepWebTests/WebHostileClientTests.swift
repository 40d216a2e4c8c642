import Foundation
import Synchronization
import LockstepControl
import LockstepTestSupport
@testable import LockstepWeb
import Testing

/// Clients that break the protocol or hold the server's resources, against a real server on
/// 127.0.0.1 (raw sockets: RFC 6455 frames and HTTP bytes exactly as a hostile client writes
/// them). Each is failed or cut off; the server serves on.
@Suite("The web server and a hostile client: protocol errors fail the connection, slow and stuck clients are cut off")
struct WebHostileClientTests {
    /// A server on a free port, with a show when `show` is given.
    func server(_ options: WebControlServer.Options = .init(host: "127.0.0.1", port: 0), show: OfflineShow? = nil) throws -> WebControlServer {
        var options = options
        options.port = 0
        let server = WebControlServer(options: options)
        try server.start()
        if let show { server.attach(SessionWebShow(dispatcher: ControlDispatcher(player: show.player))) }
        return server
    }

    @Test("commands are carried out and answered in the order sent: a GO alone on the event loop that read it, an edit on the commands' thread and a GO after it only after it; fragmented and binary messages keep their places")
    func commandsInOrder() throws {
        let show = try OfflineShow("channels: 1\ncues:\n  - { name: bed, file: bed.wav, at: 0 }\n  - { name: a, file: bed.wav, at: manual }\n  - { name: b, file: bed.wav, at: manual }\n",
                                   audio: [("bed.wav", Signals.constant(0.125, frames: 4800))])
        let server = try server()
        defer { server.stop() }
        let dispatcher = ControlDispatcher(player: show.player)
        server.attach(SessionWebShow(dispatcher: dispatcher))
        // The thread each update is published on: the one that carried its command out.
        let threads = Mutex<[String]>([])
        let subscription = dispatcher.updates.subscribe { update in
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
            threads.withLock { $0.append(name.trimmingCharacters(in: .whitespacesAndNewlines) + " " + update.json) }
        }
        defer { subscription.cancel() }
        let page = try WebSocketTestClient(port: try #require(server.port))
        #expect(page.next(skipping: ["meters", "discontinuities"])?.text.contains(#""event":"status""#) == true)
        // All at once: the edit is carried out on the commands' thread, the GO that follows it
        // (which the event loop takes otherwise) only after it.
        let text = { (json: String) in WebSocketTestClient.frame(Array(json.utf8)) }
        page.send(frames: [
            text(#"{"command":"set","cue":"a","key":"name","value":"renamed"}"#),
            text(#"{"command":"go","cue":"renamed"}"#),
            WebSocketTestClient.frame(Array(#"{"command":"go","cue":"#.utf8), fin: false),
            WebSocketTestClient.frame(opcode: 0, Array(#""b"}"#.utf8)),
            WebSocketTestClient.frame(opcode: 2, Array(#"{"command":"stop","cue":"b"}"#.utf8)),
            text(#"{"command":"go","cue":"nothing"}"#),
            text(#"{"command":"select","cue":"b"}"#),
        ])
        var replies: [(address: String, status: String)] = []
        while replies.count < 6, let frame = page.next(timeout: 5) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(frame.payload)) as? [String: Any],
                  let address = object["address"] as? String, address != "status", let status = object["status"] as? String else { continue }
            replies.append((address, status))
        }
        #expect(replies.map { "\($0.address) \($0.status)" } == ["set ok", "go ok", "go ok", "stop ok", "go error", "select ok"])
        // The edit, and all that came after it, on the commands' thread.
        let batch = threads.withLock { updates in defer { updates = [] }; return updates }
        #expect(batch.contains { $0.contains(#""kind":"cue/edited""#) } && batch.allSatisfy { $0.hasPrefix("lockstep.web.cm ") }, "\(batch)")
        // Alone, a GO is carried out on the event loop that read it.
        page.send(text: #"{"command":"go","cue":"renamed"}"#)
        while let frame = page.next(timeout: 5), !frame.text.contains(#""address":"go""#) {}
        let alone = threads.withLock { updates in defer { updates = [] }; return updates }
        #expect(!alone.isEmpty && alone.allSatisfy { $0.hasPrefix("NIO-ELT") }, "\(alone)")
        // Alone too, what stops or recomputes every layer goes to the commands' thread: on the
        // event loop it would hold up every connection's reads. (A seek or a reset, placed alike
        // by `places`, waits here for buffers no device renders back.)
        for command in [#"{"command":"load","cue":"b","time":"0:00.02"}"#, #"{"command":"stop"}"#] {
            page.send(text: command)
            var reply = ""
            while let frame = page.next(timeout: 5) {
                guard frame.text.hasPrefix(#"{"address":""#), !frame.text.contains(#""address":"status""#) else { continue }
                reply = frame.text
                break
            }
            #expect(reply.contains(#""status":"ok""#), "\(command): \(reply)")
            let updates = threads.withLock { updates in defer { updates = [] }; return updates }
            #expect(!updates.isEmpty && updates.allSatisfy { $0.hasPrefix("lockstep.web.cm ") }, "\(command): \(updates)")
        }
    }

    @Test("each command's place: what a cue or a layer does on the thread that read it, the state on the readers' queue, a seek, load, stop, reset or edit on the commands' thread")
    func places() throws {
        func place(_ json: String) throws -> WebControlServer.Place {
            let (parsed, place) = WebControlServer.parse(json)
            _ = try parsed.get()
            return place
        }
        for json in [#"{"command":"go"}"#, #"{"command":"go","cue":"a"}"#, #"{"command":"start","cue":"a"}"#,
                     #"{"command":"stop","cue":"a"}"#, #"{"command":"pause","cue":"a"}"#, #"{"command":"resume","cue":"a"}"#,
                     #"{"command":"level","cue":"a","gainDB":-3}"#, #"{"command":"gain","layer":"bed","gainDB":-6}"#,
                     #"{"command":"next"}"#, #"{"command":"previous"}"#, #"{"command":"select","cue":"a"}"#,
                     #"{"command":"panic","cue":"a"}"#] {
            #expect(try place(json) == .here, "\(json)")
        }
        #expect(try place(#"{"command":"status"}"#) == .reading)
        for json in [#"{"command":"seek","time":"1:30"}"#, #"{"command":"load","cue":"a","time":"0:30"}"#, #"{"command":"stop"}"#,
                     #"{"command":"reset"}"#, #"{"command":"pause"}"#, #"{"command":"resume"}"#, #"{"command":"panic"}"#,
                     #"{"command":"set","cue":"a","key":"name","value":"b"}"#, #"{"command":"undo"}"#, #"{"command":"save"}"#] {
            #expect(try place(json) == .commands, "\(json)")
        }
    }

    @Test("an unmasked client frame fails the connection with 1002 and is not carried out; a masked one is")
    func unmaskedFrame() throws {
        let server = try server()
        defer { server.stop() }
        let port = try #require(server.port)
        let good = try WebSocketTestClient(port: port)
        #expect(good.isUpgraded, "\(good.handshake)")
        good.send(text: #"{"command":"status"}"#)
        let reply = try #require(good.next())
        #expect(reply.opcode == 1 && reply.text.contains(#""status":"error""#), "\(reply.text)")    // (no show: "starting")
        let bad = try WebSocketTestClient(port: port)
        bad.send(text: #"{"command":"status"}"#, masked: false)
        let frame = try #require(bad.next())
        #expect(frame.opcode == 8 && frame.closeCode == 1002, "\(frame.opcode) \(frame.text)")
        #expect(bad.closes(within: 5))
        #expect(server.statistics.commands == 1)
    }

    @Test("a text frame that is not UTF-8 fails the connection with 1007 and is not carried out")
    func invalidUTF8() throws {
        let server = try server()
        defer { server.stop() }
        let client = try WebSocketTestClient(port: try #require(server.port))
        client.send(opcode: 1, Array(#"{"command":"go","cue":""#.utf8) + [0xFF, 0xFE, 0xC0, 0x80] + Array(#""}"#.utf8))
        let frame = try #require(client.next())
        #expect(frame.opcode == 8 && frame.closeCode == 1007, "\(frame.opcode) \(frame.text)")
        #expect(client.closes(within: 5))
        #expect(server.statistics.commands == 0)
    }

    @Test("a client sending its request head a byte at a time is closed after the idle timeout, before and after a first request; a silent one too",
          arguments: [false, true])
    func slowloris(afterARequest: Bool) throws {
        let server = try server(.init(host: "127.0.0.1", port: 0, idleTimeout: 1))
        defer { server.stop() }
        let port = try #require(server.port)
        let client = try HTTPTestClient(port: port)
        if afterARequest {
            client.write(Array("GET /style.css HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
            #expect(client.response().status == 200)
        }
        let started = ContinuousClock.now
        client.write(Array("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n".utf8))
        // A header that never ends, a byte every 100 ms: the connection is never idle that long.
        var closed = false
        for _ in 0..<100 where !closed {
            client.write(Array("X".utf8))
            closed = client.closes(within: 0.1)
        }
        #expect(closed, "still open after \(ContinuousClock.now - started)")
        #expect(ContinuousClock.now - started < .seconds(4), "closed after \(ContinuousClock.now - started)")
        let silent = try HTTPTestClient(port: port)
        #expect(silent.closes(within: 5))
        #expect(try HTTPTestClient.get(port: port, "/").status == 200)
    }

    @Test("runOnServerThreads runs its setup on the thread that reads the connections and on the commands' thread")
    func serverThreadsSetUp() throws {
        let server = try server()
        defer { server.stop() }
        let names = Mutex<[String]>([])
        server.runOnServerThreads {
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
            names.withLock { $0.append(name.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while names.withLock({ $0.count }) < 2 && ContinuousClock.now < deadline { usleep(1_000) }
        let seen = names.withLock { $0 }.sorted()
        #expect(seen.count == 2 && seen.contains("lockstep.web.cm") && seen.contains { $0.hasPrefix("NIO-ELT") }, "\(seen)")
    }

    @Test("a page that never reads is disconnected once its backlog is full; the show and the other pages carry on")
    func stuckPage() throws {
        let show = try OfflineShow("channels: 1\ncues:\n  - { name: bed, file: bed.wav, at: 0 }\n",
                                   audio: [("bed.wav", Signals.constant(0.125, frames: 4800))])
        let server = try server(.init(host: "127.0.0.1", port: 0, maximumBacklog: 32), show: show)
        defer { server.stop() }
        let port = try #require(server.port)
        let stuck = try WebSocketTestClient(port: port, receiveBuffer: 4096)
        #expect(stuck.isUpgraded)
        // Each command is answered with a reply it never reads: once the connection's buffers
        // are full, the replies wait on the server's side until there are too many.
        let started = ContinuousClock.now
        var sent = 0
        while server.statistics.disconnected == 0 && sent < 50_000 && ContinuousClock.now - started < .seconds(20) {
            stuck.send(text: #"{"command":"status"}"#)
            sent += 1
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while server.statistics.disconnected == 0 && ContinuousClock.now < deadline { usleep(10_000) }
        print("stuck page: \(sent) commands sent; disconnected \(ContinuousClock.now - started) after the first")
        #expect(server.statistics.disconnected == 1, "\(server.statistics)")
        let other = try WebSocketTestClient(port: port)
        #expect(other.next(skipping: ["meters", "discontinuities"])?.text.contains(#""event":"status""#) == true)
    }

    /// A show whose timeline picture takes until the test lets it go.
    struct SlowPictureShow: WebShow {
        let show: SessionWebShow
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        var dispatcher: ControlDispatcher { show.dispatcher }
        func meters() -> WebMeters { show.meters() }
        func discontinuities() -> WebDiscontinuities { show.discontinuities() }
        func cueList() -> WebCueList { show.cueList() }
        func picture() -> TimelinePicture {
            entered.signal()
            _ = release.wait(timeout: .now() + 20)
            return show.picture()
        }
    }

    @Test("a request that takes long (a picture of thousands of layers) holds up no command: a page's GO is answered meanwhile")
    func slowRequestHoldsNothingUp() throws {
        let show = try OfflineShow("channels: 1\ncues:\n  - { name: bed, file: bed.wav, at: 0 }\n  - { name: hit, file: bed.wav, at: manual }\n",
                                   audio: [("bed.wav", Signals.constant(0.125, frames: 4800))])
        let server = try server()
        defer { server.stop() }
        let slow = SlowPictureShow(show: SessionWebShow(dispatcher: ControlDispatcher(player: show.player)))
        server.attach(slow)
        let port = try #require(server.port)
        let page = try WebSocketTestClient(port: port)
        #expect(page.next(skipping: ["meters", "discontinuities"])?.text.contains(#""event":"status""#) == true)
        let picture = Mutex<Int?>(nil)
        let fetched = DispatchSemaphore(value: 0)
        Thread {
            let request = "GET /timeline.svg HTTP/1.1\nHost: 127.0.0.1:\(port)\nConnection: close\n\n"
            let status = try? HTTPTestClient.exchange(port: port, request, timeout: 30).status
            picture.withLock { $0 = status }
            fetched.signal()
        }.start()
        #expect(slow.entered.wait(timeout: .now() + 10) == .success, "the picture was never asked for")
        // While the picture is being made, the page's GO is carried out and answered.
        let sent = ContinuousClock.now
        page.send(text: #"{"command":"go"}"#)
        var reply: String?
        while let frame = page.next(timeout: 5) {
            if frame.text.contains(#""address":"go""#) { reply = frame.text; break }
        }
        #expect(reply?.contains(#""status":"ok""#) == true, "\(reply ?? "no reply to the GO while the picture was made"), after \(ContinuousClock.now - sent)")
        #expect(picture.withLock { $0 } == nil, "the picture was answered before it was let go")
        slow.release.signal()
        #expect(fetched.wait(timeout: .now() + 10) == .success)
        #expect(picture.withLock { $0 } == 200)
    }

    @Test("the state goes out at most eight times a second however fast the show changes, and still after a change")
    func stateIsPacedDuringChanges() throws {
        let show = try OfflineShow("channels: 1\ncues:\n  - { name: bed, file: bed.wav, at: 0 }\n  - { name: a, file: bed.wav, at: manual }\n  - { name: b, file: bed.wav, at: manual }\n",
                                   audio: [("bed.wav", Signals.constant(0.125, frames: 4800))])
        let server = try server(show: show)
        defer { server.stop() }
        let port = try #require(server.port)
        let page = try WebSocketTestClient(port: port)
        #expect(page.next(skipping: ["meters", "discontinuities"])?.text.contains(#""event":"status""#) == true)
        // A change every 20 ms for 2 s, POSTed (each publishes an update that makes the state due).
        let sender = Thread {
            for index in 0..<100 {
                let body = index % 2 == 0 ? #"{"command":"next"}"# : #"{"command":"previous"}"#
                let head = "POST /api/command HTTP/1.1\nHost: 127.0.0.1:\(port)\nContent-Type: application/json\nContent-Length: \(body.utf8.count)\nConnection: close\n\n"
                _ = try? HTTPTestClient.exchange(port: port, head, body: Array(body.utf8))
                usleep(20_000)
            }
        }
        sender.start()
        var states = 0
        let end = Date().addingTimeInterval(2)
        while Date() < end, let frame = page.next(timeout: max(0.01, end.timeIntervalSinceNow)) {
            if frame.text.contains(#""address":"status""#) && frame.text.contains(#""event":"status""#) { states += 1 }
        }
        // 8 a second after changes (the first may come at once): 17 in 2 s at most (every meter
        // tick would be 50); and still some (a loaded debug build makes fewer than 5 a second).
        #expect(states >= 4 && states <= 17, "\(states) states in 2 s")
    }
}
