import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

extension JACKTests {
    /// The cue list live: `session run` with a control surface stays up after the show has played,
    /// fires a cue again, ignores a GO inside the double-GO window and resets to the top — the
    /// built binary against a private dummy-driver jackd, heard in a capture of its output.
    @Suite("lockstep session run: the cue list live (firing again, double GO, reset, staying up)", .serialized)
    struct CueListRunTests {
        @Test("a run with a surface stays up after its show has played; a cue fires again on its replied sample; a double GO is ignored; reset plays the top again")
        func cueListLive() throws { try retryingOnXruns("CueListRunTests", run) }

        func run(_ xrun: XrunFlag) throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-cue-list")
            let format = StreamFormat(sampleRate: 48000, channelCount: 1)
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.constant(0.125, frames: 24000), format: format)
            try FileFixtures.writeWAV(path: temp.file("hit.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.5), format: format)
            try FileFixtures.writeText(path: temp.file("show.yaml"), """
                channels: 1
                layers: { bed: {}, fx: {} }
                cues:
                  - { name: bed, layer: bed, file: bed.wav, at: 0 }
                  - { name: bell, layer: fx, file: hit.wav, at: manual }
                  - { name: horn, layer: fx, file: hit.wav, at: manual }
                """)
            let server = try JACKServer(period: 256)
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 30)
            try capture.start()
            // The default double-GO window (0.3 s); no --exit-when-done.
            let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name,
                                         "--client-name", "cue-list", "--connect", capture.portNames[0],
                                         "--control", "-", "--json", "--json-events"], withInput: true)
            defer { if running.isRunning { running.send(SIGKILL) } }
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
            // Two GOs written at once are carried out one after the other: inside 0.3 s.
            #expect(running.send(line: "go\ngo", awaiting: "go ignored"), "\(running.errorOutputSoFar)")
            #expect(running.errorOutputSoFar.contains("go bell at"))
            #expect(running.send(line: "go horn", awaiting: "go horn at"))
            // The bed (0.5 s) and both hits have played: half a second of silence, and still up.
            #expect(capture.waitForLatest(frames: 24000, timeout: 10) { $0 == 0 }, "the show does not fall silent")
            #expect(running.isRunning, "the run ended although a surface could still fire cues: \(running.errorOutputSoFar)")
            // Fired again once played.
            #expect(running.send(line: "go bell", awaiting: "go bell at"))
            #expect(capture.wait(timeout: 5) { capture.channel(0).filter { $0 >= 0.5 }.count >= 3 }, "the bell is not heard again")
            // Reset: the bed plays from the top, and the playhead is on the bell again.
            #expect(running.send(line: "reset", awaiting: "reset:"))
            #expect(capture.waitForLatest(frames: 256, timeout: 5) { $0 == 0.125 }, "the bed does not play again after reset")
            #expect(running.send(line: "go", awaiting: "go bell at"))
            running.closeInput()
            let result = running.wait(timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            xrun.set(capture.xrunCount > 0)

            // Every bell and horn start (from --json-events) is heard on its device sample.
            let lines = result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let starts = lines.filter { $0["kind"] as? String == "cue/started" && ["bell", "horn"].contains($0["cue"] as? String) }
            #expect(starts.map { $0["cue"] as? String } == ["bell", "horn", "bell", "bell"], "\(starts)")
            let live = capture.channel(0)
            for start in starts {
                let sampleTime = try #require(start["sampleTime"] as? Int)
                let index = try #require(capture.recordedIndex(atFrameTime: Int64(sampleTime)))
                #expect(live[index] >= 0.5, "\(start["cue"] ?? "") at \(sampleTime): \(live[index])")
                #expect(live[index - 1] < 0.5)
            }
            #expect(lines.contains { $0["kind"] as? String == "reset" && $0["cue"] as? String == "bell" })
            let summary = try #require(lines.last)
            #expect(summary["ignoredGos"] as? Int == 1, "\(summary)")
        }
    }
}

