import Foundation
import Lockstep
import LockstepOSC
import LockstepTestSupport
import Testing

extension JACKTests {
    /// `lockstep session run --osc` as a real process on a private dummy-driver jackd, driven by
    /// real OSC peers on 127.0.0.1: a liblo client with one port (as Companion or TouchOSC), and
    /// liblo-tools' `oscsend`/`oscdump`. The captured JACK output shows where each cue landed.
    @Suite("lockstep session run --osc (the built binary, live)", .serialized,
           .enabled(if: OSCDump.isAvailable, "liblo-tools (oscsend, oscdump) is not installed"))
    struct SessionOSCTests {
        let temp: TemporaryTestDirectory

        init() throws {
            temp = try TemporaryTestDirectory(prefix: "lockstep-session-osc")
            let format = StreamFormat(sampleRate: 48000, channelCount: 1)
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.constant(0.125, frames: 48000 * 8), format: format)
            try FileFixtures.writeWAV(path: temp.file("bell.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.5), format: format)
            try FileFixtures.writeWAV(path: temp.file("horn.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.25), format: format)
            try FileFixtures.writeText(path: temp.file("show.yaml"), """
                channels: 1
                layers: { bed: {}, fx: {} }
                cues:
                  - { name: bed, layer: bed, file: bed.wav, at: 0 }
                  - { name: bell, layer: fx, file: bell.wav, at: manual }
                  - { name: horn, layer: fx, file: horn.wav, at: manual }
                """)
        }

        /// A live run: a private server, a capture of the master output, and `session run --osc
        /// 127.0.0.1:0` (plus `extra`) playing into it, with the OSC port it reports once the bed
        /// sounds.
        struct Live {
            let server: JACKServer
            let capture: JACKCapture
            let running: RunningCLI
            let port: UInt16
        }

        func live(session: String = "show.yaml", extra: [String] = []) throws -> Live {
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 10)
            try capture.start()
            let running = try CLI.spawn(["session", "run", temp.file(session), "--server", server.name,
                                         "--client-name", "session-osc", "--connect", capture.portNames[0],
                                         "--osc", "127.0.0.1:0", "--json", "--exit-when-done", "--double-go", "0"] + extra)
            #expect(running.waitForErrorOutput(containing: "OSC control on 127.0.0.1:"), "\(running.errorOutputSoFar)")
            let text = running.errorOutputSoFar
            let after = try #require(text.range(of: "OSC control on 127.0.0.1:"))
            let port = try #require(UInt16(text[after.upperBound...].prefix { $0.isNumber }))
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
            return Live(server: server, capture: capture, running: running, port: port)
        }

        /// A client of the run's OSC port that has asked for replies at its own port.
        func client(of live: Live) throws -> OSCTestPeer {
            let peer = try OSCTestPeer(serverPort: live.port)
            try peer.send("/udpReplyPort", [.int32(Int32(peer.port))])
            #expect(peer.reply(to: "/udpReplyPort")?["status"] as? String == "ok")
            return peer
        }

        /// The JSON summary a run printed last.
        func summary(_ result: CLI.Result) throws -> [String: Any] {
            let line = try #require(result.stdout.split(separator: "\n").last)
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }

        /// The captured sample JACK played at frame time `time`.
        func captured(_ capture: JACKCapture, at time: Int) throws -> (before: Float, at: Float, after: Float) {
            let index = try #require(capture.recordedIndex(atFrameTime: Int64(time)))
            let live = capture.channel(0)
            return (live[index - 1], live[index], live[index + 1])
        }

        @Test("/go and /cue/NAME/start land on the sample the reply reports; replies are QLab's JSON; /updates pushes the cue's start with the same sample")
        func goLandsOnTheReportedSample() throws { try retryingOnXruns("SessionOSCTests.go", goRun) }

        func goRun(_ xrun: XrunFlag) throws {
            let live = try live()
            let (capture, running) = (live.capture, live.running)
            let peer = try client(of: live)
            try peer.send("/updates", [.int32(1)])
            #expect(peer.reply(to: "/updates")?["data"] as? Bool == true)

            let sentAt = try #require(capture.currentFrameTime)
            let clock = ContinuousClock.now
            try peer.send("/go")
            let go = try #require(peer.reply(to: "/go"))
            let roundTrip = ContinuousClock.now - clock
            #expect(go["address"] as? String == "/go" && go["status"] as? String == "ok", "\(go)")
            let goData = try #require(go["data"] as? [String: Any])
            #expect(goData["cue"] as? String == "bell" && goData["playhead"] as? String == "horn")
            let bellAt = try #require(goData["sampleTime"] as? Int)
            let lead = Int(UInt32(truncatingIfNeeded: bellAt) &- sentAt)
            print("GO over OSC: reply after \(roundTrip); the cue starts \(lead) frames (\(lead * 1000 / 48000) ms) after the /go was sent")
            let started = peer.next { $0.address == "/update/cue/started" && OSCTestPeer.json($0)?["cue"] as? String == "bell" }
            let update = try #require(started.flatMap(OSCTestPeer.json))
            #expect(update["sampleTime"] as? Int == bellAt && update["position"] as? Int == goData["start"] as? Int)

            try peer.send("/cue/horn/start")
            let start = try #require(peer.reply(to: "/cue/horn/start")?["data"] as? [String: Any])
            #expect(start["cue"] as? String == "horn")
            let hornAt = try #require(start["sampleTime"] as? Int)
            #expect(peer.next { OSCTestPeer.json($0)?["cue"] as? String == "horn" && $0.address == "/update/cue/started" } != nil)

            try peer.send("/lockstep/status")
            let status = try #require(peer.reply(to: "/lockstep/status")?["data"] as? [String: Any])
            #expect(status["state"] as? String == "playing")
            let states = (status["cues"] as? [[String: Any]])?.map { $0["state"] as? String }
            #expect(states?.first == "playing" && states?.dropFirst().allSatisfy { $0 == "playing" || $0 == "done" } == true)

            try peer.send("/stop")                                 // every cue stops; nothing is left: the run ends
            #expect(peer.reply(to: "/stop")?["status"] as? String == "ok")
            let result = running.wait(timeout: 15)
            #expect(result.status == 0, "\(result.stderr)")
            // A server xrun skips frames at JACK, before any client: the checks fail, and it runs again.
            let counts = try summary(result)["discontinuityCounts"] as? [String: Int] ?? [:]
            xrun.set(capture.xrunCount > 0 || counts["xrun", default: 0] > 0)
            let osc = try #require(try summary(result)["osc"] as? [String: Any])
            #expect(osc["commands"] as? Int == 4 && osc["errorReplies"] as? Int == 0 && osc["subscribers"] as? Int == 1, "\(osc)")
            #expect((osc["updatesSent"] as? Int ?? 0) >= 4)
            // Each impulse sits exactly on the sample its reply named, over the bed.
            #expect(capture.waitForFrames(capture.frames, timeout: 1))
            #expect(try captured(capture, at: bellAt) == (0.125, 0.625, 0.125))
            #expect(try captured(capture, at: hornAt) == (0.125, 0.375, 0.125))
        }

        @Test("liblo-tools as the peer: oscsend's commands are answered at --osc-reply-port, where oscdump prints QLab-style replies; errors say why and the show plays on")
        func oscsendAndOscdump() throws {
            let dump = try OSCDump()
            defer { dump.stop() }
            let live = try live(extra: ["--osc-reply-port", String(dump.port)])
            let (capture, running, port) = (live.capture, live.running, live.port)
            func oscsend(_ arguments: String...) throws {
                let result = try CLI.run(["127.0.0.1", String(port)] + arguments, timeout: 5, executable: try #require(OSCDump.tool("oscsend")))
                #expect(result.status == 0, "oscsend \(arguments): \(result.stderr)")
            }
            try oscsend("/lockstep/status")
            let status = try #require(dump.line(containing: "/reply/lockstep/status").flatMap(OSCDump.json))
            #expect(status["status"] as? String == "ok" && (status["data"] as? [String: Any])?["state"] as? String == "playing")

            try oscsend("/cue/bell/start")
            let start = try #require(dump.line(containing: "/reply/cue/bell/start").flatMap(OSCDump.json))
            let bellAt = try #require((start["data"] as? [String: Any])?["sampleTime"] as? Int)

            try oscsend("/nope")
            let unknown = try #require(dump.line(containing: "/reply/nope").flatMap(OSCDump.json))
            #expect(unknown["status"] as? String == "error")
            #expect((unknown["data"] as? String)?.hasPrefix("unknown address /nope; Lockstep answers /go") == true)
            try oscsend("/cue/bed/level", "s", "loud")
            let level = try #require(dump.line(containing: "/reply/cue/bed/level").flatMap(OSCDump.json))
            #expect(level["data"] as? String == #"/cue/bed/level takes a level in dB (or QLab's row 0, column 0, dB); it was sent 1 argument (s:"loud")"#)

            // Not OSC at all: answered at /reply, and the show goes on.
            let garbage = try OSCUDPSocket(binding: OSCEndpoint(host: "127.0.0.1", port: 0))
            garbage.send(Array("garbage".utf8), to: try OSCPeer.resolve(OSCEndpoint(host: "127.0.0.1", port: port)))
            let malformed = try #require(dump.line(containing: "/reply s ").flatMap(OSCDump.json))
            #expect(malformed["status"] as? String == "error" && (malformed["data"] as? String)?.hasPrefix("not an OSC message") == true)
            try oscsend("/lockstep/status")
            let statuses = dump.lines(containing: "/reply/lockstep/status", count: 2)
            #expect(statuses.count == 2 && OSCDump.json(statuses.last ?? "")?["status"] as? String == "ok")

            #expect(capture.wait(timeout: 5) { capture.recordedIndex(atFrameTime: Int64(bellAt) + 10) != nil })   // the bell has played
            running.send(SIGINT)
            let result = running.wait(timeout: 10)
            #expect(result.status == 130, "\(result.stderr)")
            let osc = try #require(try summary(result)["osc"] as? [String: Any])
            #expect(osc["malformed"] as? Int == 1 && osc["errorReplies"] as? Int == 3 && osc["replies"] as? Int == 6, "\(osc)")
            #expect(try captured(capture, at: bellAt) == (0.125, 0.625, 0.125))
        }

        @Test("/cue/NAME/pause and /resume, live: the cue falls silent on the sample the reply names and plays on from the very sample it paused at")
        func pauseAndResumeACue() throws {
            let step: Float = 1.0 / 65536
            try FileFixtures.writeWAV(path: temp.file("ramp.wav"), samples: Signals.ramp(frames: 48000 * 6, start: 1, step: step),
                                      format: StreamFormat(sampleRate: 48000, channelCount: 1))
            try FileFixtures.writeText(path: temp.file("ramp.yaml"), "channels: 1\ncues: [ { name: ramp, file: ramp.wav, at: 0 } ]\n")
            let live = try live(session: "ramp.yaml")
            let capture = live.capture
            let peer = try client(of: live)
            try peer.send("/cue/ramp/pause")
            let pause = try #require(peer.reply(to: "/cue/ramp/pause")?["data"] as? [String: Any])
            let (pausedAt, silentFrom, pausedDevice) = try (#require(pause["start"] as? Int), #require(pause["end"] as? Int),
                                                            #require(pause["sampleTime"] as? Int))
            #expect(silentFrom == pausedAt + 240)
            #expect(capture.wait(timeout: 5) { capture.recordedIndex(atFrameTime: Int64(pausedDevice + 4800)) != nil })
            try peer.send("/cue/ramp/resume")
            let resume = try #require(peer.reply(to: "/cue/ramp/resume")?["data"] as? [String: Any])
            let (resumedAt, resumedDevice) = try (#require(resume["start"] as? Int), #require(resume["sampleTime"] as? Int))
            #expect(capture.wait(timeout: 5) { capture.recordedIndex(atFrameTime: Int64(resumedDevice + 4800)) != nil })
            try peer.send("/stop")
            #expect(peer.reply(to: "/stop")?["status"] as? String == "ok")
            let result = live.running.wait(timeout: 15)
            #expect(result.status == 0, "\(result.stderr)")

            // Session sample k of the ramp holds (k + 1) steps; the device plays session sample
            // `pausedAt` at `pausedDevice`.
            let played = capture.channel(0)
            let p = try #require(capture.recordedIndex(atFrameTime: Int64(pausedDevice)))
            let r = try #require(capture.recordedIndex(atFrameTime: Int64(resumedDevice)))
            func ramp(_ k: Int) -> Float { Float(k + 1) * step }
            #expect((1...100).allSatisfy { played[p - $0] == ramp(pausedAt - $0) })
            #expect((0..<240).allSatisfy { played[p + $0] == ramp(pausedAt + $0) * Float(cos(.pi / 2 * Double($0) / 240)) })
            #expect(played[(p + 240)..<r].allSatisfy { $0 == 0 })
            #expect((0..<240).allSatisfy { played[r + $0] == ramp(silentFrom + $0) * Float(sin(.pi / 2 * Double($0) / 240)) })
            #expect((240..<4800).allSatisfy { played[r + $0] == ramp(silentFrom + $0) })
            print("paused at session sample \(pausedAt), resumed at \(resumedAt) (\(resumedAt - silentFrom) samples of silence)")
        }

        @Test("--osc-passcode: until a client sends /connect with it, every command is refused with an error reply; other clients stay refused")
        func passcode() throws {
            let live = try live(extra: ["--osc-passcode", "s3cret"])
            let running = live.running
            #expect(running.errorOutputSoFar.contains("/connect with the passcode first"))
            let peer = try client(of: live)
            try peer.send("/go")
            let refused = try #require(peer.reply(to: "/go"))
            #expect(refused["status"] as? String == "error")
            #expect(refused["data"] as? String == "this show needs a passcode: send /connect PASSCODE first")
            try peer.send("/connect", [.string("guess")])
            #expect((peer.reply(to: "/connect")?["data"] as? String)?.hasPrefix("wrong passcode") == true)
            try peer.send("/connect", [.string("s3cret")])
            #expect(peer.reply(to: "/connect")?["status"] as? String == "ok")
            try peer.send("/go")
            #expect((peer.reply(to: "/go")?["data"] as? [String: Any])?["cue"] as? String == "bell")

            let stranger = try client(of: live)
            try stranger.send("/lockstep/status")
            #expect(stranger.reply(to: "/lockstep/status")?["status"] as? String == "error")

            running.send(SIGINT)
            let result = running.wait(timeout: 10)
            #expect(result.status == 130, "\(result.stderr)")
            let osc = try #require(try summary(result)["osc"] as? [String: Any])
            #expect(osc["refused"] as? Int == 3 && osc["commands"] as? Int == 1, "\(osc)")
        }

        @Test("abuse — oversized and malformed datagrams, a malformed bundle, wrong arguments, a flood: error replies or counted drops, and the show plays on")
        func abuse() throws {
            let live = try live()
            let (capture, running) = (live.capture, live.running)
            let peer = try client(of: live)
            func error(_ address: String) -> String? {
                guard let reply = peer.reply(to: address), reply["status"] as? String == "error" else { return nil }
                return reply["data"] as? String
            }

            let large = try OSCMessage("/lockstep/status", [.string(String(repeating: "x", count: 10000))]).encoded()
            peer.send(bytes: large)
            #expect(error("/lockstep/status") == "the datagram is \(large.count) bytes; the limit is 8192. Send one short message at a time")
            // A bundle whose element claims 64 bytes where 8 follow: liblo refuses it, nothing of it runs.
            peer.send(bytes: Array("#bundle\0".utf8) + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 64] + Array("/go\0,\0\0\0".utf8))
            #expect(error("")?.hasPrefix("not a valid OSC bundle: ") == true)
            peer.send(bytes: Array("/go".utf8))                                    // no terminator, no type tags
            #expect(error("")?.hasPrefix("not an OSC message: the address is not a terminated") == true)
            peer.send(bytes: Array("/go\0,s\0\0".utf8))                           // a string argument that is not there
            #expect(error("/go")?.hasPrefix("not an OSC message: an argument does not match its type tag") == true)
            try peer.send("/go", [.float(1.5)])
            #expect(error("/go") == "/go takes nothing, a cue name or a cue number; it was sent 1 argument (f:1.5)")
            try peer.send("/updates", [.string("yes")])          // (without an argument it asks whether this client is subscribed)
            #expect(error("/updates")?.hasPrefix("/updates takes 1 (send me updates) or 0 (stop); it was sent 1 argument (s") == true)
            try peer.send("/cue/nobody/start")
            #expect(error("/cue/nobody/start")?.hasPrefix("start: unknown cue 'nobody'") == true)

            // A flood from one client. How many datagrams the kernel keeps depends on the machine;
            // what holds on any: each one is answered, dropped by the limiter (beyond its burst;
            // the notice it sends is checked offline, OSCControlServerTests), or dropped by the
            // kernel before it was read (the socket's drop counter), and these add up to what
            // was sent.
            let bedStart = try #require(capture.firstNonSilentRecordedFrame(channel: 0))
            for _ in 0..<3000 { try peer.send("/thump") }
            // The show still answers (asked until the limiter lets a status through). The answer
            // was read after every datagram before it, so the kernel's count of drops is final.
            var answered = false
            for _ in 0..<50 where !answered {
                try peer.send("/lockstep/status")
                answered = peer.next(timeout: 0.2) { $0.address == "/reply/lockstep/status" && OSCTestPeer.json($0)?["status"] as? String == "ok" } != nil
            }
            #expect(answered)
            // The show played on, exact, throughout: the bed alone, every frame.
            #expect(capture.waitForFrames(capture.frames + 4800, timeout: 5))
            let heard = capture.channel(0)[bedStart...]
            let wrong = heard.firstIndex { $0 != 0.125 }
            #expect(wrong == nil, "frame \((wrong ?? 0) - bedStart) of the bed is \(wrong.map { heard[$0] } ?? 0)")
            let sent = peer.sent

            running.send(SIGINT)
            let result = running.wait(timeout: 10)
            #expect(result.status == 130, "\(result.stderr)")
            let osc = try #require(try summary(result)["osc"] as? [String: Any])
            #expect(osc["oversized"] as? Int == 1 && osc["bundles"] as? Int == 1 && osc["malformed"] as? Int == 3, "\(osc)")
            func count(_ key: String) -> Int { osc[key] as? Int ?? -1 }
            #expect(count("received") + count("kernelDropped") == sent, "\(sent) datagrams sent: \(osc)")
            #expect(count("received") == count("admitted") + count("floodDropped") + count("clientsTurnedAway"), "\(osc)")
            #expect(count("floodDropped") + count("kernelDropped") > 0, "a flood of 3000 was all answered: \(osc)")
            print("OSC abuse, the run's summary: \(result.stdout.split(separator: "\n").last ?? "")")
        }

        @Test("--osc on a non-local address warns, naming what is exposed")
        func nonLocalWarning() throws {
            let server = try JACKServer()
            let result = try CLI.run(["session", "run", temp.file("show.yaml"), "--server", server.name, "--no-connect",
                                      "--osc", "0.0.0.0:0", "--duration", "0.2"], timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("lockstep: session run: warning: OSC control listens on 0.0.0.0:"))
            #expect(result.stderr.contains("reachable from other machines: anyone who can send to it can fire cues (go, start), stop, pause, panic, seek, change levels and gains, and read the cue list (/lockstep/status); no passcode is set (add --osc-passcode CODE)"))
            let local = try CLI.run(["session", "run", temp.file("show.yaml"), "--server", server.name, "--no-connect",
                                     "--osc", "0", "--duration", "0.2"], timeout: 20)
            #expect(local.status == 0 && local.stderr.contains("OSC control on 127.0.0.1:") && !local.stderr.contains("warning"), "\(local.stderr)")
        }
    }
}
