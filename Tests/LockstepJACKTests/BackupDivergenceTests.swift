import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension JACKTests {
    /// A backup whose media differ from the main's (the same session text, one sample of a cue's
    /// file changed on the backup's machine): the hashes of both outputs find it, and both sides
    /// name its exact session sample and output. Then edits on the main: the backup makes them
    /// on the same samples.
    @Suite("lockstep session run --main / --backup-of: a divergence found to the sample; edits followed", .serialized)
    struct BackupDivergenceTests {
        /// The sample of `bell.wav` changed on the backup.
        static let altered = 1000

        @Test("one sample of a cue's file differs on the backup: main and backup each report the divergence on its session sample and output, then agree again; edits on the main (a gain, a cue added, an undo) are made on the backup and every later block's hashes agree")
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

            let (main, address) = try rig.startMain(extra: SessionWebTests.browserMissing == nil ? ["--web", "127.0.0.1:0"] : [])
            defer { if main.isRunning { main.send(SIGKILL) } }
            // An edit before the backup joins: it runs the main's session as edited.
            #expect(main.send(line: "set bell2 gain -4", awaiting: "set bell2 gain to"), "\(main.errorOutputSoFar.suffix(600))")
            usleep(500_000)
            let backup = try rig.startBackup(of: address, file: folder + "/show.yaml")
            defer { if backup.isRunning { backup.send(SIGKILL) } }
            #expect(main.waitForErrorOutput(containing: "joined", timeout: 10), "\(main.errorOutputSoFar)")
            // The main's web page, in headless Chromium, watching its link line.
            let page = try Self.watchLinkLine(of: main, for: "DIVERGED")
            defer { if let page, page.isRunning { page.send(SIGKILL) } }
            usleep(1_500_000)
            #expect(main.send(line: "go bell", awaiting: "go bell at"), "\(main.errorOutputSoFar)")
            usleep(1_500_000)
            #expect(main.send(line: "go horn", awaiting: "go horn at"), "\(main.errorOutputSoFar)")
            usleep(2_500_000)

            let started = BackupLinkTests.events(of: main, kind: "cue/started").first { $0.contains("\"cue\":\"bell\"") } ?? ""
            let bellAt = try #require(BackupLinkTests.number("position", in: String(started)), "\(main.outputSoFar.suffix(1500))")
            let expected = Int64(bellAt + Self.altered)
            let block = expected / 4096 * 4096
            if let page {
                // The page said it, to the sample and output, as a warning.
                let shown = page.wait(timeout: 30)
                #expect(shown.status == 0 && shown.stdout.contains("DIVERGED from 127.0.0.1:") && shown.stdout.contains("at session sample \(expected) on output 3")
                        && shown.stdout.contains("\"warning\": true"), "the page showed: \(shown.stdout) \(shown.stderr.suffix(600))")
                print("BackupDivergenceTests: the main's web page (headless Chromium) showed \(shown.stdout.trimmingCharacters(in: .whitespacesAndNewlines))")
            }
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
            // Edits on the main are made on the backup on the same samples: a cue's gain, a cue
            // added and fired, an undo; the hashes of every block after them agree (bell2's gain
            // too: edited before the backup joined).
            let edits: [(line: String, reply: String)] = [
                ("set horn gain -6", "set horn gain to"), ("go horn", "go horn at"),
                ("add name=extra layer=fx file=horn.wav at=manual", "added extra"), ("go extra", "go extra at"),
                ("undo", "undid"), ("go horn", "go horn at"), ("go bell2", "go bell2 at"),
            ]
            for edit in edits {
                #expect(main.send(line: edit.line, awaiting: edit.reply), "\(main.errorOutputSoFar.suffix(600))")
                usleep(700_000)
            }
            usleep(1_500_000)
            #expect(backup.errorOutputSoFar.contains("backup: the main's edit 4 made on session sample"), "\(backup.errorOutputSoFar.suffix(1500))")
            // bell2 plays the backup's altered bell.wav too: one more block differs, from its
            // altered sample (had the backup not taken bell2's gain, every block of it would).
            let bell2 = BackupLinkTests.events(of: main, kind: "cue/started").first { $0.contains("\"cue\":\"bell2\"") } ?? ""
            let second = Int64(try #require(BackupLinkTests.number("position", in: String(bell2)), "\(main.outputSoFar.suffix(1500))") + Self.altered)
            for (side, run) in [("main", main), ("backup", backup)] {
                let link = BackupLinkTests.linkStatus(of: run)
                let diverged = BackupLinkTests.events(of: run, kind: "divergence").filter { $0.contains("\"state\":\"diverged\"") }
                #expect(BackupLinkTests.number("differingBlocks", in: link) == 2 && (BackupLinkTests.number("comparedBlocks", in: link) ?? 0) > 80
                        && diverged.count == 2 && BackupLinkTests.number("position", in: String(diverged.last ?? "")).map(Int64.init) == second,
                        "\(side), after the edits (bell2's altered sample is session sample \(second)): \(link); \(diverged)")
                print("BackupDivergenceTests: after 4 edits and 4 GOs, the \(side)'s \(link)")
            }
            xrun.set(BackupRig.sawXrun(main.outputSoFar, backup.outputSoFar))
            main.send(SIGINT)
            #expect(main.wait(timeout: 20).status == 130)
            backup.send(SIGINT)
            #expect(backup.wait(timeout: 20).status == 130)
        }

        /// Opens `main`'s web page (its `--web` note's address) in headless Chromium, watching
        /// its link line until it shows `text` (`Tests/Browser/link_line.py`); nil when the
        /// browser is missing. Returns once the page is live.
        static func watchLinkLine(of main: RunningCLI, for text: String) throws -> RunningCLI? {
            guard SessionWebTests.browserMissing == nil else { return nil }
            #expect(main.waitForErrorOutput(containing: "web page on http://127.0.0.1:"), "\(main.errorOutputSoFar)")
            let said = main.errorOutputSoFar
            let after = try #require(said.range(of: "web page on "))
            let url = String(said[after.upperBound...].prefix { !$0.isWhitespace })
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Browser/link_line.py").path
            let page = try CLI.spawn([script, url, text, "20"], executable: "/usr/bin/python3")
            #expect(page.waitForErrorOutput(containing: "loaded", timeout: 30), "\(page.errorOutputSoFar)")
            return page
        }
    }
}