extension JACKTests.CueListRunTests {
    static let everyTypeText = """
        channels: 1
        layers: { bed: {}, fx: {} }
        cues:
          - { name: bed, layer: bed, file: bed.wav, at: 0, loop: forever }
          - { name: one, layer: fx, file: hit.wav, at: manual, continue: auto-continue, post_wait: 0.1 }
          - { name: duck, type: fade, target: bed, level: -12dB, duration: 0.2, continue: auto-follow }
          - { name: gap, type: wait, duration: 0.1, continue: auto-follow }
          - { name: up, type: fade, target: bed, level: 0dB, duration: 0.1, curve: linear }
          - { name: vamp, layer: fx, file: loop.wav, at: manual, loop: forever }
          - { name: hold, type: pause, target: bed, at: manual, continue: auto-continue, post_wait: 0.2 }
          - { name: again, type: resume, target: bed }
          - { name: leave, type: devamp, target: vamp, at: manual }
          - { name: twice, type: start, target: one, at: manual }
          - name: scene
            type: group
            mode: playlist
            crossfade: 0.05
            at: manual
            children:
              - { name: s1, layer: fx, file: loop.wav, to: 0.1 }
              - name: s2
                type: group
                children:
                  - { name: s3, layer: fx, file: loop.wav, from: 0.01, to: 0.1 }
                  - { name: s4, layer: bed, file: hit.wav, at: 0.02 }
          - name: round
            type: group
            mode: playlist
            crossfade: 0.02
            loop: 3
            at: manual
            children:
              - { name: r1, layer: fx, file: loop.wav, from: 0.02, to: 0.1 }
              - { name: r2, layer: fx, file: bed.wav, to: 0.05 }
          - { name: blink, type: midi, note: 1, with: round }
          - { name: prep, type: load, target: drone, load_time: 0.05, with: round }
          - { name: ping, type: network, destination: "127.0.0.1:9", message: "/lockstep/test 1", with: round }
          - { name: drone, layer: fx, file: loop.wav, at: manual, loop: forever }
          - { name: cut, type: stop, target: drone, at: manual }
          - { name: skip, type: goto, target: out, at: manual }
          - { name: never, layer: fx, file: hit.wav, at: manual }
          - { name: out, type: fade, target: bed, level: -inf, duration: 0.5, stop_target: true, at: manual }
        """

    @Test("a show of every cue type (audio, fade, wait, pause, resume, devamp, start, group, MIDI, load, network, stop, goto), GO by GO, captured from the graph, equals session render with the same GOs, sample for sample")
    func everyTypeLiveEqualsRender() throws { try retryingOnXruns("CueListRunTests.everyType", everyTypeRun) }

