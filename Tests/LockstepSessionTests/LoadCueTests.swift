import Foundation
import Lockstep
import LockstepSession
import LockstepTestSupport
import Testing

/// Load cues (`type: load`, QLab's Load cue): the target manual cue's next GO after the load
/// plays it from `load_time` in, sample for sample; a GO uses the load up.
@Suite("Load cues: the target's next GO plays from the load time")
struct LoadCueTests {
    static let text = """
        channels: 1
        layers: { fx: {} }
        cues:
          - { name: a, layer: fx, file: ramp.wav, at: manual }
          - { name: ld, type: load, target: a, load_time: 0.25, at: 0.5 }
        """

    @Test("a GO before the load cue plays from the start; the first after it from load_time (12 000 samples in), on its sample; the next from the start again")
    func loadTime() throws {
        let step: Float = 1.0 / 65536
        let show = try OfflineShow(Self.text, audio: [("ramp.wav", Signals.ramp(frames: 16000, start: 1, step: step))])
        let player = show.player
        /// GOes `a` on session sample `at`; returns where it is heard from and its offset.
        func go(at sample: Int64) throws -> (heard: Int64, offset: Int64) {
            try show.render(until: Int(sample) - 2048)
            try player.go("a", atPosition: sample)
            let cue = try #require(player.timeline.cues.first { $0.name == "a" })
            let heard = try #require(cue.placedAt), start = try #require(cue.start)
            return (heard, heard - start)
        }
        // (The ramp lasts 16 000 samples: each GO comes after the one before has ended.)
        let first = try go(at: 4800)
        #expect(first.offset == 0)
        let second = try go(at: 36000)
        #expect(second.offset == 12000, "the load cue at 0.5 s loaded a to 0.25 s")
        let third = try go(at: 48000 + 12000)
        #expect(third.offset == 0, "the GO before used the load up")
        try show.render(until: 48000 * 2)
        let out = show.output
        for (go, offset) in [(first, 0), (second, 12000), (third, 0)] {
            let at = Int(go.heard)
            #expect(out[at - 1] == 0 && out[at] == (Float(offset) + 1) * step
                    && out[at + 100] == (Float(offset) + 101) * step, "GO heard on \(at): \(out[(at - 2)...(at + 2)])")
        }
        // The load cue is reported as what it does.
        let ld = try #require(player.timeline.cues.first { $0.name == "ld" })
        #expect(player.timeline.actionSummary(ld) == "load a to 0.250 s")
    }

    @Test("a load cue is checked: its target must be a manual cue; load_time is a time; other keys are refused")
    func checks() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-load")
        try FileFixtures.writeWAV(path: temp.file("ramp.wav"), samples: Signals.constant(0.5, frames: 4800),
                                  format: StreamFormat(sampleRate: 48000, channelCount: 1))
        func problems(_ cue: String) -> String {
            let text = "channels: 1\nlayers: { fx: {} }\ncues:\n  - { name: a, layer: fx, file: ramp.wav, at: manual }\n  - { name: t, layer: fx, file: ramp.wav, at: 0 }\n  - \(cue)\n"
            do throws(SessionError) {
                _ = try Session.parse(text: text, path: temp.file("show.yaml")).timeline(rate: 48000)
                return ""
            } catch {
                return error.diagnostics.map(\.message).joined(separator: "; ")
            }
        }
        #expect(problems("{ name: l, type: load, target: a, load_time: 1:30, at: 1 }").isEmpty)
        #expect(problems("{ name: l, type: load, target: a, at: 1 }").isEmpty, "load_time defaults to 0")
        #expect(problems("{ name: l, type: load, at: 1 }").contains("a load cue needs 'target: CUE'"))
        #expect(problems("{ name: l, type: load, target: t, at: 1 }").contains("is not a manual cue"))
        #expect(problems("{ name: l, type: load, target: a, load_time: soon, at: 1 }").contains("load_time"))
        #expect(problems("{ name: l, type: load, target: a, level: -3, at: 1 }").contains("a load cue has no 'level'"))
    }
}
