import Foundation
import LockstepControl
import LockstepSession
import LockstepTestSupport
import Testing

/// `save` and `save force` (typed, and over every surface): the run's edits written into the
/// session file, again after more edits, refused over a file changed on disk unless forced.
@Suite("Undo, redo and save of cue edits")
struct SaveCommandTests {
    @Test("undo takes the last edit back, redo makes it again, each at once on a cue not placed; a new edit clears what could be redone; save writes what stands")
    func undoRedo() throws {
        let show = try DispatchedShow()
        let player = show.show.player
        func run(_ line: String) throws -> ControlReply { show.dispatcher.execute(try ControlLine.parse(line), address: line) }
        let bell = { player.timeline.cues.first { $0.name == "bell" }! }
        let nothing = try run("undo")
        #expect(!nothing.isOK)
        #expect(try run("set bell gain -6").isOK)
        #expect(try run("set bell pre_wait 0.5").isOK)
        #expect(bell().gainDB == -6 && bell().offsetFromTrigger == 24000)
        let undone = try run("undo")
        #expect(undone.isOK && undone.summary.hasPrefix("undid pre_wait of bell: at once"), "\(undone.summary)")
        #expect(bell().offsetFromTrigger == 0 && bell().gainDB == -6)
        #expect(try run("undo").isOK)
        #expect(bell().gainDB == 0 && player.document.cues[1].gainDB == 0)
        #expect(try run("redo").isOK)
        #expect(bell().gainDB == -6 && player.undoDepth == (1, 1))
        #expect(try run("set horn gain -3").isOK)
        let noRedo = try run("redo")
        #expect(player.undoDepth == (2, 0) && !noRedo.isOK)
        #expect(try run("save").isOK)
        let text = try String(contentsOfFile: player.session.document.path, encoding: .utf8)
        #expect(text.contains("{ name: bell, layer: fx, file: click.wav, at: manual, gain: -6 dB }")
                && text.contains("{ name: horn, layer: fx, file: click.wav, at: manual, gain: -3 dB }") && !text.contains("pre_wait"), "\(text)")
    }

    @Test("set, then save writes the edit into the file; a second save writes only what changed since; a file changed on disk is refused, and saved with force")
    func saveTwice() throws {
        let show = try DispatchedShow()
        let path = show.show.player.session.document.path
        func run(_ line: String) throws -> ControlReply {
            show.dispatcher.execute(try ControlLine.parse(line), address: line)
        }
        #expect(try run("set bell gain -6").isOK)
        let first = try run("save")
        #expect(first.isOK && first.summary.contains("1 value changed"), "\(first.summary)")
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("{ name: bell, layer: fx, file: click.wav, at: manual, gain: -6 dB }"))
        #expect(try run("set horn pre_wait 0.5").isOK)
        let second = try run("save")
        #expect(second.isOK && second.summary.contains("1 value changed"), "\(second.summary)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("gain: -6 dB }") && text.contains("{ name: horn, layer: fx, file: click.wav, at: manual, pre_wait: 0.5 }"), "\(text)")
        try (text + "# by hand\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try run("set horn gain -1").isOK)
        let refused = try run("save")
        #expect(!refused.isOK && refused.summary.contains("changed on disk"), "\(refused.summary)")
        #expect(try run("save force").isOK)
        #expect(try String(contentsOfFile: path + ".bak", encoding: .utf8).hasSuffix("# by hand\n"))
        #expect(throws: ControlError.self) { try ControlLine.parse("save now") }
    }
}