    func everyTypeRun(_ xrun: XrunFlag) throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-cue-types")
        let format = StreamFormat(sampleRate: 48000, channelCount: 1)
        // A bed whose every sample differs (so a sample out of place shows), a hit and a 0.15 s loop.
        try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: (0..<4800).map { Float($0 + 1) / 19200 }, format: format)
        try FileFixtures.writeWAV(path: temp.file("hit.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.5), format: format)
        try FileFixtures.writeWAV(path: temp.file("loop.wav"), samples: (0..<7200).map { Float($0 % 100) / 400 }, format: format)
        try FileFixtures.writeText(path: temp.file("show.yaml"), Self.everyTypeText)
        let server = try JACKServer(period: 256)
        let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 20)
        try capture.start()
        let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name,
                                     "--client-name", "cue-types", "--connect", capture.portNames[0],
                                     "--control", "-", "--json", "--exit-when-done", "--double-go", "0"], withInput: true)
        defer { if running.isRunning { running.send(SIGKILL) } }
        #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
        // The operator: GO after GO, each once the previous one's answer is back and a moment has played.
        for (line, reply) in [("go", "go one at"), ("go", "go vamp at"), ("go", "go hold at"), ("go", "go leave at"),
                              ("go", "go twice at"), ("go", "go scene at"), ("go", "go round at"), ("go", "go drone at"),
                              ("go", "go cut at"), ("go", "go skip at"), ("go", "go out at")] {
            #expect(running.send(line: line, awaiting: reply), "\(running.errorOutputSoFar)")
            usleep(400_000)
        }
        running.closeInput()
        let result = running.wait(timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        let lastLine = try #require(result.stdout.split(separator: "\n").last)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(lastLine.utf8)) as? [String: Any])
        let counts = summary["discontinuityCounts"] as? [String: Int] ?? [:]
        xrun.set(capture.xrunCount > 0 || counts["xrun", default: 0] > 0)
        #expect((summary["discontinuities"] as? [Any])?.isEmpty == true, "\(summary["discontinuities"] ?? "")")
        let start = try #require(summary["startSampleTime"] as? Int)
        // Each GO's session sample, as its answer names it: "go one at 0:00.512 (sample 24576)".
        var goes: [String] = []
        for line in result.stderr.split(separator: "\n") where line.contains(": go ") {
            guard let name = line.split(separator: " ").dropFirst(2).first, let open = line.range(of: "(sample "),
                  let sample = Int(line[open.upperBound...].prefix { $0.isNumber }) else { continue }
            goes += ["--go", "\(name)@\(sample) samples"]
        }
        #expect(goes.count == 2 * 11, "\(result.stderr)")
        let rendered = temp.file("render.wav")
        let render = try CLI.run(["session", "render", temp.file("show.yaml"), "-o", rendered, "--double-go", "0"] + goes)
        #expect(render.status == 0, "\(render.stderr)")
        let offline = try FileFixtures.readFloat(path: rendered)
        #expect(capture.waitForRecording(past: Int64(start + offline.count)))
        let first = try #require(capture.recordedIndex(atFrameTime: Int64(start)))
        let live = capture.channel(0)
        var mismatches = 0
        for i in 0..<offline.count where live[first + i] != offline[i] {
            if mismatches < 5 { print("frame \(i): live \(live[first + i]) offline \(offline[i])") }
            mismatches += 1
        }
        #expect(mismatches == 0, "\(mismatches) of \(offline.count) frames differ; \(goes); \(result.stderr)")
        #expect(offline.contains { $0 != 0 } && offline.count > 48000)
    }
}

extension JACKTests.CueListRunTests {
    @Test("a 30-cue show run by a scripted operator (GOs, a wrong GO stopped and fired again, load to time, panic in time, reset): every cue sounds on the sample its answer names")
    func operatorShow() throws { try retryingOnXruns("CueListRunTests.operator", operatorRun) }

