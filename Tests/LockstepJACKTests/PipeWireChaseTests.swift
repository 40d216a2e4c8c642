import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

extension JACKTests.PipeWireTests {
    @Test("--chase mtc through a PipeWire rate change: the chaser reads the timecode again at the new rate, locks again, and plays every sample as the MTC source's own session does, 0 off")
    func chaseThroughRateChange() throws {
        let daemon = try PipeWireDaemon()
        let temp = try TemporaryTestDirectory(prefix: "lockstep-pw-chase-rate")
        let step: Float = 1.0 / 65536
        try FileFixtures.writeWAV(path: temp.file("ramp.wav"), samples: Signals.ramp(frames: 48000 * 30, start: 1, step: step),
                                  format: StreamFormat(sampleRate: 48000, channelCount: 1))
        // The source plays the ramp from session time 0 and sends MTC of it; the chaser plays the
        // same ramp at the timecode of session time 0: chased exactly, the two outputs are equal.
        let timecode = "timecode: { fps: 25, start: \"01:00:00:00\" }\n"
        try FileFixtures.writeText(path: temp.file("source.yaml"), timecode + "cues:\n  - { name: tape, file: ramp.wav, at: 0 }\n")
        try FileFixtures.writeText(path: temp.file("chaser.yaml"), timecode + "cues:\n  - { name: tape, file: ramp.wav, at: tc 01:00:00:00 }\n")
        func spawn(_ arguments: [String]) throws -> RunningCLI {
            try CLI.spawn([CLI.binary] + arguments + ["--start-server", "never", "--no-connect"],
                          environment: daemon.environment, executable: "/usr/bin/pw-jack")
        }
        // A MIDI input for the source's MTC to go to before the chaser's exists.
        let dump = try daemon.spawn("/usr/bin/pw-jack", ["/usr/bin/jack_midi_dump"])
        defer {
            kill(dump.process.processIdentifier, SIGKILL)    // (it ignores SIGTERM)
            dump.process.waitUntilExit()
        }
        usleep(500_000)
        let source = try spawn(["session", "run", temp.file("source.yaml"), "--client-name", "source", "--mtc-out", "midi-monitor:input"])
        defer { if source.isRunning { source.send(SIGKILL) } }
        usleep(1_000_000)
        #expect(source.isRunning, "\(source.errorOutputSoFar)")
        let chaser = try spawn(["session", "run", temp.file("chaser.yaml"), "--client-name", "chaser", "--chase", "mtc:source:mtc_out",
                                "--json-events", "--json"])
        defer { if chaser.isRunning { chaser.send(SIGKILL) } }
        #expect(chaser.waitForOutput(containing: "\"state\":\"relocate\"", timeout: 20), "\(chaser.errorOutputSoFar)")
        usleep(500_000)
        _ = PipeWireDaemon.finish(try daemon.spawn("/usr/bin/pw-metadata", ["-n", "settings", "0", "clock.force-rate", "44100"]), timeout: 10)
        #expect(chaser.waitForErrorOutput(containing: "waiting for the timecode to lock again", timeout: 20), "\(chaser.errorOutputSoFar)")
        #expect(ThreadedTestDevice.wait(timeout: 20) {
            chaser.outputSoFar.components(separatedBy: "\"state\":\"relocate\"").count - 1 >= 2
        }, "no relocation after the rate change: \(chaser.outputSoFar)")
        usleep(300_000)
        let both = temp.file("both.wav")
        let recorded = try CLI.run([CLI.binary, "record", "-o", both, "--port", "source:out_1", "--port", "chaser:out_1", "--duration", "0.5", "--json"],
                                   environment: daemon.environment, timeout: 20, executable: "/usr/bin/pw-jack")
        #expect(recorded.status == 0, "\(recorded.stderr)")
        chaser.send(SIGINT)
        source.send(SIGINT)
        let result = chaser.wait(timeout: 20)
        _ = source.wait(timeout: 20)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data((result.stdout.split(separator: "\n").last ?? "").utf8)) as? [String: Any])
        #expect(summary["sampleRate"] as? Int == 44100, "\(result.stdout.suffix(600))")
        #expect((summary["rateChanges"] as? [Any])?.count == 1)
        let reader = try AudioFileReader(path: both)
        #expect(reader.format.sampleRate == 44100)
        var frames = [Float](repeating: 0, count: Int(reader.frameCount) * 2)
        _ = try frames.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
        var checked = 0
        var differing: [String] = []
        for k in 0..<Int(reader.frameCount) {
            let (a, b) = (frames[2 * k], frames[2 * k + 1])
            guard a != 0 || b != 0 else { continue }
            checked += 1
            if abs(a - b) > step / 2, differing.count < 5 { differing.append("frame \(k): source \(a / step), chaser \(b / step)") }
        }
        #expect(checked > 20000 && differing.isEmpty, "\(checked) frames checked; differing (in ramp steps): \(differing)")
    }
}
