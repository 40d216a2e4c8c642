import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension JACKTests {
    /// A show's main and its backup (`session run --main` / `--backup-of`) on two JACK servers of
    /// their own, each captured by a client of the test's: commands go to the main only; the
    /// backup plays every session sample as the main does; when the main is killed the backup
    /// plays on without a gap and takes the next GO.
    @Suite("lockstep session run --main / --backup-of: a backup plays the main's samples", .serialized)
    struct BackupLinkTests {
        static let step: Float = 1.0 / 65536
        static let period = 1024
        static let passcode = "s3cret"
        /// Rounds of 8 commands (LOCKSTEP_BACKUP_ROUNDS: 70 make a 3-minute run of 565 commands).
        static let rounds = Int(ProcessInfo.processInfo.environment["LOCKSTEP_BACKUP_ROUNDS"] ?? "") ?? 2

        @Test("commands to the main only: every session sample both captured is the same on the backup (bed, pad through a fade, cues by GO, a stop); the backup refuses its own commands, a wrong passcode and another file; killed, the main leaves the backup playing with no gap, and it takes the next GO")
        func mainAndBackup() throws { try retryingOnXruns("BackupLinkTests", attempts: 3, run) }

        func run(_ xrun: XrunFlag) throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-backup")
            let format = StreamFormat(sampleRate: 48000, channelCount: 1)
            // The bed: a ramp long enough for the run (its values name its samples up to 2^24).
            let seconds = 12 + Self.rounds * 3
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.ramp(frames: 48000 * seconds, start: 1, step: Self.step), format: format)
            try FileFixtures.writeWAV(path: temp.file("pad.wav"), samples: Signals.constant(0.25, frames: 48000), format: format)
            try FileFixtures.writeWAV(path: temp.file("bell.wav"), samples: Signals.ramp(frames: 24000, start: 1, step: Self.step), format: format)
            try FileFixtures.writeWAV(path: temp.file("horn.wav"), samples: Signals.ramp(frames: 24000, start: 30_000, step: Self.step), format: format)
            let mainServer = try JACKServer(period: Self.period)
            let backupServer = try JACKServer(period: Self.period)
            // Each layer on its own channel of the master, recorded by `lockstep record` on each
            // server (libjack holds clients of one server per process; every client a name of
            // its own on the machine).
            let name = "lsbk\(getpid() % 100_000)"
            let show = temp.file("show.yaml")
            let text = """
                channels: 3
                layers: { bed: { channel_map: "1:1" }, pad: { channel_map: "1:2" }, fx: { channel_map: "1:3" } }
                cues:
                  - { name: bed, layer: bed, file: bed.wav, at: 0 }
                  - { name: pad, layer: pad, file: pad.wav, at: 0, loop: forever }
                  - { name: bell, layer: fx, file: bell.wav, at: manual }
                  - { name: dim, type: fade, target: pad, level: -6.0206, duration: 0.3, at: manual }
                  - { name: horn, layer: fx, file: horn.wav, at: manual }
                  - { name: cut, type: stop, target: horn, at: manual }
                  - { name: bell2, layer: fx, file: bell.wav, at: manual }

                """
            try FileFixtures.writeText(path: show, text)
            try FileFixtures.writeText(path: temp.file("other.yaml"), text.replacingOccurrences(of: "duration: 0.3", with: "duration: 0.4"))
            func record(_ server: JACKServer, _ client: String, into file: String) throws -> RunningCLI {
                try CLI.spawn(["record", "-o", file, "--server", server.name, "--client-name", "\(client)-rec",
                               "--port", "\(client):out_1", "--port", "\(client):out_2", "--port", "\(client):out_3", "--json"])
            }
            let common = ["--control", "-", "--no-journal", "--no-connect", "--json-events", "--link-passcode", Self.passcode]
            let main = try CLI.spawn(["session", "run", show, "--server", mainServer.name, "--client-name", "\(name)-main", "--main", "127.0.0.1:0"] + common,
                                     withInput: true)
            defer { if main.isRunning { main.send(SIGKILL) } }
            #expect(main.waitForErrorOutput(containing: "link: a backup may join on", timeout: 20), "\(main.errorOutputSoFar)")
            let address = try #require(Self.address(in: main.errorOutputSoFar), "\(main.errorOutputSoFar)")
            let mainRecorder = try record(mainServer, "\(name)-main", into: temp.file("main.wav"))
            defer { if mainRecorder.isRunning { mainRecorder.send(SIGKILL) } }

            // Refused: a wrong passcode, another file.
            let wrong = try CLI.run(["session", "run", show, "--server", backupServer.name, "--backup-of", address, "--link-passcode", "nope", "--no-journal"], timeout: 20)
            #expect(wrong.status != 0 && wrong.stderr.contains("refused this backup: wrong link passcode"), "\(wrong.stderr)")
            let other = try CLI.run(["session", "run", temp.file("other.yaml"), "--server", backupServer.name, "--backup-of", address,
                                     "--link-passcode", Self.passcode, "--no-journal"], timeout: 20)
            #expect(other.status != 0 && other.stderr.contains("differs from the main's") && other.stderr.contains("line 7"), "\(other.stderr)")

            usleep(700_000)
            let backup = try CLI.spawn(["session", "run", show, "--server", backupServer.name, "--client-name", "\(name)-backup", "--backup-of", address] + common,
                                       withInput: true)
            defer { if backup.isRunning { backup.send(SIGKILL) } }
            #expect(backup.waitForErrorOutput(containing: "link: joined the main at", timeout: 20), "\(backup.errorOutputSoFar)")
            let backupRecorder = try record(backupServer, "\(name)-backup", into: temp.file("backup.wav"))
            defer { if backupRecorder.isRunning { backupRecorder.send(SIGKILL) } }
            #expect(main.waitForErrorOutput(containing: "joined", timeout: 10), "\(main.errorOutputSoFar)")
            usleep(600_000)
            // The backup takes no command of its own while the main is there.
            #expect(backup.send(line: "go", awaiting: "backup of the main"), "\(backup.errorOutputSoFar)")
            // Plain GOs through the cue list (each past the 0.3 s double-GO window), then rounds
            // of cues, levels, gains and stops by name.
            var commands = 0
            for cue in ["bell", "dim", "horn", "cut", "bell2"] {
                #expect(main.send(line: "go", awaiting: "go \(cue) at"), "\(main.errorOutputSoFar)")
                commands += 1
                usleep(450_000)
            }
            let round: [(line: String, reply: String)] = [
                ("go bell", "go bell at"), ("level pad -9 0.2", "level pad to"), ("go horn", "go horn at"), ("stop horn", "stop horn:"),
                ("gain fx -3", "gain fx to"), ("go bell2", "go bell2 at"), ("level pad -3 0.3", "level pad to"), ("gain fx 0 0.1", "gain fx to"),
            ]
            for _ in 0..<Self.rounds {
                for command in round {
                    #expect(main.send(line: command.line, awaiting: command.reply), "\(main.errorOutputSoFar)")
                    commands += 1
                    usleep(350_000)
                }
            }
            print("BackupLinkTests: \(commands) commands to the main")
            usleep(500_000)
            // The main goes; the backup plays on and takes the next GO.
            main.send(SIGKILL)
            _ = main.wait(timeout: 10)
            #expect(backup.waitForErrorOutput(containing: "this backup plays on and takes commands", timeout: 10), "\(backup.errorOutputSoFar)")
            usleep(400_000)
            #expect(backup.send(line: "go bell", awaiting: "go bell"), "\(backup.errorOutputSoFar)")
            usleep(800_000)
            backup.send(SIGINT)
            let result = backup.wait(timeout: 20)
            #expect(result.status == 130, "\(result.stderr)")
            mainRecorder.send(SIGINT)
            backupRecorder.send(SIGINT)
            let recorded = [mainRecorder.wait(timeout: 20), backupRecorder.wait(timeout: 20)]
            #expect(recorded.allSatisfy { $0.status == 130 || $0.status == 0 }, "\(recorded.map(\.stderr))")
            let mainSaid = main.outputSoFar + recorded[0].stdout, backupSaid = result.stdout + recorded[1].stdout
            xrun.set(mainSaid.contains("\"kind\":\"xrun\"") || backupSaid.contains("\"kind\":\"xrun\"")
                     || mainSaid.contains("\"xruns\":[{") || backupSaid.contains("\"xruns\":[{"))
            if let keep = ProcessInfo.processInfo.environment["LOCKSTEP_KEEP"] {
                try? FileManager.default.copyItem(atPath: temp.file("main.wav"), toPath: keep + "-main.wav")
                try? FileManager.default.copyItem(atPath: temp.file("backup.wav"), toPath: keep + "-backup.wav")
            }
            let mainTake = try readAudio(temp.file("main.wav")).samples
            let backupTake = try readAudio(temp.file("backup.wav")).samples
            check(main: mainTake, backup: backupTake, said: result.stderr)
        }

        /// `HOST:PORT` from the main's `link: a backup may join on HOST:PORT` note.
        static func address(in text: String) -> String? {
            guard let range = text.range(of: "a backup may join on ") else { return nil }
            return String(text[range.upperBound...].prefix { !$0.isWhitespace })
        }

        /// A recording (3 channels interleaved: bed, pad, fx) by session sample (the bed says
        /// which), and the bed's positions in recording order — up to 0.1 s before the bed's last
        /// sample (a run that ends fades out: the bed's values no longer name its samples).
        static func bySample(_ frames: [Float]) -> (samples: [Int64: (Float, Float)], bed: [Int64]) {
            var samples: [Int64: (Float, Float)] = [:]
            var heard: [Int64] = []
            let count = frames.count / 3
            let end = ((0..<count).last { frames[$0 * 3] != 0 } ?? 0) - 4800
            for frame in 0..<max(0, end) where frames[frame * 3] != 0 {
                let position = Int64((frames[frame * 3] / step).rounded()) - 1
                samples[position] = (frames[frame * 3 + 1], frames[frame * 3 + 2])
                heard.append(position)
            }
            return (samples, heard)
        }

        func check(main: [Float], backup: [Float], said: String) {
            let (mainSamples, _) = Self.bySample(main)
            let (backupSamples, backupBed) = Self.bySample(backup)
            // Both heard them (the main's last 0.2 s left out: its kill cut them at any sample).
            let last = (mainSamples.keys.max() ?? 0) - 9600
            var compared = 0, differing: [String] = []
            var fxHeard = 0
            for (position, theirs) in mainSamples where position < last {
                guard let mine = backupSamples[position] else { continue }
                compared += 1
                if theirs.1 != 0 { fxHeard += 1 }
                if mine != theirs, differing.count < 5 {
                    differing.append("session sample \(position): main pad \(theirs.0) fx \(theirs.1), backup pad \(mine.0) fx \(mine.1)")
                }
            }
            print("BackupLinkTests: \(compared) session samples compared, \(differing.count) differing, \(fxHeard) with a cue on fx; \(said.split(separator: "\n").first { $0.contains("the main by the system clock") } ?? "")")
            #expect(differing.isEmpty && compared > 48000 * 3 && fxHeard > 24000 * 2,
                    "\(compared) session samples compared (\(fxHeard) with a cue on fx); differing: \(differing); the backup said: \(said.suffix(1500))")
            // The backup's bed, as recorded: one session sample after another from its start to its
            // end, through the main's kill (no gap, no jump; its last 0.1 s, the fade-out, left out).
            let end = backupBed.count
            var jumps: [String] = []
            for index in 1..<max(1, end) where backupBed[index] - backupBed[index - 1] != 1 && jumps.count < 5 {
                jumps.append("session sample \(backupBed[index - 1]) → \(backupBed[index]) at recorded frame \(index)")
            }
            #expect(jumps.isEmpty && end > 48000 * 3, "the backup's bed (\(end) samples): \(jumps); the backup said: \(said.suffix(1500))")
            // The backup's GO after the kill: the bell again, once more than on the main.
            let bells = { (frames: [Float]) in (0..<(frames.count / 3)).filter { frames[$0 * 3 + 2] == Self.step }.count }
            #expect(bells(backup) == bells(main) + 1, "bell starts: main \(bells(main)), backup \(bells(backup))")
        }
    }
}
