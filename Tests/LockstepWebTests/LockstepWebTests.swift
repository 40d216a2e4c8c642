import CRsvg
import Foundation
import Lockstep
import LockstepControl
import LockstepSession
import LockstepTestSupport
import LockstepWeb
import Testing

@Suite("The web page's commands, admission checks and timeline picture (no server)")
struct LockstepWebTests {
    @Test("JSON commands become the dispatcher's commands, with the verb as the reply's address")
    func commands() throws {
        func parse(_ text: String) throws -> ControlCommand { try WebCommand.parse(text).command }
        #expect(try parse(#"{"command":"go"}"#) == .go(nil))
        // The page's own GO is recognized without the decoder; other spellings decode to the same.
        #expect(try WebCommand.parse(#"{"command":"go"}"#) == WebCommand.parse(#"{ "command" : "go" }"#))
        #expect(try WebCommand.parse(#"{"command":"go"}"#).address == "go")
        #expect(try parse(#"{"command":"GO","cue":"bell"}"#) == .go(.name("bell")))
        #expect(try parse(#"{"command":"start","cue":2}"#) == .startCue(.number(2)))
        #expect(try parse(#"{"command":"stop"}"#) == .stop)
        #expect(try parse(#"{"command":"pause","cue":"bed"}"#) == .pauseCue(.name("bed")))
        #expect(try parse(#"{"command":"gain","layer":"bed","gainDB":-6,"ramp":0.05}"#) == .setLayerGain(layer: "bed", decibels: -6, ramp: 0.05))
        #expect(try parse(#"{"command":"gain","layer":"bed","gainDB":"-inf"}"#) == .setLayerGain(layer: "bed", decibels: -.infinity, ramp: 0))
        #expect(try parse(#"{"command":"level","cue":"bell","gainDB":-3.5}"#) == .setCueLevel(.name("bell"), decibels: -3.5, ramp: 0))
        // The ramp takes the one time syntax, as a string; a number is seconds.
        #expect(try parse(#"{"command":"level","cue":"bell","gainDB":-3,"ramp":"250ms"}"#) == .setCueLevel(.name("bell"), decibels: -3, ramp: .seconds(0.25)))
        #expect(try parse(#"{"command":"gain","layer":"bed","gainDB":-6,"ramp":"4800 samples"}"#) == .setLayerGain(layer: "bed", decibels: -6, ramp: .samples(4800)))
        #expect(try parse(#"{"command":"gain","layer":"bed","gainDB":-6,"ramp":"0:02"}"#) == .setLayerGain(layer: "bed", decibels: -6, ramp: .seconds(2)))
        #expect(try parse(#"{"command":"seek","time":"1:30"}"#) == .seek(.seconds(90)))
        #expect(try parse(#"{"command":"next"}"#) == .selectNext)
        #expect(try WebCommand.parse(#"{"command":"previous"}"#).address == "previous")
        // The page's reset and fade-out buttons; a cue's panic and load.
        #expect(try parse(#"{"command":"reset"}"#) == .reset)
        #expect(try parse(#"{"command":"panic","time":3}"#) == .panicIn(.seconds(3)))
        #expect(try parse(#"{"command":"panic","time":"500ms","cue":"bed"}"#) == .panicCue(.name("bed"), fade: .seconds(0.5)))
        #expect(try parse(#"{"command":"panic","cue":"bed"}"#) == .panicCue(.name("bed"), fade: nil))
        #expect(try parse(#"{"command":"load","cue":"3","time":"0:30"}"#) == .loadCue(.name("3"), .seconds(30), .set))
        #expect(throws: ControlError.self) { try parse(#"{"command":"panic","time":-1}"#) }
        #expect(throws: ControlError.self) { try parse(#"{"command":"load","cue":"3"}"#) }
    }

