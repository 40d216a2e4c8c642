import CJack
import Foundation
import Lockstep
import LockstepFiles
import LockstepSchema
import LockstepTestSupport
import Testing

extension JACKTests {
    /// `lockstep session run` as a real process against a private dummy-driver jackd, captured
    /// from the graph and compared with `lockstep session render` of the same session.
    @Suite("lockstep session run (the built binary, live)", .serialized)
    struct SessionRunTests {
        let temp: TemporaryTestDirectory
        static let step: Float = 1.0 / 65536

        init() throws { temp = try TemporaryTestDirectory(prefix: "lockstep-session-run") }

        func write(_ name: String, _ samples: [Float], rate: Double = 48000, channels: Int = 1) throws {
            let writer = try AudioFileWriter(path: temp.file(name), format: StreamFormat(sampleRate: rate, channelCount: channels))
            try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: samples.count / channels) }
            try writer.close()
        }

        func session(_ text: String, name: String = "show.yaml") throws -> String {
            let path = temp.file(name)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        func json(_ text: String) throws -> [String: Any] {
            let line = try #require(text.split(separator: "\n").last)
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }

        /// Reads a rendered file as interleaved floats.
        func read(_ path: String) throws -> (samples: [Float], channels: Int) {
            let reader = try AudioFileReader(path: path)
            var samples = [Float](repeating: 0, count: Int(reader.frameCount) * reader.format.channelCount)
            _ = try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
            return (samples, reader.format.channelCount)
        }

        static let showText = """
            layers:
              music: { gain: -3dB }
              bed:   { gain: -6dB }
            cues:
              - { name: a, layer: music, file: ramp.wav, at: "1000 samples", loop: 2, fade_in: 0.01 }
              - { name: b, layer: music, file: tone.wav, after: a, crossfade: 0.1, fade_out: 0.2 }
              - { name: bed, layer: bed, file: slow.wav, at: 0.25, to: 0.5, loop: 3 }
            automation:
              - { layer: bed, at: 0.6, gain: -12dB, ramp: 0.3 }
            """

        func writeShowAudio() throws {
            try write("ramp.wav", Signals.ramp(frames: 12000, start: 1, step: 8 * Self.step))
            try write("tone.wav", Signals.sine(frequency: 440, sampleRate: 48000, frames: 24000, amplitude: 0.5, channels: 2), channels: 2)
            try write("slow.wav", Signals.sine(frequency: 220, sampleRate: 44100, frames: 44100, amplitude: 0.3), rate: 44100)
        }

        @Test("a session played live and captured from the ports equals its offline render, sample for sample")
        func liveEqualsRender() throws { try retryingOnXruns("SessionRunTests.liveEqualsRender", liveEqualsRenderRun) }

        func liveEqualsRenderRun(_ xrun: XrunFlag) throws {
            try writeShowAudio()
            let path = try session(Self.showText)
            let rendered = temp.file("show.wav")
            let render = try CLI.run(["session", "render", path, "-o", rendered])
            #expect(render.status == 0, "\(render.stderr)")
            let offline = try read(rendered)
            #expect(offline.channels == 2)
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 6)
            try capture.start()
            let result = try CLI.run(["session", "run", path, "--server", server.name, "--client-name", "session-live",
                                      "--connect", capture.portNames[0], "--connect", capture.portNames[1], "--json",
                                      "--json-events"],
                                     timeout: 30)
            #expect(result.status == 0, "\(result.stderr)")
            let summary = try json(result.stdout)
            // A server xrun is the one excuse (it skips frames at JACK, before any client): the
            // check still fails, and the scenario runs again.
            let counts = summary["discontinuityCounts"] as? [String: Int] ?? [:]
            xrun.set(capture.xrunCount > 0 || counts["xrun", default: 0] > 0)
            #expect((summary["discontinuities"] as? [Any])?.isEmpty == true, "\(summary)")
            let start = try #require(summary["startSampleTime"] as? Int)
            // The schema: the summary decodes as SessionRunReport, each event line as ControlUpdate;
            // every placed cue's start event names its session sample and the device sample playing it.
            let lines = result.stdout.split(separator: "\n")
            let report = try JSONSchema.decode(SessionRunReport.self, from: try #require(lines.last))
            #expect(report.schema == 1 && report.sampleRate == 48000)
            // The callback's durations over the run; a few layers render on JACK's thread alone.
            let callback = try #require(report.callbackTime)
            #expect(callback.cycles > 0 && callback.medianSeconds <= callback.p99Seconds && callback.p99Seconds <= callback.maxSeconds + 25e-6,
                    "\(callback)")
            #expect(report.renderHelper == nil)
            let events = try lines.dropLast().map { try JSONSchema.decode(ControlUpdate.self, from: $0) }
            for cue in report.cues {
                guard let cueStart = cue.start else { continue }
                let started = events.first { $0.kind == .cueStarted && $0.cue == cue.name }
                #expect(started?.position == cueStart, "\(cue.name)")
                #expect(started?.sampleTime == Int64(start) + cueStart, "\(cue.name)")
            }
            #expect(events.contains { $0.kind == .cueEnded })
            let frames = offline.samples.count / 2
            #expect(capture.waitForRecording(past: Int64(start + frames)))
            let first = try #require(capture.recordedIndex(atFrameTime: Int64(start)))
            #expect(capture.frames >= first + frames)
            var mismatches = 0
            for c in 0..<2 {
                let live = capture.channel(c)
                for i in 0..<frames where live[first + i] != offline.samples[i * 2 + c] {
                    if mismatches < 5 { print("channel \(c) frame \(i): live \(live[first + i]) offline \(offline.samples[i * 2 + c])") }
                    mismatches += 1
                }
            }
            #expect(mismatches == 0)
            #expect(offline.samples.contains { $0 != 0 })
        }

        @Test("--from starts mid-session with every cue in place: the capture equals the render from there on")
        func startsFrom() throws { try retryingOnXruns("SessionRunTests.startsFrom", startsFromRun) }

        func startsFromRun(_ xrun: XrunFlag) throws {
            try writeShowAudio()
            let path = try session(Self.showText)
            let rendered = temp.file("show-from.wav")
            #expect(try CLI.run(["session", "render", path, "-o", rendered]).status == 0)
            let offline = try read(rendered)
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 6)
            try capture.start()
            let from = 20000
            let result = try CLI.run(["session", "run", path, "--server", server.name, "--from", "\(from) samples",
                                      "--connect", capture.portNames[0], "--connect", capture.portNames[1], "--json"],
                                     timeout: 30)
            #expect(result.status == 0, "\(result.stderr)")
            let summary = try json(result.stdout)
            #expect(summary["from"] as? Int == from)
            // A server xrun skips frames at JACK and moves the capture off the render.
            xrun.set(capture.xrunCount > 0 || "\(summary["discontinuities"] ?? [])".contains("xrun"))
            let start = try #require(summary["startSampleTime"] as? Int)
            let frames = offline.samples.count / 2 - from
            #expect(capture.waitForRecording(past: Int64(start + frames)))
            let first = try #require(capture.recordedIndex(atFrameTime: Int64(start)))
            #expect(capture.frames >= first + frames)
            // Same-rate cues match exactly; the converted bed (44.1 kHz) restarts its converter
            // with a warm-up, so it matches to within rounding.
            var largest: Float = 0
            for c in 0..<2 {
                let live = capture.channel(c)
                for i in 0..<frames { largest = max(largest, abs(live[first + i] - offline.samples[(from + i) * 2 + c])) }
            }
            #expect(largest < 1e-5, "largest difference \(largest)")
            print("--from: largest difference from the full render \(largest)")
        }

        /// A mono session of `count` layers, each playing the same ramp of `frames` frames
        /// (2⁻¹⁶ a frame) from 0, a private server of `period`, and a capture of `captureSeconds` on it.
        func rampLayers(_ count: Int, frames: Int, captureSeconds: Double, period: Int = 256) throws -> (String, JACKServer, JACKCapture) {
            try write("ramp.wav", Signals.ramp(frames: frames, start: 1, step: Self.step))
            let path = try session("channels: 1\nlayers:\n" + (0..<count).map { "  l\($0): {}\n" }.joined()
                                   + "cues:\n" + (0..<count).map { "  - { name: c\($0), layer: l\($0), file: ramp.wav, at: 0 }\n" }.joined())
            let server = try JACKServer(period: period)
            return (path, server, try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: captureSeconds))
        }

        @Test("a session of 300 layers starts on the sample it reports, nothing skipped: the start is placed after every layer's first buffers are computed")
        func manyLayersStartOnTime() throws { try retryingOnXruns("SessionRunTests", manyLayersRun) }

        func manyLayersRun(_ xrun: XrunFlag) throws {
            let layers = 300
            // Period 1024: the debug build's render of 300 layers takes a good part of a 256 period.
            let (path, server, capture) = try rampLayers(layers, frames: 24000, captureSeconds: 8, period: 1024)
            try capture.start()
            let result = try CLI.run(["session", "run", path, "--server", server.name, "--client-name", "session-many",
                                      "--connect", capture.portNames[0], "--json", "--duration", "0.3"], timeout: 60)
            capture.stop()
            #expect(result.status == 0, "\(result.stderr)")
            let report = try JSONSchema.decode(SessionRunReport.self, from: try #require(result.stdout.split(separator: "\n").last))
            #expect(report.lateStarts.isEmpty, "\(report.lateStarts); \(result.stderr)")
            #expect(!result.stderr.contains("late"), "\(result.stderr)")
            xrun.set(capture.xrunCount > 0 || report.discontinuities.contains { $0.kind == "xrun" })
            // The first frame heard is the sum of every layer's first sample, on the reported sample.
            let start = try #require(report.startSampleTime)
            let first = try #require(capture.firstNonSilentRecordedFrame(channel: 0))
            #expect(capture.recordedIndex(atFrameTime: start) == first, "start \(start)")
            #expect(capture.channel(0)[first] == Float(layers) * Self.step)
        }

        @Test("the system holding up ordinary threads for 250 ms while 64 layers play loses nothing: the layers are computed 427 ms ahead")
        func stallOfOrdinaryThreads() throws { try NonRealtimeStall.test("SessionRunTests", stallRun) }

        func stallRun(_ xrun: XrunFlag) throws {
            let layers = 64, frames = 4 * 48000
            // The mix at file frame k is 64·(k + 1)·2⁻¹⁶ = (k + 1)·2⁻¹⁰, exact.
            // Period 1024: a stall also holds up the kernel's ordinary threads, and the server
            // xruns at 256 in about every other run on a busy machine (the lookahead is the same).
            let (path, server, capture) = try rampLayers(layers, frames: frames, captureSeconds: 10, period: 1024)
            try capture.start()
            let result = try NonRealtimeStall.run(["session", "run", path, "--server", server.name, "--client-name", "session-stall",
                                                   "--connect", capture.portNames[0], "--json"], into: capture)
            #expect(result.status == 0, "\(result.stderr)")
            let report = try JSONSchema.decode(SessionRunReport.self, from: try #require(result.stdout.split(separator: "\n").last))
            #expect(report.discontinuities.filter { $0.kind == "underrun" }.isEmpty, "\(report.discontinuities.prefix(4))")
            xrun.set(capture.xrunCount > 0 || report.discontinuities.contains { $0.kind == "xrun" })
            // Every frame, in order, from the reported start.
            let start = try #require(report.startSampleTime)
            let first = try #require(capture.recordedIndex(atFrameTime: start))
            let heard = capture.channel(0)
            #expect(heard.count >= first + frames)
            let wrong = (0..<min(frames, heard.count - first)).filter { heard[first + $0] != Float($0 + 1) * Float(layers) * Self.step }
            #expect(wrong.isEmpty, "\(wrong.count) frames off, the first at file frame \(wrong.first ?? -1)")
        }

        @Test("control: go places the manual cue on the sample it reports; gain, pause, resume, seek, status and stop work")
        func control() throws { try retryingOnXruns("SessionRunTests", controlRun) }

        func controlRun(_ xrun: XrunFlag) throws {
            try write("bed.wav", Signals.constant(0.125, frames: 48000 * 8))
            try write("click.wav", Signals.impulse(at: 0, frames: 16, value: 0.5))
            let path = try session("""
                channels: 1
                layers: { bed: {}, fx: {} }
                cues:
                  - { name: bed, layer: bed, file: bed.wav, at: 0 }
                  - { name: bell, layer: fx, file: click.wav, at: manual }
                """)
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 8)
            try capture.start()
            let running = try CLI.spawn(["session", "run", path, "--server", server.name, "--client-name", "session-control",
                                         "--connect", capture.portNames[0], "--control", "-", "--json", "--exit-when-done",
                                         "--double-go", "0"], withInput: true)
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
            // Each command waits for its answer, and for the output to show what it changed.
            let quieter = 0.125 * Float(pow(10, -6.0 / 20))
            #expect(running.send(line: "go bell", awaiting: "go bell at"))
            #expect(running.send(line: "status", awaitingOutput: "\"state\""))
            #expect(running.send(line: "gain bed -6", awaiting: "gain bed to"))
            #expect(capture.waitForLatest { abs($0 - quieter) < 1e-6 }, "the bed is not heard at -6 dB")
            #expect(running.send(line: "go bed", awaiting: "is not manual"))         // an error, not a crash
            #expect(running.send(line: "jump 3", awaiting: "unknown command 'jump'"))
            #expect(running.send(line: "pause", awaiting: "paused at"))
            #expect(capture.waitForLatest { $0 == 0 }, "no silence after the pause")
            #expect(running.send(line: "status", awaitingOutput: "\"state\""))
            #expect(running.send(line: "seek 5", awaiting: "seek to"))
            #expect(running.send(line: "resume", awaiting: "resumed at"))
            #expect(capture.waitForLatest { abs($0 - quieter) < 1e-6 }, "the bed does not play again")
            #expect(running.send(line: "status", awaitingOutput: "\"state\""))
            running.send(line: "stop")
            let result = running.wait(timeout: 15)
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let statuses = lines.filter { $0["event"] as? String == "status" }
            #expect(statuses.map { $0["state"] as? String } == ["playing", "paused", "playing"])
            #expect((statuses.last?["position"] as? Int ?? 0) >= 5 * 48000)
            let cues = statuses.first?["cues"] as? [[String: Any]]
            let bellStart = try #require(cues?.first { $0["name"] as? String == "bell" }?["start"] as? Int)
            #expect(result.stderr.contains("go bell at") && result.stderr.contains("(sample \(bellStart))"))
            #expect(result.stderr.contains("go: cue 'bed' is not manual"))
            #expect(result.stderr.contains("unknown command 'jump'"))
            let summary = try #require(lines.last)
            #expect((summary["lateStarts"] as? [Any] ?? []).isEmpty, "\(summary["lateStarts"] ?? [])")
            // A server xrun moves the capture off the plan.
            xrun.set(capture.xrunCount > 0 || "\(summary["discontinuities"] ?? [])".contains("xrun"))
            let origin = try #require(summary["startSampleTime"] as? Int)
            // The bell's impulse sits exactly on origin + its session sample, over the bed.
            let index = try #require(capture.recordedIndex(atFrameTime: Int64(origin + bellStart)))
            let live = capture.channel(0)
            #expect(live[index] == 0.625)
            #expect(live[index - 1] == 0.125 && live[index + 1] == 0.125)
            // After the gain change the bed plays at -6 dB; while paused, silence.
            #expect(live.contains { abs($0 - 0.125 * Float(pow(10, -6.0 / 20))) < 1e-6 })
            let pausedStretch = live[index...].firstIndex { $0 == 0 }
            #expect(pausedStretch != nil)
        }

        @Test("--control FIFO: commands from several writers in turn; Ctrl-C fades out and exits with the summary")
        func fifoControlAndInterrupt() throws {
            try write("bed.wav", Signals.constant(0.5, frames: 48000 * 10))
            try write("click.wav", Signals.impulse(at: 0, frames: 16, value: 0.25))
            let path = try session("""
                channels: 1
                cues:
                  - { name: bed, file: bed.wav, at: 0 }
                  - { name: bell, file: click.wav, at: manual }
                """)
            let fifo = temp.file("control")
            #expect(mkfifo(fifo, 0o600) == 0)
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 8)
            try capture.start()
            let running = try CLI.spawn(["session", "run", path, "--server", server.name, "--control", fifo,
                                         "--connect", capture.portNames[0], "--json", "--exit-when-done", "--double-go", "0"])
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
            // Two writers, one after the other, each waiting for its command's answer.
            for (command, answered) in [("status", { running.waitForOutput(containing: "\"event\":\"status\"") }),
                                        ("go bell", { running.waitForErrorOutput(containing: "go bell at") })] {
                let handle = try #require(FileHandle(forWritingAtPath: fifo))
                handle.write(Data((command + "\n").utf8))
                try handle.close()
                #expect(answered(), "no answer to \(command): \(running.errorOutputSoFar)")
            }
            // The bell sounds over the bed (0.5 + 0.25), and the bed alone after it, before the fade.
            #expect(capture.wait(timeout: 5) { capture.channel(0).contains(0.75) }, "the bell is not heard")
            #expect(capture.waitForLatest { $0 == 0.5 })
            running.send(SIGINT)
            let result = running.wait(timeout: 10)
            #expect(result.status == 130, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines.first?.contains("\"event\":\"status\"") == true)
            let summary = try json(result.stdout)
            #expect(summary["interrupted"] as? Bool == true)
            let cues = try #require(summary["cues"] as? [[String: Any]])
            #expect(cues.last?["start"] is Int)                         // the bell was fired
            #expect(capture.waitForFrames(capture.frames + 2048, timeout: 5))   // the fade's last cycle is in
            let left = capture.channel(0)
            let last = try #require(left.lastIndex { $0 != 0 })
            let tail = Array(left[(last - 600)...last])
            let steps = zip(tail, tail.dropFirst()).map { abs($0 - $1) }
            #expect((steps.max() ?? 1) <= 0.5 / 200, "the end is a fade, not a cut: largest step \(steps.max() ?? 1)")
        }

        @Test("--duration stops the run after that much playing")
        func duration() throws {
            try write("long.wav", Signals.constant(0.5, frames: 48000 * 10))
            let path = try session("channels: 1\ncues: [ { file: long.wav } ]\n")
            let server = try JACKServer()
            let result = try CLI.run(["session", "run", path, "--server", server.name, "--duration", "0.5", "--json"], timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            let end = try #require(try json(result.stdout)["endPosition"] as? Int)
            #expect(end >= 24000 && end < 24000 + 4800, "ended at \(end)")
        }

        @Test("--duration counts seconds of playing, not the session's position: a seek 20 s ahead in a 1 s run plays on to the end of its second")
        func durationIgnoresSeeks() throws {
            try write("long.wav", Signals.constant(0.5, frames: 48000 * 30))
            let path = try session("channels: 1\ncues: [ { file: long.wav } ]\n")
            let server = try JACKServer()
            let running = try CLI.spawn(["session", "run", path, "--server", server.name, "--duration", "1", "--control", "-",
                                         "--json", "--json-events"], withInput: true)
            #expect(running.waitForOutput(containing: "cue/started"), "\(running.errorOutputSoFar)")
            running.send(line: "seek 20")
            let result = running.wait(timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            let seeked = try #require(lines.first { $0["kind"] as? String == "seeked" }, "stdout: \(result.stdout) stderr: \(result.stderr)")
            let summary = try #require(lines.last)
            let start = try #require(summary["startSampleTime"] as? Int), end = try #require(summary["endPosition"] as? Int)
            let landed = try #require(seeked["sampleTime"] as? Int), position = try #require(seeked["position"] as? Int)
            #expect(position == 20 * 48000)
            // The device sample the run ended on, less the one it started on: one second of playing
            // (the position jumped 20 s; before, that jump counted and the run ended at the seek).
            let played = landed + (end - position) - start
            #expect(played >= 48000 && played < 48000 + 4800, "played \(played) frames: started \(start), seek landed \(landed), ended at \(end)")
        }

        @Test("a layer with ports plays only there; the other layers go to the master outputs")
        func layerPorts() throws { try retryingOnXruns("SessionRunTests.layerPorts", layerPortsRun) }

        func layerPortsRun(_ xrun: XrunFlag) throws {
            try write("solo.wav", Signals.constant(0.25, frames: 24000))
            try write("rest.wav", Signals.constant(0.0625, frames: 24000))
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 5)
            try capture.start()
            let path = try session("""
                channels: 1
                layers:
                  solo: { ports: [\(capture.portNames[0])] }
                  rest: {}
                cues:
                  - { layer: solo, file: solo.wav }
                  - { layer: rest, file: rest.wav, with: solo }
                """)
            let result = try CLI.run(["session", "run", path, "--server", server.name, "--client-name", "session-ports",
                                      "--connect", capture.portNames[1], "--json"], timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(capture.waitForFrames(capture.frames + 2048, timeout: 5))   // the last cycle played is in
            // A server xrun skips or repeats frames at JACK, before any client: it runs again.
            let counts = try json(result.stdout)["discontinuityCounts"] as? [String: Int] ?? [:]
            xrun.set(capture.xrunCount > 0 || counts["xrun", default: 0] > 0)
            let solo = capture.channel(0).filter { $0 != 0 }
            let rest = capture.channel(1).filter { $0 != 0 }
            #expect(solo.count == 24000 && solo.allSatisfy { $0 == 0.25 }, "\(solo.count) frames of the solo layer; \(counts)")
            #expect(rest.count == 24000 && rest.allSatisfy { $0 == 0.0625 }, "\(rest.count) frames of the rest; \(counts)")
        }

        @Test("--transport: session time follows the transport frame through start, stop and relocation")
        func followsTransport() throws { try retryingOnXruns("SessionRunTests.followsTransport", followsTransportRun) }

        func followsTransportRun(_ xrun: XrunFlag) throws {
            try write("ramp.wav", Signals.ramp(frames: 48000 * 6, start: 1, step: Self.step))
            let path = try session("cues: [ { file: ramp.wav, at: 0 } ]\nchannels: 1\n")
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 8)
            try capture.start()
            let (result, check) = try TransportScript.runFollower(
                ["session", "run", path, "--server", server.name, "--client-name", "session-transport",
                 "--transport", "--connect", capture.portNames[0], "--json", "--json-events"],
                clientName: "session-transport", server: server, capture: capture, step: Self.step)
            #expect([0, 130].contains(result.status),   // --duration or the script's Ctrl-C ends it
                    "\(result.stderr)")
            xrun.set(capture.xrunCount > 0 || result.stdout.contains(#""xrun""#))
            #expect(check.checked > 24000)
            #expect(check.mismatches == 0, "capture xruns \(capture.xrunCount)")
            #expect(check.sawRelocatedSegment)
            #expect(check.loudStoppedCycles == 0)                      // while stopped, silence
            // Following transport is a chase: each roll a lock and a relocate on its device
            // sample, each stop a stop, in --json-events.
            let chase = result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.filter { $0["kind"] as? String == "chase" }
            let states = chase.compactMap { $0["state"] as? String }
            #expect(states.first == "lock" && states.contains("relocate") && states.contains("stop"), "\(states)")
            #expect(chase.allSatisfy { ($0["sampleTime"] as? Int ?? -1) >= 0 && $0["position"] is Int }, "\(chase)")
        }

        @Test("session check and render from the CLI: a table, JSON, and every error with FILE:LINE:COLUMN")
        func checkCLI() throws {
            try write("a.wav", Signals.constant(0.1, frames: 4800))
            let good = try session("cues:\n  - { name: one, file: a.wav, at: 0.5 }\n  - { name: two, file: a.wav, after: one }\n", name: "good.yaml")
            let table = try CLI.run(["session", "check", good])
            #expect(table.status == 0, "\(table.stderr)")
            #expect(table.stdout.contains("one") && table.stdout.contains("24000") && table.stdout.contains("28800"))
            let checked = try CLI.run(["session", "check", good, "--json"]).stdout
            let report = try json(checked)
            #expect(report["valid"] as? Bool == true)
            let timeline = try JSONSchema.decode(TimelineReport.self, from: checked)
            #expect(timeline.schema == 1 && timeline.sampleRate == 48000 && timeline.cues.map(\.frames) == [4800, 4800])
            #expect((report["cues"] as? [[String: Any]])?.last?["start"] as? Int == 28800)
            let bad = try session("cues:\n  - { name: one, file: nope.wav, at: 0 }\n  - { name: two, file: a.wav, after: onr, gian: 1 }\n", name: "bad.yaml")
            let failed = try CLI.run(["session", "check", bad])
            #expect(failed.status == 1)
            #expect(failed.stderr.contains("\(bad):2:24: error:"))
            #expect(failed.stderr.contains("\(bad):3:45: error:") || failed.stderr.contains("\(bad):3:"))
            #expect(failed.stderr.contains("did you mean 'one'?") && failed.stderr.contains("did you mean 'gain'?"))
            let failedText = try CLI.run(["session", "check", bad, "--json"]).stdout
            #expect(try JSONSchema.decode(SessionCheckFailure.self, from: failedText).errors.count == 3)
            let failedJSON = try json(failedText)
            #expect(failedJSON["valid"] as? Bool == false)
            #expect((failedJSON["errors"] as? [Any])?.count == 3)
            let out = temp.file("good.flac")
            let rendered = try CLI.run(["session", "render", good, "-o", out, "--sample-format", "s16"])
            #expect(rendered.status == 0, "\(rendered.stderr)")
            let file = try AudioFileReader(path: out)
            #expect(file.frameCount == 24000 + 4800 + 4800)
            let fast = try json(try CLI.run(["session", "check", good, "--rate", "96000", "--json"]).stdout)
            #expect((fast["cues"] as? [[String: Any]])?.first?["start"] as? Int == 48000)
            let noServer = try CLI.run(["session", "run", good, "--server", "lockstep-none-\(getpid())", "--start-server", "never"])
            #expect(noServer.status == 1 && noServer.stderr.contains("session run: no JACK server"))
            let badGo = try CLI.run(["session", "render", good, "-o", out, "--go", "x"])
            #expect(badGo.status == 64 && badGo.stderr.contains("CUE@TIME"))
        }
    }
}
