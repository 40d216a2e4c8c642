import Foundation
import Lockstep
import LockstepSession
import LockstepTestSupport
import Testing

extension JACKTests {
    /// The edit journal: `session run` keeps every edit on disk as it is made, so a SIGKILL loses
    /// none; the next run of the file says so and plays them with `--recover-edits`.
    @Suite("lockstep session run: edits survive a kill in the journal", .serialized)
    struct EditJournalTests {
        @Test("edits journaled as they are made survive SIGKILL; the next run refuses to drop them silently; --recover-edits plays them and save writes them; --discard-edits starts from the file")
        func journal() throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-journal")
            let format = StreamFormat(sampleRate: 48000, channelCount: 1)
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.constant(0.125, frames: 48000), format: format)
            try FileFixtures.writeWAV(path: temp.file("hit.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.5), format: format)
            let text = """
                channels: 1
                layers: { bed: {}, fx: {} }
                cues:
                  - { name: bed, layer: bed, file: bed.wav, at: 0, loop: forever }
                  - { name: bell, layer: fx, file: hit.wav, at: manual }

                """
            let show = temp.file("show.yaml")
            try FileFixtures.writeText(path: show, text)
            let journal = ShowJournal.path(forSession: show, in: CLI.stateHome + "/lockstep/journals")
            let server = try JACKServer(period: 256)
            func run(_ extra: [String]) throws -> RunningCLI {
                try CLI.spawn(["session", "run", show, "--server", server.name, "--client-name", "journal", "--control", "-"] + extra,
                              withInput: true)
            }
            let first = try run([])
            defer { if first.isRunning { first.send(SIGKILL) } }
            #expect(first.send(line: "set bell gain -6", awaiting: "set bell gain"), "\(first.errorOutputSoFar)")
            #expect(first.send(line: "add name=horn layer=fx file=hit.wav at=manual", awaiting: "added horn"), "\(first.errorOutputSoFar)")
            // Journaled within a fraction of a second of each edit, flushed to disk.
            let deadline = Date().addingTimeInterval(5)
            while ShowJournal.pending(at: journal, fileText: text)?.edits != 2 && Date() < deadline { usleep(20_000) }
            first.send(SIGKILL)
            _ = first.wait(timeout: 10)
            #expect(try String(contentsOfFile: show, encoding: .utf8) == text, "the show file is never written by an edit")
            let pending = try #require(ShowJournal.pending(at: journal, fileText: text))
            #expect(pending.edits == 2 && pending.text.contains("- { name: horn, layer: fx, file: hit.wav, at: manual }"))

            // A plain run does not drop them.
            let refused = try run([]).wait(timeout: 20)
            #expect(refused.status == 1 && refused.stderr.contains("2 edits that were not saved") && refused.stderr.contains("--recover-edits"),
                    "\(refused.stderr)")
            #expect(ShowJournal.pending(at: journal, fileText: text)?.edits == 2)

            // Recovered: played as edited, saved into the file; the journal then goes.
            let second = try run(["--recover-edits"])
            defer { if second.isRunning { second.send(SIGKILL) } }
            #expect(second.waitForErrorOutput(containing: "recovered 2 edits"), "\(second.errorOutputSoFar)")
            #expect(second.send(line: "save", awaiting: "saved "), "\(second.errorOutputSoFar)")
            second.send(SIGINT)
            _ = second.wait(timeout: 20)
            let saved = try String(contentsOfFile: show, encoding: .utf8)
            #expect(saved == pending.text, "\(saved)")
            #expect(!FileManager.default.fileExists(atPath: journal), "a journal whose edits are saved is removed")

            // Edits made and left unsaved, then dropped on purpose.
            let third = try run([])
            defer { if third.isRunning { third.send(SIGKILL) } }
            #expect(third.send(line: "delete horn", awaiting: "deleted horn"), "\(third.errorOutputSoFar)")
            third.send(SIGINT)
            _ = third.wait(timeout: 20)
            #expect(ShowJournal.pending(at: journal, fileText: saved)?.edits == 1, "an unsaved edit is kept at a clean exit too")
            let fourth = try run(["--discard-edits"])
            defer { if fourth.isRunning { fourth.send(SIGKILL) } }
            usleep(1_000_000)
            #expect(fourth.isRunning, "--discard-edits starts from the file: \(fourth.errorOutputSoFar)")
            fourth.send(SIGINT)
            let last = fourth.wait(timeout: 20)
            #expect(last.status == 130, "\(last.stderr)")
            #expect(try String(contentsOfFile: show, encoding: .utf8) == saved)
            #expect(!FileManager.default.fileExists(atPath: journal), "nothing left to recover: the journal is removed")
        }
    }
}
