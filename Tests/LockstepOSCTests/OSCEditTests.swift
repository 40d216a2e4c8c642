import Foundation
import LockstepControl
import LockstepOSC
import LockstepSession
import LockstepTestSupport
import Testing

/// Editing a show over OSC: QLab's setters and nudges, `/undo` and `/redo`, `/lockstep/save`
/// (refused when the file changed on disk, `"force"` to replace it), behind the passcode.
@Suite("OSC edits: setters, nudges, undo, redo, save (offline, no socket)")
struct OSCEditTests {
    @Test("setters and nudges edit the cue, undo and redo take them back and again, save writes them (refused over a change on disk unless forced); without the passcode nothing is edited")
    func editOverOSC() throws {
        let bench = try ServerBench(.init(passcode: "s3cret"))
        let client: UInt16 = 40000
        func ask(_ address: String, _ arguments: [OSCArgument] = [], from port: UInt16 = client) throws -> [String: Any] {
            try bench.receive(OSCMessage(address, arguments), from: port)
            let replies = bench.take().filter { $0.message.address.hasPrefix("/reply") }
            return try #require(replies.last.flatMap { OSCTestPeer.json($0.message) }, "\(address): no reply")
        }
        func bell() -> String {
            bench.show.player.editedSession.text.split(separator: "\n").first { $0.contains("name: bell") }.map(String.init) ?? ""
        }
        // Not connected: refused, nothing edited.
        #expect(try ask("/cue/bell/preWait", [.float(1.5)])["code"] as? String == "unauthorized")
        #expect(!bell().contains("pre_wait"), "\(bell())")
        #expect(try ask("/connect", [.string("s3cret")])["status"] as? String == "ok")

        let set = try ask("/cue/bell/preWait", [.float(1.5)])
        #expect(set["status"] as? String == "ok" && bell().contains("pre_wait: 1.5"), "\(set); \(bell())")
        #expect(try ask("/cue/bell/preWait/+", [.float(0.25)])["status"] as? String == "ok")
        #expect(bell().contains("pre_wait: 1.75"), "\(bell())")
        #expect(try ask("/cue/bell/name", [.string("chime")])["status"] as? String == "ok")
        #expect(bell().isEmpty && bench.show.player.editedSession.text.contains("name: chime"), "\(bench.show.player.editedSession.text)")

        // Undo takes the rename back, then the nudge; redo makes the nudge again.
        let undone = try ask("/undo")
        #expect(undone["status"] as? String == "ok" && bell().contains("pre_wait: 1.75"), "\(undone); \(bell())")
        #expect(try ask("/undo")["status"] as? String == "ok" && bell().contains("pre_wait: 1.5"), "\(bell())")
        #expect(try ask("/redo")["status"] as? String == "ok" && bell().contains("pre_wait: 1.75"), "\(bell())")

        // Saved into the file; refused when the file changed on disk since; forced, kept as .bak.
        let path = bench.show.temp.file("show.yaml")
        let saved = try ask("/lockstep/save")
        #expect(saved["status"] as? String == "ok", "\(saved)")
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("pre_wait: 1.75"))
        #expect(try ask("/cue/bell/postWait", [.float(2)])["status"] as? String == "ok")
        let other = try String(contentsOfFile: path, encoding: .utf8) + "# edited elsewhere\n"
        try FileFixtures.writeText(path: path, other)
        let refused = try ask("/lockstep/save")
        #expect(refused["status"] as? String == "error" && (refused["data"] as? String)?.contains("changed on disk") == true, "\(refused)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == other)
        let forced = try ask("/lockstep/save", [.string("force")])
        #expect(forced["status"] as? String == "ok", "\(forced)")
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.contains("post_wait: 2") && !written.contains("# edited elsewhere"), "\(written)")
        #expect(try String(contentsOfFile: path + ".bak", encoding: .utf8) == other)
        // Another client, not connected, may not save.
        #expect(try ask("/lockstep/save", from: 40001)["code"] as? String == "unauthorized")
    }
}