    @Test("malformed, unknown, incomplete and oversized commands are errors that say how to write them")
    func badCommands() {
        func message(_ text: String) -> String? {
            do { _ = try WebCommand.parse(text); return nil } catch { return error.message }
        }
        #expect(message("{\"comm")?.hasPrefix("not JSON") == true)
        #expect(message("[1,2]")?.hasPrefix("a command is a JSON object") == true)
        #expect(message(#"{"cue":"bell"}"#)?.contains(#"no "command" string"#) == true)
        #expect(message(#"{"command":"fire"}"#)?.hasPrefix("unknown command 'fire'; the commands are go, start") == true)
        #expect(message(#"{"command":"start"}"#)?.hasPrefix("'start' needs a cue") == true)
        #expect(message(#"{"command":"gain","gainDB":-6}"#)?.hasPrefix("gain needs a \"layer\"") == true)
        #expect(message(#"{"command":"gain","layer":"bed","gainDB":"loud"}"#) == #"gain: "gainDB" is a number of dB (or "-inf")"#)
        // Ramps, gains and times: the ranges and messages of every surface (ControlRange).
        #expect(message(#"{"command":"gain","layer":"bed","gainDB":0,"ramp":-1}"#) == ControlRange.rampProblem("-1.0 s", for: "gain").message)
        #expect(message(#"{"command":"gain","layer":"bed","gainDB":0,"ramp":1e30}"#) == ControlRange.rampProblem("1e+30 s", for: "gain").message)
        #expect(message(#"{"command":"gain","layer":"bed","gainDB":0,"ramp":"later"}"#) == ControlRange.rampProblem("'later'", for: "gain").message)
        #expect(message(#"{"command":"gain","layer":"bed","gainDB":0,"ramp":"1:02:03"}"#) == ControlRange.rampProblem("'1:02:03'", for: "gain").message)
        #expect(message(#"{"command":"level","cue":"bell","gainDB":1e30}"#) == "level: 1e+30 dB is out of range; a gain is -inf to +12 dB")
        #expect(message(#"{"command":"seek","time":"soon"}"#) == "seek 'soon' is not a time; \(SessionTime.formsHint)")
        #expect(message(#"{"command":"seek","time":604801}"#) == "seek: 604801.0 \(SessionTime.reason(for: "604801")!)")
        #expect(message(#"{"command":"seek","time":1e30}"#)?.hasPrefix("seek: 1e+30 is past the limit: a time is at most a week") == true)
        #expect(message(#"{"command":"seek"}"#)?.hasPrefix("seek needs a \"time\"") == true)
        let huge = #"{"command":"go","cue":""# + String(repeating: "x", count: WebCommand.maximumSize) + "\"}"
        #expect(message(huge)?.contains("the limit is \(WebCommand.maximumSize)") == true)
    }

