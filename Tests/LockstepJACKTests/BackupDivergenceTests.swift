import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension JACKTests {
    /// A backup whose media differ from the main's (the same session text, one sample of a cue's
    /// file changed on the backup's machine): the hashes of both outputs find it, and both sides
    /// name its exact session sample and output.
    @Suite("lockstep session run --main / --backup-of: a divergence found to the sample", .serialized)
    struct BackupDivergenceTests {
        /// The sample of `bell.wav` changed on the backup.
        static let altered = 1000

        @Test("one sample of a cue's file differs on the backup: main and backup each report the divergence on its session sample and output, then agree again; the hashes of every other block are the same")
        func alteredMedia() throws { try retryingOnXruns("BackupDivergenceTests", attempts: 3, run) }

        func run(_ xrun: XrunFlag) throws {
            let rig = try BackupRig(prefix: "lockstep-diverge", seconds: 20)
            // The backup's machine: the same show file, its bell one sample off.
            let folder = rig.temp.file("backup-machine")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for name in ["bed.wav", "pad.wav", "horn.wav"] { try FileManager.default.copyItem(atPath: rig.temp.file(name), toPath: folder + "/" + name) }
            try FileManager.default.copyItem(atPath: rig.show, toPath: folder + "/show.yaml")
            var bell = Signals.ramp(frames: 24000, start: 1, step: BackupRig.step)
            bell[Self.altered] = 0.5
            try FileFixtures.writeWAV(path: folder + "/bell.wav", samples: bell, format: StreamFormat(sampleRate: 48000, channelCount: 1))

            let (main, address) = try rig.startMain()
            defer { if main.isRunning { main.send(SIGKILL) } }
            usleep(500_000)
            let backup = try rig.startBackup(of: address, file: folder + "/show.yaml")
            defer { if backup.isRunning { backup.send(SIGKILL) } }
            #expect(main.waitForErrorOutput(containing: "joined", timeout: 10), "\(main.errorOutputSoFar)")
            usleep(1_500_000)
            #expect(main.send(line: "go bell", awaiting: "go bell at"), "\(main.errorOutputSoFar)")
            usleep(1_500_000)
            #expect(main.send(line: "go horn", awaiting: "go horn at"), "\(main.errorOutputSoFar)")
            usleep(2_500_000)

            let started = BackupLinkTests.events(of: main, kind: "cue/started").first { $0.contains("\"cue\":\"bell\"") } ?? ""
            let bellAt = try #require(BackupLinkTests.number("position", in: String(started)), "\(main.outputSoFar.suffix(1500))")
            let expected = Int64(bellAt + Self.altered)
            let block = expected / 4096 * 4096
            for (side, run) in [("main", main), ("backup", backup)] {
                let events = BackupLinkTests.events(of: run, kind: "divergence").map(String.init)
                // (The agreement may come before the samples that make the divergence exact.)
                let found = Set(events.map { "\(BackupLinkTests.string("state", in: $0) ?? "?") \(BackupLinkTests.number("position", in: $0) ?? -1)" })
                #expect(events.count == 3 && found == ["differs \(block)", "diverged \(expected)", "agrees \(block + 4096)"]
                        && events.filter { !$0.contains("agrees") }.allSatisfy { $0.contains("\"outputs\":[3]") },
                        "\(side): the bell started on session sample \(bellAt), so sample \(expected) differs; events \(events); said \(run.errorOutputSoFar.suffix(1200))")
                let link = BackupLinkTests.linkStatus(of: run)
                #expect(BackupLinkTests.number("differingBlocks", in: link) == 1 && BackupLinkTests.number("firstDivergence", in: link).map(Int64.init) == expected
                        && (BackupLinkTests.number("comparedBlocks", in: link) ?? 0) > 30, "\(side): \(link)")
                print("BackupDivergenceTests: the \(side) reported \(found.sorted()) (the altered sample: session sample \(expected)); \(link)")
            }
            xrun.set(BackupRig.sawXrun(main.outputSoFar, backup.outputSoFar))
            main.send(SIGINT)
            #expect(main.wait(timeout: 20).status == 130)
            backup.send(SIGINT)
            #expect(backup.wait(timeout: 20).status == 130)
        }
    }
}
