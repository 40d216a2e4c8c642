import Foundation
import Lockstep
import LockstepSession
import LockstepTestSupport
import Testing

/// Saving a run's edits into the session file: only the edited values change, byte for byte;
/// atomically, with a backup; never over a file changed on disk unless forced.
@Suite("Saving edits to the session file")
struct SessionFileSaveTests {
    static let text = """
        # The show. Comments, spacing and spelling stay as written.
        channels: 1
        layers: { bed: {}, fx: {} }   # two layers
        cues:
          - { name: bed, layer: bed, file: a.wav, at: 0,  gain: -3dB }
          # the hits
          - name: hit
            layer: fx
            file: a.wav
            at: manual     # fired by hand
            pre_wait: 0.25
          - { name: tail, layer: fx, file: a.wav, after: hit, to: 1500 samples }
          - { name: out, type: fade, target: bed, level: -inf, duration: 2, at: manual }

        """

    static func show() throws -> OfflineShow {
        try OfflineShow(text, audio: [("a.wav", Signals.constant(0.25, frames: 4800))])
    }

    @Test("edits change their values where they are written, add a missing key at the end of its cue, remove one set to nothing; every other line stays byte-identical, and the saved file reads back as edited")
    func onlyEditedValuesChange() throws {
        let show = try Self.show()
        let player = show.player
        try player.edit("bed", .gain(-6))
        try player.edit("hit", .preWait(nil))
        try player.edit("hit", .number("12"))
        try player.edit("hit", .name("bell: one"))           // quoted; 'tail' follows it
        try player.edit("tail", .to(.seconds(0.05)))
        try player.edit("out", .duration(.samples(4800)))
        let saved = try SessionFile.save(player.document, of: player.session)
        #expect(saved.changes == 7, "\(saved)")
        let written = try String(contentsOfFile: saved.path, encoding: .utf8)
        #expect(written == """
            # The show. Comments, spacing and spelling stay as written.
            channels: 1
            layers: { bed: {}, fx: {} }   # two layers
            cues:
              - { name: bed, layer: bed, file: a.wav, at: 0,  gain: -6 dB }
              # the hits
              - name: "bell: one"
                layer: fx
                file: a.wav
                at: manual     # fired by hand
                number: 12
              - { name: tail, layer: fx, file: a.wav, after: "bell: one", to: 0.05 }
              - { name: out, type: fade, target: bed, level: -inf, duration: 4800 samples, at: manual }

            """, "\(written)")
        #expect(try String(contentsOfFile: saved.backupPath, encoding: .utf8) == Self.text)
        let reread = try Session.load(path: saved.path).document
        #expect(reread.cues.map(\.name) == ["bed", "bell: one", "tail", "out"])
        #expect(reread.cues[0].gainDB == -6 && reread.cues[1].number == "12" && reread.cues[1].action.preWait == nil)
        #expect(reread.cues[2].to == .seconds(0.05) && reread.cues[3].action.duration == .samples(4800))
    }

    @Test("a file changed on disk since it was read is not overwritten (the error says so and how to go on); forced, it is, and its changed text is the backup")
    func changedOnDisk() throws {
        let show = try Self.show()
        let player = show.player
        try player.edit("bed", .gain(-1))
        let path = player.session.document.path
        let theirs = Self.text + "# someone else's line\n"
        try theirs.write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            try SessionFile.save(player.document, of: player.session)
        } throws: { error in
            (error as? SessionFileEditError)?.message.contains("changed on disk since the session was read from it") == true
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == theirs)
        let saved = try SessionFile.save(player.document, of: player.session, force: true)
        #expect(try String(contentsOfFile: saved.backupPath, encoding: .utf8) == theirs)
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("gain: -1 dB"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: show.temp.path).filter { $0.contains(".tmp") || $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }
}
