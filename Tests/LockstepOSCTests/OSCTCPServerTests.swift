import CLo
import Foundation
import LockstepControl
import LockstepOSC
import LockstepTestSupport
import Testing

/// ``OSCTCPServer`` on 127.0.0.1 with an offline show behind it: real connections, SLIP frames
/// written in pieces, replies read back SLIP-framed.
@Suite("OSCTCPServer: SLIP over TCP on 127.0.0.1 (offline show)", .serialized)
struct OSCTCPServerTests {
    func server(_ limits: OSCTCPServer.Limits = .init()) throws -> (ServerBench, OSCTCPServer) {
        let bench = try ServerBench()
        let server = try OSCTCPServer(endpoint: OSCEndpoint(host: "127.0.0.1", port: 0), dispatcher: bench.dispatcher, limits: limits)
        return (bench, server)
    }

    @Test("a frame written a byte at a time, and two frames in one write, are answered on the connection; a bundle too; updates come the same way")
    func replies() throws {
        let (_, server) = try server()
        defer { server.stop() }
        let client = try OSCTCPTestClient(port: server.localAddress.port)
        for byte in SLIP.encode(try OSCMessage("/thump").encoded()) { client.write([byte]) }
        #expect(client.reply(to: "/thump")?["data"] as? String == "thump")
        client.write(SLIP.encode(try OSCMessage("/updates", [.int32(1)]).encoded()) + SLIP.encode(try OSCMessage("/go").encoded()))
        #expect(client.reply(to: "/updates")?["data"] as? Bool == true)
        #expect(client.next()?.address == "/update/playhead")             // (published before the reply)
        #expect((client.reply(to: "/go")?["data"] as? [String: Any])?["cue"] as? String == "bell")
        client.write(SLIP.encode(try OSCPacket.bundle(.immediately, [.message(OSCMessage("/thump")), .message(OSCMessage("/lockstep/status"))]).encoded()))
        #expect(client.reply(to: "/thump") != nil && client.reply(to: "/lockstep/status")?["status"] as? String == "ok")
        try client.send("/udpReplyPort", [.int32(9000)])
        #expect(client.reply(to: "/udpReplyPort")?["data"] as? String == "replies come back on this connection; /udpReplyPort is for UDP")
        let statistics = server.statistics
        #expect(statistics.connections == 1 && statistics.received == 5 && statistics.bundles == 1 && statistics.commands == 2, "\(statistics)")
    }

    @Test("garbage gets error replies and the connection lives; a frame over the limit gets an error and the connection is closed")
    func garbage() throws {
        let (_, server) = try server(.init(maximumFrameSize: 1024))
        defer { server.stop() }
        let client = try OSCTCPTestClient(port: server.localAddress.port)
        client.write(SLIP.encode(Array("garbage".utf8)))
        #expect((client.reply(to: "")?["data"] as? String)?.hasPrefix("not an OSC message") == true)
        client.write([0xC0, 0x41, 0xDB, 0x41, 0xC0])
        #expect((client.reply(to: "")?["data"] as? String)?.hasPrefix("a SLIP frame holds ESC (0xDB) followed by 0x41") == true)
        try client.send("/thump")
        #expect(client.reply(to: "/thump") != nil)
        client.write([0xC0] + Array(repeating: 0x2F, count: 5000))
        #expect(client.reply(to: "")?["data"] as? String == "a SLIP frame is over 1024 bytes, the limit; the connection is closed. Send one message or bundle of at most 1024 bytes per frame, each frame ending with END (0xC0)")
        #expect(client.waitForClose())
        let statistics = server.statistics
        #expect(statistics.malformed == 2 && statistics.oversized == 1 && statistics.disconnected == 1, "\(statistics)")
        // Others are still served.
        let other = try OSCTCPTestClient(port: server.localAddress.port)
        try other.send("/thump")
        #expect(other.reply(to: "/thump") != nil)
    }

    @Test("a client that never reads is disconnected once its replies waiting on this side pass the backlog limit; the others are served")
    func stuckClient() throws {
        let (_, server) = try server()
        defer { server.stop() }
        let stuck = try OSCTCPTestClient(port: server.localAddress.port, receiveBuffer: 4096)
        // 400 status queries (the rate limit's burst), each answered with a reply of about 1 KiB
        // that is never read.
        let query = SLIP.encode(try OSCMessage("/lockstep/status").encoded())
        stuck.write(Array([[UInt8]](repeating: query, count: 400).joined()))
        let deadline = ContinuousClock.now + .seconds(10)
        while server.statistics.disconnected == 0 && ContinuousClock.now < deadline { usleep(10_000) }
        #expect(server.statistics.disconnected == 1, "\(server.statistics)")
        let other = try OSCTCPTestClient(port: server.localAddress.port)
        try other.send("/thump")
        #expect(other.reply(to: "/thump") != nil)
    }

    @Test("beyond the client limit a connection gets an error frame and is closed; a closed connection makes room")
    func clientLimit() throws {
        let (_, server) = try server(.init(maximumClients: 2))
        defer { server.stop() }
        var first: OSCTCPTestClient? = try OSCTCPTestClient(port: server.localAddress.port)
        let second = try OSCTCPTestClient(port: server.localAddress.port)
        try first?.send("/thump")
        try second.send("/thump")
        #expect(first?.reply(to: "/thump") != nil && second.reply(to: "/thump") != nil)
        let third = try OSCTCPTestClient(port: server.localAddress.port)
        #expect(third.reply(to: "")?["data"] as? String == "too many OSC clients: 2 are connected, the limit; try again when one has disconnected")
        #expect(third.waitForClose())
        first = nil
        var served = false
        for _ in 0..<50 where !served {
            let fourth = try OSCTCPTestClient(port: server.localAddress.port)
            try fourth.send("/thump")
            served = fourth.reply(to: "/thump", timeout: 0.5) != nil
        }
        #expect(served && server.statistics.clientsTurnedAway >= 1)
    }

    @Test("liblo's own TCP sender with SLIP (lo_address_set_stream_slip) is understood")
    func libloSender() throws {
        let (bench, server) = try server()
        defer { server.stop() }
        let address = try #require(lo_address_new_with_proto(LO_TCP, "127.0.0.1", String(server.localAddress.port)))
        defer { lo_address_free(address) }
        #expect(lo_address_set_stream_slip(address, 1) == 0)
        let message = try #require(lo_message_new())
        defer { lo_message_free(message) }
        #expect(lo_send_message(address, "/go", message) > 0)
        var fired = false
        for _ in 0..<100 where !fired {
            fired = bench.show.player.timeline.cues.first { $0.name == "bell" }?.start != nil
            if !fired { usleep(10_000) }
        }
        #expect(fired && server.statistics.commands == 1 && server.statistics.malformed == 0, "\(server.statistics)")
    }
}
