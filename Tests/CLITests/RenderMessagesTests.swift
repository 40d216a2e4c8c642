import Foundation
import Lockstep
import LockstepControl
import LockstepSchema
import LockstepTestSupport
import Testing

/// `session render` with MIDI and network cues: `--midi-out` writes what the MIDI cues send into
/// a Standard MIDI File with one tick a sample, read back by an independent reader (Python's
/// mido); `--json` lists every message with its sample.
@Suite("session render: MIDI and network cues on their samples")
struct RenderMessagesTests {
    static let show = MIDICueFixtures.show + """
          - { name: osc, type: network, destination: "127.0.0.1:9", message: "/cue/12/go 1 0.5 \\"a b\\"", with: hit3 }
          - { name: late, type: midi, program: 7, at: 3 }
          - { name: last, type: midi, cc: 7, value: 1, at: 3.5 }
        """

    /// (absolute tick, hex bytes) of every message in a file, as mido reads it, and the seconds
    /// mido puts each on through the file's tempo.
    static func mido(_ path: String) throws -> (division: Int, events: [(tick: Int, seconds: Double, hex: String)]) {
        let script = """
            import mido, sys
            f = mido.MidiFile(sys.argv[1])
            print(f.ticks_per_beat)
            tick, seconds, tempo = 0, 0.0, 500000
            for m in f.tracks[0]:
                tick += m.time
                seconds += mido.tick2second(m.time, f.ticks_per_beat, tempo)
                if m.type == 'set_tempo': tempo = m.tempo
                if not m.is_meta: print(tick, repr(seconds), m.hex())
            """
        let result = try CLI.run(["-c", script, path], executable: "/usr/bin/python3")
        guard result.status == 0 else { throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: result.stderr]) }
        let lines = result.stdout.split(separator: "\n")
        let events = lines.dropFirst().map { line in
            let words = line.split(separator: " ", maxSplits: 2)
            return (Int(words[0])!, Double(words[1])!, String(words[2]))
        }
        return (Int(lines.first ?? "") ?? 0, events)
    }

    @Test("--midi-out: each MIDI cue's message on the sample its audio starts on (tick = sample, read by mido); --json lists the network cue's message on its sample")
    func onTheirSamples() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-render-messages")
        try FileFixtures.writeWAV(path: temp.file("hit.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.5),
                                  format: StreamFormat(sampleRate: 48000, channelCount: 1))
        try FileFixtures.writeText(path: temp.file("show.yaml"), Self.show)
        let run = try CLI.run(["session", "render", temp.file("show.yaml"), "-o", temp.file("out.wav"), "--go", "hit2@1.2345",
                               "--midi-out", temp.file("out.mid")])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("MIDI cues: 5 messages written to \(temp.file("out.mid"))"), "\(run.stdout)")
        #expect(run.stdout.contains("network cue osc: /cue/12/go 1 0.5 \"a b\" to 127.0.0.1:9 at 0:01.485 (sample 71256)"), "\(run.stdout)")
        let audio = try FileFixtures.readFloat(path: temp.file("out.wav"))
        let onsets = audio.indices.filter { audio[$0] >= 0.5 && ($0 == 0 || audio[$0 - 1] < 0.5) }
        #expect(onsets == [24000, 59256, 71256], "\(onsets)")
        let (division, events) = try Self.mido(temp.file("out.mid"))
        #expect(division == 24000)
        #expect(events.map(\.hex) == ["91 3C 64", "F0 7F 01 02 7F 01 31 32 F7", "E0 64 40", "C0 07", "B0 07 01"], "\(events)")
        // One tick a sample, through the tempo.
        #expect(events.map(\.tick) == onsets + [3 * 48000, 168000], "\(events.map(\.tick))")
        #expect(events.map { Int(($0.seconds * 48000).rounded()) } == onsets + [3 * 48000, 168000])
        #expect(events.allSatisfy { abs($0.seconds * 48000 - Double($0.tick)) < 1e-3 })
        // Lockstep's own reader reads it the same.
        let own = try StandardMIDIFile(path: temp.file("out.mid")).events
        #expect(own.map { Int64(($0.seconds * 48000).rounded()) } == (onsets + [3 * 48000, 168000]).map(Int64.init))

        let json = try CLI.run(["session", "render", temp.file("show.yaml"), "-o", temp.file("out2.wav"), "--go", "hit2@1.2345",
                                "--duration", "3", "--json"])
        let report = try JSONSchema.decode(SessionRenderReport.self, from: json.stdout)
        let messages = try #require(report.messages, "\(json.stdout)")
        #expect(messages.map(\.cue) == ["light", "desk", "bend", "osc"])
        #expect(messages.map(\.sampleTime) == [24000, 59256, 71256, 71256] && messages.map(\.position) == [24000, 59256, 71256, 71256])
        #expect(messages[3].kind == "network" && messages[3].destination == "127.0.0.1:9" && messages[3].message == "/cue/12/go 1 0.5 \"a b\"")
        #expect(messages[0].bytes == "91 3C 64")
        // Without --midi-out the summary says how to write them.
        #expect(try CLI.run(["session", "render", temp.file("show.yaml"), "-o", temp.file("out3.wav"), "--duration", "1"]).stdout
            .contains("MIDI cues: 1 message not written; --midi-out FILE.mid writes them on their samples"))
    }

    @Test("a MIDI cue that is the session's last, on a render block's boundary, is written on its sample")
    func lastOnABoundary() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-render-messages-end")
        try FileFixtures.writeWAV(path: temp.file("hit.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.5),
                                  format: StreamFormat(sampleRate: 48000, channelCount: 1))
        // 49 152 = 12 blocks of 4096: the render's natural end, and where the last cue is.
        try FileFixtures.writeText(path: temp.file("show.yaml"), """
            channels: 1
            cues:
              - { name: tick, file: hit.wav, at: 0 }
              - { name: last, type: midi, program: 3, at: 49152 samples }

            """)
        let run = try CLI.run(["session", "render", temp.file("show.yaml"), "-o", temp.file("out.wav"), "--json"])
        let report = try JSONSchema.decode(SessionRenderReport.self, from: run.stdout)
        #expect(report.render.frames == 49152 && report.messages?.map(\.sampleTime) == [49152], "\(run.stdout) \(run.stderr)")
    }

    @Test("--midi-out refuses standard output and an input's path; a failed render leaves no MIDI file")
    func refusals() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-render-messages-bad")
        try FileFixtures.writeWAV(path: temp.file("hit.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.5),
                                  format: StreamFormat(sampleRate: 48000, channelCount: 1))
        try FileFixtures.writeText(path: temp.file("show.yaml"), Self.show)
        let show = try String(contentsOfFile: temp.file("show.yaml"), encoding: .utf8)
        let dash = try CLI.run(["session", "render", temp.file("show.yaml"), "-o", temp.file("a.wav"), "--midi-out", "-"])
        #expect(dash.status == 64 && dash.stderr.contains("--midi-out takes a file to write"), "\(dash.stderr)")
        let input = try CLI.run(["session", "render", temp.file("show.yaml"), "-o", temp.file("a.wav"), "--midi-out", temp.file("show.yaml")])
        #expect(input.status != 0 && input.stderr.contains("--midi-out is the same file as the input"), "\(input.stderr)")
        #expect(try String(contentsOfFile: temp.file("show.yaml"), encoding: .utf8) == show)
        // A render that fails (a cue that is not there).
        let failed = try CLI.run(["session", "render", temp.file("show.yaml"), "-o", temp.file("b.wav"), "--go", "nothing@1",
                                  "--midi-out", temp.file("b.mid")])
        #expect(failed.status != 0 && !FileManager.default.fileExists(atPath: temp.file("b.mid")), "\(failed.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path).sorted() == ["hit.wav", "show.yaml"])
    }

    @Test("one tick a sample: the division and tempo for common rates, none for a rate with a large prime factor")
    func timing() {
        for rate in [8000, 22050, 32000, 44100, 48000, 88200, 96000, 176400, 192000, 384000] {
            guard let (division, tempo) = StandardMIDIFile.sampleTiming(sampleRate: rate) else {
                Issue.record("no timing at \(rate) Hz")
                continue
            }
            #expect(division <= 0x7FFF && tempo <= 0xFF_FFFF && tempo * rate == division * 1_000_000, "\(rate): \(division), \(tempo)")
        }
        #expect(StandardMIDIFile.sampleTiming(sampleRate: 44101) == nil)
    }

    @Test("a gap longer than a delta time holds (2²⁸ ticks, 93 minutes at 48 kHz) is bridged: mido reads the next message on its exact tick")
    func longGap() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-render-messages-gap")
        let far: Int64 = 3 * 0x0FFF_FFFF + 12345
        let bytes = try StandardMIDIFile.bytes(of: [(0, [0x90, 60, 1]), (far, [0xC0, 7]), (far, [0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7])], sampleRate: 48000)
        try Data(bytes).write(to: URL(fileURLWithPath: temp.file("gap.mid")))
        let (_, events) = try Self.mido(temp.file("gap.mid"))
        #expect(events.map(\.tick) == [0, Int(far), Int(far)] && events.map(\.hex) == ["90 3C 01", "C0 07", "F0 7E 7F 06 01 F7"], "\(events)")
        #expect(throws: StandardMIDIFileError.self) { try StandardMIDIFile.bytes(of: [(-1, [0x90, 60, 1])], sampleRate: 48000) }
        #expect(throws: StandardMIDIFileError.self) { try StandardMIDIFile.bytes(of: [(0, [0xF0, 1, 2])], sampleRate: 48000) }
        #expect(throws: StandardMIDIFileError.self) { try StandardMIDIFile.bytes(of: [(0, [0xFE])], sampleRate: 48000) }
    }
}
