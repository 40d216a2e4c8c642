import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension JACKTests {
    /// `override timecodeOutputEnabled off|on` during `session run --ltc-out --mtc-out`: the LTC
    /// port goes silent and MTC stops; switched on, LTC sounds again and MTC starts with a full
    /// frame — captured by an independent JACK client and MIDI recorder.
    @Suite("lockstep session run: the timecode output override", .serialized)
    struct TimecodeOverrideTests {
        @Test("timecodeOutputEnabled off: the LTC port is silent and no MTC goes out (from a few periods after the reply); on: LTC again, MTC from a full frame")
        func timecodeOutput() throws { try retryingOnXruns("TimecodeOverrideTests", run) }

        func run(_ xrun: XrunFlag) throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-tc-override")
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.constant(0.125, frames: 48000 * 10),
                                      format: StreamFormat(sampleRate: 48000, channelCount: 1))
            try FileFixtures.writeText(path: temp.file("show.yaml"), "channels: 1\ncues:\n  - { name: bed, file: bed.wav, at: 0 }\n")
            let server = try JACKServer(period: 256)
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 20)
            try capture.start()
            let recorder = try JACKMIDIRecorder(server: server)
            try recorder.start()
            let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name, "--client-name", "tc-override",
                                         "--no-connect", "--ltc-out", capture.portNames[0], "--mtc-out", recorder.portName,
                                         "--control", "-"], withInput: true)
            defer { if running.isRunning { running.send(SIGKILL) } }
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil }, "\(running.errorOutputSoFar)")
            usleep(500_000)
            let offAt = try #require(capture.currentFrameTime)
            #expect(running.send(line: "override timecodeOutputEnabled off", awaiting: "timecodeOutputEnabled off"), "\(running.errorOutputSoFar)")
            usleep(600_000)
            let onAt = try #require(capture.currentFrameTime)
            #expect(running.send(line: "override timecodeOutputEnabled on", awaiting: "timecodeOutputEnabled on"), "\(running.errorOutputSoFar)")
            usleep(600_000)
            let end = try #require(capture.currentFrameTime)
            running.closeInput()
            running.send(SIGINT)
            let result = running.wait(timeout: 20)
            recorder.stop()
            capture.stop()
            xrun.set(capture.xrunCount > 0)
            #expect(result.status == 130, "\(result.stderr)")
            // (A reply lands within a few periods; the LTC queue fades over its volume ramp.)
            let settle = UInt32(48000 / 10)
            let ltc = capture.channel(0)
            func samples(_ from: UInt32, _ to: UInt32) -> ArraySlice<Float> {
                guard let a = capture.recordedIndex(atFrameTime: Int64(from)), let b = capture.recordedIndex(atFrameTime: Int64(to)), a < b else { return [] }
                return ltc[a..<b]
            }
            let before = samples(offAt &- 24000, offAt), silent = samples(offAt &+ settle, onAt), after = samples(onAt &+ settle, end)
            #expect(before.contains { $0 != 0 } && after.contains { $0 != 0 }, "LTC before \(before.count), after \(after.count)")
            #expect(!silent.isEmpty && silent.allSatisfy { $0 == 0 }, "LTC while off: \(silent.filter { $0 != 0 }.count) of \(silent.count) samples not silent")
            let mtc = recorder.events
            let whileOff = mtc.filter { Int32(bitPattern: $0.frame &- (offAt &+ settle)) >= 0 && Int32(bitPattern: $0.frame &- onAt) < 0 }
            #expect(whileOff.isEmpty, "\(whileOff.count) MTC messages while off")
            let again = mtc.first { Int32(bitPattern: $0.frame &- onAt) >= 0 }
            #expect(again?.bytes.prefix(5) == [0xF0, 0x7F, 0x7F, 0x01, 0x01], "the first MTC message after on: \(again.map { "\($0.bytes)" } ?? "none")")
            #expect(mtc.contains { Int32(bitPattern: $0.frame &- onAt) >= 0 && $0.bytes.first == 0xF1 })
            print("TimecodeOverrideTests: \(silent.count) LTC samples silent while off, 0 MTC messages; MTC again from a full frame")
        }
    }
}
