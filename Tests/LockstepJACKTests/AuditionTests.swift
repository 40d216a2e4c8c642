import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

extension JACKTests {
    /// Auditions live: `session run --audition PORT` plays a cue on outputs of its own, apart from
    /// the show — heard whole on the audition port, never on the master, the show playing on.
    @Suite("lockstep session run --audition: a cue heard apart from the show", .serialized)
    struct AuditionTests {
        @Test("audition CUE plays the cue's region, every sample, on the audition port only; the show's output and playhead are untouched; status and QLab's isAuditioning over OSC say so while it plays")
        func auditionApart() throws { try retryingOnXruns("AuditionTests", run) }

        func run(_ xrun: XrunFlag) throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-audition")
            let format = StreamFormat(sampleRate: 48000, channelCount: 1)
            let bed: Float = 0.125
            // A ramp of distinct values: a sample lost, repeated or out of place shows.
            let ramp = (0..<48000).map { Float($0 + 1) / 96000 + 0.25 }
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.constant(bed, frames: 48000 * 3), format: format)
            try FileFixtures.writeWAV(path: temp.file("ramp.wav"), samples: ramp, format: format)
            try FileFixtures.writeText(path: temp.file("show.yaml"), """
                channels: 1
                layers: { bed: {}, fx: { gain: -6 } }
                cues:
                  - { name: bed, layer: bed, file: bed.wav, at: 0 }
                  - { name: bell, layer: fx, file: ramp.wav, at: manual, from: 4800 samples, to: 28800 samples, gain: 6 }
                """)
            let server = try JACKServer(period: 256)
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 30)
            try capture.start()
            let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name,
                                         "--client-name", "audition", "--connect", capture.portNames[0],
                                         "--audition", capture.portNames[1], "--control", "-", "--json", "--osc", "127.0.0.1:0", "--exit-when-done"], withInput: true)
            defer { if running.isRunning { running.send(SIGKILL) } }
            #expect(running.waitForErrorOutput(containing: "OSC control on 127.0.0.1:"), "\(running.errorOutputSoFar)")
            let said = running.errorOutputSoFar
            let port = try #require(said.range(of: "OSC control on 127.0.0.1:").flatMap { UInt16(said[$0.upperBound...].prefix { $0.isNumber }) })
            let osc = try OSCTestPeer(serverPort: port)
            try osc.send("/udpReplyPort", [.int32(Int32(osc.port))])
            #expect(osc.reply(to: "/udpReplyPort")?["status"] as? String == "ok")
            /// QLab's `isAuditioning` of the bell, as a controller asks it.
            func isAuditioning() throws -> Bool? {
                try osc.send("/cue/bell/isAuditioning")
                return osc.reply(to: "/cue/bell/isAuditioning")?["data"] as? Bool
            }
            #expect(try isAuditioning() == false)
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
            #expect(running.send(line: "audition bell", awaiting: "audition bell on"), "\(running.errorOutputSoFar)")
            // (It plays for half a second: status, and QLab's isAuditioning over OSC, say so meanwhile.)
            #expect(running.send(line: "status", awaitingOutput: "\"auditioning\":\"bell\""), "\(running.outputSoFar.suffix(600))")
            #expect(try isAuditioning() == true, "QLab's isAuditioning over OSC during the audition")
            let whole = capture.wait(timeout: 10) { capture.channel(1).filter { $0 != 0 }.count >= 24000 }
            // (An xrun loses samples: known before the check, so a retry excuses it.)
            xrun.set(capture.xrunCount > 0)
            #expect(whole, "the audition is not heard whole")
            let auditioned = capture.frames
            // Played to its end: no longer auditioning.
            usleep(300_000)
            #expect(running.send(line: "status", awaitingOutput: "\"event\":\"status\""))
            let status = running.outputSoFar.split(separator: "\n").last { $0.contains("\"event\":\"status\"") } ?? ""
            #expect(!status.contains("auditioning"), "\(status)")
            #expect(try isAuditioning() == false, "QLab's isAuditioning over OSC once the audition played out")
            #expect(running.send(line: "audition nope", awaiting: "unknown cue"))
            #expect(running.send(line: "stop-audition", awaiting: "audition stopped"))
            #expect(running.send(line: "stop-audition", awaiting: "no audition was playing"))
            // The show did not move: the playhead still on the bell, which a GO then fires on
            // the master (after which, everything fired and played out, the run ends).
            _ = running.send(line: "status")
            #expect(running.send(line: "go", awaiting: "go bell at"))
            running.closeInput()
            let result = running.wait(timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            xrun.set(capture.xrunCount > 0)
            // The audition port: the region, every sample, at the layer's and the cue's gain (0 dB).
            let heard = capture.channel(1).filter { $0 != 0 }
            #expect(heard == Array(ramp[4800..<28800]), "\(heard.count) samples heard of 24000; first \(heard.prefix(3))")
            // The master: the bed alone, every sample, until the audition was over.
            let master = capture.channel(0)
            let first = try #require(capture.firstNonSilentRecordedFrame(channel: 0))
            #expect(auditioned > first && master[first..<auditioned].allSatisfy { $0 == bed }, "the show's output changed while auditioning")
            #expect(result.stdout.contains("\"event\":\"status\"") && result.stdout.contains("\"playhead\":\"bell\""), "\(result.stdout)")
        }
    }
}
