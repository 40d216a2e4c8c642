import Foundation
import Lockstep
import LockstepSchema
import LockstepTestSupport
import Synchronization
import Testing

extension JACKTests {
    /// `lockstep session run --web` as a real process on a private dummy-driver jackd: a real
    /// headless Chromium (Selenium) drives the page, raw HTTP clients try what a hostile page or
    /// a broken client would, and the captured JACK output shows what reached the speakers.
    @Suite("lockstep session run --web (the built binary, live)", .serialized)
    struct SessionWebTests {
        let temp: TemporaryTestDirectory

        init() throws {
            temp = try TemporaryTestDirectory(prefix: "lockstep-session-web")
            let format = StreamFormat(sampleRate: 48000, channelCount: 1)
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.constant(0.125, frames: 48000 * 30), format: format)
            try FileFixtures.writeWAV(path: temp.file("bell.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.5), format: format)
            try FileFixtures.writeWAV(path: temp.file("horn.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.25), format: format)
            try FileFixtures.writeWAV(path: temp.file("gong.wav"), samples: Signals.constant(0.25, frames: 48000 * 20), format: format)
            try FileFixtures.writeText(path: temp.file("show.yaml"), """
                channels: 1
                layers: { bed: {}, fx: {} }
                cues:
                  - { name: bed, layer: bed, file: bed.wav, at: 0 }
                  - { name: bell, layer: fx, file: bell.wav, at: manual }
                  - { name: horn, layer: fx, file: horn.wav, at: manual }
                  - { name: gong, layer: fx, file: gong.wav, at: manual }
                """)
        }

        /// A live run: a private server, a capture of the master output, `session run --web
        /// 127.0.0.1:0` (plus `extra`) playing into it, and the page's URL and port it printed.
        struct Live {
            let server: JACKServer
            let capture: JACKCapture
            let running: RunningCLI
            let url: String
            let port: Int
        }

        func live(extra: [String] = [], period: Int = 256) throws -> Live {
            let server = try JACKServer(period: period)
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 60)
            try capture.start()
            let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name,
                                         "--client-name", "session-web", "--connect", capture.portNames[0],
                                         "--web", "127.0.0.1:0", "--json", "--exit-when-done", "--double-go", "0"] + extra)
            #expect(running.waitForErrorOutput(containing: "web page on http://127.0.0.1:"), "\(running.errorOutputSoFar)")
            let text = running.errorOutputSoFar
            let after = try #require(text.range(of: "web page on "))
            let url = String(text[after.upperBound...].prefix { !$0.isWhitespace })
            let port = try #require(Int(url.dropFirst("http://127.0.0.1:".count).prefix { $0.isNumber }))
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
            return Live(server: server, capture: capture, running: running, url: url, port: port)
        }

