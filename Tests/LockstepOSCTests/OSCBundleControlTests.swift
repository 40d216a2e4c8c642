import Foundation
import LockstepControl
import LockstepOSC
import LockstepTestSupport
import Testing

/// Bundles through an ``OSCControlServer`` on an offline show: device sample = session sample,
/// and the offline device's host time is its sample time in µs, so a time tag 0.5 s ahead names
/// the sample 24000 after the next one to render.
@Suite("OSCControlServer: bundles, at once and time-tagged (offline, no socket)")
struct OSCBundleControlTests {
    static let session = """
        channels: 1
        layers: { bed: {}, fx: {} }
        cues:
          - { name: bed, layer: bed, file: bed.wav, at: 0 }
          - { name: bell, layer: fx, file: bell.wav, at: manual }
          - { name: horn, layer: fx, file: bell.wav, at: manual }
        """

    func bench(_ options: OSCControlServer.Options = .init()) throws -> ServerBench {
        try ServerBench(options, session: Self.session, audio: [("bed.wav", Signals.constant(0.125, frames: 96000)),
                                                                 ("bell.wav", Signals.impulse(at: 0, frames: 16, value: 0.5))])
    }

    /// Sends a bundle `ahead` seconds ahead of the wall clock; returns the offset (in samples at
    /// 48 kHz) of the sample its time tag names from the next one to render: at most `ahead`
    /// seconds, less by the wall-clock time the server took to read it (±1 sample of rounding).
    func send(_ contents: [OSCPacket], ahead: Double, to bench: ServerBench) throws -> ClosedRange<Int> {
        let before = OSCTimeTag.wallClock()
        try bench.receive(.bundle(.now(plus: ahead), contents), from: 40000)
        let elapsed = OSCTimeTag.wallClock() - before
        return Int(((ahead - elapsed) * 48000).rounded(.down)) - 1...Int((ahead * 48000).rounded(.up)) + 1
    }

    func replies(_ bench: ServerBench) -> [(address: String, json: [String: Any])] {
        bench.take().compactMap { sent in OSCTestPeer.json(sent.message).map { (sent.message.address, $0) } }
    }

    @Test("an immediate bundle runs every message in order and answers each")
    func immediate() throws {
        let bench = try bench()
        try bench.receive(.bundle(.immediately, [.message(OSCMessage("/go")), .bundle(.immediately, [.message(OSCMessage("/lockstep/status"))]),
                                                 .message(OSCMessage("/cue/nobody/start"))]), from: 40000)
        let answers = replies(bench)
        #expect(answers.map(\.address) == ["/reply/go", "/reply/lockstep/status", "/reply/cue/nobody/start"])
        #expect(answers.map { $0.json["status"] as? String } == ["ok", "ok", "error"])
        #expect(answers.last?.json["code"] as? String == "unknownCue")
        let go = try #require(answers.first?.json["data"] as? [String: Any])
        #expect(go["cue"] as? String == "bell" && go["requestedSampleTime"] == nil)
        #expect(bench.server.statistics.bundles == 1 && bench.server.statistics.commands == 3 && bench.server.statistics.scheduled == 0)
    }

    @Test("a bundle 0.5 s ahead starts its cue on the sample of its time tag, and the reply names it; a past one runs now")
    func ahead() throws {
        let bench = try bench()
        let next = bench.show.engine.currentTime().sampleTime
        let expected = try send([.message(OSCMessage("/cue/bell/start"))], ahead: 0.5, to: bench)
        let reply = try #require(replies(bench).first)
        let data = try #require(reply.json["data"] as? [String: Any], "\(reply.json)")
        let at = try #require(data["sampleTime"] as? Int)
        #expect(data["requestedSampleTime"] as? Int == at && data["lateFrames"] as? Int == 0 && data["start"] as? Int == at)
        // (The wall clock runs on between the tag's making and its reading; the offline device's does not.)
        #expect(expected.contains(at - Int(next)), "at \(at), next sample \(next), expected \(expected)")
        try bench.show.render(until: at + 100)
        let output = bench.show.output
        #expect(output[at - 1] == 0.125 && output[at] == 0.625 && output[at + 1] == 0.125)
        #expect(bench.server.statistics.scheduled == 1)

        try bench.receive(.bundle(.now(plus: -5), [.message(OSCMessage("/cue/horn/start"))]), from: 40000)
        let past = try #require(replies(bench).first?.json["data"] as? [String: Any])
        #expect(past["cue"] as? String == "horn" && past["requestedSampleTime"] == nil)
    }

    @Test("a time tag inside what the layers have computed lands on its own sample: the layer is cut there and computed again; not late")
    func insideComputedAudio() throws {
        let bench = try bench()
        let next = Int(bench.show.engine.currentTime().sampleTime)
        let expected = try send([.message(OSCMessage("/go"))], ahead: 0.01, to: bench)
        let data = try #require(replies(bench).first?.json["data"] as? [String: Any])
        let (at, requested) = try (#require(data["sampleTime"] as? Int), #require(data["requestedSampleTime"] as? Int))
        #expect(expected.contains(requested - next), "requested \(requested), next \(next), expected \(expected)")
        // 10 ms is well inside the 4 × 1024 frames each layer has computed ahead.
        #expect(at == requested && at < next + 4 * 1024 && data["lateFrames"] as? Int == 0, "\(data)")
        try bench.show.render(until: at + 100)
        let output = bench.show.output
        #expect(output[at - 1] == 0.125 && output[at] == 0.625 && output[at + 1] == 0.125)
    }

    @Test("ahead, commands that move the session's clock cannot be placed; a bundle too far ahead is refused whole; /connect in a bundle authorises what follows")
    func refusals() throws {
        let bench = try bench(.init(passcode: "s3cret"))
        try bench.receive(.bundle(.now(plus: 1), [.message(OSCMessage("/connect", [.string("s3cret")])), .message(OSCMessage("/pause")),
                                                  .message(OSCMessage("/go")), .message(OSCMessage("/stop"))]), from: 40000)
        let answers = replies(bench)
        #expect(answers.map { $0.json["status"] as? String } == ["ok", "error", "ok", "ok"])
        #expect(answers[1].json["data"] as? String == "/pause moves the whole session's clock, so it cannot be placed on a sample; send it without a time tag (cue commands, stop, panic, level and gain can be placed)")
        // The stop lands on the bundle's sample, with the go.
        let go = try #require(answers[2].json["data"] as? [String: Any]), stop = try #require(answers[3].json["data"] as? [String: Any])
        #expect(stop["sampleTime"] as? Int == go["sampleTime"] as? Int && stop["lateFrames"] as? Int == 0, "\(go) \(stop)")
        try bench.receive(.bundle(.now(plus: 7200), [.message(OSCMessage("/cue/horn/start"))]), from: 40000)
        let far = try #require(replies(bench).first)
        #expect(far.address == "/reply")
        #expect((far.json["data"] as? String)?.contains("lies 120 min ahead; the limit is 60 min. Check the sender's clock") == true, "\(far.json)")
        #expect(bench.show.player.timeline.cues.first { $0.name == "horn" }?.start == nil)
        #expect(bench.server.statistics.tooFarAhead == 1)
    }
}
