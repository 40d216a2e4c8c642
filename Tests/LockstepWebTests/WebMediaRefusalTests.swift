import LockstepControl
import LockstepSession
import LockstepTestSupport
@testable import LockstepWeb
import Testing

@Suite("The media-folder check of the page's edits")
struct WebMediaRefusalTests {
    @Test("a command that names no file never reads the folder; a file outside it is refused, one inside it passes")
    func onlyEditsNamingAFileLookAtTheFolder() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-media")
        try FileFixtures.writeText(path: temp.file("door.wav"), "not audio; the check only looks for the file")
        // The folder is an autoclosure: reading it for a GO or an edit of another key fails here.
        func unread() -> String {
            Issue.record("the folder was read for a command that names no file")
            return temp.path
        }
        let place = SessionFileEditor.Place(after: nil)
        #expect(WebControlServer.mediaRefusal(.go(nil), folder: unread()) == nil)
        #expect(WebControlServer.mediaRefusal(.stop, folder: unread()) == nil)
        #expect(WebControlServer.mediaRefusal(.restructure(.set(.name("bell"), [CueValueChange(key: "pre_wait", value: "1")])),
                                              folder: unread()) == nil)
        #expect(WebControlServer.mediaRefusal(.restructure(.add([CueValue(key: "at", value: "manual")], place)),
                                              folder: unread()) == nil)
        let outside = WebControlServer.mediaRefusal(.restructure(.add([CueValue(key: "file", value: "/etc/hostname")], place)),
                                                    folder: temp.path)
        #expect(outside?.contains("is not in the session's media folder") == true, "\(outside ?? "nil")")
        let upward = WebControlServer.mediaRefusal(.restructure(.set(.name("bell"), [CueValueChange(key: "file", value: "../door.wav")])),
                                                   folder: temp.path)
        #expect(upward?.contains("is not in the session's media folder") == true, "\(upward ?? "nil")")
        let missing = WebControlServer.mediaRefusal(.restructure(.set(.name("bell"), [CueValueChange(key: "file", value: "gone.wav")])),
                                                    folder: temp.path)
        #expect(missing?.contains("is not a file of the session's media folder") == true, "\(missing ?? "nil")")
        #expect(WebControlServer.mediaRefusal(.restructure(.set(.name("bell"), [CueValueChange(key: "file", value: "door.wav")])),
                                              folder: temp.path) == nil)
    }
}
