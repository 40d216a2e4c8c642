import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension JACKTests {
    /// Editing during playback, live: `session run --control -` on a private dummy-driver jackd,
    /// typed edits while a bed plays, the master output captured by an independent JACK client.
    /// Each edit lands on the device sample its event names.
    @Suite("lockstep session run: edits during playback land on their replied sample (live)", .serialized)
    struct EditLiveTests {
        @Test("a cue added at a passed time joins in step on its edit's sample; a deleted bed stops there with its 5 ms fade; undo brings it back there; the saved file renders what played")
        func editsLand() throws { try retryingOnXruns("EditLiveTests", run) }

        func run(_ xrun: XrunFlag) throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-edit-live")
            let format = StreamFormat(sampleRate: 48000, channelCount: 1)
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.constant(0.125, frames: 48000), format: format)
            try FileFixtures.writeWAV(path: temp.file("tone.wav"), samples: Signals.constant(0.25, frames: 48000), format: format)
            try FileFixtures.writeText(path: temp.file("show.yaml"), """
                channels: 1
                layers: { bed: {}, fx: {} }
                cues:
                  - { name: bed, layer: bed, file: bed.wav, at: 0, loop: forever }

                """)
            let server = try JACKServer(period: 256)
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 30)
            try capture.start()
            let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name,
                                         "--client-name", "edit-live", "--connect", capture.portNames[0],
                                         "--control", "-", "--json-events"], withInput: true)
            defer { if running.isRunning { running.send(SIGKILL) } }
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
            usleep(300_000)
            #expect(running.send(line: "add name=tone layer=fx file=tone.wav at=0 loop=forever", awaiting: "added tone"),
                    "\(running.errorOutputSoFar)")
            usleep(400_000)
            #expect(running.send(line: "delete bed", awaiting: "deleted bed"), "\(running.errorOutputSoFar)")
            usleep(400_000)
            #expect(running.send(line: "undo", awaiting: "undid delete"), "\(running.errorOutputSoFar)")
            usleep(400_000)
            #expect(running.send(line: "save", awaiting: "saved "), "\(running.errorOutputSoFar)")
            // The bed loops forever: the run plays on until it is told to stop.
            capture.stop()
            running.send(SIGINT)
            let result = running.wait(timeout: 20)
            #expect(result.status == 130, "\(result.stderr)")
            // An xrun breaks the capture's timeline: set before the checks it may excuse.
            xrun.set(capture.xrunCount > 0)

            let events = result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.filter { $0["kind"] as? String == "cue/edited" }
            #expect(events.map { $0["cue"] as? String } == ["tone", "bed", "bed"], "\(events)")
            let samples = events.compactMap { $0["sampleTime"] as? Int }.map(Int64.init)
            try #require(samples.count == 3)
            let live = capture.channel(0)
            func at(_ sampleTime: Int64, _ offset: Int = 0) throws -> Float {
                let index = try #require(capture.recordedIndex(atFrameTime: sampleTime))
                return live[index + offset]
            }
            // The tone joins in step (its time, 0, has passed) on its edit's sample.
            #expect(try at(samples[0], -1) == 0.125 && at(samples[0]) == 0.375, "tone at \(samples[0])")
            // The bed stops on its delete's sample: a 5 ms (240-sample) fade, then the tone alone.
            let around = try (-2...242).map { try at(samples[1], $0) }
            // (The fade's first sample is at full gain, its next one below.)
            #expect(around[1] == 0.375 && around[3] < 0.375 && around[241] > 0.25 && around[242] == 0.25,
                    "delete at \(samples[1]): \(around)")
            // Undo: the bed is back in step on the undo's sample.
            #expect(try at(samples[2], -1) == 0.25 && at(samples[2]) == 0.375, "undo at \(samples[2])")
            let saved = try String(contentsOfFile: temp.file("show.yaml"), encoding: .utf8)
            #expect(saved == """
                channels: 1
                layers: { bed: {}, fx: {} }
                cues:
                  - { name: bed, layer: bed, file: bed.wav, at: 0, loop: forever }
                  - { name: tone, layer: fx, file: tone.wav, at: 0, loop: forever }

                """, "\(saved)")
        }
    }
}
