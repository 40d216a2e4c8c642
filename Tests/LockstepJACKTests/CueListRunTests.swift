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
