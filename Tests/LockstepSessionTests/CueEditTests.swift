import Foundation
import Lockstep
import LockstepSession
import LockstepTestSupport
import Testing

/// Editing cues while a session plays (QLab's setters): a cue waiting for its GO takes an edit at
/// once, a placed one at its next start; an edit that makes the session invalid is refused.
/// Rendered offline and checked sample by sample.
@Suite("Cue edits while a session plays: at once or at the next start; renames; refusals")
struct CueEditTests {
    func show(_ cues: String) throws -> OfflineShow {
        try OfflineShow("channels: 1\nlayers: { bed: {}, fx: {} }\ncues:\n" + cues,
                        audio: [("ramp.wav", ramp(4800)), ("hit.wav", Signals.impulse(at: 0, frames: 16, value: 0.5)),
                               ("half.wav", Signals.constant(0.5, frames: 4800))])
    }

    @Test("a waiting cue's pre_wait, gain and region take an edit at once: its GO plays the edited cue")
    func waitingCue() throws {
        let show = try show("""
              - { name: a, layer: fx, file: ramp.wav, at: manual }
              - { name: b, layer: bed, file: hit.wav, after: a }
            """)
        try show.render(512)
        #expect(try show.player.edit("a", .preWait(.samples(300))).atNextStart == false)
        try show.player.edit("a", .gain(-6))
        try show.player.edit("a", .from(.samples(1000)))
        try show.player.edit("a", .duration(.seconds(2000.0 / 48000)))
        let cues = show.player.timeline.cues
        #expect(cues[0].offsetFromTrigger == 300 && cues[0].regionStart == 1000 && cues[0].regionEnd == 3000)
        #expect(cues[1].offsetFromTrigger == 2300)
        let fired = try show.player.go()
        let s = Int(fired.start)
        try show.render(until: s + 3000)
        let r = ramp(4800), g = Float(SessionGain.linear(-6))
        #expect(show.output[s - 1] == 0 && show.output[s] == r[1000] * g && show.output[s + 1999] == r[2999] * g)
        #expect(show.output[s + 2000] == 0.5)
        #expect(show.player.document.cues[0].action.preWait == .samples(300))
    }

    @Test("a playing cue plays on unchanged and takes the edit at its next GO; reset returns to the edited show")
    func placedCue() throws {
        let show = try show("""
              - { name: a, layer: fx, file: ramp.wav, at: manual, loop: forever }
            """)
        try show.render(512)
        let first = try show.player.go()
        try show.render(until: Int(first.start) + 1000)
        let edit = try show.player.edit("a", .to(.samples(100)))
        #expect(edit.atNextStart && edit.key == "to")
        try show.render(until: Int(first.start) + 6000)
        let r = ramp(4800)
        #expect(show.output[Int(first.start) + 5000] == r[200])          // the whole file still loops
        try show.player.select("a")
        let second = try show.player.go()
        try show.render(until: Int(second.start) + 400)
        let t = Int(second.start)
        // (The first placement fades out under the second over the 5 ms declick.)
        #expect(show.output[t + 300] == r[0] && show.output[t + 399] == r[99] && show.output[t + 350] == r[50])
        let background = show.renderInBackground()
        try show.player.reset()
        background.stop()
        #expect(show.player.timeline.cues[0].regionEnd == 100 && show.player.timeline.pendingEdits.isEmpty)
    }

    @Test("a playing cue's gain edit ramps its level there, over the 5 ms declick, on the sample the edit names; its next GO plays at the new gain")
    func playingGain() throws {
        let show = try show("""
              - { name: a, layer: fx, file: half.wav, at: manual, loop: forever }
            """)
        try show.render(512)
        let first = try show.player.go()
        try show.render(until: Int(first.start) + 1000)
        let edit = try show.player.edit("a", .gain(-6.0206))
        #expect(!edit.atNextStart && edit.key == "gain")
        let at = Int(edit.sample), ramp = 240
        try show.render(until: at + ramp + 1000)
        let out = show.output
        let quieter = Float(0.5 * SessionGain.linear(-6.0206))
        #expect(out[at - 1] == 0.5 && abs(out[at + ramp + 10] - quieter) < 1e-6, "\(out[at - 1]) \(out[at + ramp + 10])")
        #expect((at..<(at + ramp)).allSatisfy { out[$0] <= out[$0 - 1] && out[$0] > 0.249 }, "a ramp down, no click")
        // Its next GO takes the new gain as the cue's own.
        try show.player.select("a")
        let second = try show.player.go()
        try show.render(until: Int(second.start) + 1000)
        #expect(abs(show.output[Int(second.start) + 500] - quieter) < 1e-6)
        #expect(show.player.timeline.cues[0].gainDB == -6.0206)
    }

    @Test("a timed cue that has not begun takes an edit at once, its layer computed again")
    func timedCue() throws {
        let show = try show("""
              - { name: later, layer: fx, file: hit.wav, at: 9600 samples }
            """)
        try show.render(2048)
        try show.player.edit("later", .gain(-6))
        try show.player.edit("later", .preWait(.samples(100)))
        try show.render(until: 12000)
        #expect(show.output.indices.filter { show.output[$0] != 0 } == [9700])
        #expect(show.output[9700] == 0.5 * Float(SessionGain.linear(-6)))
    }

    @Test("a rename carries every after, with and target; a name or number in use, a bad value or an invalid session is refused and nothing changes")
    func renamesAndRefusals() throws {
        let show = try show("""
              - { name: a, number: 1, layer: fx, file: ramp.wav, at: manual }
              - { name: b, layer: bed, file: hit.wav, after: a }
              - { name: cut, type: stop, target: a, at: manual }
              - { name: c, layer: bed, file: hit.wav, at: 2 }
            """)
        let renamed = try show.player.edit("a", .name("intro"))
        #expect(renamed.cue == "intro")
        #expect(show.player.document.cues[1].start == .after("intro") && show.player.document.cues[2].action.target == "intro")
        #expect(show.player.timeline.cues[1].trigger == 0 && show.player.timeline.cues[2].action == .stop(0))
        #expect(show.player.playhead == "intro")
        func refused(_ name: String, _ change: CueEdit) -> PlayerError? {
            do { try show.player.edit(name, change); return nil } catch { return error }
        }
        #expect(refused("b", .name("intro"))?.kind == .invalidEdit)
        #expect(refused("b", .number("1"))?.message == "number of cue 'b': cue 'intro' has number 1; give every cue its own number")
        #expect(refused("cut", .from(.seconds(1)))?.kind == .invalidEdit)
        #expect(refused("intro", .to(.seconds(5)))?.message
            == "to of cue 'intro' refused: cue 'intro': 'to' 5 s is past the end of 'ramp.wav' (4800 frames, 0.100 s); use a position inside the file or leave 'to' out")
        #expect(refused("cut", .continueMode(.autoFollow))?.message
            == "continue of cue 'cut' refused: cue 'c' starts by its own 'at', but 'cut' leads into it (continue: auto-follow); remove one of them")
        #expect(refused("nope", .gain(0))?.kind == .unknownCue)
        #expect(refused("b", .gain(40))?.kind == .outOfRange)
        #expect(show.player.document.cues.map(\.name) == ["intro", "b", "cut", "c"])
        #expect(show.player.document.cues[2].action.continueMode == nil && show.player.document.cues[0].to == nil)
    }
}
