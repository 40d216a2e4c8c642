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
        #expect(report.schema == 1 && report.output == out && report.inputs == [tone, tone])
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
        #expect(report.schema == 1 && report.render.output == out && report.render.inputs == [path])
        #expect(report.render.frames == 60 * 48000 + 12000 + 24000 && report.render.sampleRate == 48000)
        #expect(report.render.peakDB == -6.02)
        let bell = try #require(report.timeline.cues.first { $0.name == "bell" })
        #expect(bell.start == Int64(60 * 48000 + 12000) && bell.manual && bell.afterGo == 0)
    }

    @Test("ControlUpdate and ControlStatus round-trip through the schema; an OSC reply keeps QLab's three keys")
    func controlTypes() throws {
        let update = ControlUpdate(.discontinuity, sampleTime: 4800, detail: "xrun",
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
}
