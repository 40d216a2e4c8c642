import Foundation
import Lockstep
import LockstepControl
import LockstepJACK
import LockstepTestSupport
import LockstepWeb
import Testing

extension JACKTests {
    /// GO from the web cue page's WebSocket on a live session: from the moment the command leaves
    /// a raw WebSocket client on loopback (JACK's host clock, translated to the device's frames)
    /// to the cue's first sample, each cue checked on the sample its reply names.
    @Suite("web GO latency (live, period 256)", .serialized)
    struct WebGoLatencyTests {
        /// GOs sent (LOCKSTEP_WEB_GO_COUNT; Scripts/bench.sh part 9 sends 200).
        static let count = Int(ProcessInfo.processInfo.environment["LOCKSTEP_WEB_GO_COUNT"] ?? "") ?? 20
        /// The page's meters a second (LOCKSTEP_WEB_GO_METERS, default 25 as `session run`'s; the
        /// state goes out a fifth as often): 1 shows what the pushes add to the GO's latency.
        static let metersPerSecond = Double(ProcessInfo.processInfo.environment["LOCKSTEP_WEB_GO_METERS"] ?? "") ?? 25

        @Test("every GO over the page's WebSocket sounds on the sample its reply names, after it was sent")
        func webGoesLandWhereTheirRepliesSay() throws { try retryingOnXruns("WebGoLatencyTests", run) }

        func run(_ xrun: XrunFlag) throws {
            let rig = try GoLatencyRig(count: Self.count, client: "lockstep-web-go")
            let device = rig.device
            let server = WebControlServer(options: .init(host: "127.0.0.1", port: 0, metersPerSecond: Self.metersPerSecond))
            try server.start()
            defer { server.stop() }
            server.attach(SessionWebShow(dispatcher: ControlDispatcher(player: rig.player)))
            // As `session run --web` does: the connections read, and the commands carried out,
            // at realtime priority under the JACK client's.
            server.runOnServerThreads { device.promoteCurrentThread() }
            let client = try WebSocketTestClient(port: try #require(server.port))
            #expect(client.isUpgraded, "\(client.handshake)")
            rig.waitForBed()

            let (leads, afterReply, starts, begun) = try rig.sendGoes(Self.count) {
                client.send(text: #"{"command":"go"}"#)
                let data = try #require(Self.goReply(client))
                return Int64(try #require(data["sampleTime"] as? Int, "\(data)"))
            }
            rig.waitForCapture(past: try #require(starts.last))
            let (period, p50, p99, most) = try rig.stopAndCheck(leads: leads, afterReply: afterReply, starts: starts, begun: begun, xrun: xrun)
            let ms = GoLatencyRig.ms
            print("web GO latency: \(Self.count) GOs, period \(period): WebSocket send to first sample p50 \(p50) frames (\(ms(p50)) ms), p99 \(p99) (\(ms(p99)) ms), max \(most) (\(ms(most)) ms); every cue on the sample its reply names; standby \(rig.player.standbyStatistics)")
        }

        /// The `data` of the next reply to a GO (skipping meters, status and updates).
        static func goReply(_ client: WebSocketTestClient) -> [String: Any]? {
            let deadline = Date().addingTimeInterval(5)
            var skipped = 0, bytes = 0
            while let frame = client.next(timeout: max(0, deadline.timeIntervalSinceNow)) {
                // A reply is a few hundred bytes: the state and the meters (hundreds of kilobytes
                // among thousands of layers) are skipped unparsed, so the client adds little load.
                guard frame.opcode == 1, frame.payload.count < 4096,
                      let object = try? JSONSerialization.jsonObject(with: Data(frame.payload)) as? [String: Any],
                      object["address"] as? String == "go" else {
                    skipped += 1
                    bytes += frame.payload.count
                    continue
                }
                guard object["status"] as? String == "ok" else {
                    Issue.record("the GO was refused: \(frame.text)")
                    return nil
                }
                return object["data"] as? [String: Any]
            }
            Issue.record("no reply to a GO within 5 s; \(skipped) other frames (\(bytes) bytes) came meanwhile")
            return nil
        }
    }
}
