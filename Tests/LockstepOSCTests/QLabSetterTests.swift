import Foundation
import LockstepControl
import LockstepOSC
import LockstepSession
import LockstepTestSupport
import Testing

/// QLab's setters over OSC (offline, no socket): `/cue/{cue}/{key} value`, the playhead's
/// `/{key} value`, `/{key}/+` and `/-`; what the cue answers afterwards; refusals.
@Suite("QLab setters: name, number, waits, continue mode, duration, start and end time")
struct QLabSetterTests {
    static let session = """
        channels: 1
        cues:
          - { name: bell, file: bell.wav, at: manual, number: 1, to: 1 }
          - { name: horn, file: bell.wav, at: manual, number: 2 }
          - { name: cut, type: stop, target: bell, at: manual }
        """

    let bench: ServerBench
    let client: UInt16 = 40000

    init() throws {
        bench = try ServerBench(.init(repliesToSender: true), session: Self.session,
                                audio: [("bell.wav", Signals.constant(0.25, frames: 48000 * 3))])
    }

    func ask(_ address: String, _ arguments: [OSCArgument] = []) throws -> [String: Any] {
        try bench.receive(OSCMessage(address, arguments), from: client)
        let replies = bench.take().filter { $0.message.address.hasPrefix("/reply") }
        return try #require(replies.last.flatMap { OSCTestPeer.json($0.message) }, "\(address): no reply")
    }

    func value(_ address: String) throws -> Any? { try ask(address)["data"] }

    @Test("each setter edits the cue and the cue answers the new value; the reply names the key and whether it applies at once")
    func setters() throws {
        let reply = try ask("/cue/1/preWait", [.float(1.5)])
        #expect(reply["status"] as? String == "ok")
        let data = try #require(reply["data"] as? [String: Any])
        #expect(data["edited"] as? String == "pre_wait" && data["atNextStart"] as? Bool == false && data["cue"] as? String == "bell")
        #expect(try value("/cue/1/preWait") as? Double == 1.5)
        #expect(try ask("/cue/1/postWait", [.int32(0), .int32(1), .float(2)])["status"] as? String == "ok")   // h, m, s
        #expect(try value("/cue/1/postWait") as? Double == 62)
        #expect(try ask("/cue/1/startTime", [.float(0.5)])["status"] as? String == "ok")
        #expect(try ask("/cue/1/endTime", [.float(2.5)])["status"] as? String == "ok")
        #expect(try value("/cue/1/startTime") as? Double == 0.5 && value("/cue/1/endTime") as? Double == 2.5)
        #expect(try value("/cue/1/duration") as? Double == 2)
        #expect(try ask("/cue/1/duration/-", [.float(0.5)])["status"] as? String == "ok")
        #expect(try value("/cue/1/endTime") as? Double == 2)
        #expect(try ask("/cue/1/preWait/-", [.float(5)])["status"] as? String == "ok")             // not below 0
        #expect(try value("/cue/1/preWait") as? Double == 0)
        #expect(try ask("/cue/2/number", [.string("2.5")])["status"] as? String == "ok")
        #expect(try value("/cue/2.5/name") as? String == "horn")
        #expect(try ask("/name", [.string("opener")])["status"] as? String == "ok")                // the playhead's cue
        #expect(try value("/cue/1/name") as? String == "opener")
        let timeline = bench.show.player.timeline
        #expect(timeline.cues[0].name == "opener" && timeline.cues[2].action == .stop(0))
        #expect(timeline.cues[0].regionStart == 24000 && timeline.cues[0].regionEnd == 96000)
    }

    @Test("continueMode 1 makes the next manual cue start with this one, 0 makes it wait for its GO again")
    func continueMode() throws {
        #expect(try ask("/cue/1/continueMode", [.int32(1)])["status"] as? String == "ok")
        #expect(try value("/cue/1/continueMode") as? Int == 1)
        #expect(bench.show.player.timeline.cues[1].trigger == 0)
        #expect(bench.show.player.timeline.manualCues.map(\.name) == ["bell", "cut"])
        #expect(try ask("/cue/1/continueMode", [.int32(0)])["status"] as? String == "ok")
        #expect(bench.show.player.timeline.cues[1].trigger == 1)
    }

    @Test("a bad value, a key that cannot be set, a time past the file or the cue list itself: an error, nothing changed")
    func refusals() throws {
        func error(_ address: String, _ arguments: [OSCArgument]) throws -> (String?, String?) {
            let reply = try ask(address, arguments)
            #expect(reply["status"] as? String == "error", "\(address): \(reply)")
            return (reply["code"] as? String, reply["data"] as? String)
        }
        #expect(try error("/cue/1/preWait", [.string("soon")]).0 == "malformed")
        #expect(try error("/cue/1/preWait", [.float(-1)]).0 == "outOfRange")
        #expect(try error("/cue/1/continueMode", [.int32(7)]).0 == "outOfRange")
        #expect(try error("/cue/1/endTime", [.float(9)]) == ("invalidEdit",
            "to of cue 'bell' refused: cue 'bell': 'to' 9 s is past the end of 'bell.wav' (144000 frames, 3.000 s); use a position inside the file or leave 'to' out"))
        #expect(try error("/cue/cut/startTime", [.float(1)]).0 == "invalidEdit")
        #expect(try error("/cue/2/name", [.string("bell")]).0 == "invalidEdit")
        #expect(try error("/cue/1/armed", [.int32(0)]).0 == "unsupported")
        #expect(try error("/cue_id/\(bench.server.workspace.cueListID)/name", [.string("x")]).0 == "unsupported")
        #expect(bench.show.player.document == bench.show.player.session.document)
    }
}
