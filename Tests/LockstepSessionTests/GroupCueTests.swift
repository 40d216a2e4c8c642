import Foundation
import Lockstep
import LockstepSession
import LockstepTestSupport
import Testing

/// Group cues: timeline and playlist groups, their lengths, actions on a group, nesting, and the
/// mistakes a group's cues can make — rendered offline and checked sample by sample.
@Suite("Group cues: timeline and playlist modes, crossfades, actions on a group, nesting")
struct GroupCueTests {
    func show(_ cues: String) throws -> OfflineShow {
        try OfflineShow("channels: 1\nlayers: { bed: {}, fx: {} }\ncues:\n" + cues,
                        audio: [("bed.wav", Signals.constant(0.25, frames: 48000)), ("long.wav", ramp(4800)),
                                ("hit.wav", Signals.impulse(at: 0, frames: 16, value: 0.5))])
    }

    @Test("a timeline group starts its cues with it, at their own times; the cue after the group follows its last cue's end")
    func timelineGroup() throws {
        let show = try show("""
              - name: scene
                type: group
                at: manual
                children:
                  - { name: a, layer: fx, file: hit.wav }
                  - { name: b, layer: bed, file: hit.wav, at: 1000 samples }
                  - { name: c, layer: fx, file: hit.wav, after: b }
              - { name: next, layer: fx, file: hit.wav }
            """)
        let timeline = show.player.timeline
        #expect(timeline.cues.map(\.trigger) == [0, 0, 0, 0, 0])
        #expect(timeline.cues.map(\.offsetFromTrigger) == [0, 0, 1000, 1016, 1032])
        #expect(timeline.cues[0].action == .group && timeline.cues[0].length == 1032 && timeline.cues[0].members == [1, 2, 3])
        #expect(timeline.manualCues.map(\.name) == ["scene"])
        try show.render(512)
        let fired = try show.player.go()
        #expect(fired.cue == "scene" && fired.placed == ["scene", "a", "b", "c", "next"])
        try show.render(until: Int(fired.start) + 2000)
        let s = Int(fired.start)
        #expect(show.output.indices.filter { show.output[$0] != 0 } == [s, s + 1000, s + 1016, s + 1032])
    }

