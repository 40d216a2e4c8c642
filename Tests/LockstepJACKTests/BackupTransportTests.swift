import Foundation
import Lockstep
import LockstepSession
import LockstepTestSupport
import Testing

extension JACKTests {
    /// A backup following its main's whole-session changes (``BackupRig``): a pause and a resume,
    /// a seek and a reset. A resume, a seek and a reset start on the main's own sample on the
    /// backup (the main announces them ahead, ``LockstepSession/SessionPlayer/Relocation``), and
    /// a pause fades out from it (``LockstepSession/SessionPlayer/Pause``).
    @Suite("lockstep session run --backup-of: a pause, a resume, a seek and a reset of the main", .serialized)
    struct BackupTransportTests {
        @Test("the backup pauses, resumes, seeks and resets with its main: after a resume, a seek and a reset it plays from the same session sample on the same sample, and every session sample both recorded is the same")
        func transport() throws { try retryingOnXruns("BackupTransportTests", attempts: 3, run) }

        func run(_ xrun: XrunFlag) throws {
            let rig = try BackupRig(prefix: "lockstep-backup-transport", seconds: 40)
            let (main, address) = try rig.startMain()
            defer { if main.isRunning { main.send(SIGKILL) } }
            let mainRecorder = try rig.record("main")
            defer { if mainRecorder.isRunning { mainRecorder.send(SIGKILL) } }
            usleep(500_000)
            let backup = try rig.startBackup(of: address)
            defer { if backup.isRunning { backup.send(SIGKILL) } }
            let backupRecorder = try rig.record("backup")
            defer { if backupRecorder.isRunning { backupRecorder.send(SIGKILL) } }
            usleep(600_000)
            let script: [(line: String, reply: String, backup: String?)] = [
                ("go", "go bell at", nil), ("pause", "paused at", "paused with the main on session sample"), ("resume", "resumed at", "relocated with the main"),
                ("go horn", "go horn at", nil), ("seek 2", "seek to", "relocated with the main"), ("level pad -6 0.1", "level pad to", nil),
                ("reset", "reset:", "reset with the main"), ("go", "go bell at", nil),
            ]
            for step in script {
                let mark = backup.errorByteCount
                #expect(main.send(line: step.line, awaiting: step.reply), "\(main.errorOutputSoFar)")
                if let said = step.backup {
                    #expect(backup.waitForErrorOutput(containing: said, after: mark, timeout: 5), "after '\(step.line)': \(backup.errorOutputSoFar)")
                }
                usleep(900_000)
            }
            // Around each change the two played different session samples for a moment; the
            // hashes compared only blocks both played at about the same time: none differed.
            for (side, run) in [("main", main), ("backup", backup)] {
                let link = BackupLinkTests.linkStatus(of: run)
                #expect((BackupLinkTests.number("comparedBlocks", in: link) ?? 0) > 48000 * 2 / 4096 && BackupLinkTests.number("differingBlocks", in: link) == 0,
                        "\(side): \(link); \(BackupLinkTests.events(of: run, kind: "divergence").prefix(4))")
                print("BackupTransportTests: the \(side)'s \(link)")
            }
            main.send(SIGINT)
            _ = main.wait(timeout: 20)
            backup.send(SIGINT)
            let result = backup.wait(timeout: 20)
            let recorded = [BackupRig.finish(mainRecorder), BackupRig.finish(backupRecorder)]
            xrun.set(BackupRig.sawXrun(main.outputSoFar, result.stdout, recorded[0].stdout, recorded[1].stdout))
            // The same stretches of the bed on both, in order (the backup's first begins later: it
            // joined), each the same on every session sample both recorded, 0.2 s after its start.
            let mainFrames = BackupRig.frames(try rig.recording("main")), backupFrames = BackupRig.frames(try rig.recording("backup"))
            let mainStretches = BackupRig.stretches(mainFrames), backupStretches = BackupRig.stretches(backupFrames)
            let describe = { (list: [ArraySlice<(position: Int64, pad: Float, fx: Float)>]) in list.map { "\($0.first!.position)…\($0.last!.position)" } }
            #expect(mainStretches.count == 4 && backupStretches.count == 4,
                    "main: \(describe(mainStretches)); backup: \(describe(backupStretches)); the backup said: \(result.stderr.suffix(2000))")
            // The pause: on the same session sample on both, its fade the same samples (the
            // bed's values faded, then silence).
            if let theirs = mainStretches.first, let mine = backupStretches.first {
                let fade = Int((LockstepSession.SessionPlayer.pauseFadeSeconds * 48000).rounded())
                let mainFade = mainFrames[theirs.endIndex..<min(mainFrames.count, theirs.endIndex + fade)].map { "\($0.position) \($0.pad) \($0.fx)" }
                let backupFade = backupFrames[mine.endIndex..<min(backupFrames.count, mine.endIndex + fade)].map { "\($0.position) \($0.pad) \($0.fx)" }
                #expect(theirs.last!.position == mine.last!.position && mainFade == backupFade && mainFade.count > fade / 2,
                        "the pause: main's last full sample \(theirs.last!.position), backup's \(mine.last!.position); fades differ: \(mainFade.prefix(3)) / \(backupFade.prefix(3))")
                print("BackupTransportTests: paused on session sample \(theirs.last!.position + 1) on both, \(mainFade.count) samples of fade the same")
            }
            // After the first (the backup joined the main's), each stretch begins on the same
            // session sample on both and is the same from its first sample; its end may differ
            // for 0.2 s (the halt before a seek or a reset is each side's own).
            var compared = 0
            for (index, (theirs, mine)) in zip(mainStretches, backupStretches).enumerated() {
                if index > 0 {
                    #expect(theirs.first!.position == mine.first!.position, "stretch \(index + 1): main from \(theirs.first!.position), backup from \(mine.first!.position)")
                }
                let (n, count, differing) = BackupRig.compare(theirs, mine, margin: index == 0 ? 9600 : 0, tail: 9600)
                compared += n
                #expect(count == 0, "stretch \(mine.first!.position)…: \(count) differing: \(differing); the backup said: \(result.stderr.suffix(2000))")
            }
            // It never had to jump to where the main is by the clock: each start was on time.
            #expect(!result.stderr.contains("playing on from session sample"), "\(result.stderr.suffix(2000))")
            print("BackupTransportTests: \(compared) session samples compared; main \(describe(mainStretches)), backup \(describe(backupStretches))")
            #expect(compared > 48000 * 2)
        }
    }
}
