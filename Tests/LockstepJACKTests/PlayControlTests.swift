import Foundation
import Lockstep
import LockstepFiles
import LockstepOSC
import LockstepTestSupport
import Testing

extension JACKTests {
    /// `lockstep play` under control: the files play as a session, and typed commands, OSC and
    /// MIDI Show Control go through the same dispatcher as `session run`'s.
    @Suite("lockstep play with control surfaces (the built binary, live)", .serialized)
    struct PlayControlTests {
        let temp: TemporaryTestDirectory
        /// The ramp's step: every multiple of it below 8 s of frames is exact in a Float, and no
        /// sum with the 0.3 tone is one.
        static let step: Float = 1.0 / 1_048_576
        static let tone: Float = 0.3

        init() throws {
            temp = try TemporaryTestDirectory(prefix: "lockstep-play-control")
        }

        /// A mono 48 kHz file (ramp: frame i holds i × step; tone: the constant 0.3).
        func file(_ name: String, _ samples: [Float]) throws -> String {
            let path = temp.file(name)
            let writer = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: 1))
            try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: samples.count) }
            try writer.close()
            return path
        }

        /// Waits until the capture's latest frames hold the ramp alone at frames `accept` takes.
        static func waitForRampAlone(_ capture: JACKCapture, where accept: @escaping (Int) -> Bool) -> Bool {
            capture.wait(timeout: 5) { holdsRamp(capture.latest(channel: 0, frames: 256), where: accept) }
        }

        /// Whether `samples` holds ramp frames `frame` and `frame + 1` back to back, nothing added.
        static func holdsRamp(_ samples: ArraySlice<Float>, where accept: (Int) -> Bool) -> Bool {
            var index = samples.startIndex
            while index + 1 < samples.endIndex {
                let value = samples[index] / step
                if value == value.rounded(), value > 0, accept(Int(value)), samples[index + 1] == samples[index] + step {
                    return true
                }
                index += 1
            }
            return false
        }

        @Test("play --control: layer gain, pause, seek, resume, status and stop go through the session's dispatcher; --record holds exactly what the ports played")
        func typedControl() throws { try retryingOnXruns("PlayControlTests", typedControlRun) }

        func typedControlRun(_ xrun: XrunFlag) throws {
            let ramp = try file("ramp.wav", Signals.ramp(frames: 48000 * 8, start: 0, step: Self.step))
            let tone = try file("tone.wav", Signals.constant(Self.tone, frames: 48000 * 8))
            let recording = temp.newFile("mix.wav")
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 10)
            try capture.start()
            let running = try CLI.spawn(["play", ramp, tone, "--server", server.name, "--client-name", "play-control",
                                         "--connect", capture.portNames[0], "--connect", capture.portNames[1],
                                         "--control", "-", "--json", "--record", recording], withInput: true)
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil }, "\(running.errorOutputSoFar)")
            // Each command waits for its answer, and for the output to show what it changed.
            #expect(running.send(line: "gain tone -inf", awaiting: "gain tone to"))
            #expect(Self.waitForRampAlone(capture) { $0 < 4 * 48000 }, "the ramp is not heard alone")
            #expect(running.send(line: "pause", awaiting: "paused at"))
            #expect(capture.waitForLatest { $0 == 0 }, "no silence after the pause")
            #expect(running.send(line: "status", awaitingOutput: "\"state\""))
            #expect(running.send(line: "seek 4", awaiting: "seek to"))
            #expect(running.send(line: "resume", awaiting: "resumed at"))
            #expect(Self.waitForRampAlone(capture) { $0 >= 4 * 48000 }, "the ramp does not go on from 4 s")
            #expect(running.send(line: "status", awaitingOutput: "\"state\""))
            #expect(running.send(line: "gain nosuch -3", awaiting: "nosuch"))   // an unknown layer: an error, the run goes on
            running.send(line: "stop")
            let result = running.wait(timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let statuses = lines.filter { $0["event"] as? String == "status" }
            #expect(statuses.map { $0["state"] as? String } == ["paused", "playing"])
            let layers = (statuses.first?["layers"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
            #expect(layers == ["ramp", "tone"])
            #expect(result.stderr.contains("nosuch"))
            let summary = try #require(lines.last)
            // A start that missed its cycle is Lockstep's own failure; a server xrun moves the
            // capture off the plan below.
            #expect((summary["lateStarts"] as? [Any] ?? []).isEmpty, "\(summary["lateStarts"] ?? [])")
            xrun.set(capture.xrunCount > 0 || "\(summary["discontinuities"] ?? [])".contains("xrun"))
            #expect(summary["file"] as? String == "2 files")
            let origin = try #require(summary["startSampleTime"] as? Int)
            let recorded = try #require(summary["recording"] as? [String: Any])
            #expect(recorded["startSampleTime"] as? Int == origin)
            let written = try #require(recorded["frames"] as? Int)
            #expect(written > 0)
            #expect(capture.waitForRecording(past: Int64(origin + written)))
            let live = capture.channel(0)
            let first = try #require(capture.recordedIndex(atFrameTime: Int64(origin)))
            // Before the gain change both layers sound: ramp + 0.3 from the first sample.
            #expect(live[first] == Self.tone && live[first + 1] == Self.step + Self.tone)
            // After it the tone is silent and the ramp plays alone, still below 4 s of file …
            #expect(Self.holdsRamp(live[first...]) { $0 < 4 * 48000 })
            // … and after the seek it plays on from 4 s, where unseeked playing never got to
            // (the run lasted less than 4 s).
            #expect(Self.holdsRamp(live[first...]) { $0 >= 4 * 48000 && $0 < 5 * 48000 })
            #expect(live[first...].contains(0))                  // the pause
            // The recording is the ports' output, sample for sample, from the start.
            let file = try FileFixtures.readFloat(path: recording)   // interleaved stereo
            let left = stride(from: 0, to: file.count, by: 2).map { file[$0] }
            let compared = min(left.count, live.count - first)
            #expect(compared >= written)
            // The take runs through the seek and the resume: it holds the ramp from 4 s on.
            #expect(Self.holdsRamp(left[...]) { $0 >= 4 * 48000 && $0 < 5 * 48000 }, "\(written) frames recorded")
            #expect(Array(left[0..<compared]) == Array(live[first..<(first + compared)]))
        }

        @Test("play --osc: QLab's /pause and /resume, /lockstep/layer/NAME/gain and /lockstep/status answer with replies; --midi: MSC STOP pauses and RESUME resumes")
        func oscAndMIDI() throws {
            let ramp = try file("ramp.wav", Signals.ramp(frames: 48000 * 6, start: 0, step: Self.step))
            let server = try JACKServer()
            let sender = try JACKMIDISender(server: server)
            let running = try CLI.spawn(["play", ramp, "--server", server.name, "--client-name", "play-osc", "--no-connect",
                                         "--osc", "127.0.0.1:0", "--midi", "--json"])
            #expect(running.waitForErrorOutput(containing: "OSC control on 127.0.0.1:"), "\(running.errorOutputSoFar)")
            let text = running.errorOutputSoFar
            let after = try #require(text.range(of: "OSC control on 127.0.0.1:"))
            let port = try #require(UInt16(text[after.upperBound...].prefix { $0.isNumber }))
            let peer = try OSCTestPeer(serverPort: port)
            try peer.send("/udpReplyPort", [.int32(Int32(peer.port))])
            #expect(peer.reply(to: "/udpReplyPort")?["status"] as? String == "ok")
            try peer.send("/lockstep/layer/ramp/gain", [.float(-6)])
            #expect(peer.reply(to: "/lockstep/layer/ramp/gain")?["status"] as? String == "ok")
            try peer.send("/pause")
            #expect(peer.reply(to: "/pause")?["status"] as? String == "ok")
            try peer.send("/lockstep/status")
            let paused = peer.reply(to: "/lockstep/status")?["data"] as? [String: Any]
            #expect(paused?["state"] as? String == "paused")
            try peer.send("/resume")
            #expect(peer.reply(to: "/resume")?["status"] as? String == "ok")
            // MIDI Show Control from a JACK MIDI client: STOP (all-call) pauses, RESUME resumes.
            try sender.start(connectingTo: "play-osc:midi_in")
            sender.send([0xF0, 0x7F, 0x7F, 0x02, 0x01, 0x02, 0xF7], atFrame: sender.frameTime &+ 2048)
            #expect(sender.waitUntilSent(timeout: 5))
            // The state the status reply names, asked until it changes (a MIDI command has no reply).
            func state() -> String? {
                guard (try? peer.send("/lockstep/status")) != nil else { return nil }
                return (peer.reply(to: "/lockstep/status")?["data"] as? [String: Any])?["state"] as? String
            }
            #expect(ThreadedTestDevice.wait(timeout: 5) { state() == "paused" })
            sender.send([0xF0, 0x7F, 0x7F, 0x02, 0x01, 0x03, 0xF7], atFrame: sender.frameTime &+ 2048)
            #expect(sender.waitUntilSent(timeout: 5))
            #expect(ThreadedTestDevice.wait(timeout: 5) { state() == "playing" })
            running.send(SIGINT)
            let result = running.wait(timeout: 20)
            sender.stop()
            #expect(result.status == 130, "\(result.stderr)")
            #expect(result.stderr.contains("MIDI control on play-osc:midi_in: 3 triggers"))
            let summary = try #require(result.stdout.split(separator: "\n").last.flatMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            })
            #expect((summary["midi"] as? [String: Any])?["matched"] as? Int == 2)
        }

        @Test("play --web: the page's cue list is the files, its JSON commands (gain, pause, resume) act on the ports' output, and the summary counts them")
        func web() throws {
            let ramp = try file("ramp.wav", Signals.ramp(frames: 48000 * 8, start: 0, step: Self.step))
            let tone = try file("tone.wav", Signals.constant(Self.tone, frames: 48000 * 8))
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 10)
            try capture.start()
            let running = try CLI.spawn(["play", ramp, tone, "--server", server.name, "--client-name", "play-web",
                                         "--connect", capture.portNames[0], "--connect", capture.portNames[1], "--web", "127.0.0.1:0", "--json"])
            #expect(running.waitForErrorOutput(containing: "web page on http://127.0.0.1:"), "\(running.errorOutputSoFar)")
            let text = running.errorOutputSoFar
            let after = try #require(text.range(of: "web page on http://127.0.0.1:"))
            let port = try #require(Int(text[after.upperBound...].prefix { $0.isNumber }))
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
            // One cue per file, named after it, each on its own layer.
            let cues = try HTTPTestClient.get(port: port, "/api/cues")
            let list = try #require(try JSONSerialization.jsonObject(with: Data(cues.body.utf8)) as? [String: Any], "\(cues.body)")
            let rows = try #require(list["cues"] as? [[String: Any]])
            #expect(rows.map { "\($0["name"] ?? "")/\($0["layer"] ?? "")" } == ["ramp/ramp", "tone/tone"])
            #expect(rows.map { $0["frames"] as? Int } == [48000 * 8, 48000 * 8])
            func command(_ json: String) throws -> String {
                let reply = try HTTPTestClient.post(port: port, "/api/command", body: Array(json.utf8))
                #expect(reply.status == 200, "\(json): \(reply.body)")
                return reply.body
            }
            // Each command's effect is awaited in the output.
            _ = try command(#"{"command":"gain","layer":"tone","gainDB":"-inf"}"#)
            #expect(Self.waitForRampAlone(capture) { _ in true }, "the ramp is not heard alone")
            _ = try command(#"{"command":"pause"}"#)
            let paused = try HTTPTestClient.get(port: port, "/api/status")
            #expect(paused.body.contains(#""state":"paused""#), "\(paused.body)")
            #expect(capture.waitForLatest { $0 == 0 }, "no silence after the pause")
            _ = try command(#"{"command":"resume"}"#)
            #expect(Self.waitForRampAlone(capture) { _ in true }, "the ramp does not go on")
            running.send(SIGINT)
            let result = running.wait(timeout: 20)
            #expect(result.status == 130, "\(result.stderr)")
            let summary = try #require(result.stdout.split(separator: "\n").last.flatMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            })
            #expect((summary["web"] as? [String: Any])?["commands"] as? Int == 3, "\(summary)")
            // The capture: ramp + tone from the first sample, then the ramp alone (the tone's gain
            // at -inf), a pause's silence, and the ramp going on after it.
            #expect(capture.waitForFrames(capture.frames + 2048, timeout: 5))   // the last cycle played is in
            let live = capture.channel(0)
            let origin = try #require(summary["startSampleTime"] as? Int)
            let first = try #require(capture.recordedIndex(atFrameTime: Int64(origin)))
            #expect(live[first] == Self.tone && live[first + 1] == Self.step + Self.tone)
            let pause = try #require(live[first...].firstIndex(of: 0))
            #expect(Self.holdsRamp(live[first..<pause]) { _ in true })
            #expect(Self.holdsRamp(live[pause...]) { _ in true })
        }

        @Test("play under control refuses what it cannot do yet, and standard input, with one clear error each")
        func refusals() throws {
            let ramp = try file("ramp.wav", Signals.ramp(frames: 4800, start: 0, step: Self.step))
            let perFile = try CLI.run(["play", ramp, "--control", "-", "--ports-per-file", "--start-server", "never"], timeout: 10)
            #expect(perFile.status == 64 && perFile.stderr.contains("--ports-per-file cannot be used with --control"))
            let piped = try CLI.run(["play", "-", "--osc", "127.0.0.1:1", "--start-server", "never"], timeout: 10)
            #expect(piped.status == 64 && piped.stderr.contains("'-' (standard input) cannot be played with --control"))
        }
    }
}
