import Foundation
import Lockstep
import LockstepSession
import LockstepTestSupport
import Testing

@Suite("The cue list: firing a cue again, the double-GO window, reset (offline, sample-exact)")
struct CueListTests {
    static let declick = 240          // 5 ms at 48 kHz
    static let clipFrames = 1000

    static let text = """
        channels: 1
        layers: { bed: {}, fx: {} }
        cues:
          - { name: bed, layer: bed, file: bed.wav, at: 0 }
          - { name: a, layer: fx, file: clip.wav, at: manual }
          - { name: tail, layer: bed, file: clip.wav, after: a }
          - { name: b, layer: fx, file: clip.wav, at: manual }
          - { name: c, layer: fx, file: clip.wav, at: manual }
        """

    func show(loopingBed: Bool = false) throws -> OfflineShow {
        let text = loopingBed ? Self.text.replacingOccurrences(of: "file: bed.wav, at: 0 }", with: "file: bed.wav, at: 0, loop: forever }") : Self.text
        return try OfflineShow(text, audio: [("bed.wav", Signals.constant(0.125, frames: 4800)),
                                           ("clip.wav", ramp(Self.clipFrames))])
    }

    @Test("a cue played to its end fires again: placed anew with its chain, both placements heard to the sample")
    func fireAgainAfterItEnded() throws {
        let show = try show()
        try show.render(8192)
        let first = try show.player.go("a")
        #expect(first.placed == ["a", "tail"])
        try show.render(until: Int(first.start) + 3 * Self.clipFrames)
        let again = try show.player.go("a")
        #expect(again.placed == ["a", "tail"] && again.start > first.start + 2 * Int64(Self.clipFrames))
        try show.render(until: Int(again.start) + 3 * Self.clipFrames)
        let clip = ramp(Self.clipFrames)
        for start in [Int(first.start), Int(again.start)] {
            #expect(Array(show.output[start..<(start + Self.clipFrames)]) == clip)                         // a
            #expect(Array(show.output[(start + Self.clipFrames)..<(start + 2 * Self.clipFrames)]) == clip) // then tail
            #expect(show.output[start - 1] == 0 && show.output[start + 2 * Self.clipFrames] == 0)
        }
        let timeline = show.player.timeline
        #expect(timeline.cues[1].instance == 1 && timeline.cues[1].start == again.start)
        #expect(timeline.retired[1]?.map(\.name) == ["a"] && timeline.retired[0]?.map(\.name) == ["bed", "tail"].filter { $0 == "tail" })
        #expect(timeline.retired[1]?.first?.start == first.start)
    }

