import Foundation
import Lockstep
import LockstepFiles
import LockstepSession
import LockstepTestSupport
import Testing

/// The quarter-cosine fade-out a pause or stop applies, `j` samples into a `length`-sample fade.
func fadeOut(_ j: Int, _ length: Int) -> Double { cos(.pi / 2 * Double(j) / Double(length)) }

@Suite("Session control: stopping, pausing, resuming and levelling single cues, stop-all, the playhead")
struct SessionControlTests {
    static let declick = 240          // 5 ms at 48 kHz
    static let rampFrames = 48000

    static let bedAndBells = """
        channels: 1
        layers: { bed: {}, fx: {} }
        cues:
          - { name: bed, layer: bed, file: bed.wav, at: 0 }
          - { name: later, layer: bed, file: bed.wav, at: 1.0 }
          - { name: a, layer: fx, file: ramp.wav, at: manual }
          - { name: b, layer: fx, file: ramp.wav, at: manual }
          - { name: c, layer: fx, file: ramp.wav, at: manual }
        """

    func bedShow() throws -> OfflineShow {
        try OfflineShow(Self.bedAndBells, audio: [("bed.wav", Signals.constant(0.125, frames: 48000 * 2)),
                                                  ("ramp.wav", ramp(Self.rampFrames))])
    }

    @Test("stop: a playing cue fades out over 5 ms from the control sample and is silent after; the timeline ends there")
    func stopCue() throws {
        let show = try bedShow()
        try show.render(4096)
        let change = try show.player.stopCue("bed")
        let s = Int(change.start)
        #expect(change.end == change.start + Int64(Self.declick))
        #expect(s >= 4096 && s <= 4096 + 4096)
        try show.render(until: s + 1000)
        #expect(show.output[s - 1] == 0.125)
        for j in 0..<Self.declick {
            #expect(show.output[s + j] == 0.125 * Float(fadeOut(j, Self.declick)), "fade sample \(j)")
        }
        #expect(show.output[(s + Self.declick)...].allSatisfy { $0 == 0 })
        let bed = show.player.timeline.cues[0]
        #expect(bed.end == change.end)
        #expect(bed.state(at: change.end) == .stopped)
        #expect(bed.state(at: change.start) == .playing)
        #expect(throws: PlayerError.self) { try show.player.stopCue("bed") }      // stopped already
        #expect(throws: PlayerError.self) { try show.player.stopCue("a") }        // waits for go
    }

