import Foundation
import Lockstep
import LockstepTestSupport
import LockstepTimecode
import Testing

extension JACKTests {
    /// `session run --chase ltc:PORT`: reference LTC made by libltc's encoder (not Lockstep's),
    /// played by a JACK client of the test's own through a jump back, a jump forward and a
    /// stop/restart (``ChaseRig``); the capture of the master output against it.
    @Suite("lockstep session run --chase ltc: every cue on its timecode's sample plus the offset, through jumps and a stop", .serialized)
    struct ChaseLTCTests {
        @Test("each cue's first sample (and every sample after it) plays on the sample its timecode's plays on plus 960 samples, 0 off, after a jump back, a jump forward and a stop and restart; each lock, jump, relocation, loss and stop is a JSON event")
        func chaseLTC() throws { try retryingOnXruns("ChaseLTCTests", attempts: 4, run) }

        func run(_ xrun: XrunFlag) throws {
            let rig = try ChaseRig(prefix: "lockstep-chase-ltc")
            let length = ChaseRig.frameLength
            // The reference starts 3 to 5 s before 01:00:00:00, on a random frame.
            let lead = Int.random(in: 75..<125)
            let first = Timecode(frameNumber: Timecode(hours: 1, minutes: 0, seconds: 0, frames: 0).frameNumber(at: .fps25) - Int64(lead), rate: .fps25)
            let reference = try LTCReference.samples(hours: first.hours, minutes: first.minutes, seconds: first.seconds, frame: first.frames,
                                                     frames: 700, in: rig.temp.path)
            var played: [Float] = []
            for piece in ChaseRig.pieces {
                guard let piece else { played += [Float](repeating: 0, count: ChaseRig.silentFrames * length); continue }
                played += reference[((piece.from + lead) * length)..<((piece.to + lead) * length)]
            }
            // (A long period: a stall of the machine under 20 ms makes no cycle late.)
            let server = try JACKServer(period: 1024)
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 40)
            try capture.start()
            let player = try JACKSamplePlayer(server: server, samples: played, name: "ltc-tape")
            defer { player.stop() }
            try rig.run(server: server, capture: capture, chase: "ltc:\(player.portName)", counting: true, xrun: xrun, xruns: { player.xrunCount }, play: {
                player.play()
                _ = capture.wait(timeout: 5) { player.firstFrameTime != nil }
                return player.firstFrameTime
            }, isDone: { player.isDone })
        }
    }
}
