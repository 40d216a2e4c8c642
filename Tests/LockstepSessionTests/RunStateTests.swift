import Foundation
import Lockstep
import LockstepFiles
import LockstepSession
import LockstepTestSupport
import Testing

/// ``SessionPlayer/RunState``: what a run added, through JSON (as the journal keeps it) into a
/// player made afresh, plays on sample for sample as the run would have — what `--resume` and a
/// rate change rest on.
@Suite("Run state: a run journaled and restored plays on sample for sample")
struct RunStateTests {
    static let text = """
        channels: 1
        layers: { bed: {}, fx: {} }
        cues:
          - { name: bed, layer: bed, file: bed.wav, at: 0 }
          - { name: a, layer: fx, file: ramp.wav, at: manual }
          - { name: dim, type: fade, target: bed, level: -6, duration: 0.1, curve: s-curve, at: manual }
          - { name: b, layer: fx, file: ramp.wav, at: manual }
          - { name: c, layer: fx, file: ramp.wav, at: manual }
        """

    @Test("gos (one fired twice), a fade cue with a curve, a cue level ramp, a layer gain, a pause and resume, a stop, a load and the playhead: restored from JSON into a fresh player, it renders from a later sample exactly what the run rendered there")
    func restoreMatchesTheRun() throws {
        let show = try OfflineShow(Self.text, audio: [("bed.wav", Signals.ramp(frames: 48000 * 4, start: 1, step: 1.0 / 65536)),
                                                      ("ramp.wav", ramp(48000))])
        let player = show.player
        try show.render(4096)
        try player.go()                                               // a
        try show.render(4096)
        try player.setCueLevel("a", decibels: -3, ramp: 0.05)
        try player.go()                                               // dim
        try show.render(8192)
        try player.pauseCue("a")
        try show.render(4096)
        try player.resumeCue("a")
        try show.render(4096)
        try player.go("a")                                            // a again
        try player.setGain(layer: "fx", decibels: -2, ramp: 0.02)
        try show.render(8192)
        try player.go("b")
        try show.render(2048)
        try player.stopCue("b")
        try player.load("c", at: 1000)
        try player.select("c")
        let run = player.runState()
        let journaled = try JSONDecoder().decode(SessionPlayer.RunState.self, from: JSONEncoder().encode(run))
        #expect(journaled == run)
        let from = show.output.count
        try show.render(48000)

        let device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 1), maximumFramesPerRender: 256)
        let engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory)
        let fresh = try SessionPlayer(session: try Session.load(path: show.temp.file("show.yaml")), engine: engine)
        #expect(fresh.restore(journaled).isEmpty)
        #expect(fresh.timeline.cues == player.timeline.cues, "the restored timeline is the run's")
        #expect(fresh.playhead == "c" && fresh.loadedOffset(of: "c") == 1000)
        try fresh.start(from: Int64(from), at: 0)
        var resumed: [Float] = []
        while resumed.count < 48000 { resumed += try device.renderFloat(frames: 256) }
        let expected = Array(show.output[from..<(from + 48000)])
        let differing = (0..<48000).filter { resumed[$0] != expected[$0] }
        #expect(differing.isEmpty, "\(differing.count) samples differ, first at \(differing.first.map { "\($0): \(resumed[$0]) vs \(expected[$0])" } ?? "-")")
    }

    @Test("moved to another rate: every sample count scales, levels and curves stay")
    func moved() {
        let point = SessionTimeline.AutomationPoint(start: 48000, ramp: 4800, gainDB: -6, curve: .sCurve)
        let run = SessionPlayer.RunState(rate: 48000, goes: [.init(cue: "a", sample: 96000, offset: 480)],
                                         gains: [.init(layer: 1, point: point)],
                                         cues: [.init(cue: "a", interruptions: [.init(fadeStart: 100, fade: 240, resume: 4800, isStop: false)],
                                                      levelChanges: [point])],
                                         playhead: "b", loaded: ["c": 48], lastPlainGo: 96000, ignoredGos: 2,
                                         isPaused: true, pausedPosition: 24000)
        let moved = run.moved(to: 44100)
        #expect(moved.goes == [.init(cue: "a", sample: 88200, offset: 441)])
        #expect(moved.gains[0].point == SessionTimeline.AutomationPoint(start: 44100, ramp: 4410, gainDB: -6, curve: .sCurve))
        #expect(moved.cues[0].interruptions == [.init(fadeStart: 92, fade: 221, resume: 4410, isStop: false)])
        #expect(moved.loaded == ["c": 44] && moved.lastPlainGo == 88200 && moved.pausedPosition == 22050 && moved.playhead == "b")
        #expect(moved.moved(to: 44100) == moved)
    }
}