    @Test("a playlist group plays its cues one after another, overlapped by the group's crossfade (equal power)")
    func playlistGroup() throws {
        let show = try show("""
              - name: list
                type: group
                mode: playlist
                crossfade: 800 samples
                at: 0
                children:
                  - { name: one, layer: fx, file: long.wav }
                  - { name: two, layer: bed, file: long.wav }
                  - { name: three, layer: fx, file: long.wav, crossfade: 0 samples }
            """)
        let cues = show.player.timeline.cues
        #expect(cues.map(\.start) == [0, 0, 4000, 8800])
        #expect(cues[1].crossfadeOut == 800 && cues[2].crossfadeIn == 800 && cues[3].crossfadeIn == 0)
        #expect(cues[0].length == 13600)
        try show.render(until: 14000)
        let out = show.output, r = ramp(4800)
        for k in [0, 3999] { #expect(out[k] == r[k], "sample \(k)") }
        for j in stride(from: 0, to: 800, by: 9) {
            let outgoing = r[4000 + j] * Float(cos(.pi / 2 * Double(j) / 800))
            let incoming = r[j] * Float(sin(.pi / 2 * Double(j) / 800))
            #expect(abs(out[4000 + j] - (outgoing + incoming)) < 1e-6, "crossfade sample \(j)")
        }
        #expect(out[8799] == r[4799] && out[8800] == r[0] && out[13599] == r[4799] && out[13600] == 0)
    }

    @Test("a stop, fade or pause of a group acts on every audio cue inside it, nested groups too")
    func actionsOnAGroup() throws {
        let show = try show("""
              - name: outer
                type: group
                at: 0
                children:
                  - { name: a, layer: bed, file: bed.wav }
                  - name: inner
                    type: group
                    children:
                      - { name: b, layer: fx, file: bed.wav, at: 100 samples }
              - { name: down, type: fade, target: outer, level: -6, duration: 0 samples, at: 2000 samples }
              - { name: cut, type: stop, target: outer, at: 4000 samples }
            """)
        let cues = show.player.timeline.cues
        #expect(cues[0].members == [1, 2, 3] && cues[2].members == [3])
        #expect(show.player.timeline.actionSummary(cues[0]) == "group of 2")
        try show.render(until: 6000)
        let out = show.output, half = Float(SessionGain.linear(-6))
        #expect(out[50] == 0.25 && out[150] == 0.5)
        #expect(out[2100] == 0.5 * half)
        #expect(out[(4000 + 240)...].allSatisfy { $0 == 0 })
        #expect([1, 3].allSatisfy { show.player.timeline.cues[$0].end == 4000 + 240 })
        #expect([0, 2].allSatisfy { show.player.timeline.cues[$0].state(at: 4240) == .stopped })
    }

    @Test("a control surface's stop, pause, resume and level of a group act on every cue in it")
    func controlsOnAGroup() throws {
        let show = try show("""
              - name: scene
                type: group
                at: manual
                children:
                  - { name: a, layer: bed, file: bed.wav }
                  - { name: b, layer: fx, file: bed.wav, at: 100 samples }
            """)
        try show.render(512)
        let fired = try show.player.go()
        let s = Int(fired.start)
        try show.render(until: s + 1000)
        let paused = try show.player.pauseCue("scene")
        #expect(paused.end == paused.start + 240)
        try show.render(until: Int(paused.end) + 500)
        #expect(show.output[Int(paused.end)...].allSatisfy { $0 == 0 })
        let resumed = try show.player.resumeCue("scene")
        try show.render(until: Int(resumed.end) + 100)
        #expect(show.output[Int(resumed.end) + 50] == 0.5)
        try show.player.setCueLevel("scene", decibels: -6)
        try show.render(until: show.output.count + 1000)
        #expect(show.output.last == 0.5 * Float(SessionGain.linear(-6)))
        let stopped = try show.player.stopCue("scene")
        try show.render(until: Int(stopped.end) + 500)
        #expect(show.output[Int(stopped.end)...].allSatisfy { $0 == 0 })
        #expect(throws: PlayerError.self) { try show.player.stopCue("scene") }
    }

    @Test("a group's cues start with it: no GO of their own, no time of their own in a playlist, no start on a cue outside the group; a group needs cues")
    func mistakes() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(4800))
        let problems = try fixture.diagnostics("""
            layers: { a: {} }
            cues:
              - { name: top, layer: a, file: a.wav, at: 0 }
              - name: g
                type: group
                mode: playlist
                children:
                  - { name: one, layer: a, file: a.wav, at: manual }
                  - { name: two, layer: a, file: a.wav, at: 1 }
                  - { name: three, layer: a, file: a.wav, after: top, continue: none }
                  - { name: four, layer: a, file: a.wav }
              - { name: empty, type: group }
              - { name: m, type: group, mode: loop, children: [ { layer: a, file: a.wav } ] }
              - { name: x, layer: a, file: a.wav, children: [] }
            """)
        let messages = problems.map { "\($0.location.line): \($0.message)" }
        let expected = [
            "8: cue 2.1 ('one') is in group 'g' and starts with it; remove 'at: manual' and fire the group",
            "9: cue 2.2 ('two') is in playlist group 'g', which plays its cues one after another; remove 'at' (or use 'offset', or 'mode: timeline' on the group)",
            "10: cue 'three' is in group 'g', but 'after' names 'top', which is not; a cue of a group starts with the group or after a cue of the same group",
            "10: cue 'three' is in a group, whose cues start with it, so the next one cannot wait for a GO; remove 'continue: none'",
            "12: cue 3 ('empty'): a group cue needs 'children:', the list of cues it holds",
            "13: cue 4: unknown group mode 'loop'; the modes are timeline, playlist",
            "14: cue 5 ('x'): an audio cue has no 'children'; give it 'type:' (group) or remove the key",
        ]
        #expect(messages.sorted() == expected.sorted(), "\(messages.joined(separator: "\n"))")
    }
}
