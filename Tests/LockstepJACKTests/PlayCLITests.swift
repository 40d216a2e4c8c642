import CJack
import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepSchema
import LockstepTestSupport
import Testing

extension JACKTests {
    /// `lockstep play` and `lockstep ports` as real processes against a private dummy-driver jackd.
    @Suite("lockstep play (the built binary, live)", .serialized)
    struct PlayCLITests {
        let temp: TemporaryTestDirectory
        static let step: Float = 1.0 / 65536

        init() throws {
            temp = try TemporaryTestDirectory(prefix: "lockstep-play")
        }

        /// A mono 48 kHz float file whose frame i holds (i + 1) × step.
        func rampFile(_ name: String = "ramp.wav", frames: Int) throws -> String {
            let path = temp.file(name)
            let writer = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: 1))
            let ramp = Signals.ramp(frames: frames, start: 1, step: Self.step)
            try ramp.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: frames) }
            try writer.close()
            return path
        }

        func constantFile(_ name: String, value: Float, seconds: Double) throws -> String {
            let path = temp.file(name)
            let writer = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: 2))
            let samples = Signals.constant(value, frames: Int(seconds * 48000), channels: 2)
            try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: samples.count / 2) }
            try writer.close()
            return path
        }

        func json(_ text: String) throws -> [String: Any] {
            let line = try #require(text.split(separator: "\n").last)
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }

        @Test("play of 520 layers: a render helper shares the cycles (renderHelper in the summary); --no-render-helper leaves JACK's thread alone; with or without, every layer plays its ramp to the last frame no xrun skipped")
        func renderHelper() throws { try retryingOnXruns("PlayCLITests.renderHelper", renderHelperRun) }

        func renderHelperRun(_ xrun: XrunFlag) throws {
            let server = try JACKServer()
            defer { server.stop() }
            let realtime = server.isRealtime && sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2
            let frames = 4800
            let path = try rampFile(frames: frames)
            for helper in [true, false] {
                let result = try CLI.run(["play"] + Array(repeating: path, count: 520)
                                         + ["--server", server.name, "--client-name", "lockstep-helper", "--no-connect", "--json"]
                                         + (helper ? [] : ["--no-render-helper"]), timeout: 30)
                #expect(result.status == 0, "\(result.stderr)")
                let report = try JSONSchema.decode(PlayReport.self, from: try #require(result.stdout.split(separator: "\n").last))
                #expect(report.layers.count == 520)
                // Lockstep's own losses are failures.
                let own = report.discontinuities.filter { $0.kind != "xrun" }
                #expect(own.isEmpty && report.layers.allSatisfy { $0.skippedFrames == 0 }, "helper \(helper): \(own.prefix(4))")
                xrun.set(report.discontinuities.contains { $0.kind == "xrun" })
                // A ramp's peak is its last frame played. A server xrun that skips frames (each
                // reported with its sample and length) skips as much of every layer; the cycle in
                // which all 520 layers end is likely the heaviest, and CI saw its skip take the
                // ramp's top. So the expected peak is the ramp at the last file frame no reported
                // skip covers.
                let skipped = report.discontinuities.filter { $0.kind == "xrun" && $0.frames > 0 }
                    .map { ($0.sampleTime - report.startSampleTime)..<($0.sampleTime - report.startSampleTime + $0.frames) }
                let last = try #require((0..<Int64(frames)).reversed().first { frame in !skipped.contains { $0.contains(frame) } })
                let expected = Double(Decibels.fromLinear(Float(last + 1) * Self.step))
                let off = report.layers.enumerated().filter { abs(($0.element.peakDB ?? -.infinity) - expected) > 0.006 }
                #expect(off.isEmpty, "helper \(helper): \(off.count) layers' peaks are not \(expected) dB (file frame \(last)), e.g. \(off.prefix(3).map { "layer \($0.offset): \($0.element.peakDB ?? -.infinity) dB" }); skipped \(skipped)")
                if helper && realtime {
                    let shared = try #require(report.renderHelper, "realtime server, two cores: a helper")
                    // Five chunks of 128 layers a cycle, some of them the helper's.
                    #expect(shared.sharedCycles > 0 && shared.helperChunks > 0 && shared.helperChunks <= 5 * shared.sharedCycles, "\(shared)")
                } else {
                    #expect(report.renderHelper == nil)
                }
            }
        }

        @Test("play of 64 layers: the system holding up ordinary threads for 250 ms loses nothing (each layer is read six 0.25 s buffers ahead)")
        func stallOfOrdinaryThreads() throws { try NonRealtimeStall.test("PlayCLITests", stallRun) }

        func stallRun(_ xrun: XrunFlag) throws {
            let frames = 4 * 48000
            let path = try rampFile(frames: frames)
            // Period 1024: a stall also holds up the kernel's ordinary threads, and the server
            // xruns at 256 in about every other run on a busy machine (the lookahead is the same).
            let server = try JACKServer(period: 1024)
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 10)
            try capture.start()
            let result = try NonRealtimeStall.run(["play"] + Array(repeating: path, count: 64)
                                                  + ["--server", server.name, "--client-name", "play-stall",
                                                     "--connect", capture.portNames[0], "--json"], into: capture)
            #expect(result.status == 0, "\(result.stderr)")
            let report = try JSONSchema.decode(PlayReport.self, from: try #require(result.stdout.split(separator: "\n").last))
            #expect(report.discontinuities.filter { $0.kind == "underrun" }.isEmpty, "\(report.discontinuities.prefix(4))")
            xrun.set(capture.xrunCount > 0 || report.discontinuities.contains { $0.kind == "xrun" })
            // Every frame in order from the reported start: the mix of 64 ramps rises by the same
            // step every frame (a frame missing or repeated breaks the rise).
            let first = try #require(capture.recordedIndex(atFrameTime: report.startSampleTime))
            let heard = capture.channel(0)
            #expect(heard.count >= first + frames)
            let rise = heard[first]
            let off = (1..<min(frames, heard.count - first)).filter { abs(heard[first + $0] - heard[first + $0 - 1] - rise) > rise * 1e-2 }
            #expect(rise > 0 && off.isEmpty, "\(off.count) frames off the rise, the first at file frame \(off.first ?? -1)")
        }

        @Test("play: the first frame lands on startSampleTime; every frame arrives; the JSON summary is complete")
        func playsToCapture() throws {
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 6)
            try capture.start()
            let path = try rampFile(frames: 48000)
            let result = try CLI.run(["play", path, "--server", server.name, "--client-name", "lockstep-cli",
                                      "--connect", capture.portNames[0], "--connect", capture.portNames[1], "--json",
                                      "--json-events"],
                                     timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            let summary = try json(result.stdout)
            let start = try #require(summary["startSampleTime"] as? Int)
            // The schema: the summary decodes as PlayReport; each event line as ControlUpdate, the
            // layer's start on the summary's sample, its end one second later.
            let lines = result.stdout.split(separator: "\n")
            let report = try JSONSchema.decode(PlayReport.self, from: try #require(lines.last))
            #expect(report.schema == 1 && report.seconds == Double(report.frames) / 48000)
            // The callback's own durations: every cycle of the second played was measured, the
            // percentiles are in order and below the longest, and a 1-layer render is quick.
            let callback = try #require(report.callbackTime)
            #expect(callback.cycles >= 48000 / 1024, "\(callback)")
            #expect(callback.medianSeconds > 0 && callback.medianSeconds <= callback.p99Seconds
                    && callback.p99Seconds <= callback.maxSeconds, "\(callback)")
            #expect(callback.medianSeconds < 0.001, "\(callback)")
            let events = try lines.dropLast().map { try JSONSchema.decode(ControlUpdate.self, from: $0) }
            #expect(events.allSatisfy { $0.schema == 1 })
            let started = try #require(events.first { $0.kind == .layerStarted })
            #expect(started.sampleTime == Int64(start) && started.file == path && started.layer == nil)
            let ended = try #require(events.first { $0.kind == .layerEnded })
            #expect((ended.sampleTime ?? 0) >= Int64(start) + 48000)
            #expect(summary["sampleRate"] as? Int == 48000)
            #expect((summary["frames"] as? Int ?? 0) >= 48000)
            #expect((summary["layers"] as? [[String: Any]])?.first?["file"] as? String == path)
            #expect(summary["discontinuities"] is [Any])
            let first = try #require(capture.firstNonSilentRecordedFrame(channel: 0))
            #expect(Int64(capture.frameTime(ofRecordedFrame: first)) == Int64(start) & 0xFFFF_FFFF)
            let played = Array(capture.channel(0)[first..<(first + 48000)])
            #expect(played == Signals.ramp(frames: 48000, start: 1, step: Self.step))
            #expect(capture.channel(1)[first + 100] == played[100])     // mono feeds both sides
        }

        @Test("play: Ctrl-C fades out over a few ms and exits cleanly with the summary")
        func interruptFadesOut() throws {
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 8)
            try capture.start()
            let path = try constantFile("tone.wav", value: 0.5, seconds: 10)
            let running = try CLI.spawn(["play", path, "--server", server.name, "--connect", capture.portNames[0],
                                         "--connect", capture.portNames[1], "--json"])
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
            #expect(capture.waitForLatest(frames: 1024) { $0 == 0.5 })      // the tone, steady
            running.send(SIGINT)
            let result = running.wait(timeout: 10)
            #expect(result.status == 130, "\(result.stderr)")
            let summary = try json(result.stdout)
            #expect(summary["interrupted"] as? Bool == true)
            #expect(capture.waitForFrames(capture.frames + 2048, timeout: 5))   // the fade's last cycle is in
            let left = capture.channel(0)
            let last = try #require(left.lastIndex { $0 != 0 })
            let first = try #require(capture.firstNonSilentRecordedFrame(channel: 0))
            #expect(last - first < 48000 * 3)                          // it stopped early
            // The end is a ramp down, not a cut: no step anywhere larger than 0.5 / 200.
            let tail = Array(left[(last - 600)...last])
            let steps = zip(tail, tail.dropFirst()).map { abs($0 - $1) }
            #expect((steps.max() ?? 1) <= 0.5 / 200, "largest step \(steps.max() ?? 1)")
            #expect(tail.first == 0.5)
        }

        @Test("play --ports-per-file gives each layer its own ports; ports --json lists them with connections")
        func portsPerFile() throws {
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 6)
            try capture.start()
            let path = try constantFile("layer.wav", value: 0.25, seconds: 3)
            let running = try CLI.spawn(["play", path, "--server", server.name, "--client-name", "lockstep-ports-test",
                                         "--ports-per-file", "--connect", capture.portNames[0], "--json", "--duration", "2"])
            try server.waitForPort("lockstep-ports-test:layer.wav_1", timeout: 10)
            // play registers its ports, then connects them: wait for the connection too.
            try server.waitForConnection("lockstep-ports-test:out_1", to: capture.portNames[0], timeout: 10)
            let listed = try CLI.run(["ports", "--server", server.name, "--json"])
            #expect(listed.status == 0, "\(listed.stderr)")
            let ports = try JSONSchema.decode(PortsReport.self, from: listed.stdout).ports
            let names = ports.map(\.name)
            #expect(names.contains("lockstep-ports-test:layer.wav_1"))
            #expect(names.contains("lockstep-ports-test:layer.wav_2"))
            let out1 = ports.first { $0.name == "lockstep-ports-test:out_1" }
            #expect(out1?.connections == [capture.portNames[0]])
            let text = try CLI.run(["ports", "--server", server.name])
            #expect(text.stdout.contains("lockstep-ports-test:out_1 (output"))
            let result = running.wait(timeout: 15)
            #expect(result.status == 0, "\(result.stderr)")
            let layers = try json(result.stdout)["layers"] as? [[String: Any]]
            #expect((layers?.first?["ports"] as? [String])?.count == 2)
        }

        @Test("play follows JACK transport: rolling starts at the transport frame, stop silences, relocating seeks")
        func followsTransport() throws {
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 8)
            try capture.start()
            let path = try rampFile("long.wav", frames: 48000 * 6)
            // Every non-silent frame plays the file frame equal to the transport frame at that time
            // (but for the Ctrl-C fade at the very end, which scales the ramp down).
            let (result, check) = try TransportScript.runFollower(
                ["play", path, "--server", server.name, "--client-name", "lockstep-transport", "--transport",
                 "--connect", capture.portNames[0], "--connect", capture.portNames[1], "--json", "--duration", "3"],
                clientName: "lockstep-transport", server: server, capture: capture, step: Self.step)
            #expect([0, 130].contains(result.status),   // --duration or the script's Ctrl-C ends it
                    "\(result.stderr)")
            #expect(check.checked > 24000)
            #expect(check.mismatches == 0)
            #expect(check.sawRelocatedSegment)
            #expect(check.loudStoppedCycles == 0)                      // while stopped, silence
        }

        @Test("play --loop repeats a layer gaplessly until --duration")
        func loops() throws {
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 5)
            try capture.start()
            let path = try rampFile("short.wav", frames: 4800)
            let result = try CLI.run(["play", path, "--server", server.name, "--loop", "--duration", "1",
                                      "--connect", capture.portNames[0], "--connect", capture.portNames[1], "--json"],
                                     timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            let summary = try json(result.stdout)
            let played = summary["frames"] as? Int ?? 0
            #expect(played >= 48000 && played < 48000 + 9600)
            let left = capture.channel(0)
            let first = try #require(capture.firstNonSilentRecordedFrame(channel: 0))
            let ramp = Signals.ramp(frames: 4800, start: 1, step: Self.step)
            for pass in 0..<9 {
                #expect(Array(left[(first + pass * 4800)..<(first + (pass + 1) * 4800)]) == ramp, "pass \(pass)")
            }
        }

        @Test("play: no server and --start-server never is one clear error; a missing file names it")
        func errors() throws {
            var result = try CLI.run(["play", try rampFile(frames: 480), "--server", "lockstep-no-such-server",
                                      "--start-server", "never"])
            #expect(result.status != 0)
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("lockstep-no-such-server") && result.stderr.contains("never"))
            // Files are opened before the server is reached: no jackd is started for a missing file
            // or a FIFO (which would otherwise block in open()).
            let unused = "lockstep-unused-\(getpid())"
            mkfifo(temp.file("pipe.wav"), 0o600)
            for input in [temp.file("missing.wav"), temp.file("pipe.wav")] {
                result = try CLI.run(["play", input, "--server", unused, "--start-server", "dummy"], timeout: 20)
                #expect(result.status == 1 && result.stderr.contains(URL(fileURLWithPath: input).lastPathComponent), "\(result.stderr)")
                #expect(!result.stderr.contains("start"), "\(result.stderr)")
            }
            let probe = Process()
            probe.executableURL = URL(fileURLWithPath: "/usr/bin/pgrep")
            probe.arguments = ["-f", "jackd -n \(unused)"]
            try probe.run()
            probe.waitUntilExit()
            #expect(probe.terminationStatus == 1, "a jackd named \(unused) was started")
            let server = try JACKServer()
            result = try CLI.run(["play", temp.file("missing.wav"), "--server", server.name, "--no-connect"])
            #expect(result.status != 0)
            #expect(result.stderr.contains("missing.wav"))
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
    }
}
