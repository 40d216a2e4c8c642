import Foundation
import LockstepControl
import LockstepOSC
import LockstepSession
import LockstepTestSupport
import Synchronization
import Testing

/// An OSC control server on an offline show, with a transport that keeps what it sends.
final class ServerBench: Sendable {
    let show: OfflineShow
    let dispatcher: ControlDispatcher
    let server: OSCControlServer
    let sent = Outbox()
    let start = ContinuousClock.now

    static let defaultSession = """
        channels: 1
        cues:
          - { name: bed, file: bed.wav, at: 0 }
          - { name: bell, file: bed.wav, at: manual }
        """

    init(_ options: OSCControlServer.Options = .init(), session: String = ServerBench.defaultSession,
         audio: [(name: String, samples: [Float])] = [("bed.wav", Signals.constant(0.125, frames: 48000))]) throws {
        show = try OfflineShow(session, audio: audio)
        dispatcher = ControlDispatcher(player: show.player)
        let sent = self.sent
        server = OSCControlServer(dispatcher: dispatcher, options: options, transmit: { peer, bytes in
            sent.list.withLock { $0.append((peer, bytes)) }
            return true
        })
    }

    static func peer(_ port: UInt16) -> OSCPeer { try! OSCPeer.resolve(OSCEndpoint(host: "127.0.0.1", port: port)) }

    /// Hands `message` to the server as if `port` on 127.0.0.1 sent it `seconds` after the start.
    func receive(_ message: OSCMessage, from port: UInt16, at seconds: Double = 0) throws {
        let bytes = try message.encoded()
        bytes.withUnsafeBytes { server.receive($0, size: $0.count, from: Self.peer(port), now: start + .seconds(seconds)) }
    }

    /// Hands a packet (a bundle, say) to the server as if `port` on 127.0.0.1 sent it.
    func receive(_ packet: OSCPacket, from port: UInt16) throws {
        let bytes = try packet.encoded()
        bytes.withUnsafeBytes { server.receive($0, size: $0.count, from: Self.peer(port)) }
    }

    /// What was sent since the last call: destination and decoded message.
    func take() -> [(to: OSCPeer, message: OSCMessage)] {
        sent.list.withLock { list in
            defer { list.removeAll() }
            return list.map { ($0.0, try! $0.1.withUnsafeBytes { try OSCMessage(decoding: $0) }) }
        }
    }
}

/// Datagrams a fake transport was asked to send.
final class Outbox: Sendable {
    let list = Mutex<[(OSCPeer, [UInt8])]>([])
}

@Suite("OSCControlServer: replies, the passcode, updates, limits (offline, no socket)")
struct OSCControlServerTests {
    @Test("replies go to the sender's host at port 53001, or the port set with /udpReplyPort, as /reply{address} with the JSON")
    func replies() throws {
        let bench = try ServerBench()
        try bench.receive(OSCMessage("/thump"), from: 40000)
        let first = bench.take()
        #expect(first.map(\.to) == [ServerBench.peer(53001)])
        let id = bench.server.workspace.uniqueID                 // a workspace method's reply names the workspace, as QLab's
        #expect(first.first?.message == OSCMessage("/reply/thump", [.string(#"{"address":"/thump","data":"thump","status":"ok","workspace_id":""# + id + #""}"#)]))
        try bench.receive(OSCMessage("/udpReplyPort", [.int32(9100)]), from: 40000)
        try bench.receive(OSCMessage("/go"), from: 40000)
        let next = bench.take()
        #expect(next.map(\.to) == [ServerBench.peer(9100), ServerBench.peer(9100)])
        #expect(next.last?.message.address == "/reply/go")
        #expect(next.last.flatMap { OSCTestPeer.json($0.message) }?["status"] as? String == "ok")
        #expect(bench.server.statistics.replies == 3 && bench.server.statistics.commands == 1)
        // QLab's three keys, and a data that is the schema's CommandResult: decoded and encoded
        // again, the same JSON.
        guard case .string(let text)? = next.last?.message.arguments.first else { Issue.record("no JSON string"); return }
        let reply = try JSONSchema.decode(ControlReply.self, from: text)
        let result = try reply.decodeData(CommandResult.self)
        #expect(reply.address == "/go" && result.schema == 1 && result.cue != nil && result.start == result.position)
        #expect(JSONSchema.line(result) == reply.data?.json, "\(text)")
        try bench.receive(OSCMessage("/lockstep/status"), from: 40000)
        guard case .string(let statusText)? = bench.take().last?.message.arguments.first else { Issue.record("no status"); return }
        #expect(try JSONSchema.decode(ControlReply.self, from: statusText).decodeData(ControlStatus.self).event == "status")
    }

