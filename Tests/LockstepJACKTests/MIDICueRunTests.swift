import Foundation
import Lockstep
import LockstepControl
import LockstepFiles
import LockstepSchema
import LockstepTestSupport
import Testing

extension JACKTests {
    /// MIDI cues live: `session run --midi-out` sends each MIDI cue's message on the very frame
    /// its session sample plays on — the frame an audio cue placed on the same sample is heard —
    /// recorded by an independent JACK MIDI client beside an audio capture.
    @Suite("lockstep session run: MIDI cues go out on their sample", .serialized)
    struct MIDICueRunTests {
        static let text = MIDICueFixtures.show

        @Test("a timed MIDI cue, two a GO places and the timed one again after reset each go out once, on the frame of the audio placed with them; with mscOutputEnabled off a GO sends its pitch bend but not its MSC; session render with the GO on the same session sample writes them on the same session samples")
        func onTheAudiosFrame() throws { try retryingOnXruns("MIDICueRunTests", run) }

        func run(_ xrun: XrunFlag) throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-midi-cue")
            let format = StreamFormat(sampleRate: 48000, channelCount: 1)
            try FileFixtures.writeWAV(path: temp.file("hit.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.5), format: format)
            try FileFixtures.writeText(path: temp.file("show.yaml"), Self.text)
            let server = try JACKServer(period: 256)
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 20)
            try capture.start()
            let recorder = try JACKMIDIRecorder(server: server)
            try recorder.start()
            let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name, "--client-name", "midi-cues",
                                         "--connect", capture.portNames[0], "--midi-out", recorder.portName,
                                         "--control", "-", "--json-events"], withInput: true)
            defer { if running.isRunning { running.send(SIGKILL) } }
            #expect(recorder.wait(forCount: 1, timeout: 10), "\(running.errorOutputSoFar)")
            #expect(running.send(line: "go", awaiting: "go hit2 at"), "\(running.errorOutputSoFar)")
            #expect(recorder.wait(forCount: 3, timeout: 5), "\(running.errorOutputSoFar)")
            #expect(running.send(line: "reset", awaiting: "reset:"))
            #expect(recorder.wait(forCount: 4, timeout: 5), "the timed MIDI cue is not sent again after reset")
            #expect(capture.wait(timeout: 5) { Self.onsets(capture.channel(0)).count >= 4 })
            // MSC out switched off: the GO plays hit2 and hit3, and sends the pitch bend only.
            #expect(running.send(line: "override mscOutputEnabled off", awaiting: "mscOutputEnabled off"), "\(running.errorOutputSoFar)")
            #expect(running.send(line: "go", awaiting: "go hit2 at"), "\(running.errorOutputSoFar)")
            #expect(recorder.wait(forCount: 5, timeout: 5), "\(running.errorOutputSoFar)")
            #expect(capture.wait(timeout: 5) { Self.onsets(capture.channel(0)).count >= 6 })
            usleep(300_000)
            running.closeInput()
            running.send(SIGINT)
            let result = running.wait(timeout: 20)
            recorder.stop()
            capture.stop()
            xrun.set(capture.xrunCount > 0)

            let events = recorder.events
            let bend: [UInt8] = [0xE0, UInt8((8192 + 100) & 0x7F), UInt8((8192 + 100) >> 7)]
            #expect(events.map(\.bytes) == [[0x91, 60, 100], [0xF0, 0x7F, 0x01, 0x02, 0x7F, 0x01, 0x31, 0x32, 0xF7],
                                            bend, [0x91, 60, 100], bend],
                    "\(events)")
            // Each message on the frame of the impulse placed with it: tick, hit2, hit3, tick
            // again, then (MSC off) hit3's bend.
            let onsets = Self.onsets(capture.channel(0)).map { capture.frameTime(ofRecordedFrame: $0) }
            #expect(onsets.count == 6, "\(onsets)")
            #expect(events.map(\.frame) == Array(onsets.prefix(4)) + onsets.suffix(1), "MIDI frames \(events.map(\.frame)), audio \(onsets)")
            #expect(!result.stderr.contains("late"), "\(result.stderr)")
            // What --json-events says each MIDI cue started on is where it was recorded.
            let starts = result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.filter { $0["kind"] as? String == "cue/started" && ["light", "desk", "bend"].contains($0["cue"] as? String) }
            // (A MIDI cue is reported as it goes out: the overridden MSC is not.)
            #expect(starts.map { $0["cue"] as? String } == ["light", "desk", "bend", "light", "bend"], "\(starts)")
            #expect(starts.prefix(4).compactMap { ($0["sampleTime"] as? Int).map { UInt32(truncatingIfNeeded: $0) } } == Array(events.map(\.frame).prefix(4)))
            // `session render` of the same show, hit2 placed on the session sample the live GO
            // landed on: the same MIDI messages on the same session samples (light, desk, bend).
            let positions = starts.prefix(3).compactMap { ($0["position"] as? Int).map(Int64.init) }
            try #require(positions.count == 3, "\(starts)")
            let render = try CLI.run(["session", "render", temp.file("show.yaml"), "-o", temp.file("render.wav"),
                                      "--go", "hit2@\(positions[1]) samples", "--midi-out", temp.file("render.mid"), "--json"])
            #expect(render.status == 0, "\(render.stderr)")
            let rendered = try JSONSchema.decode(SessionRenderReport.self, from: render.stdout).messages ?? []
            #expect(rendered.map(\.cue) == ["light", "desk", "bend"] && rendered.map(\.sampleTime) == positions,
                    "render \(rendered.map { "\($0.cue)@\($0.sampleTime)" }), live \(positions)")
            let file = try StandardMIDIFile(path: temp.file("render.mid")).events
            #expect(file.map(\.bytes) == Array(events.map(\.bytes).prefix(3)) && file.map { Int64(($0.seconds * 48000).rounded()) } == positions)
        }

        /// The recorded frames where an impulse starts.
        static func onsets(_ samples: [Float]) -> [Int] {
            samples.indices.filter { samples[$0] >= 0.5 && ($0 == 0 || samples[$0 - 1] < 0.5) }
        }
    }
}
