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
        #expect(message(#"{"command":"gain","layer":"bed","gainDB":0,"ramp":-1}"#)?.hasPrefix(#"gain: "ramp" is 0 to 3600 seconds"#) == true)
        #expect(message(#"{"command":"gain","layer":"bed","gainDB":0,"ramp":"later"}"#)?.hasPrefix(#"gain: "ramp" is 0 to 3600 seconds"#) == true)
        #expect(message(#"{"command":"seek","time":"soon"}"#)?.hasPrefix("seek needs a \"time\"") == true)
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
        let wildcard = WebAdmission(host: "0.0.0.0", port: 8080, token: nil)
        #expect(wildcard.refusal(host: "show.local:8080", origin: "http://show.local:8080", token: nil) == nil)
        #expect(wildcard.refusal(host: "show.local:8080", origin: "http://evil.example", token: nil) == .origin("http://evil.example"))
        #expect(WebAdmission.Refusal.token.status == 401 && WebAdmission.Refusal.origin("x").status == 403
                && WebAdmission.Refusal.full(32).status == 503)
    }

    @Test("--web takes PORT, HOST:PORT and [IPV6]:PORT; anything else says how to write it")
    func endpoints() throws {
        #expect(try WebControlServer.endpoint("8080") == ("127.0.0.1", 8080))
        #expect(try WebControlServer.endpoint("0.0.0.0:9000") == ("0.0.0.0", 9000))
        #expect(try WebControlServer.endpoint("[::1]:8081") == ("::1", 8081))
        for bad in ["", "http", "host:", "1.2.3.4:70000", ":80"] {
            #expect(throws: WebError.self, "\(bad)") { try WebControlServer.endpoint(bad) }
        }
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
