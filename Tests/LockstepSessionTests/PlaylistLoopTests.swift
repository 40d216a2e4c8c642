import Foundation
import Lockstep
import LockstepSession
import LockstepTestSupport
import Testing

/// Looping playlist groups (`mode: playlist`, `loop: N | forever`): rendered offline, compared
/// sample for sample with the same playlist written out pass by pass.
@Suite("Playlist groups that loop: passes, the crossfade between them, devamp")
struct PlaylistLoopTests {
    static let audio: [(name: String, samples: [Float])] = [("a.wav", ramp(3000, scale: 0.5)), ("b.wav", ramp(2000, scale: -0.25))]

    static func ramp(_ frames: Int, scale: Float) -> [Float] { (0..<frames).map { Float($0 + 1) / Float(frames) * scale } }

    static func show(_ cues: String) throws -> OfflineShow {
        try OfflineShow("channels: 1\nlayers: { x: {}, y: {} }\ncues:\n" + cues, audio: audio)
    }

    /// The playlist `passes` times over, cue by cue, with the same crossfade.
    static func unrolled(passes: Int, crossfade: Int) -> String {
        var children = ""
        for pass in 0..<passes {
            children += "      - { name: a\(pass), layer: x, file: a.wav }\n      - { name: b\(pass), layer: y, file: b.wav }\n"
        }
        return "  - name: list\n    type: group\n    mode: playlist\n    crossfade: \(crossfade) samples\n    at: 0\n    children:\n" + children
    }

    static func looping(_ loop: String, crossfade: Int) -> String {
        """
          - name: list
            type: group
            mode: playlist
            crossfade: \(crossfade) samples
            loop: \(loop)
            at: 0
            children:
              - { name: a, layer: x, file: a.wav }
              - { name: b, layer: y, file: b.wav }

        """
    }

    @Test("loop: 3 plays the list three times, crossfading from its last cue into its first each pass: the same samples as the list written out three times")
    func threePasses() throws {
        let looped = try Self.show(Self.looping("3", crossfade: 400))
        let cues = looped.player.timeline.cues
        // A pass is a (3000) then b (2000), 400 overlapped twice: 4200 samples apart.
        #expect(cues[1].repeats?.period == 4200 && cues[2].repeats?.period == 4200)
        #expect(cues[0].length == 2 * 4200 + 4600 && cues[1].length == 2 * 4200 + 3000 && cues[2].length == 2 * 4200 + 2000)
        let plain = try Self.show(Self.unrolled(passes: 3, crossfade: 400))
        #expect(plain.player.timeline.cues[0].length == cues[0].length)
        try looped.render(until: 14000)
        try plain.render(until: 14000)
        #expect(looped.output == plain.output, "the outputs differ")
        #expect(looped.output[12999] != 0 && looped.output[13000...].allSatisfy { $0 == 0 })
    }

    @Test("loop: forever repeats until stopped; a devamp of the group lets the pass under way finish, then it ends as the list written out to that pass")
    func foreverAndDevamp() throws {
        #expect(try Self.show(Self.looping("forever", crossfade: 0)).player.timeline.cues[0].length == nil)
        let forever = try Self.show(Self.looping("forever", crossfade: 0) + "  - { name: leave, type: devamp, target: list, at: 9000 samples }\n")
        let plain = try Self.show(Self.unrolled(passes: 2, crossfade: 0))
        try forever.render(until: 14000)
        try plain.render(until: 14000)
        // Passes of 5000: the devamp at 9000 is in the second, which ends at 10000.
        #expect(forever.output == plain.output, "the outputs differ")
        #expect(forever.player.timeline.cues[0].end == 10000)
        #expect(forever.output[9999] != 0 && forever.output[10000...].allSatisfy { $0 == 0 })
    }

    @Test("a GO, a level change and a GO again of a looping list give the same samples as of the list written out pass by pass")
    func goLevelRefire() throws {
        let manual = { (text: String) in text.replacingOccurrences(of: "at: 0", with: "at: manual") }
        var outputs: [[Float]] = []
        for text in [Self.looping("3", crossfade: 300), Self.unrolled(passes: 3, crossfade: 300)] {
            let show = try Self.show(manual(text))
            try show.render(512)
            let first = try show.player.go("list")
            try show.render(until: Int(first.start) + 6000)
            try show.player.setCueLevel("list", decibels: -6, ramp: 0.01)
            try show.render(until: Int(first.start) + 10000)
            let again = try show.player.go("list")
            try show.render(until: Int(again.start) + 14000)
            outputs.append(show.output)
        }
        #expect(outputs[0] == outputs[1], "the outputs differ")
        #expect(outputs[0].contains { $0 != 0 })
    }

    @Test("a pause of a looping list holds every pass (no cue of a later pass starts while it is paused); a resume plays on from there")
    func pauseHoldsEveryPass() throws {
        let show = try Self.show(Self.looping("forever", crossfade: 0).replacingOccurrences(of: "at: 0", with: "at: manual"))
        try show.render(512)
        let first = try show.player.go("list")
        try show.render(until: Int(first.start) + 6000)
        let paused = try show.player.pauseCue("list")
        try show.render(until: Int(paused.end) + 12000)
        #expect(show.output[Int(paused.end)...].allSatisfy { $0 == 0 })
        let resumed = try show.player.resumeCue("list")
        try show.render(until: Int(resumed.end) + 8000)
        // Paused 1000 samples into the second pass's a (5000 + 1000): it plays on, then b, then a again.
        let played = Int(paused.end) - Int(first.start)
        let a = Self.ramp(3000, scale: 0.5), b = Self.ramp(2000, scale: -0.25)
        let back = Int(resumed.end)
        let k = played - 5000 + (back - Int(resumed.start))
        #expect(show.output[back] == a[k])
        #expect(show.output[back + (3000 - k)] == b[0] && show.output[back + (3000 - k) + 2000] == a[0])
    }

    @Test("only a playlist loops, and only audio cues of a length: each mistake is one error at its line")
    func mistakes() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", Self.ramp(3000, scale: 0.5))
        let problems = try fixture.diagnostics("""
            cues:
              - { name: t, type: group, loop: 2, at: 0, children: [ { name: t1, file: a.wav } ] }
              - name: p
                type: group
                mode: playlist
                loop: forever
                at: 0
                children:
                  - { name: p1, file: a.wav, loop: forever }
              - name: q
                type: group
                mode: playlist
                loop: 2
                crossfade: 1
                at: 0
                children:
                  - { name: q1, file: a.wav }
              - name: w
                type: group
                mode: playlist
                loop: 2
                at: 0
                children:
                  - { name: w1, type: wait, duration: 1 }
            """)
        let messages = problems.map { "\($0.location.line): \($0.message)" }
        #expect(messages.sorted() == [
            "2: cue 1 ('t'): a timeline group plays its cues once, together; 'loop' repeats a playlist: add 'mode: playlist' or remove 'loop'",
            "9: cue 'p1' is in looping playlist 'p', which repeats audio cues of a length: give it a loop count",
            "14: group 'q': crossfade 1 s is longer than its first cue, which it crossfades into the next pass; shorten the crossfade",
            "24: cue 'w1' is in looping playlist 'w', which repeats audio cues of a length: move this wait cue out of the group",
        ].sorted(), "\(messages.joined(separator: "\n"))")
    }
}
