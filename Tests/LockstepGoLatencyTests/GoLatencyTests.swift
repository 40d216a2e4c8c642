import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepSession
import LockstepTestSupport
import Testing

extension JACKTests {
    /// GO on a live session: each lands on the sample the player reports, at most two periods after
    /// the command is read, however far ahead the layers have computed (4 × 1024 samples).
    @Suite("GO latency (live, period 256)", .serialized)
    struct GoLatencyTests {
        /// GOs fired (LOCKSTEP_GO_COUNT; Scripts/bench.sh part 9 fires 100).
        static let count = Int(ProcessInfo.processInfo.environment["LOCKSTEP_GO_COUNT"] ?? "") ?? 20

        @Test("every GO sounds on its reported sample, within two periods of the command, with no underrun")
        func goesLandWithinTwoPeriods() throws { try retryingOnXruns("GoLatencyTests", run) }

        @Test("the standby cue is armed on whichever layer it is: three GOs on one layer, then one on another, all from armed pieces, each on its reported sample")
        func standbyMovesAcrossLayers() throws { try retryingOnXruns("GoLatencyTests.layers", layersRun) }

        func layersRun(_ xrun: XrunFlag) throws {
            let rig = try GoLatencyRig(count: 3, client: "lockstep-go-layers",
                                       extra: "  - { name: other, layer: bed, file: hit.wav, at: manual }\n")
            let (engine, player) = (rig.engine, rig.player)
            rig.waitForBed()
            var starts: [Int64] = []
            for _ in 0..<4 {
                let go = try player.go()
                starts.append(player.deviceTime(forPosition: go.start))
                // The next standby cue is armed once this one has started.
                while player.position < go.start + 2048 { usleep(1_000) }
            }
            rig.waitForCapture(past: try #require(starts.last))
            player.stop()
            rig.capture.stop()
            rig.expectNoUnderrun()
            #expect(player.standbyStatistics == SessionPlayer.StandbyStatistics(armed: 4, missed: 0, unarmed: 0),
                    "\(player.standbyStatistics)")
            xrun.set(rig.capture.xrunCount > 0 || engine.discontinuities.contains { $0.kind == .xrun })
            for at in starts { try rig.expectHit(at: at) }
        }

        func run(_ xrun: XrunFlag) throws {
            let rig = try GoLatencyRig(count: Self.count, client: "lockstep-go")
            let (engine, player, device) = (rig.engine, rig.player, rig.device)
            rig.waitForBed()

            var leads: [Int64] = []
            var starts: [Int64] = []
            var generator = SystemRandomNumberGenerator()
            for _ in 1...Self.count {
                // Commands arrive at any phase of the period (a wait for time by design).
                usleep(UInt32.random(in: 20_000...60_000, using: &generator))
                let now = engine.currentTime().sampleTime
                let go = try player.go()
                let at = player.deviceTime(forPosition: go.start)
                leads.append(at - now)
                starts.append(at)
            }
            rig.waitForCapture(past: try #require(starts.last))
            player.stop()
            rig.capture.stop()
            let period = Int64(device.periodFrames)
            rig.expectNoUnderrun()
            #expect(player.standbyStatistics.unarmed == 0, "\(player.standbyStatistics)")
            // Only the timing checks may be excused: an xrun breaks the capture's timeline, and the
            // cycles it held up run late, behind JACK's clock (the leads then go below 0).
            xrun.set(rig.capture.xrunCount > 0 || engine.discontinuities.contains { $0.kind == .xrun })
            // The armed standby cue starts on the next cycle rendered: when that cycle's callback
            // runs late, JACK's clock already reads some frames into it (a lead under 0; 50 seen
            // on a slow machine, 147 on a noisy VM), never a whole cycle: a cycle already
            // rendered is never fired.
            #expect(leads.allSatisfy { $0 > -period && $0 <= 2 * period }, "\(leads)")
            for at in starts { try rig.expectHit(at: at) }
            let (p50, p99, most) = GoLatencyRig.percentiles(leads)
            let ms = GoLatencyRig.ms
            print("GO latency: \(Self.count) GOs, period \(period): command read to first sample p50 \(p50) frames (\(ms(p50)) ms), p99 \(p99) (\(ms(p99)) ms), max \(most) (\(ms(most)) ms); every cue on its reported sample; standby \(player.standbyStatistics)")
        }
    }
}
