import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension JACKTests {
    /// A show's main and its backup (`session run --main` / `--backup-of`) on two JACK servers of
    /// their own (``BackupRig``): commands go to the main only; the backup plays every session
    /// sample as the main does; when the main is killed the backup plays on without a gap and
    /// takes the next GO.
    @Suite("lockstep session run --main / --backup-of: a backup plays the main's samples", .serialized)
    struct BackupLinkTests {
        /// Minutes the show runs for (LOCKSTEP_BACKUP_MINUTES; 0: as long as the rounds take).
        static let minutes = Double(ProcessInfo.processInfo.environment["LOCKSTEP_BACKUP_MINUTES"] ?? "") ?? 0
        /// Rounds of 8 commands (LOCKSTEP_BACKUP_ROUNDS: 70 make a 3-minute run of 565 commands;
        /// with LOCKSTEP_BACKUP_MINUTES, 0.6 a minute: 10 minutes make 53 commands).
        static let rounds = Int(ProcessInfo.processInfo.environment["LOCKSTEP_BACKUP_ROUNDS"] ?? "") ?? (minutes > 0 ? max(1, Int(minutes * 0.6)) : 2)
        /// Seconds between rounds: the rest of the minutes spread over them.
        static let pause = minutes > 0 ? max(0, (minutes * 60 - 6) / Double(rounds) - 8 * 0.35) : 0

        @Test("commands to the main only: every session sample both recorded is the same on the backup (bed, pad through a fade, cues by GO, levels, gains, stops); the backup refuses its own commands, a wrong passcode and another file; killed, the main leaves the backup playing with no gap, and it takes the next GO; the old main rejoins as its backup")
        func mainAndBackup() throws { try retryingOnXruns("BackupLinkTests", attempts: 3, run) }

        func run(_ xrun: XrunFlag) throws {
            let rig = try BackupRig(prefix: "lockstep-backup", seconds: 12 + Self.rounds * 3 + Int(Self.minutes * 60), networkNamespaces: true)
            print("BackupLinkTests: " + (rig.network.map { "the main in network namespace \($0.a) (\($0.aAddress)), the backup in \($0.b) (\($0.bAddress)), joined by a veth pair" }
                                         ?? "no network namespaces here: the main and the backup on loopback"))
            try FileFixtures.writeText(path: rig.temp.file("other.yaml"), rig.text.replacingOccurrences(of: "duration: 0.3", with: "duration: 0.4"))
            let (main, address) = try rig.startMain()
            defer { if main.isRunning { main.send(SIGKILL) } }
            let mainRecorder = try rig.record("main")
            defer { if mainRecorder.isRunning { mainRecorder.send(SIGKILL) } }

            // Refused: a wrong passcode, another file.
            let wrong = try rig.run(on: .backup, ["session", "run", rig.show, "--server", rig.backupServer.name, "--backup-of", address, "--link-passcode", "nope", "--no-journal"])
            #expect(wrong.status != 0 && wrong.stderr.contains("refused this backup: wrong link passcode"), "\(wrong.stderr)")
            let other = try rig.run(on: .backup, ["session", "run", rig.temp.file("other.yaml"), "--server", rig.backupServer.name, "--backup-of", address,
                                                  "--link-passcode", BackupRig.passcode, "--no-journal"])
            #expect(other.status != 0 && other.stderr.contains("differs from the main's") && other.stderr.contains("line 7"), "\(other.stderr)")

            usleep(700_000)
            // (With --main too: once its main is gone, it is the main a backup joins.)
            let backup = try rig.startBackup(of: address, extra: ["--main", rig.listen(on: .backup)])
            defer { if backup.isRunning { backup.send(SIGKILL) } }
            let backupRecorder = try rig.record("backup")
            defer { if backupRecorder.isRunning { backupRecorder.send(SIGKILL) } }
            #expect(main.waitForErrorOutput(containing: "joined", timeout: 10), "\(main.errorOutputSoFar)")
            usleep(600_000)
            // The backup takes no command of its own while the main is there; each says what it is.
            #expect(backup.send(line: "go", awaiting: "backup of the main"), "\(backup.errorOutputSoFar)")
            #expect(Self.linkStatus(of: backup).contains("\"role\":\"backup\"") && Self.linkStatus(of: backup).contains("\"state\":\"following\""),
                    "\(Self.linkStatus(of: backup))")
            // Each keeps its own journal (by default, on one machine too).
            let journals = (try? FileManager.default.contentsOfDirectory(atPath: rig.temp.path + "/lockstep/journals")) ?? []
            #expect(journals.count == 2 && journals.contains { $0.hasSuffix("-backup.journal") }, "\(journals)")
            let mainLink = Self.linkStatus(of: main)
            #expect(mainLink.contains("\"role\":\"main\"") && mainLink.contains("\"state\":\"joined\"") && mainLink.contains("\"backups\":1"), "\(mainLink)")
            #expect(Self.events(of: main, kind: "link").contains { $0.contains("\"state\":\"joined\"") }, "\(main.outputSoFar.suffix(800))")
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
                if Self.pause > 0 { usleep(UInt32(Self.pause * 1_000_000)) }
            }
            print("BackupLinkTests: \(commands) commands to the main")
            usleep(500_000)
            // Checks an xrun on either server can fail (a lost period differs from the other side)
            // run once the recordings said whether one happened.
            var afterXrunCheck: [() -> Void] = []
            // Both compared the hashes of their outputs, block by block: none differed.
            for (side, run) in [("main", main), ("backup", backup)] {
                let link = Self.linkStatus(of: run)
                let compared = Self.number("comparedBlocks", in: link) ?? 0
                let divergences = Self.events(of: run, kind: "divergence")
                afterXrunCheck.append {
                #expect(compared > 48000 * 3 / 4096 && Self.number("differingBlocks", in: link) == 0 && !link.contains("firstDivergence"),
                        "\(side): \(link)")
                #expect(divergences.isEmpty, "\(side): \(divergences.prefix(3))")
                }
                print("BackupLinkTests: the \(side) compared \(compared) blocks of 4096 session samples, \(Self.number("differingBlocks", in: link) ?? -1) differing")
            }
            // The main goes; the backup plays on and takes the next GO.
            main.send(SIGKILL)
            _ = main.wait(timeout: 10)
            #expect(backup.waitForErrorOutput(containing: "this backup plays on and takes commands", timeout: 10), "\(backup.errorOutputSoFar)")
            usleep(400_000)
            #expect(Self.events(of: backup, kind: "link").contains { $0.contains("\"state\":\"lost\"") && $0.contains("\"peer\":\"\(address)\"") },
                    "\(backup.outputSoFar.suffix(800))")
            #expect(backup.send(line: "go bell", awaiting: "go bell at"), "\(backup.errorOutputSoFar)")
            // It listens as a main now: the old main comes back as its backup and follows it.
            #expect(backup.waitForErrorOutput(containing: "link: a backup may join on", timeout: 10), "\(backup.errorOutputSoFar)")
            let newAddress = try #require(BackupRig.address(in: backup.errorOutputSoFar), "\(backup.errorOutputSoFar)")
            let link = Self.linkStatus(of: backup)
            #expect(link.contains("\"role\":\"main\"") && link.contains("\"state\":\"listening\""), "\(link)")
            usleep(800_000)
            let rejoined = try rig.spawn(on: .main, ["session", "run", rig.show, "--server", rig.mainServer.name, "--client-name", "\(rig.name)-main2",
                                                     "--backup-of", newAddress] + rig.common,
                                         environment: ["XDG_STATE_HOME": rig.temp.file("machine2")], withInput: true)
            defer { if rejoined.isRunning { rejoined.send(SIGKILL) } }
            #expect(rejoined.waitForErrorOutput(containing: "link: joined the main at", timeout: 20), "\(rejoined.errorOutputSoFar)")
            #expect(backup.waitForErrorOutput(containing: "joined", timeout: 10), "\(backup.errorOutputSoFar)")
            usleep(600_000)
            #expect(backup.send(line: "go horn", awaiting: "go horn at"), "\(backup.errorOutputSoFar)")
            usleep(1_500_000)
            let follows = Self.linkStatus(of: rejoined)
            #expect(follows.contains("\"state\":\"following\"") && (Self.number("comparedBlocks", in: follows) ?? 0) > 5, "\(follows)")
            let rejoinedSaid = rejoined.errorOutputSoFar.suffix(800)
            afterXrunCheck.append {
                #expect(Self.number("differingBlocks", in: follows) == 0, "\(follows); \(rejoinedSaid)")
            }
            #expect(Self.linkStatus(of: backup).contains("\"backups\":1"), "\(Self.linkStatus(of: backup))")
            print("BackupLinkTests: the old main rejoined as the backup of the new: \(follows)")
            rejoined.send(SIGINT)
            let rejoinedResult = rejoined.wait(timeout: 20)
            #expect(rejoinedResult.status == 130)
            backup.send(SIGINT)
            let result = backup.wait(timeout: 20)
            #expect(result.status == 130, "\(result.stderr)")
            let recorded = [BackupRig.finish(mainRecorder), BackupRig.finish(backupRecorder)]
            xrun.set(BackupRig.sawXrun(main.outputSoFar, rejoinedResult.stdout, result.stdout, recorded[0].stdout, recorded[1].stdout))
            afterXrunCheck.forEach { $0() }
            check(main: try rig.recording("main"), backup: try rig.recording("backup"), said: result.stderr)
        }

        /// The `link` of a `status` the run answers.
        static func linkStatus(of run: RunningCLI) -> String {
            guard run.send(line: "status", awaitingOutput: "\"event\":\"status\"") else { return "no status" }
            let line = run.outputSoFar.split(separator: "\n").last { $0.contains("\"event\":\"status\"") } ?? ""
            guard let range = line.range(of: "\"link\":{") else { return "no link in \(line.suffix(300))" }
            return String(line[range.lowerBound...].prefix { $0 != "}" })
        }

        /// The integer of `key` in a JSON text.
        static func number(_ key: String, in text: String) -> Int? {
            guard let range = text.range(of: "\"\(key)\":") else { return nil }
            return Int(text[range.upperBound...].prefix { $0.isNumber || $0 == "-" })
        }

        /// The string of `key` in a JSON text.
        static func string(_ key: String, in text: String) -> String? {
            guard let range = text.range(of: "\"\(key)\":\"") else { return nil }
            return String(text[range.upperBound...].prefix { $0 != "\"" })
        }

        /// The JSON events of `kind` a run printed.
        static func events(of run: RunningCLI, kind: String) -> [Substring] {
            run.outputSoFar.split(separator: "\n").filter { $0.contains("\"kind\":\"\(kind)\"") }
        }

        func check(main: [Float], backup: [Float], said: String) {
            let mainFrames = BackupRig.frames(main), backupFrames = BackupRig.frames(backup)
            // Both heard them (the main's last 0.2 s left out: its kill cut them at any sample).
            let (compared, count, differing) = BackupRig.compare(mainFrames.dropLast(9600), backupFrames[...])
            let fxHeard = mainFrames.dropLast(9600).filter { $0.fx != 0 }.count
            print("BackupLinkTests: \(compared) session samples compared, \(count) differing, \(fxHeard) with a cue on fx (main); "
                  + "\(said.split(separator: "\n").first { $0.contains("the main by the system clock") } ?? "")")
            #expect(count == 0 && compared > 48000 * 3 && fxHeard > 24000 * 2,
                    "\(compared) session samples compared (\(fxHeard) with a cue on fx); \(count) differing: \(differing); the backup said: \(said.suffix(1500))")
            // The backup's bed, as recorded: one session sample after another from its start to its
            // end, through the main's kill (no gap, no jump).
            let stretches = BackupRig.stretches(backupFrames, minimum: 1)
            #expect(stretches.count == 1 && backupFrames.count > 48000 * 3,
                    "the backup's bed breaks \(stretches.count - 1) times: \(stretches.prefix(4).map { "\($0.first!.position)…\($0.last!.position)" }); the backup said: \(said.suffix(1500))")
            // The backup's GO after the kill: the bell again, once more than on the main.
            let bells = { (frames: [(position: Int64, pad: Float, fx: Float)]) in frames.filter { $0.fx == BackupRig.step }.count }
            #expect(bells(backupFrames) == bells(mainFrames) + 1, "bell starts: main \(bells(mainFrames)), backup \(bells(backupFrames))")
        }
    }
}