    @Test("fired again while it plays: the earlier placement fades out over 5 ms from the new one's first sample, under it")
    func fireAgainWhilePlaying() throws {
        let show = try show()
        let first = try show.player.go("b")
        try show.render(until: Int(first.start) + 300)
        let again = try show.player.go("b")
        let s = Int(again.start), k = Int(again.start - first.start)
        #expect(k > 0 && k + Self.declick < Self.clipFrames)
        try show.render(until: s + Self.clipFrames + 10)
        let clip = ramp(Self.clipFrames)
        // (The bed on its own layer plays 0.125 for its first 4800 samples.)
        let bed: (Int) -> Float = { $0 < 4800 ? 0.125 : 0 }
        #expect(show.output[s - 1] == clip[k - 1] + bed(s - 1))
        for j in 0..<Self.declick {
            let fx = clip[k + j] * Float(fadeOut(j, Self.declick)) + clip[j]
            #expect(show.output[s + j] == fx + bed(s + j), "sample \(j) of the fade")
        }
        for j in Self.declick..<Self.clipFrames { #expect(show.output[s + j] == clip[j] + bed(s + j)) }
        let retired = try #require(show.player.timeline.retired[1]?.first)
        #expect(retired.end == again.start + Int64(Self.declick) && retired.state(at: again.start + Int64(Self.declick)) == .stopped)
    }

    @Test("a plain go inside the double-GO window is ignored and counted; a named go is not; after the window it fires")
    func doubleGo() throws {
        let show = try show()
        show.player.doubleGoWindow = 14400                  // 0.3 s
        let first = try show.player.go()
        #expect(first.cue == "a" && first.playhead == "b")
        #expect { try show.player.go() } throws: { ($0 as? PlayerError)?.kind == .doubleGo }
        #expect(show.player.ignoredGoCount == 1 && show.player.playhead == "b")
        #expect(try show.player.startCue("c").cue == "c")      // named: never ignored
        try show.render(until: Int(first.start) + 14400 - 1024)
        #expect(throws: PlayerError.self) { try show.player.go() }
        #expect(show.player.ignoredGoCount == 2)
        try show.render(until: Int(first.start) + 14400)
        let later = try show.player.go()
        #expect(later.cue == "b" && later.start >= first.start + 14400)
        show.player.doubleGoWindow = 0
        try show.player.select("a")
        #expect(try show.player.go().cue == "a")              // no window: at once
    }

    @Test("a cue loaded to a time sounds from there in on its go's sample, and is unloaded by it; loading past its end is refused")
    func loadToTime() throws {
        let show = try show()
        #expect(try show.player.load("b", at: 300) == 300)
        #expect(try show.player.load("b", at: 100, change: .later) == 400)
        #expect(try show.player.load("b", at: 50, change: .earlier) == 350)
        #expect(throws: PlayerError.self) { try show.player.load("b", at: Int64(Self.clipFrames)) }     // nothing would sound
        #expect(throws: PlayerError.self) { try show.player.load("tail", at: 10) }                      // not manual
        try show.render(8192)                                                       // (past the bed)
        let fired = try show.player.go("b")
        #expect(fired.start == fired.position - 350 && show.player.loadedOffset(of: "b") == 0)
        let s = Int(fired.position)
        try show.render(until: s + Self.clipFrames)
        let clip = ramp(Self.clipFrames)
        #expect(show.output[s - 1] == 0 && show.output[s] == clip[350])
        #expect(Array(show.output[s..<(s + Self.clipFrames - 350)]) == Array(clip[350...]))
        #expect(show.output[s + Self.clipFrames - 350] == 0)
    }

    @Test("a panic of one cue fades it alone out over the time given, then stops it")
    func panicOneCue() throws {
        let show = try show(loopingBed: true)
        try show.render(2048)
        let change = try show.player.stopCue("bed", fade: 0.01)
        #expect(change.end - change.start == 480)
        try show.render(until: Int(change.end) + 10)
        let s = Int(change.start)
        for j in stride(from: 0, to: 480, by: 5) { #expect(show.output[s + j] == Float(0.125) * Float(fadeOut(j, 480))) }
        #expect(show.output[Int(change.end)...].allSatisfy { $0 == 0 })
    }

    @Test("reset: what sounds stops, the timeline is the file's again, the playhead on the first cue, the session from its start")
    func reset() throws {
        // (A bed that plays on however far the render on another thread gets meanwhile.)
        let show = try show(loopingBed: true)
        show.player.doubleGoWindow = 48000
        try show.player.go()
        _ = try show.player.setGain(layer: "bed", decibels: -6)
        try show.render(2048)
        let background = show.renderInBackground()
        let result = try show.player.reset()
        let timeline = show.player.timeline
        let position = show.player.position
        background.stop()
        let rendered = show.player.engine.currentTime().sampleTime
        #expect(result.stopped == ["bed"], "\(result) \(timeline.cues.map { ($0.name, $0.start) })")
        #expect(result.playhead == "a" && show.player.playhead == "a")
        #expect(result.sampleTime != nil)
        #expect(timeline.cues.filter(\.isGoTarget).allSatisfy { $0.start == nil && $0.instance == 0 })
        #expect(timeline.cues[0].start == 0 && timeline.cues[0].interruptions.isEmpty && timeline.cues[0].length == nil)
        #expect(timeline.retired.isEmpty && timeline.automation[0].isEmpty)
        // The session plays from its start again where the reset landed (however far the
        // background render got since: position ≤ the samples rendered after the landing).
        let landed = try #require(result.sampleTime)
        #expect(position <= max(0, rendered - landed) + 2048, "the session plays from its start again: \(position), \(rendered - landed) rendered after the reset")
        #expect(try show.player.go().cue == "a")                 // the window starts afresh
    }
}
