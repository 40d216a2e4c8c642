import Foundation
import Lockstep
import LockstepControl
import LockstepFiles
import LockstepJACK
import LockstepOSC
import LockstepSession
import LockstepTestSupport
import Testing

extension JACKTests {
    /// GO over OSC on a live session: from the moment the `/go` datagram arrives (the kernel's
    /// timestamp, as the server measures it) and from the moment it leaves its client on loopback
    /// (JACK's host clock, translated to the device's frames) to the cue's first sample.
    @Suite("OSC GO latency (live, period 256)", .serialized)
    struct OSCGoLatencyTests {
        /// GOs sent (LOCKSTEP_OSC_GO_COUNT; Scripts/bench.sh part 9 sends 200).
        static let count = Int(ProcessInfo.processInfo.environment["LOCKSTEP_OSC_GO_COUNT"] ?? "") ?? 20

        @Test("every /go sounds on the sample its reply names, within two periods of being carried out")
        func oscGoesLandWithinTwoPeriods() throws { try retryingOnXruns("OSCGoLatencyTests", run) }

        func run(_ xrun: XrunFlag) throws {
            let rig = try GoLatencyRig(count: Self.count, client: "lockstep-osc-go")
            let device = rig.device
            let dispatcher = ControlDispatcher(player: rig.player)
            let osc = OSCUDPServer(socket: try OSCUDPSocket(binding: OSCEndpoint(host: "127.0.0.1", port: 0)),
                                   dispatcher: dispatcher, log: { _ in }, threadSetup: { device.promoteCurrentThread() })
            let peer = try OSCTestPeer(serverPort: osc.localAddress.port)
            try peer.send("/udpReplyPort", [.int32(Int32(peer.port))])
            #expect(peer.reply(to: "/udpReplyPort")?["status"] as? String == "ok")
            rig.waitForBed()

            // From the reply's arrival back at the client: the command was carried out before,
            // so the cue cannot start more than two periods after this.
            let (leads, afterReply, starts, begun) = try rig.sendGoes(Self.count) {
                try peer.send("/go")
                let reply = try #require(peer.reply(to: "/go"))
                let data = try #require(reply["data"] as? [String: Any], "\(reply)")
                return Int64(try #require(data["sampleTime"] as? Int, "\(reply)"))
            }
            rig.waitForCapture(past: try #require(starts.last))
            // From each datagram's arrival (the kernel's timestamp, on the host clock) to its
            // first sample, as the server measured it: after the send, before the reply.
            let arrival = try #require(osc.statistics.goLatency, "the server measured no GO latency")
            #expect(arrival.count == Self.count)
            #expect(arrival.maxFrames <= (leads.max() ?? 0) && arrival.p50Frames > 0, "\(arrival) against \(leads)")
            osc.stop()
            let (period, p50, p99, most) = try rig.stopAndCheck(leads: leads, afterReply: afterReply, starts: starts, begun: begun, xrun: xrun)
            let ms = GoLatencyRig.ms
            print("OSC GO latency: \(Self.count) GOs, period \(period): datagram arrival to first sample p50 \(arrival.p50Frames) frames (\(ms(arrival.p50Frames)) ms), p99 \(arrival.p99Frames) (\(ms(arrival.p99Frames)) ms), max \(arrival.maxFrames) (\(ms(arrival.maxFrames)) ms); from the send p50 \(p50) (\(ms(p50)) ms), p99 \(p99) (\(ms(p99)) ms), max \(most) (\(ms(most)) ms); every cue on the sample its reply names; standby \(rig.player.standbyStatistics)")
        }
    }
}
