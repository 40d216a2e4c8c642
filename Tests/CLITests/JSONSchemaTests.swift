import Foundation
import Lockstep
import LockstepFiles
import LockstepSchema
import LockstepTestSupport
import Testing

/// Every offline command's `--json` output decodes into its LockstepSchema type, carries
/// `"schema": 1`, names the same things the same way and rounds levels to 0.01 dB. (The live
/// commands — play, record, session run, ports — are checked against a JACK server in
/// LockstepJACKTests: PlayCLITests, RecordTests, SessionRunTests.)
@Suite("JSON schema of the offline commands")
struct JSONSchemaTests {
    let temp: TemporaryTestDirectory
    var dir: String { temp.path }
    /// A half-amplitude stereo tone: peak 20·log10(0.5) = −6.0206 dB, written as −6.02.
    let tone: String

    init() throws {
        temp = try TemporaryTestDirectory(prefix: "lockstep-json")
        tone = "\(temp.path)/tone.wav"
        let writer = try AudioFileWriter(path: tone, type: .wav,
                                         format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32))
        let samples = Signals.constant(0.5, frames: 24000, channels: 2)
        try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 24000) }
        try writer.close()
    }

    /// The top-level keys of one JSON object, to check the names the schema promises.
    func keys(_ line: some StringProtocol) throws -> Set<String> {
        Set(try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]).keys)
    }

    @Test("info --json: FileInfoReport, sampleRate/frames/seconds, peakDB rounded to 0.01")
    func info() throws {
        let r = try CLI.run(["info", "--json", tone])
        let silent = "\(temp.path)/silent.wav"
        let writer = try AudioFileWriter(path: silent, type: .wav, format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .int16))
        try [Float](repeating: 0, count: 480).withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 480) }
        try writer.close()
        let quiet = try CLI.run(["info", "--json", silent])
        #expect(quiet.stdout.contains("\"peakDB\":null"), "silence is null, not left out: \(quiet.stdout)")
        #expect(r.status == 0, "\(r.stderr)")
        let report = try JSONSchema.decode(FileInfoReport.self, from: r.stdout)
        #expect(report.schema == 1 && report.sampleRate == 48000 && report.frames == 24000 && report.seconds == 0.5)
        #expect(report.peakDB == -6.02)
        #expect(r.stdout.contains("\"peakDB\":-6.02,") && r.stdout.contains("\"schema\":1"))
        #expect(try keys(r.stdout).isSuperset(of: ["schema", "file", "sampleRate", "channels", "frames", "seconds", "peakDB"]))
        #expect(try !keys(r.stdout).contains("duration"))
    }

    @Test("render --json: RenderReport with the inputs, the file written and its peak")
    func render() throws {
        let out = "\(dir)/mix.flac"
        let r = try CLI.run(["render", tone, tone, "-o", out, "--gain", "-6", "--gain", "-6", "--sample-format", "s16", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n").count == 1)
        let report = try JSONSchema.decode(RenderReport.self, from: r.stdout)
        #expect(report.schema == 1 && report.file == out && report.inputs == [tone, tone])
        #expect(try keys(r.stdout).contains("file") && !keys(r.stdout).contains("output"), "the file written is 'file', as in every report")
        #expect(report.frames == 24000 && report.seconds == 0.5 && report.sampleRate == 48000 && report.channels == 2)
        #expect(report.fileType == "flac" && report.sampleFormat == "s16" && !report.clipped)
        // 2 × 0.5 at −6 dB each: 0.5012, −6.0 dB (s16 rounding moves it below 0.01 dB).
        #expect(report.peakDB == -6.0 || report.peakDB == -6.01, "\(String(describing: report.peakDB))")
        #expect(try AudioFileReader(path: out).frameCount == 24000)
        // --json with -o -: standard output carries the audio.
        let refused = try CLI.run(["render", tone, "-o", "-", "--json"])
        #expect(refused.status == 64 && refused.stderr.contains("--json prints on standard output"))
    }

    @Test("session check --json: TimelineReport; a broken session: SessionCheckFailure")
    func sessionCheck() throws {
        let path = "\(dir)/show.yaml"
        try "layers:\n  music: { gain: -3.3333dB }\ncues:\n  - { name: one, layer: music, file: tone.wav, at: 0.5 }\n  - { name: two, layer: music, file: tone.wav, after: one }\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let r = try CLI.run(["session", "check", path, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let report = try JSONSchema.decode(TimelineReport.self, from: r.stdout)
        #expect(report.schema == 1 && report.valid && report.sampleRate == 48000)
        #expect(report.cues.map(\.start) == [24000, 48000] && report.cues.map(\.frames) == [24000, 24000])
        #expect(report.cues.first?.startSeconds == 0.5 && report.end == 72000 && report.endSeconds == 1.5)
        #expect(report.layers.first { $0.name == "music" }?.gainDB == -3.33)
        try "cues:\n  - { name: one, file: nope.wav, at: 0 }\n".write(toFile: path, atomically: true, encoding: .utf8)
        let bad = try CLI.run(["session", "check", path, "--json"])
        #expect(bad.status == 1)
        let failure = try JSONSchema.decode(SessionCheckFailure.self, from: bad.stdout)
        #expect(failure.schema == 1 && !failure.valid && failure.errors.count == 1 && failure.errors[0].line == 2)
    }

    @Test("session render --json: SessionRenderReport, the render and the timeline it followed")
    func sessionRender() throws {
        let path = "\(dir)/show.yaml"
        try "cues:\n  - { name: one, file: tone.wav, at: 0 }\n  - { name: bell, file: tone.wav, at: manual }\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let out = "\(dir)/show.wav"
        let r = try CLI.run(["session", "render", path, "-o", out, "--go", "bell@1:00.25", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let report = try JSONSchema.decode(SessionRenderReport.self, from: r.stdout)
        #expect(report.schema == 1 && report.render.file == out && report.render.inputs == [path])
        #expect(report.render.frames == 60 * 48000 + 12000 + 24000 && report.render.sampleRate == 48000)
        #expect(report.render.peakDB == -6.02)
        let bell = try #require(report.timeline.cues.first { $0.name == "bell" })
        #expect(bell.start == Int64(60 * 48000 + 12000) && bell.manual && bell.afterGoFrames == 0)
        #expect(report.messages == nil)   // (no MIDI or network cue)
    }

    @Test("ControlUpdate and ControlStatus round-trip through the schema; an OSC reply keeps QLab's three keys")
    func controlTypes() throws {
        let update = ControlUpdate(.discontinuity, sampleTime: 4800,
                                   discontinuity: DiscontinuityRecord(kind: "xrun", sampleTime: 4800, frames: 256, queues: ["a"]))
        #expect(try JSONSchema.decode(ControlUpdate.self, from: update.json) == update)
        #expect(update.json.contains(#""discontinuity":{"frames":256,"kind":"xrun","queues":["a"],"sampleTime":4800}"#))
        #expect(update.json.contains("\"schema\":1"))
        let reply = ControlReply.ok("/go", .integer(1), summary: "")
        #expect(try keys(reply.json) == ["address", "status", "data"])
        let status = ControlStatus(state: "playing", position: 48000, seconds: 1, sampleTime: 96000, sampleRate: 48000,
                                   cues: [], next: nil, playhead: nil,
                                   layers: [.init(name: "music", gainDB: -3.33333, peakDB: -.infinity)], discontinuities: 0)
        #expect(status.layers[0].gainDB == -3.33 && status.layers[0].peakDB == nil)
        let data = try ControlValue(encoding: status)
        #expect(try JSONSchema.decode(ControlStatus.self, from: data.json) == status)
    }

    /// Numbers at the edges of what JSON text keeps, for ``ControlValue/init(encoding:)``.
    struct Edges: Encodable {
        var doubles: [Double] = [0, -0.0, 1, 3, -2.5, 0.1, 1.0 / 3, 1e15, 9_007_199_254_740_993, 1e16, 9.2e18, 9.3e18, 1e20, 1e300, 5e-324,
                                 .infinity, -.infinity, .nan, -96.33, 48000.5]
        var floats: [Float] = [0.1, -0.5, 16_777_217, 1e-7, 3.4e38, .infinity]
        var integers: [Int64] = [.min, -1, 0, .max]
        var unsigned: [UInt64] = [0, .max]
        var small: [Int8] = [.min, .max]
        var text = "a \"quoted\" / slash\n\t\r\u{8}\u{c}\u{1}\u{1f}\u{7f} é 😀 \u{2028}"
        var keys: [String: Int] = ["a10": 1, "a2": 2, "B": 3, "a": 4, "_x": 5, "b": 6, "A": 7, "é": 8, "z": 9, "a-b": 10, "": 11]
        var missing: Int? = nil
        var flag = true
        var nested: [[String: [Double?]]] = [["a": [1, nil, 2.5]], [:]]
        var empty: [String: Int] = [:]
        var keyedByNumber: [Int: String] = [2: "b", 1: "a"]
    }

    @Test("ControlValue(encoding:) gives what the value's JSON text decodes to, and its json the text JSONEncoder writes, for every schema type and edge value")
    func controlValueEncoding() throws {
        func throughText(_ value: some Encodable) throws -> ControlValue {
            let encoder = JSONEncoder()
            encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            return try JSONDecoder().decode(ControlValue.self, from: encoder.encode(value))
        }
        func check(_ name: String, _ value: some Encodable) throws {
            let direct = try ControlValue(encoding: value), text = try throughText(value)
            #expect(direct == text, "\(name): \(direct.json) against \(text.json)")
            #expect(direct.json == JSONSchema.line(direct), "\(name)")
            for reply in [ControlReply.ok("/go", direct, summary: ""), .ok("status", nil, summary: ""), .error("/x", .unknownCue, "no \"x\"")] {
                #expect(reply.json == JSONSchema.line(reply), "\(name)")
            }
        }
        try check("edges", Edges())
        for (name, value) in Self.everyType { try check(name, value) }
    }

    /// One of every schema type, every optional field filled, for the naming rules.
    static var everyType: [(String, any Encodable)] {
        let gap = DiscontinuityRecord(kind: "xrun", sampleTime: 96000, frames: 256, queues: ["a"], detail: 1500)
        let outputs = [OutputCompensation(port: "lockstep:out_1", connections: ["system:playback_1"], latency: 512, delay: 0,
                                          outages: [OutputOutage(destination: "hall:to_slave_1", netSlave: "hall", lostSampleTime: 100,
                                                                 rejoinedSampleTime: 300, rejoinedAs: "hall-01:to_slave_1", frames: 200)],
                                          changes: [OutputLatencyChange(sampleTime: 400, latency: 1024, delay: 0)])]
        let rate = RateChangeRecord(sampleTime: 1000, sampleRate: 44100, position: 10, resumedSampleTime: 2000, resumedJACKFrame: 2000,
                                    fileFrames: [5])
        let cue = TimelineReport.Cue(name: "bell", layer: "fx", file: "bell.wav", manual: true, start: 48000, end: 96000, frames: 48000,
                                     gainDB: -3.3333, loop: 2, afterGoFrames: 0, rate: 48000)
        var timeline = TimelineReport(file: "s.yaml", sampleRate: 48000, channels: 2,
                                      layers: [.init(name: "fx", gainDB: -1.234, ports: ["system:playback_1"])], cues: [cue],
                                      automation: [.init(layer: "fx", start: 0, rampFrames: 4800, gainDB: -6.006, rate: 48000)],
                                      end: 96000)
        timeline.outputs = OutputAlignmentReport(server: "default", latency: 512,
                                                 outputs: [.init(output: "out_1", destination: "system:playback_1", latency: 512,
                                                                 delay: 0, netSlave: "hall")])
        let render = RenderReport(file: "mix.wav", inputs: ["a.wav"], frames: 48000, sampleRate: 48000, channels: 2,
                                  sampleFormat: "f32", fileType: "wav", encoding: "WAV 32-bit float", peakDB: -0.456, clipped: false)
        let recording = PlayReport.Recording(file: "take.wav", frames: 10, startSampleTime: 5, lostFrames: 0)
        var osc = OSCStatistics()
        osc.goLatency = OSCStatistics.GoLatency([1, 2, 3])
        var result = CommandResult(position: 48000, rate: 48000, sampleTime: 96000)
        result.cue = "bell"; result.layer = "fx"; result.start = 48000; result.end = 96000; result.placed = ["bell"]
        result.playhead = "horn"; result.cues = ["bell"]; result.silentFrom = 50000; result.requestedSampleTime = 95000
        result.lateFrames = 1000
        result.setLevel(gainDB: -6.006, rampFrames: 4800, rate: 48000)
        return [
            ("FileInfoReport", FileInfoReport(file: "a.wav", container: "WAV", encoding: "PCM", sampleFormat: "s16", codec: "PCM s16",
                                              lossy: false, bitrate: 1, bitrateExact: true, bitrateMode: "constant", lengthExact: false,
                                              estimatedFrames: 10, sampleRate: 48000, channels: 1, frames: 10, peak: 0.5,
                                              peakDB: -6.0206, nonFiniteSamples: 0, partialFrameBytes: 0)),
            ("RenderReport", render),
            ("TimelineReport", timeline),
            ("SessionCheckFailure", SessionCheckFailure(errors: [.init(file: "s.yaml", line: 1, column: 1, kind: "syntax", message: "m")])),
            ("SessionRenderReport", SessionRenderReport(render: render, timeline: timeline)),
            ("PlayReport", PlayReport(startSampleTime: 1, startJACKFrame: 1, frames: 10, sampleRate: 48000, discontinuities: [gap],
                                      layers: [.init(file: "a.wav", peakDB: -6.0206, ports: ["x"], skippedFrames: 0)],
                                      interrupted: false, server: "s", error: "e", recording: recording, playbackLatency: 512,
                                      outputDelays: [0], outputs: outputs, rateChanges: [rate],
                                      callbackTime: .init(cycles: 10, medianSeconds: 0.002, p99Seconds: 0.003, maxSeconds: 0.004,
                                                          overPeriodCycles: 0),
                                      renderHelper: .init(sharedCycles: 10, helperChunks: 20))),
            ("RecordReport", RecordReport(file: "take.wav", frames: 10, startSampleTime: 1, sampleRate: 48000,
                                          channelPeakDB: [-6.0206, -.infinity], lostFrames: 0, skippedFrames: 0, discontinuities: [gap],
                                          interrupted: false, error: "e",
                                          callbackTime: .init(cycles: 10, medianSeconds: 0.002, p99Seconds: 0.003, maxSeconds: 0.004,
                                                              overPeriodCycles: 0))),
            ("SessionRunReport", SessionRunReport(file: "s.yaml", startSampleTime: 1, from: 0, endPosition: 48000, sampleRate: 48000,
                                                  interrupted: false, discontinuities: [gap], cues: [cue], error: "e", server: "s",
                                                  lateStarts: [.init(position: 0, sampleTime: 1, skippedFrames: 2)], rateChanges: [rate],
                                                  osc: osc, oscTCP: osc,
                                                  midi: MIDIInputSummary(port: "p", latency: 64, received: 1, matched: 1, unmatched: 0,
                                                                         broken: 0, refused: 0, dropped: 0, lastBroken: "f0"),
                                                  web: WebStatistics(), recording: recording, outputs: outputs,
                                                  callbackTime: .init(cycles: 10, medianSeconds: 0.002, p99Seconds: 0.003,
                                                                      maxSeconds: 0.004, overPeriodCycles: 0),
                                                  renderHelper: .init(sharedCycles: 10, helperChunks: 20))),
            ("PortsReport", PortsReport(ports: [.init(name: "system:playback_1", client: "system", type: "audio", direction: "input",
                                                      isPhysical: true, connections: [])],
                                        netSlaves: [.init(name: "hall", toSlave: ["hall:to_slave_1"], fromSlave: [], playbackLatency: 512,
                                                          captureLatency: 512)])),
            ("ControlUpdate", ControlUpdate(.cueLevel, cue: "bell", layer: "fx", file: "bell.wav", position: 48000, sampleTime: 96000,
                                            seconds: 1, gainDB: -6.006, state: "playing", frames: 10, sampleRate: 48000,
                                            discontinuity: gap)),
            ("ControlStatus", ControlStatus(state: "playing", position: 48000, seconds: 1, sampleTime: 96000, sampleRate: 48000,
                                            cues: [.init(name: "bell", number: 1, layer: "fx", state: "playing", start: 0, end: 10)],
                                            next: .init(name: "horn", inSeconds: 2, manual: true), playhead: "horn",
                                            layers: [.init(name: "fx", gainDB: -1.234, peakDB: -20.005)], discontinuities: 1)),
            ("CommandResult", result),
        ]
    }

    @Test("the naming rules hold in every type: xDB is a rounded dB scalar (per channel: channelPeakDB), frames/xFrames counts, seconds/xSeconds, xSampleTime, no old names")
    func namingRules() throws {
        /// Names the schema no longer uses, with what replaced them.
        let retired = ["decibels": "gainDB", "duration": "seconds", "length": "frames", "rate": "sampleRate",
                       "framesSkipped": "skippedFrames", "framesPlayed": "frames", "framesWritten": "frames",
                       "resumedAt": "resumedSampleTime", "resumedAtJACKFrame": "resumedJACKFrame", "lostAt": "lostSampleTime",
                       "rejoinedAt": "rejoinedSampleTime", "late": "lateFrames", "ramp": "rampFrames/rampSeconds",
                       "afterGo": "afterGoFrames"]
        var seen = Set<String>()
        func check(_ value: Any, key: String, path: String) {
            seen.insert(key)
            #expect(retired[key] == nil, "\(path): '\(key)' is now '\(retired[key] ?? "")'")
            if key.hasSuffix("DB") {
                let levels: [Any]
                if let array = value as? [Any] {
                    #expect(key.hasPrefix("channel"), "\(path): an array of levels is named channel…DB, '\(key)' is a scalar")
                    levels = array
                } else { levels = [value] }
                for level in levels where !(level is NSNull) {
                    let number = level as? Double
                    #expect(number.map { ($0 * 100).rounded() / 100 == $0 } == true, "\(path): \(level) is not dB rounded to 0.01")
                }
            }
            if key == "frames" || key.hasSuffix("Frames") || key == "sampleTime" || key.hasSuffix("SampleTime") || key == "sampleRate" {
                let values = (value as? [Any]) ?? [value]
                #expect(values.allSatisfy { ($0 as? NSNumber).map { Double(truncating: $0) == Double(Int64(truncating: $0)) } == true },
                        "\(path): '\(key)' is a whole number")
            }
            if key == "seconds" || key.hasSuffix("Seconds") { #expect(value is Double, "\(path): '\(key)' is a number") }
            if let object = value as? [String: Any] {
                for (k, v) in object { check(v, key: k, path: "\(path).\(k)") }
            } else if let array = value as? [Any] {
                for item in array { check(item, key: key, path: "\(path)[]") }
            }
        }
        for (name, value) in Self.everyType {
            let line = JSONSchema.line(value)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(name)")
            #expect(object["schema"] as? Int == 1, "\(name) carries schema 1")
            check(object, key: "", path: name)
        }
        #expect(seen.isSuperset(of: ["peakDB", "channelPeakDB", "gainDB", "skippedFrames", "rampFrames", "file", "state"]))
    }

    @Test("a level of −∞ (silence) is written as null, never left out, and decodes back")
    func silenceIsNull() throws {
        let info = FileInfoReport(file: "s.wav", container: "WAV", encoding: "PCM", sampleFormat: "s16", codec: "PCM s16",
                                  lossy: false, bitrate: nil, bitrateExact: true, bitrateMode: nil, lengthExact: true,
                                  estimatedFrames: nil, sampleRate: 48000, channels: 1, frames: 10, peak: 0, peakDB: -.infinity,
                                  nonFiniteSamples: 0, partialFrameBytes: 0)
        #expect(JSONSchema.line(info).contains("\"peakDB\":null"), "\(JSONSchema.line(info))")
        #expect(try JSONSchema.decode(FileInfoReport.self, from: JSONSchema.line(info)) == info)
        let record = RecordReport(file: "t.wav", frames: 10, startSampleTime: nil, sampleRate: 48000, channelPeakDB: [-.infinity, -.infinity],
                                  lostFrames: 0, skippedFrames: 0, discontinuities: [], interrupted: false, error: nil)
        #expect(JSONSchema.line(record).contains("\"peakDB\":null") && JSONSchema.line(record).contains("\"channelPeakDB\":[null,null]"), "\(JSONSchema.line(record))")
        #expect(try JSONSchema.decode(RecordReport.self, from: JSONSchema.line(record)) == record)
        let loud = RecordReport(file: "t.wav", frames: 10, startSampleTime: 0, sampleRate: 48000, channelPeakDB: [-12.345, -3.001],
                                lostFrames: 0, skippedFrames: 0, discontinuities: [], interrupted: false, error: nil)
        #expect(loud.peakDB == -3 && loud.channelPeakDB == [-12.35, -3])
        let layer = TimelineReport.Layer(name: "bed", gainDB: -.infinity, ports: [])
        #expect(JSONSchema.line(layer).contains("\"gainDB\":null"))
        // A reader of an object without the key gets −∞ too.
        #expect(try JSONSchema.decode(TimelineReport.Layer.self, from: #"{"name":"bed","ports":[]}"#).gainDB == nil)
    }
}
