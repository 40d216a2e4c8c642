import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension JACKTests {
    /// `session run --transport-master`: the capture client reads JACK transport
    /// (`jack_transport_query`) at every cycle, next to what the session played in it.
    @Suite("lockstep session run --transport-master: JACK transport follows the session", .serialized)
    struct TransportMasterTests {
        @Test("the transport rolls with the session, its frame the session sample playing at each cycle (after at most 4 cycles to settle on a start or a seek), and stops on a pause at the paused position")
        func transportMaster() throws { try retryingOnXruns("TransportMasterTests", run) }

        func run(_ xrun: XrunFlag) throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-transport-master")
            let step: Float = 1.0 / 65536
            try FileFixtures.writeWAV(path: temp.file("ramp.wav"), samples: Signals.ramp(frames: 48000 * 8, start: 1, step: step),
                                      format: StreamFormat(sampleRate: 48000, channelCount: 1))
            try FileFixtures.writeText(path: temp.file("show.yaml"), "channels: 1\ncues: [ { file: ramp.wav, at: 0 } ]\n")
            let server = try JACKServer(period: 256)
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 12)
            try capture.start()
            let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name, "--client-name", "master",
                                         "--connect", capture.portNames[0], "--transport-master", "--control", "-"], withInput: true)
            defer { if running.isRunning { running.send(SIGKILL) } }
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
            let rolled = capture.frames
            #expect(capture.wait(timeout: 10) { capture.frames > rolled + 48000 })
            #expect(running.send(line: "seek 4", awaiting: "seek to"))
            let sought = capture.frames
            #expect(capture.wait(timeout: 10) { capture.frames > sought + 48000 })
            #expect(running.send(line: "pause", awaiting: "pause"))
            let paused = capture.frames
            #expect(capture.wait(timeout: 10) { capture.frames > paused + 24000 })
            running.send(SIGINT)
            let result = running.wait(timeout: 20)
            capture.stop()
            xrun.set(capture.xrunCount > 0)
            #expect(result.status == 130, "\(result.stderr)")

            let master = capture.channel(0)
            // Per cycle: the session sample its first frame played (the ramp), and the transport.
            var runs: [(matched: Int, settling: Int)] = []
            var lastPosition: Int64?
            var mismatches: [String] = []
            var lastPlayed: Int64 = 0
            for cycle in capture.cycles where cycle.firstRecordedFrame < master.count {
                let value = master[cycle.firstRecordedFrame]
                let count = value / step
                guard value != 0, count == count.rounded() else { continue }
                let position = Int64(count) - 1
                lastPlayed = position
                // A new run: a start, or a seek (the position jumps).
                if lastPosition.map({ $0 + Int64(cycle.frames) != position }) ?? true { runs.append((0, 0)) }
                lastPosition = position
                if cycle.transportRolling && Int64(cycle.transportFrame) == position {
                    runs[runs.count - 1].matched += 1
                } else if runs[runs.count - 1].matched == 0 {
                    runs[runs.count - 1].settling += 1
                } else if mismatches.count < 5 {
                    mismatches.append("cycle at \(cycle.frameTime): transport \(cycle.transportRolling ? "rolling" : "stopped") at \(cycle.transportFrame), session \(position)")
                }
            }
            #expect(runs.count == 2 && runs.allSatisfy { $0.matched >= 150 && $0.settling <= 4 } && mismatches.isEmpty,
                    "runs (cycles matched, cycles before): \(runs); after matching: \(mismatches)")
            // After the pause: stopped, at the paused position (the pause's 5 ms fade after the
            // last exact ramp sample, so within a period of it).
            let last = try #require(capture.cycles.last)
            #expect(!last.transportRolling && abs(Int64(last.transportFrame) - lastPlayed) <= 512 + 240,
                    "transport \(last.transportRolling ? "rolling" : "stopped") at \(last.transportFrame); last played \(lastPlayed)")
        }
    }
}