        @Test("headless Chromium shows a follow-on cue as waiting for the GO that places it, not for a GO of its own; after that GO, waiting on its sample; a stray click on a fader's track moves it one step, not to the click",
              .enabled(if: SessionWebTests.browserMissing == nil, "chromium, chromium-driver or python3-selenium is not installed"))
        func followOn() throws {
            try FileFixtures.writeText(path: temp.file("follow.yaml"), """
                channels: 1
                layers: { bed: {}, fx: {} }
                cues:
                  - { name: bed, layer: bed, file: bed.wav, at: 0 }
                  - { name: bell, layer: fx, file: gong.wav, at: manual, to: 2 }
                  - { name: tail, layer: fx, file: horn.wav, after: bell }
                """)
            let server = try JACKServer(period: 256)
            let running = try CLI.spawn(["session", "run", temp.file("follow.yaml"), "--server", server.name, "--client-name", "session-follow",
                                         "--no-connect", "--web", "127.0.0.1:0"])
            defer { if running.isRunning { running.send(SIGKILL) } }
            #expect(running.waitForErrorOutput(containing: "web page on http://127.0.0.1:"), "\(running.errorOutputSoFar)")
            let said = running.errorOutputSoFar
            let url = String(said[try #require(said.range(of: "web page on ")).upperBound...].prefix { !$0.isWhitespace })
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Browser/page_details.py").path
            let browser = try CLI.run([script, url, "tail", "bed"], timeout: 60, executable: "/usr/bin/python3")
            running.send(SIGINT)
            _ = running.wait(timeout: 20)
            if browser.status == 77 { try Test.cancel(Comment(rawValue: browser.stdout.trimmingCharacters(in: .whitespacesAndNewlines))) }
            #expect(browser.status == 0, "\(browser.stdout)\n\(browser.stderr)")
            let page = try #require(try JSONSerialization.jsonObject(with: Data(browser.stdout.utf8)) as? [String: Any])
            // (The page shows states in capitals.)
            #expect(page["before"] as? String == "WITH GO OF BELL", "\(page)")
            #expect((page["goReply"] as? [String: Any])?["status"] as? String == "ok", "\(page)")
            // (Placed on the sample the bell ends, 2 s on.)
            #expect(page["after"] as? String == "WAITING", "\(page)")
            // The fader: clicked near -60 dB with its knob at 0, it moved one step.
            let gain = (page["gainReply"] as? [String: Any])?["data"] as? [String: Any]
            #expect(page["faderBefore"] as? String == "0" && page["faderAfter"] as? String == "-1" && gain?["gainDB"] as? Int == -1, "\(page)")
            print("SessionWebTests: the follow-on cue's state on the page: \(page["before"] ?? "?") → \(page["after"] ?? "?"); a click on the fader's track near -60 dB moved it from \(page["faderBefore"] ?? "?") to \(page["faderAfter"] ?? "?") dB")
        }

        /// The JSON summary a run printed last.
        func summary(_ result: CLI.Result) throws -> [String: Any] {
            let line = try #require(result.stdout.split(separator: "\n").last)
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }

        /// Where the browser test leaves its screenshots: `.build/test-artifacts/web` of the package.
        static var screenshots: String {
            let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            return package.appendingPathComponent(".build/test-artifacts/web").path
        }

        /// Why the browser test cannot run here (nil: it can), printed when it is skipped.
        static let browserMissing: String? = {
            let needed = ["/usr/bin/python3": "python3", "/usr/bin/chromium": "chromium", "/usr/bin/chromedriver": "chromium-driver"]
            let missing = needed.filter { !FileManager.default.isExecutableFile(atPath: $0.key) }.map(\.value).sorted()
            guard missing.isEmpty else {
                let reason = "the browser test needs Debian's \(missing.joined(separator: ", ")) (Scripts/setup.sh installs them)"
                print("SKIP: \(reason)")
                return reason
            }
            return nil
        }()

        @Test("headless Chromium drives the page: the cue list shows; select next/previous, GO (button and space bar), a fader, pause/resume, panic and stop each land in the capture on the samples the page shows; meters (peak and RMS numbers) move ≥ 20 times a second",
              .enabled(if: SessionWebTests.browserMissing == nil, "chromium, chromium-driver or python3-selenium is not installed"))
        func browser() throws { try retryingOnXruns("SessionWebTests", browserRun) }

        func browserRun(_ xrun: XrunFlag) throws {
            let live = try live(period: 1024)
            let (capture, running) = (live.capture, live.running)
            try FileManager.default.createDirectory(atPath: Self.screenshots, withIntermediateDirectories: true)
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Browser/cue_page.py").path
            let browser = try CLI.run([script, live.url, Self.screenshots, "bed", "6"], timeout: 90, executable: "/usr/bin/python3")
            if browser.status == 77 {
                running.send(SIGINT)
                _ = running.wait(timeout: 10)
                print(browser.stdout)
                try Test.cancel(Comment(rawValue: browser.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            }
            #expect(browser.status == 0, "\(browser.stdout)\n\(browser.stderr)")
            let page = try #require(try JSONSerialization.jsonObject(with: Data(browser.stdout.utf8)) as? [String: Any])
            /// The `data` of a reply the page received.
            func data(_ key: String) throws -> [String: Any] {
                let reply = try #require(page[key] as? [String: Any], "\(key)")
                #expect(reply["status"] as? String == "ok", "\(key): \(reply)")
                return try #require(reply["data"] as? [String: Any], "\(key): \(reply)")
            }
            func integer(_ object: [String: Any], _ key: String) throws -> Int { try #require(object[key] as? Int, "\(key) in \(object)") }

            // The cue list as the page shows it.
            let rows = try #require(page["cues"] as? [[String]])
            #expect(rows.map { Array($0.prefix(3)) } == [["1", "bed", "bed"], ["2", "bell", "fx"], ["3", "horn", "fx"], ["4", "gong", "fx"]])
            #expect(rows[0][3] == "0:00.000" && rows[0][4] == "0" && rows[0][6] == "PLAYING", "\(rows)")
            #expect(rows[1][3] == "GO" && rows[1][5] == "0:00.000" && rows[1][6] == "WAITING FOR GO", "\(rows)")
            // Select next, then previous: the selected cue's label follows; GO moves it on.
            #expect(page["selected"] as? [String] == ["bell", "horn", "bell"], "\(page["selected"] ?? "")")
            #expect(page["selectedAfterGo"] as? String == "horn")

            // GO: the page shows the device sample the bell starts on; the capture has it there.
            #expect(page["goCue"] as? String == "bell")
            let goAt = try #require(page["goSampleTime"] as? Int)
            #expect(page["rowStartedSampleTime"] as? Int == goAt)
            #expect((page["goReply"] as? String)?.hasSuffix("device sample \(goAt)") == true, "\(page["goReply"] ?? "")")
            let after = try #require(page["rowAfterGo"] as? [String])
            #expect(after[3] != "GO" && Int(after[4]) != nil, "\(after)")

            // The fader: six arrow-key steps down, -6 dB from the sample its reply names.
            #expect(page["faderValue"] as? Double == -6)
            let gainData = try data("gainReply")
            let gainAt = try integer(gainData, "sampleTime")
            #expect(gainData["gainDB"] as? Int == -6 && gainData["layer"] as? String == "bed")

            // Meters: at least 20 a second; the bed's peak and RMS read -18.06 dBFS (0.125) and
            // show as numbers, then -24.06 after the fader, silence while paused, then sound again.
            let rate = try #require(page["metersPerSecond"] as? Double)
            print("web page: \(String(format: "%.1f", rate)) meter updates a second; GO landed on device sample \(goAt); gain -6 dB from \(gainAt); the browser ran \(page["seconds"] ?? "?") s")
            #expect(rate >= 20)
            func meter(_ key: String) throws -> [String: String] { try #require(page[key] as? [String: String], "\(key)") }
            let before = try meter("meterBefore"), faded = try meter("meterAfterFader")
            #expect(abs((Double(before["peakDB"] ?? "") ?? 0) + 18.06) < 0.05 && abs((Double(before["rmsDB"] ?? "") ?? 0) + 18.06) < 0.05, "\(before)")
            #expect(before["peak"] == "pk -18.1" && before["rms"] == "rms -18.1", "\(before)")
            #expect(abs((Double(faded["peakDB"] ?? "") ?? 0) + 24.06) < 0.05 && faded["rms"] == "rms -24.1", "\(faded)")
            let master = try meter("masterBefore")
            #expect(master["rms"] == "rms -18.1" && master["hold"]?.hasPrefix("hold ") == true, "\(master)")
            let paused = try meter("meterPaused")
            #expect(paused["peak"] == "pk -∞" && paused["rms"] == "rms -∞", "\(paused)")
            #expect(try meter("meterResumed")["rms"] == "rms -24.1")
            #expect(try meter("fxMeterPlaying")["rms"] == "rms -12.0")              // the gong, 0.25
            // Sampled all along, the RMS number took at least these values, in this order.
            let shown = try #require(page["meterSamples"] as? [[Any]]).compactMap { $0[4] as? String }
            var order = ["rms -18.1", "rms -24.1", "rms -∞", "rms -24.1"].makeIterator()
            var wanted = order.next()
            for text in shown where text == wanted { wanted = order.next() }
            #expect(wanted == nil, "the RMS numbers shown: \(Array(Set(shown)))")
            #expect(page["timelineCues"] as? [String] == ["bed", "bell", "horn", "gong"])
            #expect(page["playheadX"] as? String != page["playheadX2"] as? String)   // the playhead moves
            #expect((page["consoleErrors"] as? [String])?.isEmpty == true, "\(page["consoleErrors"] ?? "")")

            // Pause and resume: the button's label and the state follow, the clock stands still,
            // and the session plays on from the very sample it paused on.
            #expect(page["pauseLabel"] as? [String] == ["pause", "resume", "pause"], "\(page["pauseLabel"] ?? "")")
            #expect(page["stateShownPaused"] as? String == "PAUSED" && page["clockStoodStill"] as? Bool == true)
            let pause = try data("pauseReply"), resume = try data("resumeReply")
            #expect(try integer(pause, "position") == integer(resume, "position"), "\(pause) \(resume)")
            let resumedAt = try integer(resume, "sampleTime")
            // The space bar fired the cue then selected.
            #expect(page["spaceCue"] as? String == "horn" && page["selectedAfterSpace"] as? String == "gong")
            let space = try data("spaceReply")
            let hornAt = try integer(space, "sampleTime")
            // PANIC faded the bed (and anything else) out, then stopped every cue.
            let panic = try data("panicReply")
            #expect(panic["cues"] as? [String] == ["bed"], "\(panic)")
            let panicAt = try integer(panic, "sampleTime")
            let panicSilentAt = try panicAt + integer(panic, "silentFrom") - integer(panic, "position")
            #expect(panicSilentAt - panicAt == 48000, "\(panic)")                    // 1 s
            let rowsAfterPanic = try #require(page["rowsAfterPanic"] as? [String: String])
            #expect(rowsAfterPanic["bed"] == "stopped" && rowsAfterPanic["gong"] == "waiting", "\(rowsAfterPanic)")
            // The gong, fired after the panic, then stopped: nothing is left to play, and the run ends.
            let lastGo = try data("lastGoReply")
            #expect(lastGo["cue"] as? String == "gong")
            let gongAt = try integer(lastGo, "sampleTime")
            let stop = try data("stopReply")
            #expect(stop["cues"] as? [String] == ["gong"], "\(stop)")
            let stopAt = try integer(stop, "sampleTime")
            let stopSilentAt = try stopAt + integer(stop, "silentFrom") - integer(stop, "position")

            let result = running.wait(timeout: 15)
            #expect(result.status == 0, "\(result.stderr)")
            let summary = try summary(result)
            let web = try #require(summary["web"] as? [String: Any])
            #expect(web["clients"] as? Int ?? 0 >= 1 && web["commands"] as? Int ?? 0 >= 15 && web["errorReplies"] as? Int == 0
                    && web["refused"] as? Int == 0, "\(web)")
            let gaps = summary["discontinuities"] as? [[String: Any]] ?? []
            // Underruns are Lockstep's own; a server xrun breaks the capture's levels.
            #expect(!gaps.contains { $0["kind"] as? String == "underrun" }, "\(gaps)")
            xrun.set(capture.xrunCount > 0 || gaps.contains { $0["kind"] as? String == "xrun" })
            #expect(gaps.isEmpty, "discontinuities: \(gaps)")

            // In the capture: the bell's impulse on the very sample the page showed, over the bed…
            let played = capture.channel(0)
            func index(_ sampleTime: Int) throws -> Int { try #require(capture.recordedIndex(atFrameTime: Int64(sampleTime)), "\(sampleTime)") }
            func level(_ range: Range<Int>, _ value: Float) -> Bool { range.allSatisfy { abs(played[$0] - value) < 1e-5 } }
            let g = try index(goAt)
            #expect((played[g - 1], played[g], played[g + 1]) == (0.125, 0.625, 0.125))
            // …the bed at full level before the last fader step's ramp, 6 dB down after it…
            let steps = try index(gainAt)
            let down = Float(0.125 * pow(10, -6.0 / 20))
            #expect(played[g + 100] == 0.125)
            #expect(level((steps + 2400 + 10)..<(steps + 2400 + 4800), down), "\(played[steps + 2410])")
            // …silence while paused (the pause held at least 0.5 s), and the bed again from the
            // sample resume named…
            let r = try index(resumedAt)
            #expect(level((r - 24000)..<r, 0), "not silent before resume")
            let lastSound = try #require(played[..<r].lastIndex { $0 != 0 })
            #expect(r - lastSound >= 24000 && lastSound > steps + 4800, "paused \(r - lastSound) frames")
            #expect(level((lastSound - 4800)..<(lastSound - 480), down))            // it was playing until the pause
            #expect(level((r + 480)..<(r + 9600), down), "\(played[r + 480])")
            // …the horn's impulse on the sample of the space bar's GO…
            let h = try index(hornAt)
            #expect(abs(played[h] - (down + 0.25)) < 1e-5 && abs(played[h - 1] - down) < 1e-5, "\(played[h])")
            // …the panic fading the bed out over 1 s, then silence…
            let p = try index(panicAt), quiet = try index(panicSilentAt)
            #expect(level((p - 480)..<p, down))
            #expect(played[p + 24000] > 0.01 && played[p + 24000] < down - 0.01, "\(played[p + 24000])")
            #expect(level(quiet..<(quiet + 9600), 0))
            // …the gong at 0.25 from its GO, and silence 5 ms after stop.
            let gong = try index(gongAt), stopped = try index(stopSilentAt)
            #expect(level((quiet + 9600)..<gong, 0))
            #expect(level((gong + 10)..<(gong + 9600), 0.25), "\(played[gong + 10])")
            #expect(stopped - (try index(stopAt)) == 240)
            #expect(level((stopped)..<min(played.count, stopped + 9600), 0))
        }

        @Test("Origin, Host and token: another site's page, a rebound name or a missing token is refused (403/401) and drives nothing; this server's page with the token gets in")
        func admission() throws {
            let live = try live(extra: ["--web-token", "s3cret"])
            let port = live.port
            let here = "http://127.0.0.1:\(port)"
            // The page itself has no show data: served to anyone.
            let index = try HTTPTestClient.get(port: port, "/")
            #expect(index.status == 200 && index.body.contains("<button id=\"go\""))
            #expect(HTTPTestClient.header("x-frame-options", in: index.head) == "DENY")
            #expect(HTTPTestClient.header("content-security-policy", in: index.head)?.contains("frame-ancestors 'none'") == true)
            // The WebSocket: another site's page, no token, a wrong token, a rebound name. A refused
            // upgrade is answered 400 (hummingbird-websocket's fixed answer; the log says why);
            // the same request without the upgrade gets the status that says why (403, 401).
            #expect(try HTTPTestClient.upgrade(port: port, "/ws?token=s3cret", headers: ["Origin": "http://evil.example"]).status == 400)
            #expect(try HTTPTestClient.upgrade(port: port, "/ws", headers: ["Origin": here]).status == 400)
            #expect(try HTTPTestClient.upgrade(port: port, "/ws?token=s3cre", headers: ["Origin": here]).status == 400)
            #expect(try HTTPTestClient.upgrade(port: port, "/ws?token=s3cret",
                                               headers: ["Origin": "http://evil.example:\(port)", "Host": "evil.example:\(port)"]).status == 400)
            #expect(try HTTPTestClient.get(port: port, "/ws?token=s3cret", headers: ["Origin": "http://evil.example"]).status == 403)
            #expect(try HTTPTestClient.get(port: port, "/ws", headers: ["Origin": here]).status == 401)
            let accepted = try HTTPTestClient.upgrade(port: port, "/ws?token=s3cret", headers: ["Origin": here])
            #expect(accepted.status == 101, "\(accepted.head)")
            #expect(try HTTPTestClient.get(port: port, "/ws?token=s3cret").status == 426)
            // POST: the same checks, before the body is looked at.
            let go = Array(#"{"command":"go"}"#.utf8)
            let evil = try HTTPTestClient.post(port: port, "/api/command?token=s3cret", body: go, headers: ["Origin": "http://evil.example"])
            #expect(evil.status == 403 && evil.body.contains("is another site"), "\(evil.body)")
            #expect(try HTTPTestClient.post(port: port, "/api/command", body: go, headers: ["Origin": here]).status == 401)
            #expect(try HTTPTestClient.get(port: port, "/api/status").status == 401)
            #expect(try HTTPTestClient.get(port: port, "/timeline.svg").status == 401)
            // Nothing refused fired a cue.
            let status = try HTTPTestClient.get(port: port, "/api/status", headers: ["Authorization": "Bearer s3cret"])
            #expect(status.status == 200 && status.body.contains(#""playhead":"bell""#), "\(status.body)")
            // The cue list speaks the schema of --json: schema, sampleRate, frames.
            let cues = try HTTPTestClient.get(port: port, "/api/cues", headers: ["Authorization": "Bearer s3cret"])
            let list = try #require(try JSONSerialization.jsonObject(with: Data(cues.body.utf8)) as? [String: Any], "\(cues.body)")
            #expect(list["schema"] as? Int == JSONSchema.version && list["sampleRate"] as? Double == 48000, "\(list)")
            let bed = try #require((list["cues"] as? [[String: Any]])?.first, "\(list)")
            #expect(bed["name"] as? String == "bed" && bed["frames"] as? Int == 48000 * 30 && bed["length"] == nil, "\(bed)")
            let fired = try HTTPTestClient.post(port: port, "/api/command?token=s3cret", body: go, headers: ["Origin": here])
            #expect(fired.status == 200 && fired.body.contains(#""cue":"bell""#), "\(fired.body)")

            live.running.send(SIGINT)
            let result = live.running.wait(timeout: 15)
            #expect(result.status == 130, "\(result.stderr)")
            #expect(result.stderr.contains("web: refused /ws: Origin 'http://evil.example' is another site"))
            let web = try #require(try summary(result)["web"] as? [String: Any])
            #expect(web["refused"] as? Int == 10 && web["commands"] as? Int == 1 && web["clients"] as? Int == 1, "\(web)")
        }

        @Test("bad requests get HTTP errors (404, 400, 413, 422), 1000 connections at once are survived, and the show plays on without a discontinuity")
        func badRequestsAndManyConnections() throws { try retryingOnXruns("SessionWebTests", badRequestsRun) }

        func badRequestsRun(_ xrun: XrunFlag) throws {
            let live = try live()
            let port = live.port
            #expect(try HTTPTestClient.get(port: port, "/nope").status == 404)
            #expect(try HTTPTestClient.get(port: port, "/../../etc/passwd").status == 404)
            let malformed = try HTTPTestClient.post(port: port, "/api/command", body: Array(#"{"comm"#.utf8))
            #expect(malformed.status == 400 && malformed.body.contains("not JSON"), "\(malformed.body)")
            let unknown = try HTTPTestClient.post(port: port, "/api/command", body: Array(#"{"command":"fire"}"#.utf8))
            #expect(unknown.status == 400 && unknown.body.contains("unknown command 'fire'"))
            let refused = try HTTPTestClient.post(port: port, "/api/command", body: Array(#"{"command":"resume"}"#.utf8))
            #expect(refused.status == 422 && refused.body.contains(#""status":"error""#), "\(refused.body)")
            let huge = try HTTPTestClient.post(port: port, "/api/command", body: [UInt8](repeating: 0x20, count: 4 << 20), )
            #expect(huge.status == 413, "\(huge.head)")
            // Not HTTP at all: 400 at once and the connection closed (not left to the 15 s idle
            // timeout), and nothing else is disturbed.
            let garbage = try HTTPTestClient(port: port)
            garbage.write(Array("NONSENSE\r\n\r\n".utf8))
            let answer = garbage.response(timeout: 3)
            #expect(answer.status == 400 && answer.body.contains("not an HTTP request"), "\(answer.head)")
            #expect(garbage.closes(within: 3))
            #expect(try HTTPTestClient.get(port: port, "/").status == 200)

            // 1000 connections at once, each sending half a request; then they go away.
            var clients: [HTTPTestClient] = []
            for _ in 0..<1000 {
                guard let client = try? HTTPTestClient(port: port) else { break }
                client.write(Array("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n".utf8))
                clients.append(client)
            }
            print("web: \(clients.count) connections opened at once")
            #expect(clients.count == 1000)
            #expect(live.running.isRunning)
            clients.removeAll()
            // Served again at once.
            let deadline = Date().addingTimeInterval(5)
            var index = try HTTPTestClient.get(port: port, "/")
            while index.status != 200 && Date() < deadline { usleep(100_000); index = try HTTPTestClient.get(port: port, "/") }
            #expect(index.status == 200)
            // 40 pages want the socket; 32 get it, the rest are refused (400, and 503 without the upgrade).
            var sockets: [HTTPTestClient] = []
            var statuses: [Int] = []
            for _ in 0..<40 {
                let client = try HTTPTestClient(port: port)
                client.write(Array("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8))
                statuses.append(client.response().status)
                sockets.append(client)
            }
            #expect(statuses.filter { $0 == 101 }.count == 32 && statuses.filter { $0 == 400 }.count == 8, "\(statuses)")
            #expect(try HTTPTestClient.get(port: port, "/ws").status == 503)
            sockets.removeAll()

            live.running.send(SIGINT)
            let result = live.running.wait(timeout: 15)
            #expect(result.status == 130, "\(result.stderr)")
            let summary = try summary(result)
            let gaps = summary["discontinuities"] as? [[String: Any]] ?? []
            #expect(!gaps.contains { $0["kind"] as? String == "underrun" }, "\(gaps)")
            xrun.set(live.capture.xrunCount > 0 || gaps.contains { $0["kind"] as? String == "xrun" })
            #expect(gaps.isEmpty, "discontinuities: \(gaps)")
        }
    }
}
