import Foundation
import LockstepSession
import LockstepTestSupport
import Testing

/// Network cues in the session format: the message syntax and the checks of the keys.
@Suite("Network cues: the message syntax and the session-file checks")
struct NetworkCueParseTests {
    @Test("a message is an address and arguments: whole numbers are i, numbers with a point f, the rest (or anything quoted) s")
    func messageSyntax() throws {
        let message = try NetworkMessage.parse(#"/label "house open" 3 0.5 -2 x "7" 1e3"#)
        #expect(message.address == "/label")
        #expect(message.arguments == [.string("house open"), .int(3), .float(0.5), .int(-2), .string("x"), .string("7"), .float(1000)])
        #expect(message.description == #"/label "house open" 3 0.5 -2 x "7" 1000.0"#)
        #expect(try NetworkMessage.parse("/cue/12/go").arguments.isEmpty)
        #expect(throws: NetworkMessageError.self) { try NetworkMessage.parse("cue/12/go") }
        #expect(throws: NetworkMessageError.self) { try NetworkMessage.parse(#"/a "open"#) }
        #expect(throws: NetworkMessageError.self) { try NetworkMessage.parse("/a/*/go") }
    }

    @Test("a network cue needs a destination HOST:PORT and a message; each mistake is one error at its line")
    func mistakes() throws {
        let fixture = try SessionFixture()
        let problems = try fixture.diagnostics("""
            cues:
              - { name: a, type: network, destination: 127.0.0.1, message: /go }
              - { name: b, type: network, destination: "[::1]:99999", message: go }
              - { name: c, type: network }
              - { name: d, type: network, destination: desk:8000, message: /go, gain: 3 }
            """)
        let messages = problems.map { "\($0.location.line): \($0.message)" }
        #expect(messages.sorted() == [
            "2: cue 1: destination '127.0.0.1' is not HOST:PORT; write e.g. 127.0.0.1:53000 or desk.local:8000",
            "3: cue 2: destination '[::1]:99999' has no port from 1 to 65535; write e.g. 127.0.0.1:53000",
            "3: cue 2: message 'go' does not start with an OSC address; write e.g. /cue/12/go or \"/fader/1 0.5\"",
            "4: cue 3 ('c'): a network cue needs 'destination:' (where it goes, HOST:PORT, e.g. 127.0.0.1:53000)",
            "4: cue 3 ('c'): a network cue needs 'message:' (the OSC message, e.g. /cue/12/go)",
            "5: cue 4 ('d'): a network cue has no 'gain'; it takes destination, message besides the keys every cue takes",
        ].sorted(), "\(messages.joined(separator: "\n"))")
    }
}
