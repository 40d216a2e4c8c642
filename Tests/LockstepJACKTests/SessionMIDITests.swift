import Foundation
import Lockstep
import LockstepControl
import LockstepFiles
import LockstepTestSupport
import Testing

extension JACKTests {
    /// `lockstep session run --midi` as a real process on a dummy jackd (period 256), driven by a
    /// JACK MIDI client sending note, program change and MIDI Show Control on chosen frames; its
    /// output captured from the graph and compared with `lockstep session render --midi-file` of
    /// the same MIDI.
    @Suite("MIDI control (the built binary, live, period 256)", .serialized)
    struct SessionMIDITests {
        static let text = """
            channels: 1
            layers: { bed: {}, fx: {} }
            cues:
              - { name: bed, layer: bed, file: bed.wav, at: 0 }
              - { name: c1, number: 1, layer: fx, file: hit.wav, at: manual }
              - { name: c2, number: 2, layer: fx, file: hit.wav, at: manual }
              - { name: c3, number: 3, layer: fx, file: hit.wav, at: manual }
              - { name: c4, number: 4, layer: fx, file: hit.wav, at: manual }
              - { name: c5, number: 5, layer: fx, file: hit.wav, at: manual }
              - { name: c6, number: 6, layer: fx, file: hit.wav, at: manual }
            triggers:
              - { note: 60, do: go }
              - { program: 3, channel: 2, do: go }
              - { msc: go }

            """

        @Test("each cue sounds 512 samples after its MIDI event's frame, on the sample its reply names; the capture equals the --midi-file render")
        func liveEqualsRender() throws { try retryingOnXruns("SessionMIDITests", attempts: Self.attempts, run) }

        @Test("without --midi-latency each GO is carried out as it comes: its cue sounds from the first cycle after its note, never before it, on the sample its reply names")
        func asTheyCome() throws { try retryingOnXruns("SessionMIDITests.asTheyCome", attempts: Self.attempts, asTheyComeRun) }

        /// Runs of each scenario at most: on this 2-core machine the server xruns (0 frames lost)
        /// in about half the runs of these two, more than in the other live suites (cause not
        /// found yet); each run after an xrun is strict again.
        static let attempts = 5