    @Test("pause then resume: the cue falls silent and plays on from the very sample it paused at; its end moves by the pause")
    func pauseAndResume() throws {
        let show = try bedShow()
        let fired = try show.player.go("a")
        try show.render(8192)
        let pause = try show.player.pauseCue("a")
        #expect(throws: PlayerError.self) { try show.player.pauseCue("a") }       // paused already
        try show.render(4096)
        #expect(show.player.timeline.cues[2].state(at: pause.end) == .paused)
        #expect(show.player.timeline.pausedCues.map(\.name) == ["a"])
        let resume = try show.player.resumeCue("a")
        #expect(throws: PlayerError.self) { try show.player.resumeCue("a") }      // not paused any more
        let cue = show.player.timeline.cues[2]
        #expect(cue.end == fired.start + Int64(Self.rampFrames) + (resume.start - pause.end))
        try show.render(until: Int(cue.end!) + 100)
        // The bed plays on underneath throughout ('later' joins it at 1 s).
        func bed(_ i: Int) -> Float { i < 48000 ? 0.125 : 0.25 }
        let values = ramp(Self.rampFrames)
        let k0 = Int(fired.start)
        // Before the pause: the ramp, exactly.
        for i in (Int(pause.start) - 50)..<Int(pause.start) { #expect(show.output[i] == bed(i) + values[i - k0]) }
        // The fade-out, then only the bed.
        for j in 0..<Self.declick {
            let i = Int(pause.start) + j
            #expect(show.output[i] == bed(i) + values[i - k0] * Float(fadeOut(j, Self.declick)))
        }
        for i in Int(pause.end)..<Int(resume.start) { #expect(show.output[i] == bed(i)) }
        // After the fade-in it plays on from the cue sample it fell silent at.
        let playedBefore = Int(pause.end) - k0
        for j in 0..<Self.declick {
            let i = Int(resume.start) + j
            let expected = values[playedBefore + j] * Float(sin(.pi / 2 * Double(j) / Double(Self.declick)))
            #expect(show.output[i] == bed(i) + expected)
        }
        for i in Int(resume.end)..<Int(cue.end!) {
            #expect(show.output[i] == bed(i) + values[playedBefore + i - Int(resume.start)])
        }
        #expect(show.output[Int(cue.end!)] == bed(Int(cue.end!)))
    }

    @Test("stop all (panic): every playing cue fades out together, scheduled cues are cancelled, manual cues stay ready")
    func stopAll() throws {
        let show = try bedShow()
        try show.player.go("a")
        try show.render(4096)
        let result = show.player.stopAll(fade: 0.5)
        let silentFrom = result.silentFrom
        #expect(result.cues == ["bed", "later", "a"])
        let s = Int(result.start)
        #expect(silentFrom == result.start + 24000)
        try show.render(until: 48000 * 2)
        let values = ramp(Self.rampFrames)
        let aStart = Int(show.player.timeline.cues[2].start!)
        for j in stride(from: 0, to: 24000, by: 997) {
            let g = Float(fadeOut(j, 24000))
            #expect(show.output[s + j] == 0.125 * g + values[s + j - aStart] * g, "panic fade sample \(j)")
        }
        #expect(show.output[Int(silentFrom)...].allSatisfy { $0 == 0 })        // 'later' (at 1 s) never plays
        #expect(show.player.timeline.cues[1].state(at: 48000) == .stopped)
        #expect(show.player.timeline.end == silentFrom)
        #expect(show.player.timeline.waitingCues.map(\.name) == ["b", "c"])
        let b = try show.player.go()
        #expect(b.cue == "b")
        try show.render(until: Int(b.start) + 10)
        #expect(show.output[Int(b.start)] == values[0])
    }

    @Test("a cue's level changes on the control sample (a step) or along a ramp in dB")
    func cueLevel() throws {
        let show = try bedShow()
        try show.render(2048)
        let at = Int(try show.player.setCueLevel("bed", decibels: -6))
        try show.render(until: at + 100)
        #expect(show.output[at - 1] == 0.125)
        #expect(show.output[at] == 0.125 * Float(SessionGain.linear(-6)))
        let rampAt = Int(try show.player.setCueLevel("bed", decibels: -12, ramp: 0.01))
        try show.render(until: rampAt + 1000)
        #expect(show.output[rampAt + 240] == 0.125 * Float(SessionGain.linear(-9)))
        #expect(show.output[rampAt + 480] == 0.125 * Float(SessionGain.linear(-12)))
        #expect(throws: PlayerError.self) { try show.player.setCueLevel("bed", decibels: 20) }
        #expect(throws: PlayerError.self) { try show.player.setCueLevel("nope", decibels: -3) }
    }

    @Test("the playhead: go fires the selected cue and moves on; next, previous and select move it; start leaves it")
    func playhead() throws {
        let show = try bedShow()
        let player = show.player
        #expect(player.playhead == "a")
        #expect(try player.selectAdjacent(forward: true) == "b")
        #expect(try player.selectAdjacent(forward: false) == "a")
        #expect(try player.selectAdjacent(forward: false) == "a")                        // nothing before 'a': stays
        #expect(player.playhead == "a")
        try player.select("c")
        let first = try player.go()
        #expect(first.cue == "c" && first.playhead == nil)      // none after 'c': past the end
        #expect(throws: PlayerError.self) { try player.go() }
        #expect(throws: PlayerError.self) { try player.selectAdjacent(forward: true) }
        #expect(try player.selectAdjacent(forward: false) == "c")                        // back from past the end
        try player.select("a")
        let started = try player.startCue("b")
        #expect(started.playhead == "a")                        // start does not move the playhead
        #expect(try player.go().cue == "a")
        #expect(player.playhead == "b")                         // the next in file order, played or not
        #expect(throws: PlayerError.self) { try player.select("bed") }                   // not manual
        #expect(try player.startCue("a").cue == "a")                                     // fired again
        try show.render(1024)
    }

    @Test("pause, resume and level made at one rate carry over to the player made again at another")
    func carriedToAnotherRate() throws {
        let show = try bedShow()
        try show.player.go("a")
        try show.render(4096)
        let pause = try show.player.pauseCue("a")
        try show.player.setCueLevel("bed", decibels: -3)
        try show.player.select("c")
        let device = try OfflineDevice(format: StreamFormat(sampleRate: 96000, channelCount: 1), maximumFramesPerRender: 256)
        let engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory)
        let next = try show.player.carried(to: engine)
        let cue = next.timeline.cues[2]
        #expect(cue.interruptions == [SessionTimeline.Interruption(fadeStart: pause.start * 2, fade: 480, resume: nil, isStop: false)])
        #expect(cue.awaitsResume)
        #expect(next.timeline.cues[0].levelChanges.map(\.gainDB) == [-3])
        #expect(next.playhead == "c")
    }
}
