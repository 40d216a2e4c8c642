import Foundation
import Lockstep
import LockstepTestSupport
import LockstepTimecode
import Testing

extension JACKTests {
    /// `session run --chase mtc:PORT`: MIDI time code sent by a JACK MIDI client of the test's
    /// own, each message on its exact JACK frame (a full frame at each piece's start, then
    /// quarter-frames), through the script of ``ChaseRig``.
    @Suite("lockstep session run --chase mtc: every cue on its timecode's sample plus the offset, through jumps and a stop", .serialized)
    struct ChaseMTCTests {
        @Test("from a sample-exact MTC sender in the graph, each cue's first sample (and every sample after it) plays on its timecode's sample plus 960 samples, 0 off (the chase's bound is a quarter-frame, 480 samples), through a jump back, a jump forward and a stop and restart")
        func chaseMTC() throws { try retryingOnXruns("ChaseMTCTests", attempts: 4, run) }

        func run(_ xrun: XrunFlag) throws {
            let rig = try ChaseRig(prefix: "lockstep-chase-mtc")
            let length = Int64(ChaseRig.frameLength)
            // The tape's own timecode: its sample 0 is 00:59:55:00, session timecode sample −240000.
            let tape = MTCMessages(clock: try TimecodeClock(rate: .fps25, sampleRate: 48000, start: Timecode(hours: 0, minutes: 59, seconds: 55, frames: 0)))
            let tapeStart: Int64 = 5 * 48000
            var messages: [(at: Int64, bytes: [UInt8])] = []
            var cursor: Int64 = 0
            for piece in ChaseRig.pieces {
                guard let piece else { cursor += Int64(ChaseRig.silentFrames) * length; continue }
                let from = Int64(piece.from) * length + tapeStart, to = Int64(piece.to) * length + tapeStart
                messages.append((cursor, tape.fullFrame(atSample: from)))
                var quarter = tape.firstQuarter(atOrAfter: from)
                while tape.sample(ofQuarter: quarter) < to {
                    messages.append((cursor + tape.sample(ofQuarter: quarter) - from, tape.quarterFrame(quarter)))
                    quarter += 1
                }
                cursor += to - from
            }
            // (A long period: a stall of the machine under 20 ms makes no cycle late.)
            let server = try JACKServer(period: 1024)
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 40)
            try capture.start()
            let sender = try JACKMIDISender(server: server, name: "mtc-tape")
            defer { sender.stop() }
            try sender.start()
            var base: UInt32 = 0
            try rig.run(server: server, capture: capture, chase: "mtc:\(sender.portName)", counting: false, xrun: xrun, xruns: { 0 }, play: {
                base = sender.frameTime &+ 4800
                for message in messages { sender.send(message.bytes, atFrame: base &+ UInt32(message.at)) }
                return base
            }, isDone: { Int64(Int32(bitPattern: sender.frameTime &- base)) > cursor })
            #expect(sender.lateMessages == 0, "\(sender.lateMessages) MTC messages late")
        }
    }
}