    @Test("one packet with a number past its range — a seek of 1e30 as float or double, of 2^62 as int64, a ramp or level of 1e30 — gets an error reply naming the argument and its range; the show plays on",
          arguments: [OSCMessage("/lockstep/seek", [.float(1e30)]), OSCMessage("/lockstep/seek", [.double(1e30)]),
                      OSCMessage("/lockstep/seek", [.int64(1 << 62)]), OSCMessage("/lockstep/seek", [.int32(604_801)]),
                      OSCMessage("/lockstep/layer/bed/gain", [.float(-6), .float(1e30)]),
                      OSCMessage("/lockstep/layer/bed/gain", [.double(1e30)]), OSCMessage("/cue/bed/level", [.double(1e30)]),
                      OSCMessage("/lockstep/layer/bed/gain", [.float(-6), .string("9999999999 samples")])])
    func numbersOutOfRange(_ message: OSCMessage) throws {
        let bench = try ServerBench(session: """
            channels: 1
            layers: { bed: {} }
            cues:
              - { name: bed, layer: bed, file: bed.wav, at: 0 }
            """)
        try bench.show.render(1024)
        try bench.receive(message, from: 40000)
        let reply = try #require(bench.take().first.flatMap { OSCTestPeer.json($0.message) })
        #expect(reply["status"] as? String == "error", "\(reply)")
        #expect(reply["code"] as? String == "outOfRange", "\(reply)")
        let text = reply["data"] as? String ?? ""
        #expect(text.hasPrefix(message.address) && (text.contains("a week") || text.contains("0 to 3600 seconds") || text.contains("+12 dB")),
                "\(text)")
        try bench.receive(OSCMessage("/lockstep/status"), from: 40000)
        let status = try #require(bench.take().first.flatMap { OSCTestPeer.json($0.message) })
        #expect((status["data"] as? [String: Any])?["state"] as? String == "playing")
    }

    @Test("with a passcode, each client is refused until it sends /connect with it")
    func passcode() throws {
        let bench = try ServerBench(.init(passcode: "s3cret"))
        try bench.receive(OSCMessage("/lockstep/status"), from: 40000)
        try bench.receive(OSCMessage("/connect", [.string("nope")]), from: 40000)
        try bench.receive(OSCMessage("/connect", [.string("s3cret")]), from: 40000)
        try bench.receive(OSCMessage("/lockstep/status"), from: 40000)
        try bench.receive(OSCMessage("/lockstep/status"), from: 40001)          // another client
        let replies = bench.take().compactMap { OSCTestPeer.json($0.message) }
        #expect(replies.map { $0["status"] as? String } == ["error", "error", "ok", "ok", "error"])
        // Error replies say their kind as `code`; a successful one has none.
        #expect(replies.map { $0["code"] as? String } == ["unauthorized", "unauthorized", nil, nil, "unauthorized"])
        #expect(bench.server.statistics.refused == 3)
    }

    @Test("updates go to subscribed clients only, as /update/{kind} with the JSON, until /updates 0")
    func updates() throws {
        let bench = try ServerBench()
        try bench.receive(OSCMessage("/updates", [.int32(1)]), from: 40000)
        _ = bench.take()
        try bench.receive(OSCMessage("/go"), from: 40001)                       // someone else fires the bell
        let sent = bench.take()
        let update = try #require(sent.first { $0.message.address == "/update/playhead" })
        #expect(update.to == ServerBench.peer(53001))
        #expect(sent.filter { $0.message.address.hasPrefix("/update/") && !$0.message.address.hasPrefix("/update/workspace/") }.count == 1)
        #expect(sent.filter { $0.message.address.hasSuffix("/playbackPosition") }.count == 1)   // and QLab's form of it
        try bench.show.render(4096 + 2048)
        bench.dispatcher.poll()
        let started = bench.take().filter { $0.message.address == "/update/cue/started" }.compactMap { OSCTestPeer.json($0.message)?["cue"] as? String }
        #expect(started == ["bed", "bell"])
        try bench.receive(OSCMessage("/updates", [.int32(0)]), from: 40000)
        bench.dispatcher.poll(now: .now + .seconds(5))                          // a heartbeat is due: nobody gets it
        #expect(bench.take().allSatisfy { !$0.message.address.hasPrefix("/update/") })
        #expect(bench.server.statistics.subscribers == 0)
    }

    @Test("a client over its rate has the excess dropped and counted, with one error reply a second")
    func rateLimit() throws {
        let bench = try ServerBench(.init(messagesPerSecond: 10, burst: 5))
        for _ in 0..<8 { try bench.receive(OSCMessage("/thump"), from: 40000) }
        var replies = bench.take().compactMap { OSCTestPeer.json($0.message) }
        #expect(replies.filter { $0["status"] as? String == "ok" }.count == 5)
        #expect(replies.count == 6)
        #expect((replies.last?["data"] as? String)?.hasPrefix("too many messages from 127.0.0.1:40000: over 10 a second; 1 dropped so far") == true)
        try bench.receive(OSCMessage("/thump"), from: 40000, at: 0.5)           // 5 tokens back
        #expect(bench.take().count == 1)
        for _ in 0..<10 { try bench.receive(OSCMessage("/thump"), from: 40000, at: 0.5) }
        replies = bench.take().compactMap { OSCTestPeer.json($0.message) }
        #expect(replies.count == 4)                                              // no second notice within the second
        try bench.receive(OSCMessage("/thump"), from: 40001, at: 0.5)          // other clients are not affected
        #expect(bench.take().first.flatMap { OSCTestPeer.json($0.message) }?["status"] as? String == "ok")
        #expect(bench.server.statistics.floodDropped == 9)
    }

    @Test("the client table is bounded: an idle client makes room; when all are subscribed, a new one is turned away and counted")
    func clientTable() throws {
        let bench = try ServerBench(.init(maximumClients: 2))
        try bench.receive(OSCMessage("/updates", [.int32(1)]), from: 40000, at: 0)
        try bench.receive(OSCMessage("/thump"), from: 40001, at: 1)
        try bench.receive(OSCMessage("/thump"), from: 40002, at: 2)          // 40001 goes, 40000 (subscribed) stays
        #expect(bench.server.statistics.clients == 2 && bench.server.statistics.subscribers == 1)
        try bench.receive(OSCMessage("/updates", [.int32(1)]), from: 40002, at: 3)
        _ = bench.take()
        try bench.receive(OSCMessage("/thump"), from: 40003, at: 4)
        #expect(bench.take().isEmpty)
        #expect(bench.server.statistics.clientsTurnedAway == 1)
    }

    @Test("an oversized datagram, an empty bundle and the kernel's drop count are answered or counted")
    func oversizedAndDrops() throws {
        let bench = try ServerBench(.init(maximumDatagramSize: 64))
        let bytes = try OSCMessage("/lockstep/status").encoded()
        bytes.withUnsafeBytes { bench.server.receive($0, size: 9000, from: ServerBench.peer(40000), droppedByKernel: 5) }
        let reply = try #require(bench.take().first)
        #expect(reply.message.address == "/reply/lockstep/status")
        #expect(OSCTestPeer.json(reply.message)?["data"] as? String == "the datagram is 9000 bytes; the limit is 64. Send one short message at a time")
        Array("#bundle\0\0\0\0\0\0\0\0\u{1}".utf8).withUnsafeBytes {
            bench.server.receive($0, size: $0.count, from: ServerBench.peer(40000), droppedByKernel: 7)
        }
        #expect(bench.take().first?.message.address == "/reply")
        let statistics = bench.server.statistics
        #expect(statistics.oversized == 1 && statistics.bundles == 1 && statistics.kernelDropped == 7 && statistics.errorReplies == 2)
    }
}
