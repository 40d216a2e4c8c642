import Foundation
import Lockstep
import LockstepControl
import LockstepFiles
import LockstepJACK
import LockstepSession
import LockstepTestSupport
import Synchronization
import Testing

extension JACKTests {
    /// GO by MIDI on a live session, both ways a MIDI command can be placed: as soon as it comes
    /// (the default: the armed standby cue sounds from the next cycle, so from the note's frame to
    /// the cue's first sample is what was left of the note's period, plus a period when the reader
    /// missed a cycle), and a fixed latency of two periods after the note's own frame, never late
    /// (measured with how much of the period was left when the command was carried out: past the
    /// next cycle's start it would come too late).
    @Suite("MIDI GO latency (live, period 256)", .serialized)
    struct MIDIGoLatencyTests {
        /// GOs sent (LOCKSTEP_MIDI_GO_COUNT; Scripts/bench.sh part 9 sends 200).
        static let count = Int(ProcessInfo.processInfo.environment["LOCKSTEP_MIDI_GO_COUNT"] ?? "") ?? 20

        @Test("every MIDI GO sounds from the next cycle after its note, on its reported sample, with no underrun")
        func goesLandOnTheNextCycle() throws { try retryingOnXruns("MIDIGoLatencyTests.next") { try run($0, fixed: false) } }

        @Test("with a latency of 2 periods every MIDI GO sounds 2 periods after its note's frame, on its reported sample")
        func goesLandOnTheirFrame() throws { try retryingOnXruns("MIDIGoLatencyTests.fixed") { try run($0, fixed: true) } }

        func run(_ xrun: XrunFlag, fixed: Bool) throws {
            let rig = try GoLatencyRig(count: Self.count, client: "lockstep-midi-go", midiInput: "midi_in",
                                       extra: "triggers:\n  - { note: 60, do: go }\n")
            let (engine, player, device, session, server) = (rig.engine, rig.player, rig.device, rig.session, rig.server)
            let input = try #require(device.midiInput)
            let period = Int64(device.periodFrames)
            // As session run --midi: the refills the reader may wait for run at realtime priority too.
            engine.performOnCallbackThread { device.promoteCurrentThread(below: 12) }
            let midi = MIDIControl(dispatcher: ControlDispatcher(player: player), triggers: try MIDITriggers(session: session),
                                   latency: fixed ? 2 * period : nil)

            // The reader: as session run --midi's, a thread woken by the process thread.
            let results = Mutex<[(event: Int64, margin: Int64, reply: ControlReply)]>([])
            let stopping = Atomic<Bool>(false)
            let done = DispatchSemaphore(value: 0)
            Thread {
                device.promoteCurrentThread()
                while !stopping.load(ordering: .acquiring) {
                    for event in input.read(timeout: 0.05) {
                        // The frames left before the next cycle starts (after which a command for
                        // two periods past this event would come too late).
                        // (The nearest start is the next cycle while it is more than half a
                        // period away, else the one after: either way this many frames ahead.)
                        let now = engine.currentTime().sampleTime
                        let ahead = engine.nearestStartTime(atOrAfter: now) - now
                        let margin = ahead > period ? ahead - period : ahead
                        let replies = midi.handle(event)
                        results.withLock { list in
                            for reply in replies { list.append((event.sampleTime, margin, reply)) }
                        }
                    }
                }
                done.signal()
            }.start()
            let sender = try JACKMIDISender(server: server)
            try sender.start(connectingTo: input.portName)
            rig.waitForBed()
            var generator = SeededRandom(seed: 11)
            var frame = sender.frameTime &+ 4800
            for _ in 1...Self.count {
                // Notes at any phase of the period, 80-120 ms apart.
                frame = frame &+ UInt32(3840 + generator.next() % 1920)
                sender.send([0x90, 60, 100], atFrame: frame)
            }
            #expect(sender.waitUntilSent(timeout: Double(Self.count) * 0.15 + 5))
            let last = device.sampleTime(forJACKFrameTime: frame) + 2 * period
            rig.waitForCapture(past: last)
            stopping.store(true, ordering: .releasing)
            input.interruptRead()
            done.wait()
            player.stop()
            rig.capture.stop()

            let list = results.withLock { $0 }
            #expect(list.count == Self.count, "\(list.count) of \(Self.count) notes answered")
            // A note the test's own sender wrote after its frame (its process callback found the
            // inbox locked on every cycle up to it: the test's thread held up) is not the note the
            // checks below expect: the run is disturbed, as by a server xrun, and runs again.
            xrun.set(sender.lateMessages > 0)
            #expect(sender.lateMessages == 0, "the test's sender wrote \(sender.lateMessages) notes after their frame")
            var leads: [Int64] = []
            var late = 0
            for (event, _, reply) in list {
                #expect(reply.isOK, "\(reply)")
                let at = try #require(reply.data?["sampleTime"]?.integerValue)
                // A GO carried out too late for its sample (a machine too busy for its reader to run
                // within the period) lands later and says so; it still sounds where it says.
                if (reply.data?["lateFrames"]?.integerValue ?? 0) != 0 { late += 1 } else { leads.append(at - event) }
            }
            if fixed {
                #expect(leads.allSatisfy { $0 == 2 * period }, "\(leads)")
                #expect(late <= list.count / 10, "\(late) of \(list.count) GOs came late")
            } else {
                // Never placed on a given sample, so never late.
                #expect(late == 0, "\(late) late")
            }
            rig.expectNoUnderrun()
            // Only the timeline's checks may be excused: a server xrun moves the device's clock
            // (a clock jump) between a note and its GO, and breaks the capture's timeline.
            xrun.set(rig.capture.xrunCount > 0 || engine.discontinuities.contains { $0.kind == .xrun })
            // Never before the note (on it when the note falls on a cycle's first frame).
            if !fixed { #expect(leads.allSatisfy { $0 >= 0 }, "\(leads)") }
            for (_, _, reply) in list { try rig.expectHit(at: try #require(reply.data?["sampleTime"]?.integerValue)) }
            let ms = GoLatencyRig.ms
            if fixed {
                let margins = list.map(\.margin).sorted()
                let p50 = margins[margins.count / 2], p1 = margins[margins.count / 100], least = margins[0]
                print("MIDI GO latency, fixed: \(list.count) GOs, period \(period): note frame to first sample \(2 * period) frames (\(ms(2 * period)) ms) for every GO on time, \(late) late; time left in the period when carried out p50 \(p50) frames (\(ms(p50)) ms), p1 \(p1), min \(least) (\(ms(least)) ms)")
            } else {
                let (p50, p99, most) = GoLatencyRig.percentiles(leads)
                print("MIDI GO latency: \(list.count) GOs, period \(period): note frame to first sample p50 \(p50) frames (\(ms(p50)) ms), p99 \(p99) (\(ms(p99)) ms), max \(most) (\(ms(most)) ms); every cue on the sample its reply names; standby \(rig.player.standbyStatistics)")
            }
        }
    }
}
