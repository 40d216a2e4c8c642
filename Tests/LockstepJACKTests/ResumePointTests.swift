import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension JACKTests {
    /// `--resume` of a killed run from where its journal last saw it (`--resume-at crash`), and
    /// of a run killed while paused: the bed, a ramp that says which of its samples plays, captured
    /// by a client of the test's.
    @Suite("lockstep session run --resume-at crash, and a paused run resumed paused", .serialized)
    struct ResumePointTests {
        static let step: Float = 1.0 / 65536

        /// The bed's session samples heard, in capture order; with `trimmed`, up to 0.1 s before
        /// the last one (a run that ends fades out: those no longer name their samples).
        static func positions(_ capture: JACKCapture, trimmed: Bool = false) -> [Int64] {
            let bed = capture.channel(0)
            let end = trimmed ? (bed.lastIndex { $0 != 0 } ?? 0) - 4800 : bed.count
            return bed[..<max(0, end)].filter { $0 != 0 }.map { Int64(($0 / step).rounded()) - 1 }
        }

        /// The session sample a resume note names (`… from 0:01.234 (sample N)` or `paused at … (sample N)`).
        static func resumedSample(in text: String) -> Int64? {
            guard let line = text.split(separator: "\n").first(where: { $0.contains("resumed the run journaled in") }),
                  let range = line.range(of: "(sample ") else { return nil }
            return Int64(line[range.upperBound...].prefix { $0.isNumber })
        }

        /// A server, a capture, the show (a bed on the capture's port) and its journal, and the
        /// first run playing the bed for a second.
        struct Run {
            let temp: TemporaryTestDirectory
            let server: JACKServer
            let capture: JACKCapture
            let journal: String
            let args: [String]
            let first: RunningCLI

            init(prefix: String) throws {
                temp = try TemporaryTestDirectory(prefix: prefix)
                server = try JACKServer(period: 1024)
                capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 30)
                try capture.start()
                try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.ramp(frames: 48000 * 30, start: 1, step: ResumePointTests.step),
                                          format: StreamFormat(sampleRate: 48000, channelCount: 1))
                let show = temp.file("show.yaml")
                try FileFixtures.writeText(path: show, "channels: 1\nlayers: { bed: { ports: [\(capture.portNames[0])] } }\ncues:\n  - { name: bed, layer: bed, file: bed.wav, at: 0 }\n")
                journal = temp.file("show.journal")
                args = ["session", "run", show, "--server", server.name, "--control", "-", "--journal", journal, "--no-connect"]
                first = try CLI.spawn(args, withInput: true)
                let capture = capture
                #expect(capture.wait(timeout: 10) { ResumePointTests.positions(capture).count > 48000 })
            }
        }

        @Test("--resume-at crash plays on from the journal's last moment: the bed again from that sample (at most 0.15 s before the kill), reported with a gap of 0")
        func fromTheCrash() throws { try retryingOnXruns("ResumePointTests.crash", attempts: 3, crash) }

        func crash(_ xrun: XrunFlag) throws {
            let run = try Run(prefix: "lockstep-resume-crash")
            let (capture, journal, args, first) = (run.capture, run.journal, run.args, run.first)
            defer { withExtendedLifetime(run.server) { if first.isRunning { first.send(SIGKILL) } } }
            first.send(SIGKILL)
            _ = first.wait(timeout: 10)
            let killedAt = try #require(Self.positions(capture).last)
            usleep(500_000)
            let second = try CLI.spawn(args + ["--resume", journal, "--resume-at", "crash"], withInput: true)
            defer { if second.isRunning { second.send(SIGKILL) } }
            #expect(second.waitForErrorOutput(containing: "from where the journal last saw it", timeout: 20), "\(second.errorOutputSoFar)")
            #expect(second.errorOutputSoFar.contains("a gap of 0 samples"), "\(second.errorOutputSoFar)")
            let resumed = try #require(Self.resumedSample(in: second.errorOutputSoFar), "\(second.errorOutputSoFar)")
            let heard = Self.positions(capture).count
            #expect(capture.wait(timeout: 10) { Self.positions(capture).count > heard + 24000 })
            second.send(SIGINT)
            _ = second.wait(timeout: 20)
            capture.stop()
            xrun.set(capture.xrunCount > 0 || capture.clockJumps > 0)
            let positions = Self.positions(capture, trimmed: true)
            // The first bed sample after the restart: the one the journal last saw, not far before the kill.
            let restart = try #require(positions.indices.dropFirst().first { positions[$0] != positions[$0 - 1] + 1 })
            #expect(positions[restart] == resumed, "the bed played on from \(positions[restart]); the resume said \(resumed)")
            #expect(resumed <= killedAt && killedAt - resumed < 48000 * 15 / 100, "killed at \(killedAt), resumed from \(resumed)")
            #expect(positions[restart...].indices.dropFirst().allSatisfy { positions[$0] == positions[$0 - 1] + 1 }, "the bed after the restart is not continuous")
        }

        @Test("a run killed while paused resumes paused at its position; 'resume' plays the bed on from that sample")
        func paused() throws { try retryingOnXruns("ResumePointTests.paused", attempts: 3, pausedRun) }

        func pausedRun(_ xrun: XrunFlag) throws {
            let run = try Run(prefix: "lockstep-resume-paused")
            let (capture, journal, args, first) = (run.capture, run.journal, run.args, run.first)
            defer { withExtendedLifetime(run.server) { if first.isRunning { first.send(SIGKILL) } } }
            #expect(first.send(line: "pause", awaiting: "pause"), "\(first.errorOutputSoFar)")
            // Journaled as paused, then killed.
            #expect(ThreadedTestDevice.wait(timeout: 10) {
                (try? String(contentsOfFile: journal, encoding: .utf8))?.split(separator: "\n").last { $0.contains("\"kind\":\"state\"") }?
                    .contains("\"isPaused\":true") == true
            })
            usleep(300_000)
            first.send(SIGKILL)
            _ = first.wait(timeout: 10)
            let second = try CLI.spawn(args + ["--resume", journal], withInput: true)
            defer { if second.isRunning { second.send(SIGKILL) } }
            #expect(second.waitForErrorOutput(containing: "paused at", timeout: 20), "\(second.errorOutputSoFar)")
            let resumed = try #require(Self.resumedSample(in: second.errorOutputSoFar), "\(second.errorOutputSoFar)")
            // Nothing plays until 'resume'.
            let heard = Self.positions(capture).count
            usleep(500_000)
            #expect(Self.positions(capture).count == heard, "the bed played before 'resume'")
            #expect(second.send(line: "resume", awaiting: "resume"), "\(second.errorOutputSoFar)")
            #expect(capture.wait(timeout: 10) { Self.positions(capture).count > heard + 24000 })
            second.send(SIGINT)
            _ = second.wait(timeout: 20)
            capture.stop()
            xrun.set(capture.xrunCount > 0 || capture.clockJumps > 0)
            let positions = Self.positions(capture, trimmed: true)
            // Where the pause's 5 ms fade-out began (its samples no longer name themselves): the
            // last of the bed's samples in a row before it.
            let before = Array(positions.prefix(heard))
            let pausedAt = try #require(before.indices.dropFirst().last { before[$0] == before[$0 - 1] + 1 }.map { before[$0] })
            #expect(resumed > pausedAt - 2048 && resumed <= pausedAt + 2048, "paused at about \(pausedAt), resumed at \(resumed)")
            #expect(positions.count > heard && positions[heard] == resumed, "after 'resume' the bed plays from \(positions.count > heard ? positions[heard] : -1), the resume said \(resumed)")
        }
    }
}
