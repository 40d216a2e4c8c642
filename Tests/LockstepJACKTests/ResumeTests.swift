import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension JACKTests {
    /// Crash resume: `session run --journal` killed with SIGKILL at random points, each time
    /// resumed with `--resume`; a capture of each layer's own outputs (independent of the runs:
    /// the test's client) checks the bed, the cues and the gains across every restart.
    @Suite("lockstep session run --resume: a show killed 20 times plays on where it would be", .serialized)
    struct ResumeTests {
        /// Samples a bed ramp step.
        static let step: Float = 1.0 / 65536
        static let bedStart = 1
        /// The server's period: long enough that a stall of the machine rarely makes a cycle late
        /// (a lost cycle is a silence of its own, which the count of silences would not expect).
        static let period = 1024
        /// With `LOCKSTEP_RESUME_SPREAD=S`, the kills are spread over the first S seconds of the
        /// 2-minute show (each S/20 apart, ± half that) instead of 0.4 to 0.9 s apart; for a long
        /// proof, not for CI.
        static let spread = ProcessInfo.processInfo.environment["LOCKSTEP_RESUME_SPREAD"].flatMap(Double.init).map { min(100, max(20, $0)) }

        @Test("SIGKILLed at 20 random points and resumed each time: the bed plays every sample on its session sample by the JACK clock (0 off) after each restart, each reported gap covers the silence, a cue fired is never fired again, the waiting cue stays at the playhead, a fade's level holds")
        func killAndResume() throws { try retryingOnXruns("ResumeTests", attempts: 4, run) }

        func run(_ xrun: XrunFlag) throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-resume")
            let format = StreamFormat(sampleRate: 48000, channelCount: 1)
            // The bed says which of its samples plays; the pad is a level; the bell and the horn
            // are a ramp each (values told apart from the bed's by the channel).
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.ramp(frames: 48000 * 120, start: Self.bedStart, step: Self.step), format: format)
            try FileFixtures.writeWAV(path: temp.file("pad.wav"), samples: Signals.constant(0.25, frames: 48000), format: format)
            try FileFixtures.writeWAV(path: temp.file("bell.wav"), samples: Signals.ramp(frames: 4800, start: 1, step: Self.step), format: format)
            try FileFixtures.writeWAV(path: temp.file("horn.wav"), samples: Signals.ramp(frames: 4800, start: 10_000, step: Self.step), format: format)
            let server = try JACKServer(period: Self.period)
            let capture = try JACKCapture(server: server, sources: [], channels: 3, maxSeconds: Self.spread == nil ? 120 : 180)
            try capture.start()
            let ports = capture.portNames
            let show = temp.file("show.yaml")
            try FileFixtures.writeText(path: show, """
                channels: 1
                layers: { bed: { ports: [\(ports[0])] }, pad: { ports: [\(ports[1])] }, fx: { ports: [\(ports[2])] } }
                cues:
                  - { name: bed, layer: bed, file: bed.wav, at: 0 }
                  - { name: pad, layer: pad, file: pad.wav, at: 0, loop: forever }
                  - { name: bell, layer: fx, file: bell.wav, at: manual }
                  - { name: dim, type: fade, target: pad, level: -6.0206, duration: 0.2, at: manual }
                  - { name: horn, layer: fx, file: horn.wav, at: manual }

                """)
            let journal = temp.file("show.journal")
            func spawn(_ extra: [String]) throws -> RunningCLI {
                try CLI.spawn(["session", "run", show, "--server", server.name, "--client-name", "resumed", "--control", "-",
                               "--journal", journal, "--no-connect", "--json-events"] + extra, withInput: true)
            }
            var random = SystemRandomNumberGenerator()
            var gaps: [Int64] = []
            var runs: [RunningCLI] = []
            defer { for run in runs where run.isRunning { run.send(SIGKILL) } }
            let kills = 20
            for index in 0...kills {
                let running = try spawn(index == 0 ? [] : ["--resume", journal])
                runs.append(running)
                if index > 0 {
                    #expect(running.waitForErrorOutput(containing: "resumed the run journaled in", timeout: 20), "run \(index): \(running.errorOutputSoFar)")
                    if let gap = Self.gap(in: running.errorOutputSoFar) { gaps.append(gap) }
                }
                // Playing, and journaled as such (its journal replaced the last run's).
                #expect(ThreadedTestDevice.wait(timeout: 20) {
                    (try? String(contentsOfFile: journal, encoding: .utf8))?.contains("\"kind\":\"clock\"") == true || !running.isRunning
                } && running.isRunning, "run \(index): \(running.errorOutputSoFar)")
                switch index {
                case 3: #expect(running.send(line: "go", awaiting: "go bell"), "\(running.errorOutputSoFar)")
                case 8: #expect(running.send(line: "go", awaiting: "go dim"), "\(running.errorOutputSoFar)")
                case 12, kills:
                    // The waiting cue is still at the playhead; the cues fired are done.
                    #expect(running.send(line: "status", awaitingOutput: "\"playhead\":\"horn\""), "run \(index): \(running.outputSoFar)")
                    // A controller that asks is told it was resumed, and how.
                    let status = running.outputSoFar.split(separator: "\n").last { $0.contains("\"event\":\"status\"") } ?? ""
                    #expect(status.contains("\"resumed\":{") && status.contains("\"clock\":\"jack\""), "\(status.suffix(300))")
                default: break
                }
                guard index < kills else { break }
                // Journaled a while (a clock record at least), then killed at a random point.
                // (Past the resumed start's lead: every run is heard before it is killed.)
                let apart = Self.spread.map { UInt32($0 / Double(kills) * 1_000_000) }
                usleep(apart.map { UInt32.random(in: $0 / 2...$0 * 3 / 2, using: &random) } ?? UInt32.random(in: 400_000...900_000, using: &random))
                running.send(SIGKILL)
                _ = running.wait(timeout: 10)
            }
            let last = try #require(runs.last)
            #expect(last.send(line: "go", awaiting: "go horn"), "\(last.errorOutputSoFar)")
            usleep(400_000)
            last.send(SIGINT)
            let result = last.wait(timeout: 20)
            #expect(result.status == 130, "\(result.stderr)")
            capture.stop()
            xrun.set(capture.xrunCount > 0 || capture.clockJumps > 0 || runs.contains { $0.outputSoFar.contains("\"kind\":\"xrun\"") })
            #expect(gaps.count == kills, "every resume reports its gap: \(gaps)")
            check(capture, gaps: gaps, kills: kills)

            // Once the run ended normally there is nothing to resume.
            // (Its journal went with it: nothing was left to recover.)
            let ended = try CLI.run(["session", "run", show, "--server", server.name, "--resume", journal], timeout: 20)
            #expect(ended.status == 66 && ended.stderr.contains("no journal at"), "\(ended.stderr)")
        }

        /// The gap a resume note reports (`a gap of N samples`).
        static func gap(in text: String) -> Int64? {
            guard let range = text.range(of: "a gap of ") else { return nil }
            return Int64(text[range.upperBound...].prefix { $0.isNumber || $0 == "-" })
        }

        func check(_ capture: JACKCapture, gaps: [Int64], kills: Int) {
            let bed = capture.channel(0), pad = capture.channel(1), fx = capture.channel(2)
            // The bed: every sample heard is sample (frame time − offset) of the session, one
            // offset for the whole capture, whatever the kills.
            var offset: Int64?
            var misplaced: [String] = []
            var heard = 0
            var silences: [Int64] = []
            var lastHeard: Int64?
            // (Up to the last run's fade-out when it is interrupted.)
            let end = (bed.lastIndex { $0 != 0 } ?? 0) - 4800
            for index in bed.indices where index < end && bed[index] != 0 {
                let position = Int64((bed[index] / Self.step).rounded()) - Int64(Self.bedStart)
                let time = capture.extendedFrameTime(ofRecordedFrame: index)
                if let lastHeard, time - lastHeard > 1 { silences.append(time - lastHeard - 1) }
                lastHeard = time
                heard += 1
                let here = time - position
                if offset == nil { offset = here }
                if here != offset, misplaced.count < 5 { misplaced.append("frame \(time): session sample \(position), \(here - offset!) off") }
            }
            #expect(misplaced.isEmpty && heard > 48000 * 5, "\(heard) bed samples heard; misplaced: \(misplaced)")
            // Each restart is one silence, covered by the gap its resume reported (the journal's
            // last moment is the sample playing then: up to two periods not yet rendered), which
            // exceeds it by the time between that moment and the kill.
            #expect(silences.count == kills, "silences: \(silences)")
            print("ResumeTests: \(heard) bed samples heard over \(kills) kills, every one on one session↔JACK mapping (\(misplaced.count) off); silences \(silences.min() ?? 0)…\(silences.max() ?? 0) frames, each within its reported gap")
            for (silence, gap) in zip(silences, gaps) {
                #expect(silence <= gap + 2 * Int64(Self.period) && gap - silence < 48000 / 4, "silence of \(silence) frames, reported gap \(gap)")
            }
            // The bell and the horn: each started once (its first sample heard once).
            let starts = fx.enumerated().filter { $0.element == Self.step }.count
            let hornStarts = fx.filter { $0 == 10_000 * Self.step }.count
            #expect(starts == 1 && hornStarts == 1, "bell started \(starts) times, horn \(hornStarts)")
            // The pad: at 0.25 until the fade, at 0.125 from its end on — through every restart.
            let padEnd = (pad.lastIndex { $0 != 0 } ?? 0) - 4800
            let levels = pad[..<max(0, padEnd)].filter { $0 != 0 }
            let firstDim = levels.firstIndex { $0 < 0.2 }
            #expect(firstDim != nil, "the fade was not heard")
            if let firstDim {
                let after = Array(levels[firstDim...].drop { $0 > 0.125 + 1e-6 })
                let off = after.indices.filter { abs(after[$0] - 0.125) >= 1e-6 }
                #expect(!after.isEmpty && off.isEmpty, "the pad after the fade: \(off.count) of \(after.count) off, e.g. \(off.prefix(8).map { "\($0): \(after[$0])" })")
                #expect(levels[..<firstDim].allSatisfy { $0 >= 0.2 && $0 <= 0.25 })
            }
        }
    }
}
