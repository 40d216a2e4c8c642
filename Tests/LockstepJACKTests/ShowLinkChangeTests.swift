import Foundation
import LockstepSession
import LockstepShow
import Testing

/// The show link's state messages (``ShowLink/Change``): what changed, applied on the backup's
/// copy, gives the main's run exactly — through added gos, gains, a cue's changes cleared, and
/// a reset that takes every go back. Offline.
@Suite("ShowLink.Change: the main's run rebuilt from what changed")
struct ShowLinkChangeTests {
    typealias Run = SessionPlayer.RunState

    static func point(_ start: Int64, _ db: Double) -> SessionTimeline.AutomationPoint {
        .init(start: start, ramp: 480, gainDB: db, curve: .linear)
    }

    @Test("each change turns the last run sent into the new one, and is small")
    func roundTrip() throws {
        var runs: [Run] = [Run(rate: 48000, isPaused: false, pausedPosition: 0)]
        var run = runs[0]
        for index in 0..<40 {
            run.goes.append(.init(cue: "c\(index % 5)", sample: Int64(index) * 4800, offset: index % 7 == 0 ? 100 : 0))
            if index % 3 == 0 { run.gains.append(.init(layer: index % 2, point: Self.point(Int64(index) * 4800, -Double(index)))) }
            if index % 4 == 0 {
                run.cues.removeAll { $0.cue == "pad" }
                run.cues.append(.init(cue: "pad", interruptions: [.init(fadeStart: Int64(index) * 4800, fade: 240, resume: nil, isStop: true)],
                                      levelChanges: [Self.point(Int64(index) * 100, -6)]))
            }
            if index == 20 { run.cues.removeAll { $0.cue == "pad" } }      // its changes gone
            run.playhead = "c\((index + 1) % 5)"
            run.lastPlainGo = Int64(index) * 4800
            runs.append(run)
            if index == 30 {                                               // a reset: the gos start again
                run.goes = []
                run.gains = []
                runs.append(run)
            }
        }
        var mirror = runs[0]
        for (old, new) in zip(runs, runs.dropFirst()) {
            let change = ShowLink.Change(from: old, to: new)
            // It goes through the link's own encoding.
            guard case .state(let sent, _) = try ShowLink.decode(ShowLink.encode(.state(change: change, moment: .init(position: 0, isPlaying: true, jackFrame: nil, time: 0, rate: 48000))).dropLast()) else {
                Issue.record("not a state line")
                return
            }
            mirror = mirror.applying(sent)
            #expect(mirror == new)
            #expect(sent.run.goes.count <= 1 || sent.goesFrom == 0, "only what is new: \(sent.run.goes.count) gos from \(sent.goesFrom)")
        }
    }
}
