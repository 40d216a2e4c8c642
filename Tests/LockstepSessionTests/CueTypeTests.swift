import Foundation
import Lockstep
import LockstepSession
import LockstepTestSupport
import Testing

/// Cue types, waits and continue modes (QLab's model in the session format), rendered offline and
/// checked sample by sample.
@Suite("Cue types: fade, stop, pause, resume, devamp, start, goto, wait; pre_wait, post_wait, continue")
struct CueTypeTests {
    static let bed: Float = 0.25
    static let declick = 240

    func show(_ cues: String, loopFrames: Int = 1000) throws -> OfflineShow {
        try OfflineShow("channels: 1\nlayers: { bed: {}, fx: {} }\ncues:\n" + cues,
                        audio: [("bed.wav", Signals.constant(Self.bed, frames: 48000 * 3)),
                                ("loop.wav", ramp(loopFrames)), ("hit.wav", Signals.impulse(at: 0, frames: 16, value: 0.5))])
    }

    @Test("a fade cue moves its target's level along its curve, sample by sample, from its first sample; stop_target stops it at the end")
    func fadeCue() throws {
        let show = try show("""
              - { name: bed, layer: bed, file: bed.wav, at: 0 }
              - { name: down, type: fade, target: bed, level: -6, duration: 4800 samples, curve: linear, at: 12000 samples }
              - { name: out, type: fade, target: bed, level: -inf, duration: 4800 samples, stop_target: true, at: 24000 samples }
            """)
        try show.render(until: 30000)
        let out = show.output
        #expect(out[11999] == Self.bed)
        for j in 0..<4800 {
            let dB = 0.0 + (-6.0 - 0.0) * (Double(j) / 4800)
            #expect(out[12000 + j] == Self.bed * Float(SessionGain.linear(dB)), "linear fade sample \(j)")
        }
        #expect(out[16800..<24000].allSatisfy { $0 == Self.bed * Float(SessionGain.linear(-6)) })
        // The default curve, s-curve, to -inf (in dB down to -96, silence at its end).
        for j in stride(from: 0, to: 4800, by: 7) {
            let shape = (1 - cos(Double.pi * Double(j) / 4800)) / 2
            let dB = -6.0 + (-96.0 - -6.0) * shape
            #expect(out[24000 + j] == Self.bed * Float(SessionGain.linear(dB)), "s-curve sample \(j)")
        }
        #expect(out[28800...].allSatisfy { $0 == 0 })
        let bed = show.player.timeline.cues[0]
        #expect(bed.state(at: 28800) == .stopped && bed.end == 28800)
        #expect(show.player.timeline.cues[1].state(at: 14000) == .playing && show.player.timeline.cues[1].end == 16800)
    }