        /// The show's files, a server (period 256), a capture of the output, a MIDI sender, and
        /// `session run --midi` with `options` as client `client`, once it said `saying` and its
        /// MIDI input is connected.
        static func start(client: String, options: [String], saying: String) throws
            -> (TemporaryTestDirectory, JACKServer, JACKCapture, JACKMIDISender, RunningCLI) {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-midi")
            let format = StreamFormat(sampleRate: 48000, channelCount: 1)
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.constant(0.125, frames: 48000 * 10), format: format)
            try FileFixtures.writeWAV(path: temp.file("hit.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.5), format: format)
            try FileFixtures.writeText(path: temp.file("show.yaml"), Self.text)
            let server = try JACKServer(period: 256)
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 12)
            try capture.start()
            let sender = try JACKMIDISender(server: server)
            try sender.start()
            let run = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name, "--client-name", client,
                                     "--connect", capture.portNames[0], "--midi", "--midi-connect", sender.portName]
                                    + options + ["--duration", "2.5", "--json", "--double-go", "0"])
            #expect(run.waitForErrorOutput(containing: saying, timeout: 15))
            try server.waitForConnection(sender.portName, to: "\(client):midi_in")
            return (temp, server, capture, sender, run)
        }

        func asTheyComeRun(_ xrun: XrunFlag) throws {
            let (temp, server, capture, sender, run) = try Self.start(client: "midi-next", options: [],
                                                                      saying: "commands are carried out as they come")
            defer { withExtendedLifetime((temp, server)) {} }
            // Six notes a fifth of a second apart, at any phase of the period.
            let base = sender.frameTime &+ 4800
            var generator = SeededRandom(seed: 5)
            for k in 0..<6 { sender.send([0x90, 60, 100], atFrame: base &+ UInt32(k * 9600) &+ UInt32(generator.next() % 256)) }
            #expect(sender.waitUntilSent(timeout: 5))
            let result = run.wait(timeout: 30)
            #expect(result.status == 0, "\(result.stderr)")
            let line = try #require(result.stdout.split(separator: "\n").last)
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let start = try #require(summary["startSampleTime"] as? Int)
            let gaps = summary["discontinuities"] as? [[String: Any]] ?? []
            #expect(!gaps.contains { $0["kind"] as? String == "underrun" }, "\(gaps)")
            xrun.set(capture.xrunCount > 0 || gaps.contains { $0["kind"] as? String == "xrun" })
            #expect(gaps.isEmpty, "\(gaps)")
            let midi = try #require(summary["midi"] as? [String: Any])
            #expect(midi["latency"] == nil && midi["matched"] as? Int == 6, "\(midi)")
            // Each cue (c1…c6 in order) starts after its note and at most two periods later (the
            // next cycle, or the one after when the reader missed it), and sounds there.
            let cues = try #require(summary["cues"] as? [[String: Any]])
            #expect(capture.waitForFrames(capture.frames + 2048, timeout: 5))
            let live = capture.channel(0)
            let origin = try #require(capture.recordedIndex(atFrameTime: Int64(start)))
            var offsets: [Int] = []
            for (k, frame) in sender.sentFrames.enumerated() {
                let note = Int(Int32(bitPattern: frame &- UInt32(truncatingIfNeeded: start)))
                let cue = try #require(cues.first { $0["name"] as? String == "c\(k + 1)" })
                let position = try #require(cue["start"] as? Int, "c\(k + 1): \(cue)")
                offsets.append(position - note)
                #expect(position >= note && position <= note + 512,
                        "c\(k + 1): note at \(note), cue at \(position)")
                #expect(live[origin + position - 1] == 0.125 && live[origin + position] == 0.625,
                        "c\(k + 1) at \(position): \(live[(origin + position - 2)...(origin + position + 2)])")
            }
            // A fixed placement would put every one exactly 512 after its note.
            print("session run --midi, as they come: note to cue start \(offsets) samples")
            #expect(offsets.contains { $0 != 512 }, "\(offsets)")
        }

        func run(_ xrun: XrunFlag) throws {
            let (temp, server, capture, sender, run) = try Self.start(client: "midi-live", options: ["--midi-latency", "512"],
                                                                      saying: "commands land 512 samples after their event")
            defer { withExtendedLifetime(server) {} }
            // Six GOs a fifth of a second apart, at any phase of the period; a broken message and one
            // no trigger answers between them.
            let base = sender.frameTime &+ 4800
            var generator = SeededRandom(seed: 7)
            let messages: [[UInt8]] = [[0x90, 60, 100], [0xC1, 3], ShowControlMessage(device: 1, command: 0x01, cueNumber: "4").bytes,
                                       [0x90, 60, 1], ShowControlMessage(device: 127, command: 0x01).bytes,
                                       ShowControlMessage(device: 127, command: 0x01, cueNumber: "3").bytes]
            for (k, message) in messages.enumerated() {
                sender.send(message, atFrame: base &+ UInt32(k * 9600) &+ UInt32(generator.next() % 256))
            }
            sender.send([0x90, 0x80, 1], atFrame: base &+ 200)
            sender.send([0x91, 61, 1], atFrame: base &+ 300)
            #expect(sender.waitUntilSent(timeout: 5))
            let result = run.wait(timeout: 30)
            #expect(result.status == 0, "\(result.stderr)")
            let line = try #require(result.stdout.split(separator: "\n").last)
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let start = try #require(summary["startSampleTime"] as? Int)
            let gaps = summary["discontinuities"] as? [[String: Any]] ?? []
            // A server xrun moves events to later cycles and breaks the capture's timeline; the
            // test's own sender writing a message after its frame is its cycle run late (one).
            xrun.set(capture.xrunCount > 0 || sender.lateMessages > 0 || gaps.contains { $0["kind"] as? String == "xrun" })
            #expect(sender.lateMessages == 0, "the test's sender wrote \(sender.lateMessages) messages after their frame")
            #expect(!gaps.contains { $0["kind"] as? String == "underrun" }, "\(gaps)")
            #expect(gaps.isEmpty, "\(gaps)")
            let midi = try #require(summary["midi"] as? [String: Any])
            #expect(midi["received"] as? Int == 8 && midi["matched"] as? Int == 6 && midi["broken"] as? Int == 1
                    && midi["unmatched"] as? Int == 1 && midi["dropped"] as? Int == 0, "\(midi)")

            // The six GOs, in the order sent: note → c1, program → c2, MSC GO 4 → c4, then the
            // playhead's cues after c4 (note → c5, MSC GO with no number → c6), and MSC GO 3 → c3
            // (after c6 the playhead is past the last cue).
            let frames = sender.sentFrames.filter { $0 != base &+ 200 && $0 != base &+ 300 }
            #expect(frames.count == 6)
            let expectedCue = ["c1", "c2", "c4", "c5", "c6", "c3"]
            let cues = try #require(summary["cues"] as? [[String: Any]])
            var positions: [Int] = []
            for (frame, name) in zip(frames, expectedCue) {
                let position = Int(Int32(bitPattern: frame &- UInt32(truncatingIfNeeded: start))) + 512
                positions.append(position)
                let cue = try #require(cues.first { $0["name"] as? String == name })
                #expect(cue["start"] as? Int == position, "\(name): \(cue)")
            }
            // Each sounds there in the capture.
            #expect(capture.waitForFrames(capture.frames + 2048, timeout: 5))   // the last cycle played is in
            let live = capture.channel(0)
            let origin = try #require(capture.recordedIndex(atFrameTime: Int64(start)))
            for position in positions {
                #expect(live[origin + position - 1] == 0.125 && live[origin + position] == 0.625,
                        "at \(position): \(live[(origin + position - 2)...(origin + position + 2)])")
            }

            // The same MIDI rendered offline: a file in which one tick is one sample, each event at
            // its session sample.
            var events = zip(frames, messages).map { (sample: Int(Int32(bitPattern: $0.0 &- UInt32(truncatingIfNeeded: start))), bytes: $0.1) }
            events.append((Int(Int32(bitPattern: (base &+ 300) &- UInt32(truncatingIfNeeded: start))), [0x91, 61, 1]))
            events.sort { $0.sample < $1.sample }
            try MIDIFileFixtures.write(MIDIFileFixtures.sampleExact(events), to: temp.file("show.mid"))
            let length = positions.max()! + 2000
            let render = try CLI.run(["session", "render", temp.file("show.yaml"), "-o", temp.file("render.wav"),
                                      "--midi-file", temp.file("show.mid"), "--duration", "\(length) samples",
                                      "--double-go", "0"])
            #expect(render.status == 0, "\(render.stderr)")
            let offline = try FileFixtures.readFloat(path: temp.file("render.wav"))
            #expect(offline.count == length)
            var mismatches = 0
            for i in 0..<length where live[origin + i] != offline[i] {
                if mismatches < 5 { print("sample \(i): live \(live[origin + i]) offline \(offline[i])") }
                mismatches += 1
            }
            #expect(mismatches == 0)
        }
    }
}