    @Test("Host, Origin and token: only this server's own page with the token gets in")
    func admission() {
        let open = WebAdmission(host: "127.0.0.1", port: 8080, token: nil)
        #expect(open.refusal(host: "127.0.0.1:8080", origin: nil, token: nil) == nil)
        #expect(open.refusal(host: "localhost:8080", origin: "http://localhost:8080", token: nil) == nil)
        #expect(open.refusal(host: "127.0.0.1:8080", origin: "http://evil.example", token: nil) == .origin("http://evil.example"))
        #expect(open.refusal(host: "127.0.0.1:8080", origin: "http://localhost:8080", token: nil) == .origin("http://localhost:8080"))
        #expect(open.refusal(host: "127.0.0.1:8080", origin: "null", token: nil) == .origin("null"))
        // DNS rebinding: a page of evil.example whose name now points at 127.0.0.1.
        #expect(open.refusal(host: "evil.example:8080", origin: "http://evil.example:8080", token: nil) == .host("evil.example:8080"))
        #expect(open.refusal(host: nil, origin: nil, token: nil) == .host(""))
        let locked = WebAdmission(host: "127.0.0.1", port: 8080, token: "s3cret")
        #expect(locked.refusal(host: "127.0.0.1:8080", origin: nil, token: nil) == .token)
        #expect(locked.refusal(host: "127.0.0.1:8080", origin: nil, token: "s3cre") == .token)
        #expect(locked.refusal(host: "127.0.0.1:8080", origin: nil, token: "s3cret") == nil)
        #expect(WebAdmission.token(inTarget: "/ws?a=1&token=s3%20cret") == "s3 cret")
        #expect(WebAdmission.token(inAuthorization: "Bearer s3cret") == "s3cret")
        // On port 80 a browser writes no port in Host.
        let eighty = WebAdmission(host: "127.0.0.1", port: 80, token: nil)
        #expect(eighty.refusal(host: "127.0.0.1", origin: "http://127.0.0.1", token: nil) == nil)
        #expect(eighty.refusal(host: "localhost:80", origin: nil, token: nil) == nil)
        #expect(eighty.refusal(host: "127.0.0.1:8080", origin: nil, token: nil) == .host("127.0.0.1:8080"))
        #expect(WebAdmission.Refusal.token.status == 401 && WebAdmission.Refusal.origin("x").status == 403
                && WebAdmission.Refusal.full(32).status == 503)
    }

    @Test("a wildcard bind takes in Host only IP addresses, localhost and this machine's own names, with the bound port: a rebound name is refused")
    func wildcardHosts() {
        for bind in ["0.0.0.0", "::"] {
            let wildcard = WebAdmission(host: bind, port: 8080, token: nil, machineNames: ["show-mac", "show-mac.lan.example"])
            #expect(wildcard.isWildcard)
            for accepted in ["192.168.1.20:8080", "127.0.0.1:8080", "10.0.0.5:8080", "[::1]:8080", "[fe80::1ff:fe23:4567:890a]:8080",
                             "[2001:db8::7]:8080", "localhost:8080", "LOCALHOST:8080", "show-mac:8080", "Show-Mac.lan.example:8080"] {
                #expect(wildcard.refusal(host: accepted, origin: nil, token: nil) == nil, "\(accepted)")
                #expect(wildcard.refusal(host: accepted, origin: "http://" + accepted, token: nil) == nil, "\(accepted)")
            }
            // Names this machine does not have (a rebinding attacker's), other ports, malformed values:
            // refused with the Host message, lowercased as compared.
            for refused in ["evil.example:8080", "show.local:8080", "show-mac.evil.example:8080", "127.0.0.1.nip.io:8080",
                            "192.168.1.20:9000", "192.168.1.20", "localhost:80", "::1:8080", "[::1]", "[evil.example]:8080",
                            "[::1]:80a", "1.2.3.4:8080:8080", ":8080", "", "0x7f.1:8080x"] {
                #expect(wildcard.refusal(host: refused, origin: nil, token: nil) == .host(refused.lowercased()), "\(refused)")
            }
            #expect(wildcard.refusal(host: "Evil.Example:8080", origin: nil, token: nil)?.message
                    == "Host 'evil.example:8080' is not this server; open the page at the address lockstep printed")
            #expect(wildcard.refusal(host: "192.168.1.20:8080", origin: "http://evil.example", token: nil) == .origin("http://evil.example"))
            // The token still applies.
            let locked = WebAdmission(host: bind, port: 8080, token: "s3cret", machineNames: [])
            #expect(locked.refusal(host: "192.168.1.20:8080", origin: nil, token: nil) == .token)
            #expect(locked.refusal(host: "show-mac:8080", origin: nil, token: "s3cret") == .host("show-mac:8080"))
        }
        // Port 80: Host without a port too.
        let eighty = WebAdmission(host: "0.0.0.0", port: 80, token: nil, machineNames: [])
        #expect(eighty.refusal(host: "192.168.1.20", origin: nil, token: nil) == nil)
        #expect(eighty.refusal(host: "[::1]", origin: nil, token: nil) == nil)
        #expect(eighty.refusal(host: "evil.example", origin: nil, token: nil) == .host("evil.example"))
        // This machine's own name, as gethostname gives it, is among the names a wildcard bind takes by default.
        var buffer = [CChar](repeating: 0, count: 256)
        #expect(gethostname(&buffer, 255) == 0)
        let hostname = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
        #expect(WebAdmission.localMachineNames.contains(hostname), "\(WebAdmission.localMachineNames)")
        let real = WebAdmission(host: "0.0.0.0", port: 8080, token: nil)
        #expect(real.refusal(host: "\(hostname):8080", origin: nil, token: nil) == nil)
        #expect(real.refusal(host: "evil.example:8080", origin: nil, token: nil) == .host("evil.example:8080"))
        // A loopback bind does not look names up.
        #expect(WebAdmission(host: "127.0.0.1", port: 8080, token: nil).machineNames.isEmpty)
    }


    @Test("--web takes PORT, HOST:PORT and [IPV6]:PORT; anything else says how to write it")
    func endpoints() throws {
        #expect(try WebControlServer.endpoint("8080") == ("127.0.0.1", 8080))
        #expect(try WebControlServer.endpoint("0.0.0.0:9000") == ("0.0.0.0", 9000))
        #expect(try WebControlServer.endpoint("[::1]:8081") == ("::1", 8081))
        #expect(try WebControlServer.endpoint("[::]:8080") == ("::", 8080))
        for bad in ["", "http", "host:", "1.2.3.4:70000", ":80"] {
            #expect(throws: WebError.self, "\(bad)") { try WebControlServer.endpoint(bad) }
        }
    }

    @Test("the server starts, serves and stops while every thread of Swift's shared pool is blocked (its tasks run on a thread of their own; its stop closes the sockets on the event loop)")
    func servesWithThePoolBlocked() throws {
        // Block more tasks than the pool has threads (one per core), as tests and callers that
        // wait synchronously can: before, the server's task never ran and start() gave up after 10 s.
        let release = DispatchSemaphore(value: 0), running = DispatchSemaphore(value: 0)
        let blockers = ProcessInfo.processInfo.activeProcessorCount + 2
        for _ in 0..<blockers {
            Task.detached {
                running.signal()
                release.wait()
            }
        }
        defer { for _ in 0..<blockers { release.signal() } }
        // Until the pool's threads are taken (the test's own thread is one of them).
        for _ in 0..<max(1, ProcessInfo.processInfo.activeProcessorCount - 1) { _ = running.wait(timeout: .now() + 5) }
        let started = ContinuousClock.now
        let server = WebControlServer(options: .init(host: "127.0.0.1", port: 0))
        try server.start()
        defer { server.stop() }
        let port = try #require(server.port)
        #expect(try HTTPTestClient.get(port: port, "/").status == 200)
        #expect(ContinuousClock.now - started < .seconds(5), "started and answered in \(ContinuousClock.now - started)")
        // The end of Hummingbird's service resumes on the blocked pool: the stop closes the
        // listening socket itself once its graceful wait (0.5 s) is over. (Before, it waited 3 s
        // and returned with the port still listening.)
        let stopping = ContinuousClock.now
        server.stop()
        let took = ContinuousClock.now - stopping
        #expect(took < .seconds(2), "stopped in \(took)")
        #expect(throws: (any Error).self, "the port still takes connections after the stop") { try HTTPTestClient(port: port) }
    }

    @Test("the page's own files go only to this server's Host: a rebound name gets 403 for /, /app.js and /style.css; no token is needed for them")
    func pageFilesCheckTheHost() throws {
        let server = WebControlServer(options: .init(host: "127.0.0.1", port: 0, token: "s3cret"))
        try server.start()
        defer { server.stop() }
        let port = try #require(server.port)
        for path in ["/", "/app.js", "/style.css"] {
            let foreign = try HTTPTestClient.get(port: port, path, headers: ["Host": "evil.example:\(port)"])
            #expect(foreign.status == 403 && foreign.body.contains("Host 'evil.example:\(port)' is not this server"), "\(path): \(foreign.body)")
            #expect(try HTTPTestClient.get(port: port, path).status == 200, "\(path)")
            #expect(try HTTPTestClient.get(port: port, path, headers: ["Host": "localhost:\(port)"]).status == 200, "\(path)")
        }
    }

    @Test("bytes that are not HTTP get 400 at once and the connection is closed (not left to the idle timeout); the server serves on")
    func notHTTP() throws {
        let server = WebControlServer(options: .init(host: "127.0.0.1", port: 0, idleTimeout: 60))
        try server.start()
        defer { server.stop() }
        let port = try #require(server.port)
        let tlsHello: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03] + [UInt8](repeating: 0x41, count: 32)
        let garbage: [(String, [UInt8])] = [
            ("a word", Array("NONSENSE\r\n\r\n".utf8)), ("a TLS hello (https:// on the port)", tlsHello),
            ("control bytes", [0, 1, 2, 3, 10]), ("a header without a colon", Array("GET / HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n".utf8)),
            ("a request line of three words too many", Array("GET / HTTP/1.1 please now\r\n\r\n".utf8)),
        ]
        for (what, bytes) in garbage {
            let started = ContinuousClock.now
            let client = try HTTPTestClient(port: port)
            client.write(bytes)
            let answer = client.response(timeout: 10)
            #expect(answer.status == 400 && answer.body.contains("this is not an HTTP request"), "\(what): \(answer.head) \(answer.body)")
            #expect(HTTPTestClient.header("connection", in: answer.head) == "close", "\(what)")
            #expect(client.closes(within: 5), "\(what)")
            #expect(ContinuousClock.now - started < .seconds(5), "\(what)")    // the idle timeout is 60 s
        }
        // A good request, then garbage on the same connection: the request is answered, then the
        // connection closes (Hummingbird's own handling, once the first request went through).
        let client = try HTTPTestClient(port: port)
        client.write(Array("GET /style.css HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\nNONSENSE\r\n\r\n".utf8))
        let started = ContinuousClock.now
        #expect(client.response().status == 200)
        #expect(client.closes(within: 5))
        #expect(ContinuousClock.now - started < .seconds(5))
        // The page and a WebSocket upgrade still work (the guard stepped out of their way).
        #expect(try HTTPTestClient.get(port: port, "/").status == 200)
        #expect(try HTTPTestClient.upgrade(port: port, "/ws").status == 101)
    }

    @Test("the timeline picture: a lane per layer, bars at their samples, fades as slopes, manual cues marked, the playhead")
    func picture() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-web-picture")
        let timeline = try Self.pictured(in: temp)
        let svg = TimelinePicture(timeline: timeline, playhead: 72000, selected: "bell", width: 960).svg
        // The scale the page reads, and the intro's bar from sample 48000 to 240000 on it.
        let x0 = try #require(attribute("data-x0", in: svg).flatMap(Double.init))
        let perPixel = try #require(attribute("data-samples-per-pixel", in: svg).flatMap(Double.init))
        let intro = try #require(svg.range(of: #"data-cue="intro""#).map { String(svg[$0.lowerBound...].prefix(900)) })
        let points = try #require(attribute("points", in: intro)).split(separator: " ").map { $0.split(separator: ",").compactMap { Double($0) } }
        #expect(points.count == 4)
        #expect(abs(points[0][0] - (x0 + 48000 / perPixel)) < 0.1 && abs(points[3][0] - (x0 + 240000 / perPixel)) < 0.1)
        #expect(abs(points[1][0] - points[0][0] - 48000 / perPixel) < 0.1)     // a 1 s fade-in slope
        #expect(abs(points[3][0] - points[2][0] - 24000 / perPixel) < 0.1)     // a 0.5 s fade-out slope
        #expect(intro.contains(#"data-start="48000""#) && intro.contains(#"class="fade""#))
        // The manual cue: after the placed ones, dashed, flagged, highlighted as selected.
        let bell = try #require(svg.range(of: #"data-cue="bell""#).map { String(svg[$0.lowerBound...].prefix(900)) })
        #expect(bell.contains("stroke-dasharray") && bell.contains(#"class="manual""#) && bell.contains("#fde047") && bell.contains(">GO bell<"))
        #expect(svg.contains(#"data-layer="fx &amp; &lt;sfx&gt;""#))
        let playhead = try #require(svg.range(of: #"id="playhead""#).map { String(svg[$0.lowerBound...].prefix(200)) })
        let playheadX = try #require(attribute("x1", in: playhead).flatMap(Double.init))
        #expect(abs(playheadX - (x0 + 72000 / perPixel)) < 0.1)
        #expect(!playhead.contains("hidden"))
        #expect(TimelinePicture(timeline: timeline).svg.contains(#"visibility="hidden""#))
    }

    @Test("fades and crossfades in the picture: each a slope of its own over its samples, the crossfading cues crossing in an X on one lane")
    func crossfadePicture() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-web-crossfade")
        let format = StreamFormat(sampleRate: 48000, channelCount: 1)
        try FileFixtures.writeWAV(path: temp.file("a.wav"), samples: Signals.constant(0.1, frames: 48000 * 4), format: format)
        // a: 1 s to 5 s, fading in over 0.5 s. b: after a with a 1 s crossfade (4 s to 8 s),
        // fading out over 0.25 s. c: on its own lane from 2 s, no fades at all.
        try FileFixtures.writeText(path: temp.file("show.yaml"), """
            channels: 1
            layers: { music: {}, fx: {} }
            cues:
              - { name: a, layer: music, file: a.wav, at: 1, fade_in: 0.5 }
              - { name: b, layer: music, file: a.wav, after: a, crossfade: 1, fade_out: 0.25 }
              - { name: c, layer: fx, file: a.wav, at: 2 }
            """)
        let timeline = try Session.load(path: temp.file("show.yaml")).timeline(rate: 48000)
        let b = try #require(timeline.cues.first { $0.name == "b" })
        #expect(b.start == 192_000 && b.crossfadeIn == 48000 && timeline.cues[0].crossfadeOut == 48000)
        let svg = TimelinePicture(timeline: timeline).svg
        let x0 = try #require(attribute("data-x0", in: svg).flatMap(Double.init))
        let perPixel = try #require(attribute("data-samples-per-pixel", in: svg).flatMap(Double.init))
        func x(_ sample: Double) -> Double { x0 + sample / perPixel }
        /// Each `<line class="kind" …>` of cue `name`'s group: its samples and its two ends.
        func lines(_ kind: String, of name: String) throws -> [(samples: Int, from: (Double, Double), to: (Double, Double))] {
            let group = try #require(svg.range(of: "data-cue=\"\(name)\"").map { String(svg[$0.lowerBound...].prefix { $0 != "\n" }) })
            return group.components(separatedBy: "<line class=\"\(kind)\"").dropFirst().map { line in
                let value = { (name: String) in self.attribute(name, in: line).flatMap(Double.init) ?? .nan }
                return (Int(value("data-samples")), (value("x1"), value("y1")), (value("x2"), value("y2")))
            }
        }
        func near(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 0.1 }
        let lane0Top = TimelinePicture.axisHeight + 6, lane0Bottom = TimelinePicture.axisHeight + TimelinePicture.laneHeight - 6

        // a: its fade-in rises from 1 s to 1.5 s; its end falls under b's crossfade, 4 s to 5 s.
        let aFades = try lines("fade", of: "a"), aCross = try lines("crossfade", of: "a")
        #expect(aFades.count == 1 && aCross.count == 1, "\(aFades) \(aCross)")
        #expect(aFades[0].samples == 24000 && near(aFades[0].from.0, x(48000)) && near(aFades[0].to.0, x(72000)))
        #expect(near(aFades[0].from.1, lane0Bottom) && near(aFades[0].to.1, lane0Top))           // rising
        #expect(aCross[0].samples == 48000 && near(aCross[0].from.0, x(192_000)) && near(aCross[0].to.0, x(240_000)))
        #expect(near(aCross[0].from.1, lane0Top) && near(aCross[0].to.1, lane0Bottom))           // falling
        // b: its crossfade rises over the same second (4 s to 5 s): the two cross in an X.
        let bCross = try lines("crossfade", of: "b"), bFades = try lines("fade", of: "b")
        #expect(bCross.count == 1 && bFades.count == 1, "\(bCross) \(bFades)")
        #expect(bCross[0].samples == 48000 && near(bCross[0].from.0, x(192_000)) && near(bCross[0].to.0, x(240_000)))
        #expect(near(bCross[0].from.1, lane0Bottom) && near(bCross[0].to.1, lane0Top))
        // …and its own fade-out falls over its last 0.25 s (7.75 s to 8 s).
        #expect(bFades[0].samples == 12000 && near(bFades[0].from.0, x(372_000)) && near(bFades[0].to.0, x(384_000)))
        #expect(near(bFades[0].from.1, lane0Top) && near(bFades[0].to.1, lane0Bottom))
        // The bars: a from 1 s to 5 s, b from 4 s to 8 s, both on the music lane; the envelope's
        // corners where the slopes are.
        func points(_ name: String) throws -> [[Double]] {
            let group = try #require(svg.range(of: "data-cue=\"\(name)\"").map { String(svg[$0.lowerBound...].prefix { $0 != "\n" }) })
            return try #require(attribute("points", in: group)).split(separator: " ").map { $0.split(separator: ",").compactMap { Double($0) } }
        }
        let a = try points("a"), bPoints = try points("b")
        #expect(near(a[0][0], x(48000)) && near(a[1][0], x(72000)) && near(a[2][0], x(192_000)) && near(a[3][0], x(240_000)), "\(a)")
        #expect(near(bPoints[0][0], x(192_000)) && near(bPoints[1][0], x(240_000)) && near(bPoints[2][0], x(372_000))
                && near(bPoints[3][0], x(384_000)), "\(bPoints)")
        #expect(svg.contains(#"data-cue="b" data-start="192000""#))
        // c has neither fades nor crossfades: a plain bar on the fx lane.
        #expect(try lines("fade", of: "c").isEmpty && lines("crossfade", of: "c").isEmpty)
        let c = try points("c")
        #expect(near(c[0][0], x(96000)) && near(c[1][0], c[0][0]) && near(c[0][1], lane0Bottom + TimelinePicture.laneHeight))
        // The crossfade is drawn apart from a fade: amber and dashed.
        #expect(svg.contains(#"<line class="crossfade" data-samples="48000""#) && svg.contains(##"stroke="#fbbf24" stroke-width="2" stroke-dasharray="4 2""##))
    }

    @Test("cues waiting for go, however short, stand in their strip clear of each other's labels")
    func waitingLabels() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-web-waiting")
        let format = StreamFormat(sampleRate: 48000, channelCount: 1)
        try FileFixtures.writeWAV(path: temp.file("long.wav"), samples: Signals.constant(0.1, frames: 48000 * 30), format: format)
        try FileFixtures.writeWAV(path: temp.file("click.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.5), format: format)
        try FileFixtures.writeText(path: temp.file("show.yaml"), """
            channels: 1
            layers: { bed: {}, fx: {} }
            cues:
              - { name: bed, layer: bed, file: long.wav, at: 0 }
              - { name: bell, layer: fx, file: click.wav, at: manual }
              - { name: horn, layer: fx, file: click.wav, at: manual }
              - { name: gong, layer: fx, file: long.wav, at: manual }
            """)
        let svg = TimelinePicture(timeline: try Session.load(path: temp.file("show.yaml")).timeline(rate: 48000)).svg
        func left(_ name: String) throws -> Double {
            let group = try #require(svg.range(of: "data-cue=\"\(name)\"").map { String(svg[$0.lowerBound...].prefix { $0 != "\n" }) })
            return try #require(attribute("points", in: group)?.split(separator: ",").first.flatMap { Double($0) })
        }
        let (bell, horn, gong) = (try left("bell"), try left("horn"), try left("gong"))
        #expect(horn - bell >= TimelinePicture.labelPixels("GO bell") - 0.5, "\(bell) \(horn)")
        #expect(gong - horn >= TimelinePicture.labelPixels("GO horn") - 0.5, "\(horn) \(gong)")
        // The whole strip still fits in the picture.
        let width = try #require(attribute("width", in: svg).flatMap(Double.init))
        let gongPoints = try #require(svg.range(of: #"data-cue="gong""#).flatMap { attribute("points", in: String(svg[$0.lowerBound...])) })
        let right = try #require(gongPoints.split(separator: " ").compactMap { $0.split(separator: ",").first.flatMap { Double($0) } }.max())
        #expect(right <= width)
        // Fired at 29.9 s (just before the bed ends), the bell's label stands on the placed side;
        // the strip of cues still waiting begins after it.
        var fired = try Session.load(path: temp.file("show.yaml")).timeline(rate: 48000)
        let bellIndex = try #require(fired.cues.firstIndex { $0.name == "bell" })
        _ = fired.fire(bellIndex, at: 48000 * 30 - 4800)
        let after = TimelinePicture(timeline: fired).svg
        func leftAfter(_ name: String) throws -> Double {
            let group = try #require(after.range(of: "data-cue=\"\(name)\"").map { String(after[$0.lowerBound...].prefix { $0 != "\n" }) })
            return try #require(attribute("points", in: group)?.split(separator: ",").first.flatMap { Double($0) })
        }
        #expect(after.contains(#"data-cue="bell" data-start="1435200""#))
        #expect(try leftAfter("horn") - leftAfter("bell") >= TimelinePicture.labelPixels("GO bell") - 0.5)
    }

    @Test("the same picture as PNG: drawn by librsvg at its size (or scaled), bars in their lane's colour; a file that cannot be written says so and leaves nothing")
    func png() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-web-png")
        let picture = TimelinePicture(timeline: try Self.pictured(in: temp))
        let svg = picture.svg
        let height = try #require(attribute("height", in: svg).flatMap(Double.init))
        let path = temp.file("timeline.png")
        let size = try picture.writePNG(to: path)
        #expect(size.width == 960 && size.height == Int(height.rounded()))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        // The intro's bar (lane 0, #3b82f6 at 70 % over the lane's #1f2937) from sample 48000 to
        // 240000; the lane itself before it.
        let x0 = try #require(attribute("data-x0", in: svg).flatMap(Double.init))
        let perPixel = try #require(attribute("data-samples-per-pixel", in: svg).flatMap(Double.init))
        let laneMiddle = Int32(TimelinePicture.axisHeight + TimelinePicture.laneHeight / 2)
        func pixel(_ x: Double, _ y: Int32, in file: String = path) -> [Int] {
            let value = lockstep_png_pixel(file, Int32(x.rounded()), y)
            return value < 0 ? [] : [Int(value >> 16) & 255, Int(value >> 8) & 255, Int(value) & 255]
        }
        func near(_ got: [Int], _ want: [Double]) -> Bool { got.count == 3 && zip(got, want).allSatisfy { abs(Double($0) - $1) <= 3 } }
        let bar = pixel(x0 + 150_000 / perPixel, laneMiddle + 8)
        #expect(near(bar, [0.7 * 0x3b + 0.3 * 0x1f, 0.7 * 0x82 + 0.3 * 0x29, 0.7 * 0xf6 + 0.3 * 0x37]), "\(bar)")
        let lane = pixel(x0 + 24_000 / perPixel, laneMiddle + 8)
        #expect(near(lane, [0x1f, 0x29, 0x37]), "\(lane)")
        // Twice the size.
        let large = try picture.writePNG(to: temp.file("large.png"), scale: 2)
        #expect(large.width == 1920 && large.height == 2 * size.height)
        #expect(near(pixel(2 * (x0 + 150_000 / perPixel), 2 * (laneMiddle + 8), in: temp.file("large.png")), bar.map(Double.init)))
        // A folder that does not exist: an error naming the file; nothing left in the folder.
        let before = try FileManager.default.contentsOfDirectory(atPath: temp.path).sorted()
        #expect {
            try picture.writePNG(to: temp.file("missing/timeline.png"))
        } throws: { error in
            "\(error)".contains("missing/timeline.png")
        }
        #expect(throws: TimelinePicture.PNGError.self) { try picture.writePNG(to: path, scale: 0) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path).sorted() == before)
    }

    /// The session both picture tests draw, resolved at 48 kHz: `intro` on `music` from 1 s to 5 s
    /// (fading in over 1 s, out over 0.5 s), `bell` on `fx & <sfx>` waiting for go.
    static func pictured(in temp: TemporaryTestDirectory) throws -> SessionTimeline {
        let format = StreamFormat(sampleRate: 48000, channelCount: 1)
        try FileFixtures.writeWAV(path: temp.file("a.wav"), samples: Signals.constant(0.1, frames: 48000 * 4), format: format)
        try FileFixtures.writeText(path: temp.file("show.yaml"), """
            channels: 1
            layers: { music: {}, "fx & <sfx>": {} }
            cues:
              - { name: intro, layer: music, file: a.wav, at: 1, fade_in: 1, fade_out: 0.5 }
              - { name: bell, layer: "fx & <sfx>", file: a.wav, at: manual }
            """)
        return try Session.load(path: temp.file("show.yaml")).timeline(rate: 48000)
    }

    /// The value of the first `name="…"` in `text`.
    func attribute(_ name: String, in text: String) -> String? {
        guard let start = text.range(of: " \(name)=\"") else { return nil }
        return String(text[start.upperBound...].prefix { $0 != "\"" })
    }
}
