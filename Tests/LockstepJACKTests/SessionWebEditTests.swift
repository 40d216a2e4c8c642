import Foundation
import Synchronization
import Lockstep
import LockstepTestSupport
import Testing

extension JACKTests.SessionWebTests {
    @Test("headless Chromium edits a cue in the page: pre_wait and gain applied, a bad value refused inline, undo, redo, a save refused when the file changed on disk and made anyway by choice; the page without the edit token may not edit",
          .enabled(if: JACKTests.SessionWebTests.browserMissing == nil, "chromium, chromium-driver or python3-selenium is not installed"))
    func editor() throws {
        let live = try live(extra: ["--web-edit-token", "e1"])
        let running = live.running
        defer { if running.isRunning { running.send(SIGKILL) } }
        #expect(running.waitForErrorOutput(containing: "web page, editing allowed, on "), "\(running.errorOutputSoFar)")
        let editURL = live.url + "?edit=e1"
        #expect(running.errorOutputSoFar.contains("web page, editing allowed, on \(editURL)"), "\(running.errorOutputSoFar)")
        try FileManager.default.createDirectory(atPath: Self.screenshots, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/cue_editor.py").path
        // (The file changes on disk before the page saves: refused, then saved anyway by choice.)
        let browser = try CLI.run([script, editURL, live.url, "bell", Self.screenshots, temp.file("show.yaml")], timeout: 90, executable: "/usr/bin/python3")
        running.send(SIGINT)
        _ = running.wait(timeout: 20)
        if browser.status == 77 { try Test.cancel(Comment(rawValue: browser.stdout.trimmingCharacters(in: .whitespacesAndNewlines))) }
        #expect(browser.status == 0, "\(browser.stdout)\n\(browser.stderr)")
        let page = try #require(try JSONSerialization.jsonObject(with: Data(browser.stdout.utf8)) as? [String: Any])
        #expect(page["fields"] as? [String] == ["name", "number", "type", "layer", "at", "pre_wait", "post_wait", "continue", "group",
                                                "file", "gain", "fade_in", "fade_out", "from", "to", "loop"])
        #expect(page["before"] as? [String: String] == ["pre_wait": "", "gain": ""])
        #expect(page["after"] as? [String: String] == ["pre_wait": "0.5", "gain": "-6"])
        #expect((page["error"] as? String)?.hasPrefix("set: ") == true && (page["error"] as? String)?.contains("soon") == true, "\(page["error"] ?? "")")
        // (Both values were applied as one edit: one undo takes both back.)
        #expect(page["afterUndo"] as? [String: String] == ["pre_wait": "", "gain": ""])
        #expect((page["saveRefused"] as? String)?.contains("changed on disk since the session was read") == true
                && (page["saveRefused"] as? String)?.contains("save anyway") == true, "\(page["saveRefused"] ?? "")")
        #expect((page["save"] as? [String: Any])?["status"] as? String == "ok", "\(page["save"] ?? "")")
        // The file as it was on disk, with the change made there, is kept beside it.
        let backup = try String(contentsOfFile: temp.file("show.yaml") + ".bak", encoding: .utf8)
        #expect(backup.hasSuffix("# changed on disk while the show ran\n"), "\(backup)")
        #expect((page["refused"] as? String)?.contains("may run the show but not edit it") == true, "\(page["refused"] ?? "")")
        let text = try String(contentsOfFile: temp.file("show.yaml"), encoding: .utf8)
        #expect(text.contains("  - { name: bell, layer: fx, file: bell.wav, at: manual, gain: -6, pre_wait: 0.5 }"), "\(text)")
        #expect(text.contains("  - { name: horn, layer: fx, file: horn.wav, at: manual }"))
    }

    @Test("headless Chromium builds a 10-cue show from an empty cue list in the page: adds, sets a bed, a pre-wait, a fade, a wait, an auto-continue, a rename, duplicates and moves, deletes, undoes and redoes, groups, saves; session check of the saved file gives the cues the page shows; a file outside the media folder is refused",
          .enabled(if: JACKTests.SessionWebTests.browserMissing == nil, "chromium, chromium-driver or python3-selenium is not installed"))
    func builder() throws {
        let folder = try TemporaryTestDirectory(prefix: "lockstep-builder")
        let format = StreamFormat(sampleRate: 48000, channelCount: 1)
        try FileFixtures.writeWAV(path: folder.file("a.wav"), samples: Signals.constant(0.125, frames: 48000 * 4), format: format)
        try FileFixtures.writeWAV(path: folder.file("b.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.5), format: format)
        let show = folder.file("show.yaml")
        try FileFixtures.writeText(path: show, "# built in the browser\nchannels: 1\nlayers: { fx: {} }\ncues: []\n")
        let server = try JACKServer(period: 256)
        let sender = try JACKMIDISender(server: server, name: "desk")
        try sender.start()
        defer { sender.stop() }
        let running = try CLI.spawn(["session", "run", show, "--server", server.name, "--client-name", "session-builder",
                                     "--web", "127.0.0.1:0", "--json", "--double-go", "0", "--web-edit-token", "e2",
                                     "--midi", "--midi-connect", sender.portName])
        defer { if running.isRunning { running.send(SIGKILL) } }
        try server.waitForConnection(sender.portName, to: "session-builder:midi_in")
        // The desk: note 60 on channel 1 every 0.3 s, for MIDI learn.
        let playing = Atomic(true)
        let desk = Thread {
            while playing.load(ordering: .acquiring) {
                sender.send([0x90, 60, 100], atFrame: sender.frameTime &+ 512)
                sender.send([0x80, 60, 0], atFrame: sender.frameTime &+ 1024)
                usleep(300_000)
            }
        }
        desk.start()
        defer { playing.store(false, ordering: .releasing) }
        #expect(running.waitForErrorOutput(containing: "web page, editing allowed, on "), "\(running.errorOutputSoFar)")
        let text = running.errorOutputSoFar
        let after = try #require(text.range(of: "web page, editing allowed, on "))
        let editURL = String(text[after.upperBound...].prefix { !$0.isWhitespace })
        try FileManager.default.createDirectory(atPath: Self.screenshots, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/build_show.py").path
        let browser = try CLI.run([script, editURL, Self.screenshots], timeout: 120, executable: "/usr/bin/python3")
        defer { if browser.status != 0 { print("build_show.py: \(browser.stdout)\n\(browser.stderr)") } }
        if browser.status == 77 { try Test.cancel(Comment(rawValue: browser.stdout.trimmingCharacters(in: .whitespacesAndNewlines))) }
        #expect(browser.status == 0, "\(browser.stdout)\n\(browser.stderr)")
        let page = try #require(try JSONSerialization.jsonObject(with: Data(browser.stdout.utf8)) as? [String: Any])
        #expect(page["rowsAtStart"] as? Int == 0)
        #expect((page["errors"] as? [String])?.isEmpty == true, "\(page["errors"] ?? "")")
        let names = ["cue 1", "cue 2 copy", "cue 2", "cue 3", "cue 4", "cue 5", "stinger", "cue 7 group", "cue 7", "cue 8", "cue 9"]
        #expect(page["rows"] as? [String] == names)
        #expect(page["learned"] as? String == "MIDI: note 60 ch 1", "\(page["learned"] ?? "")")
        // The page offered the graph's audio inputs; the layer went to the first and came back.
        let offered = page["ports"] as? [String] ?? []
        #expect(offered.contains("system:playback_1") && !offered.contains { $0.hasPrefix("session-builder:") }, "\(offered)")
        #expect(page["routed"] as? String == offered.first, "\(page["routed"] ?? "")")
        let routedReply = page["routedReply"] as? [String: Any]
        #expect((routedReply?["data"] as? [String: Any])?["routedSampleTime"] is Int, "\(routedReply ?? [:])")
        #expect((page["save"] as? [String: Any])?["status"] as? String == "ok", "\(page["save"] ?? "")")
        let cues = try #require(page["cues"] as? [[String: Any]])
        #expect(cues.map { $0["type"] as? String ?? "" } == ["audio", "audio", "audio", "fade", "wait", "audio", "audio", "group", "audio", "audio", "audio"])
        #expect(cues.filter { $0["group"] as? String == "cue 7 group" }.map { $0["name"] as? String } == ["cue 7", "cue 8"], "\(cues)")
        // A path out of the media folder is refused, by name.
        let port = try #require(Int(editURL.dropFirst("http://127.0.0.1:".count).prefix { $0.isNumber }))
        let outside = try HTTPTestClient.post(port: port, "/api/command?edit=e2",
                                              body: Array(#"{"command":"set","cue":"cue 7","key":"file","value":"../../etc/passwd"}"#.utf8))
        #expect(outside.body.contains("not in the session's media folder"), "\(outside.body)")
        running.send(SIGINT)
        _ = running.wait(timeout: 20)
        // The saved file: checked as a user would, it holds the cues the page showed.
        let saved = try String(contentsOfFile: show, encoding: .utf8)
        #expect(saved.hasPrefix("# built in the browser\nchannels: 1\nlayers: { fx: { gain: -3 } }\ncues:\n  - { name: cue 1, "), "\(saved)")
        let check = try CLI.run(["session", "check", show, "--json"])
        #expect(check.status == 0, "\(check.stderr)")
        let checked = try #require(try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any])
        let checkedCues = try #require(checked["cues"] as? [[String: Any]], "\(check.stdout)")
        #expect(checkedCues.map { $0["name"] as? String ?? "" } == names)
        #expect(saved.hasSuffix("triggers:\n  - { note: 60, channel: 1, do: go cue 2 }\n"), "\(saved)")
        let fade = saved.split(separator: "\n").first { $0.contains("name: cue 3,") } ?? ""
        #expect(["type: fade", "target: cue 1", "level: -12", "duration: 2"].allSatisfy { fade.contains($0) }
                && !fade.contains("file:") && !fade.contains("layer:"), "\(saved)")
    }
}
