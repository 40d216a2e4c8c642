import Foundation
import LockstepOSC
import LockstepTestSupport
import Testing

extension JACKTests {
    /// `lockstep session run --osc-tcp` answering QLab's workspace queries live, over a SLIP TCP
    /// connection as Companion's *QLab (advance)* module makes it, on a private dummy-driver
    /// jackd: the module's connect sequence, `/cue_id/{id}/start` landing on the sample its reply
    /// names, and the `/update/workspace/…` pushes it follows.
    @Suite("lockstep session run --osc-tcp answering QLab's workspace queries (the built binary, live)", .serialized,
           .enabled(if: OSCDump.isAvailable, "liblo-tools is not installed"))
    struct SessionQLabTests {
        let base: SessionOSCTests

        init() throws { base = try SessionOSCTests() }

        /// A TCP client that keeps every message it reads, so that waiting for one reply does not
        /// lose the updates that came before it.
        final class Client {
            let connection: OSCTCPTestClient
            var seen: [OSCMessage] = []

            init(port: UInt16) throws { connection = try OSCTCPTestClient(port: port) }

            /// Sends `address` and returns the JSON of its reply.
            func ask(_ address: String, _ arguments: [OSCArgument] = []) throws -> [String: Any] {
                try connection.send(address, arguments)
                let reply = try #require(wait { $0.address == "/reply" + address })
                return try #require(OSCTestPeer.json(reply))
            }

            /// The first message (seen already, or read within `timeout` seconds) that `matches`.
            func wait(timeout: Double = 5, for matches: (OSCMessage) -> Bool) -> OSCMessage? {
                if let index = seen.firstIndex(where: matches) { return seen.remove(at: index) }
                let deadline = Date().addingTimeInterval(timeout)
                while let message = connection.next(timeout: max(0, deadline.timeIntervalSinceNow)) {
                    if matches(message) { return message }
                    seen.append(message)
                }
                return nil
            }
        }

        @Test("the module's queries answered over TCP; /cue_id/{id}/start lands on the sample its reply names; /update/workspace/… pushed, then disconnect as the run ends")
        func companionModuleSequence() throws { try retryingOnXruns("SessionQLabTests", companionModuleSequenceRun) }

        func companionModuleSequenceRun(_ xrun: XrunFlag) throws {
            let live = try base.live(extra: ["--osc-tcp", "127.0.0.1:0"])
            let (capture, running) = (live.capture, live.running)
            #expect(running.waitForErrorOutput(containing: "(TCP, SLIP framing)"), "\(running.errorOutputSoFar)")
            let text = running.errorOutputSoFar
            let marker = try #require(text.range(of: "OSC control on 127.0.0.1:", options: .backwards))
            let client = try Client(port: try #require(UInt16(text[marker.upperBound...].prefix { $0.isNumber })))

            // The connection's 'ready': /connect; prime_vars: /version, /workspaces, /connect.
            #expect(try client.ask("/connect")["data"] as? String == "ok")
            #expect(try client.ask("/version")["data"] as? String == "5.0.0")
            let workspaces = try #require(try client.ask("/workspaces")["data"] as? [[String: Any]])
            #expect(workspaces.count == 1 && workspaces[0]["displayName"] as? String == "show.yaml", "\(workspaces)")
            let workspace = try #require(workspaces[0]["uniqueID"] as? String)
            // The second prime_vars: /playheadID, /updates, /updates 1, /cueLists, /selectedCues, settings.
            let playhead = try client.ask("/playheadID")
            #expect(playhead["workspace_id"] as? String == workspace)
            let bell = try #require(playhead["data"] as? String)
            #expect(try client.ask("/updates", [.int32(1)])["data"] as? Bool == true)
            let lists = try #require(try client.ask("/cueLists")["data"] as? [[String: Any]])
            let list = try #require(lists.first?["uniqueID"] as? String)
            let cues = try #require(lists.first?["cues"] as? [[String: Any]])
            #expect(cues.map { $0["listName"] as? String } == ["bed", "bell", "horn"] && cues[1]["uniqueID"] as? String == bell)
            let horn = try #require(cues[2]["uniqueID"] as? String)
            // The selection is the playhead's cue.
            #expect((try client.ask("/selectedCues")["data"] as? [[String: Any]])?.map { $0["uniqueID"] as? String } == [bell])
            #expect(try client.ask("/showMode")["data"] as? Bool == true)
            let keys = #"["number","uniqueID","listName","type","isPaused","duration","actionElapsed","isRunning","percentActionElapsed","colorName"]"#
            let active = try #require(try client.ask("/cue/active/valuesForKeys", [.string(keys)])["data"] as? [String: Any])
            #expect(active["listName"] as? String == "bed" && active["isRunning"] as? Bool == true && active["duration"] as? Double == 8)
            #expect((active["actionElapsed"] as? Double ?? 0) > 0)

            // The module's "Start cue ID" action: the bell sounds on the sample the reply names.
            let start = try client.ask("/cue_id/\(bell)/start")
            #expect(start["workspace_id"] as? String == workspace && start["status"] as? String == "ok", "\(start)")
            let data = try #require(start["data"] as? [String: Any])
            #expect(data["cue"] as? String == "bell")
            let at = try #require(data["sampleTime"] as? Int)
            // The playhead moved on (pushed as playbackPosition {horn}), and the bell's change is pushed once it sounds.
            let moved = client.wait { $0.address == "/update/workspace/\(workspace)/cueList/\(list)/playbackPosition" }
            #expect(moved?.arguments == [.string(horn)])
            #expect(client.wait { $0.address == "/update/workspace/\(workspace)/cue_id/\(bell)" } != nil)
            // As the module does on that update: ask the cue's values at the address it names.
            let values = try #require(try client.ask("/workspace/\(workspace)/cue_id/\(bell)/valuesForKeys", [.string(keys)])["data"] as? [String: Any])
            #expect(values["uniqueID"] as? String == bell && values["type"] as? String == "Audio")

            try client.connection.send("/cue_id/\(horn)/start")                 // the last manual cue: then /stop ends the run
            #expect(client.wait { $0.address == "/reply/cue_id/\(horn)/start" } != nil)
            #expect(try client.ask("/cue_id/\(list)/stop")["status"] as? String == "ok")
            #expect(client.wait(timeout: 15) { $0.address == "/update/workspace/\(workspace)/disconnect" } != nil)
            let result = running.wait(timeout: 15)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(capture.waitForFrames(capture.frames, timeout: 1))
            // A server xrun moves the capture off the cue's sample.
            xrun.set(capture.xrunCount > 0 || result.stdout.contains(#""xrun""#))
            #expect(try base.captured(capture, at: at) == (0.125, 0.625, 0.125))
            print("QLab (advance) sequence over TCP, the run's summary: \(result.stdout.split(separator: "\n").last ?? "")")
        }
    }
}
