import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension JACKTests {
    /// `override timecodeInputEnabled off|on` during `session run --chase ltc:PORT`: reference LTC
    /// (libltc's encoder) played by a client of the test's own, with two jumps; the chase ignores
    /// the jump that comes while the override is off and follows the one after it is on again.
    @Suite("lockstep session run --chase: the timecode input override", .serialized)
    struct ChaseOverrideTests {
        static let step: Float = 1.0 / 4_194_304     // 2⁻²²

        @Test("timecodeInputEnabled off: a jump of the timecode is noted and not followed (the bed plays on unbroken); on again: the next jump relocates it")
        func timecodeInput() throws { try retryingOnXruns("ChaseOverrideTests", attempts: 3, run) }

        func run(_ xrun: XrunFlag) throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-chase-override")
            // A ramp from 1: each captured sample says which session sample plays.
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.ramp(frames: 48000 * 32, start: 1, step: Self.step),
                                      format: StreamFormat(sampleRate: 48000, channelCount: 1))
            try FileFixtures.writeText(path: temp.file("show.yaml"), """
                channels: 1
                timecode: { fps: 25, start: "01:00:00:00" }
                cues:
                  - { name: bed, file: bed.wav, at: tc 01:00:00:00 }

                """)
            // 2 s from 01:00:00:00, a jump to 01:00:12:00 for 2 s, a jump to 01:00:24:00.
            let reference = try LTCReference.samples(hours: 1, minutes: 0, seconds: 0, frame: 0, frames: 800, in: temp.path)
            let length = 1920
            let script = Array(reference[0..<(50 * length)]) + reference[(300 * length)..<(350 * length)] + reference[(600 * length)..<(650 * length)]
            let server = try JACKServer(period: 1024)
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 30)
            try capture.start()
            let player = try JACKSamplePlayer(server: server, samples: script, name: "ltc-tape")
            defer { player.stop() }
            let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name, "--client-name", "chaser",
                                         "--connect", capture.portNames[0], "--chase", "ltc:\(player.portName)", "--json-events",
                                         "--control", "-"], withInput: true)
            defer { if running.isRunning { running.send(SIGKILL) } }
            #expect(running.waitForErrorOutput(containing: "waiting for timecode", timeout: 20), "\(running.errorOutputSoFar)")
            player.play()
            let started = Date()
            #expect(running.waitForOutput(containing: "\"state\":\"lock\"", timeout: 5), "\(running.outputSoFar)")
            #expect(running.send(line: "override timecodeInputEnabled off", awaiting: "timecodeInputEnabled off"), "\(running.errorOutputSoFar)")
            Thread.sleep(until: started.addingTimeInterval(3))
            #expect(running.errorOutputSoFar.contains("the override timecodeInputEnabled is off: not following the timecode"), "\(running.errorOutputSoFar)")
            #expect(running.send(line: "override timecodeInputEnabled on", awaiting: "timecodeInputEnabled on"), "\(running.errorOutputSoFar)")
            Thread.sleep(until: started.addingTimeInterval(5.5))
            running.closeInput()
            running.send(SIGINT)
            let result = running.wait(timeout: 20)
            capture.stop()
            xrun.set(capture.xrunCount > 0 || player.xrunCount > 0 || result.stdout.contains("\"kind\":\"xrun\""))
            #expect(result.status == 130, "\(result.stderr)")
            let relocations = result.stdout.split(separator: "\n").filter { $0.contains("\"kind\":\"chase\"") && $0.contains("\"state\":\"relocate\"") }
            #expect(relocations.count == 2, "the lock's and the second jump's, not the first's: \(relocations)")
            // The bed as captured: one session sample after another, broken once (the second jump).
            let bed = capture.channel(0).compactMap { $0 == 0 ? nil : Int(($0 / Self.step).rounded()) - 1 }
            // (Up to 0.5 s after the relocation: the run's fade-out at its end follows.)
            let relocated = zip(bed, bed.dropFirst()).enumerated().first { $0.element.1 > $0.element.0 + 48000 }?.offset ?? bed.count
            let heard = bed.prefix(relocated + 24000)
            var breaks: [(from: Int, to: Int)] = []
            for (previous, next) in zip(heard, heard.dropFirst()) where next != previous + 1 { breaks.append((previous, next)) }
            #expect(breaks.count == 1, "\(breaks.prefix(5))")
            // It played on through the first jump (about 4 s of the bed when the second came, not
            // the 14 s the first jump would have made it), then went to 01:00:24:00 (session
            // sample 1 152 000), a cycle or so after it.
            #expect(breaks.first.map { $0.from > 3 * 48000 && $0.from < 5 * 48000 && $0.to >= 24 * 48000 && $0.to < 25 * 48000 } == true, "\(breaks)")
            print("ChaseOverrideTests: \(relocations.count) relocations; the bed broke once, \(breaks.first.map { "from session sample \($0.from) to \($0.to)" } ?? "")")
        }
    }
}
