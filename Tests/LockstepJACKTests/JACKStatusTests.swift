import CJack
import LockstepJACK
import Testing

@Suite("JACK status")
struct JACKStatusTests {
    @Test("jack_status_t bits read as named options; unknown bits survive")
    func bits() {
        let status = JACKStatus(jack_status_t(rawValue: JackFailure.rawValue | JackServerFailed.rawValue))
        #expect(status == [.failure, .serverFailed])
        #expect(status.description == "[failure, serverFailed]")
        #expect(!status.contains(.nameNotUnique))
        let unknown = JACKStatus(rawValue: JackVersionError.rawValue | 0x10000)
        #expect(unknown.contains(.versionError) && unknown.description == "[versionError, 0x10000]")
        #expect(JACKStatus().description == "[]")
    }
}