    @Test("a layer fade moves the layer's gain; a stop cue cuts its target with the 5 ms declick")
    func layerFadeAndStop() throws {
        let show = try show("""
              - { name: bed, layer: bed, file: bed.wav, at: 0 }
              - { name: duck, type: fade, layer: bed, level: -12, duration: 0.1, curve: linear, at: 0.5 }
              - { name: cut, type: stop, target: bed, at: 1.0 }
            """)
        try show.render(until: 50000)
        let out = show.output
        for j in stride(from: 0, to: 4800, by: 3) {
            let dB = 0.0 + (-12.0 - 0.0) * (Double(j) / 4800)
            #expect(out[24000 + j] == Self.bed * Float(SessionGain.linear(dB)), "layer fade sample \(j)")
        }
        let ducked = Self.bed * Float(SessionGain.linear(-12))
        #expect(out[28800..<48000].allSatisfy { $0 == ducked })
        for j in 0..<Self.declick { #expect(out[48000 + j] == Self.bed * Float(fadeOut(j, Self.declick)) * Float(SessionGain.linear(-12))) }
        #expect(out[(48000 + Self.declick)...].allSatisfy { $0 == 0 })
    }

    @Test("devamp lets a looping cue finish the pass it is in and end there; pause and resume cues act as the commands do")
    func devampPauseResume() throws {
        let show = try show("""
              - { name: vamp, layer: fx, file: loop.wav, at: 0, loop: forever }
              - { name: leave, type: devamp, target: vamp, at: 2500 samples }
              - { name: bed, layer: bed, file: bed.wav, at: 0 }
              - { name: hold, type: pause, target: bed, at: 6000 samples }
              - { name: again, type: resume, target: bed, at: 9000 samples }
            """)
        try show.render(until: 12000)
        let out = show.output, loop = ramp(1000)
        #expect(show.player.timeline.cues[0].end == 3000)
        for k in [0, 999, 1000, 2999] { #expect(out[k] == loop[k % 1000] + Self.bed, "vamp sample \(k)") }
        #expect(out[3000] == Self.bed)
        for j in 0..<Self.declick { #expect(out[6000 + j] == Self.bed * Float(fadeOut(j, Self.declick))) }
        #expect(out[(6000 + Self.declick)..<9000].allSatisfy { $0 == 0 })
        #expect(out[9000 + Self.declick + 10] == Self.bed)
    }

    @Test("a GO of a start cue fires its target on the same sample; a goto cue puts the playhead on its target")
    func startAndGoto() throws {
        let show = try show("""
              - { name: one, layer: fx, file: hit.wav, at: manual }
              - { name: both, type: start, target: three, at: manual }
              - { name: three, layer: bed, file: hit.wav, at: manual }
              - { name: back, type: goto, target: one, at: manual }
            """)
        try show.render(1024)
        #expect(show.player.playhead == "one")
        try show.player.select("both")
        let fired = try show.player.go()
        #expect(fired.cue == "both" && fired.playhead == "three")
        try show.render(until: Int(fired.start) + 100)
        #expect(show.player.timeline.cues[2].start == fired.start)
        #expect(show.output[Int(fired.start)] == 0.5)
        try show.player.select("back")
        #expect(try show.player.go().playhead == "one")             // the goto, not the next cue
        #expect(show.player.playhead == "one")
    }

    @Test("continue: auto-continue starts the next cue post_wait after this one, auto-follow when it ends; pre_wait delays a cue; a wait cue is a gap")
    func continueModes() throws {
        let show = try show("""
              - { name: a, layer: fx, file: hit.wav, at: manual, continue: auto-continue, post_wait: 1000 samples }
              - { name: b, layer: bed, file: hit.wav, continue: auto-follow }
              - { name: gap, type: wait, duration: 500 samples, continue: auto-follow }
              - { name: c, layer: fx, file: hit.wav, pre_wait: 100 samples, continue: none }
              - { name: d, layer: fx, file: hit.wav }
            """)
        let timeline = show.player.timeline
        #expect(timeline.cues.map(\.trigger) == [0, 0, 0, 0, 4])
        #expect(timeline.cues.map(\.offsetFromTrigger) == [0, 1000, 1016, 1616, 0])
        #expect(show.player.playhead == "a")
        try show.render(512)
        let fired = try show.player.go()
        #expect(fired.placed == ["a", "b", "gap", "c"] && fired.playhead == "d")
        try show.render(until: Int(fired.start) + 2000)
        let s = Int(fired.start)
        #expect(show.output.indices.filter { show.output[$0] != 0 } == [s, s + 1000, s + 1616])
    }

    @Test("wrong cue types and keys are errors at their line: unknown type, a key the type lacks, no target, an unknown or wrong target, continue into a cue that starts by itself")
    func mistakes() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(4800))
        let problems = try fixture.diagnostics("""
            layers: { a: {} }
            cues:
              - { name: one, layer: a, file: a.wav, at: manual, continue: auto-continue }
              - { name: two, layer: a, file: a.wav, at: 1 }
              - { name: f, type: fade, target: one }
              - { name: s, type: stop }
              - { name: g, type: fade, target: nope, level: -6, file: a.wav }
              - { name: t, type: strat, target: one }
              - { name: w, type: wait }
              - { name: p, type: start, target: two }
              - { name: q, type: stop, target: w, post_wait: 1 }
            """)
        let messages = problems.map { "\($0.location.line): \($0.message)" }
        let expected = [
            "4: cue 'two' starts by its own 'at', but 'one' leads into it (continue: auto-continue); remove one of them",
            "5: cue 3 ('f'): a fade cue needs 'level:' (the dB it fades to, e.g. -inf or -12dB)",
            "6: cue 4 ('s'): a stop cue needs 'target: CUE'",
            "7: cue 5 ('g'): a fade cue has no 'file'; it takes curve, duration, layer, level, stop_target, target besides the keys every cue takes",
            "7: cue 'g': unknown target 'nope'; did you mean 'one'?; name a cue (or its number) of this session",
            "8: cue 6: unknown cue type 'strat'; did you mean 'start'?; the types are audio, fade, stop, pause, resume, devamp, start, goto, load, wait, group, network, midi",
            "9: cue 7 ('w'): a wait cue needs 'duration:' (how long it waits, e.g. 2.5)",
            "10: cue 'p': its target 'two' is not a manual cue (it has a place on the timeline, or starts with another); a start cue fires a cue with 'at: manual'",
            "11: cue 'q': its target 'w' is a wait cue; a stop cue acts on an audio or group cue",
        ]
        #expect(messages.sorted() == expected.sorted(), "\(messages.joined(separator: "\n"))")
    }
}
