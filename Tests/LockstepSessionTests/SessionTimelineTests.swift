import Foundation
import Lockstep
import LockstepFiles
import LockstepSession
import LockstepTestSupport
import Testing

@Suite("Session timeline: after, with, offset, loops, crossfades, samples and seconds, manual cues")
struct SessionTimelineTests {
    @Test("after/with/offset/crossfade/loop resolve to exact sample times")
    func resolution() throws {
        let fixture = try SessionFixture()
        try fixture.audio("one.wav", ramp(48000))                    // 1 s at 48 kHz
        try fixture.audio("slow.wav", ramp(44100), rate: 44100)      // 1 s at 44.1 kHz
        let path = try fixture.session("""
            cues:
              - { name: a, file: one.wav, at: "100 samples" }
              - { name: b, file: one.wav, after: a }
              - { name: c, file: one.wav, with: b, offset: 0.5 }
              - { name: d, file: one.wav, after: c, crossfade: 0.25 }
              - { name: e, file: one.wav, at: "0:02", from: 0.25, to: 0.75, loop: 3 }
              - { name: f, file: slow.wav, after: e }
              - { name: g, file: one.wav }
            """)
        let timeline = try Session.load(path: path).timeline(rate: 48000)
        let starts = timeline.cues.map(\.start)
        let lengths = timeline.cues.map(\.length)
        let expectedStarts: [Int64?] = [100, 48100, 72100, 108_100, 96000, 168_000, 216_000]
        #expect(starts == expectedStarts)
        #expect(lengths == [48000, 48000, 48000, 48000, 72000, 48000, 48000])
        #expect(timeline.cues[3].crossfadeIn == 12000 && timeline.cues[2].crossfadeOut == 12000)
        #expect(timeline.cues[4].regionStart == 12000 && timeline.cues[4].regionEnd == 36000)
        #expect(timeline.end == Int64(264_000))
        // The same session at 96 kHz: seconds scale, samples stay samples.
        let fast = try Session.load(path: path).timeline(rate: 96000)
        #expect(fast.cues[0].start == 100 && fast.cues[1].start == 96100 && fast.cues[5].length == 96000)
    }

    @Test("a manual cue and the cues chained to it wait for go; fire places them all")
    func manualChains() throws {
        let fixture = try SessionFixture()
        try fixture.audio("one.wav", ramp(4800))
        let path = try fixture.session("""
            cues:
              - { name: intro, file: one.wav, at: 0 }
              - { name: bell, file: one.wav, at: manual, offset: "10 samples" }
              - { name: echo, file: one.wav, after: bell, crossfade: "100 samples" }
              - { name: under, file: one.wav, with: echo, offset: "5 samples" }
            """)
        var timeline = try Session.load(path: path).timeline(rate: 48000)
        #expect(timeline.cues.map(\.start) == [0, nil, nil, nil])
        #expect(timeline.waitingCues.map(\.name) == ["bell"])
        #expect(timeline.end == 4800)
        #expect(timeline.fire(2, at: 1000).isEmpty)                  // not a manual cue
        #expect(timeline.fire(1, at: 1000) == [1, 2, 3])
        let placed: [Int64?] = [0, 1010, 5710, 5715]
        #expect(timeline.cues.map(\.start) == placed)
        #expect(timeline.waitingCues.isEmpty)
        #expect(timeline.fire(1, at: 5).isEmpty)                     // already fired
    }

    @Test("layer gain automation ramps in dB and holds")
    func automation() throws {
        let fixture = try SessionFixture()
        try fixture.audio("one.wav", ramp(480))
        let path = try fixture.session("""
            layers: { a: { gain: -6dB } }
            cues: [ { file: one.wav, layer: a } ]
            automation:
              - { layer: a, at: "1000 samples", gain: -12dB, ramp: "600 samples" }
              - { layer: a, at: "2000 samples", gain: 0dB }
            """)
        let timeline = try Session.load(path: path).timeline(rate: 48000)
        #expect(timeline.layerGainDB(0, at: 999) == -6)
        #expect(timeline.layerGainDB(0, at: 1000) == -6)
        #expect(timeline.layerGainDB(0, at: 1300) == -9)
        #expect(timeline.layerGainDB(0, at: 1600) == -12)
        #expect(timeline.layerGainDB(0, at: 1999) == -12)
        #expect(timeline.layerGainDB(0, at: 2000) == 0)
        #expect(timeline.end == 2000)
    }
}