    func operatorRun(_ xrun: XrunFlag) throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-operator")
        let format = StreamFormat(sampleRate: 48000, channelCount: 1)
        let bed: Float = 0.0625, hit: Float = 0.5
        try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.constant(bed, frames: 4800), format: format)
        try FileFixtures.writeWAV(path: temp.file("hit.wav"), samples: Signals.impulse(at: 0, frames: 16, value: hit), format: format)
        let ramp = (0..<48000).map { Float($0) / 96000 + 0.2 }
        try FileFixtures.writeWAV(path: temp.file("ramp.wav"), samples: ramp, format: format)
        var text = "channels: 1\nlayers: { bed: {}, a: {}, b: {} }\ncues:\n  - { name: bed, layer: bed, file: bed.wav, at: 0, loop: forever }\n"
        for n in 1...29 {
            text += n == 6 || n == 10 ? "  - { name: c\(n), layer: a, file: ramp.wav, at: manual }\n"
                : "  - { name: c\(n), layer: \(n % 2 == 0 ? "a" : "b"), file: hit.wav, at: manual }\n"
        }
        try FileFixtures.writeText(path: temp.file("show.yaml"), text)
        let server = try JACKServer(period: 256)
        let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 30)
        try capture.start()
        let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name,
                                     "--client-name", "operator", "--connect", capture.portNames[0],
                                     "--control", "-", "--json-events", "--double-go", "0"], withInput: true)
        defer { if running.isRunning { running.send(SIGKILL) } }
        #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
        func say(_ line: String, _ reply: String) {
            #expect(running.send(line: line, awaiting: reply), "\(line): \(running.errorOutputSoFar.suffix(600))")
            usleep(150_000)
        }
        for n in 1...5 { say("go", "go c\(n) at") }
        say("go", "go c6 at")                                   // the wrong GO: stopped, selected again
        say("stop c6", "stop c6")
        say("select c6", "playhead on c6")
        for n in 6...9 { say("go", "go c\(n) at") }
        say("load c10 0.5", "load c10 at 0:00.500")             // picks the ramp up half a second in
        say("go", "go c10 at")
        say("panic-in 0.5", "panic: fading out over 0.5 s")
        usleep(600_000)
        say("reset", "reset:")
        for n in 1...29 where n != 10 { say("go \(n == 1 ? "" : "c\(n)")".trimmingCharacters(in: .whitespaces), "go c\(n) at") }
        say("stop", "stop, ")                                   // the bed too: the show ends
        running.closeInput()
        let result = running.wait(timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        xrun.set(capture.xrunCount > 0)
        let events = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let starts = events.filter { $0["kind"] as? String == "cue/started" && ($0["cue"] as? String)?.hasPrefix("c") == true }
        // 9 + the wrong one again + c10 before the reset, 28 after it.
        #expect(starts.count == 39, "\(starts.count) starts: \(starts.map { $0["cue"] ?? "" })")
        // Every GO's answer names the session sample its cue/started event reports.
        let answered = result.stderr.split(separator: "\n").filter { $0.contains(": go c") }.compactMap { line -> Int? in
            guard let open = line.range(of: "(sample ") else { return nil }
            return Int(line[open.upperBound...].prefix { $0.isNumber })
        }
        #expect(answered == starts.compactMap { $0["position"] as? Int }, "\(answered)")
        #expect(capture.waitForFrames(capture.frames + 4096, timeout: 5))
        let live = capture.channel(0)
        for start in starts {
            let name = start["cue"] as? String ?? ""
            let sampleTime = try #require(start["sampleTime"] as? Int)
            let index = try #require(capture.recordedIndex(atFrameTime: Int64(sampleTime)))
            let step = live[index] - live[index - 1]
            if name == "c10" {
                // Loaded half a second in: the ramp's sample 24000 on the GO's own sample.
                #expect(abs(step - ramp[24000]) < 5e-5, "c10 at \(sampleTime): \(live[(index - 2)...(index + 2)])")
            } else if name == "c6" {
                #expect(abs(step - ramp[0]) < 5e-5, "c6 at \(sampleTime): \(live[(index - 2)...(index + 2)])")
            } else {
                #expect(abs(step - hit) < 5e-5, "\(name) at \(sampleTime): \(live[(index - 2)...(index + 2)])")
            }
        }
        // The panic faded the bed out over half a second: silence from its end to the reset.
        let panic = try #require(events.first { $0["kind"] as? String == "panic" })
        let reset = try #require(events.first { $0["kind"] as? String == "reset" })
        let panicAt = try #require(panic["sampleTime"] as? Int), resetTime = try #require(reset["sampleTime"] as? Int)
        let silentFrom = try #require(capture.recordedIndex(atFrameTime: Int64(panicAt + 24000)))
        let resetAt = try #require(capture.recordedIndex(atFrameTime: Int64(resetTime)))
        #expect(live[silentFrom..<resetAt].allSatisfy { $0 == 0 })
        #expect(live[resetAt + 100] == bed || live[resetAt + 100] == bed + hit)
    }
}
