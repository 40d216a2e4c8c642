import Foundation
import Lockstep
import LockstepOSC
import LockstepTestSupport
import Testing

extension JACKTests {
    /// Time-tagged bundles and OSC over TCP (SLIP) against `lockstep session run` as a real process
    /// on a private dummy-driver jackd, with the same show and helpers as ``SessionOSCTests``; the
    /// captured JACK output shows where each cue landed.
    @Suite("lockstep session run --osc bundles and --osc-tcp (the built binary, live)", .serialized,
           .enabled(if: OSCDump.isAvailable, "liblo-tools is not installed"))
    struct SessionOSCBundleTCPTests {
        let base: SessionOSCTests

        init() throws { base = try SessionOSCTests() }

        @Test("a bundle time-tagged 300 ms ahead starts its cue exactly on the sample its reply names, and that sample is the time tag's within one period")
        func bundleLandsOnItsTimeTag() throws {
            let live = try base.live()
            let (capture, running) = (live.capture, live.running)
            let peer = try base.client(of: live)
            // One reading of both clocks, as close together as two calls get: JACK's frame time
            // (the capture client's jack_frame_time) and the wall clock bundles are stamped with.
            let frameNow = try #require(capture.currentFrameTime)
            let wallNow = OSCTimeTag.wallClock()
            let tag = OSCTimeTag(secondsSince1970: wallNow + 0.3)
            try peer.send(.bundle(tag, [.message(OSCMessage("/cue/bell/start"))]))
            let reply = try #require(peer.reply(to: "/cue/bell/start"))
            let data = try #require(reply["data"] as? [String: Any], "\(reply)")
            let at = try #require(data["sampleTime"] as? Int)
            #expect(data["requestedSampleTime"] as? Int == at && data["lateFrames"] as? Int == 0, "\(data)")
            let expected = Int64(frameNow) + Int64(((tag.secondsSince1970 - wallNow) * 48000).rounded())
            let error = Int64(UInt32(truncatingIfNeeded: at) &- UInt32(truncatingIfNeeded: expected)) // (32-bit frame clock)
            let signed = error > Int64(Int32.max) ? error - (1 << 32) : error
            print("bundle 300 ms ahead: cue at sample \(at), time tag at \(expected) by the test's clocks: \(signed) samples apart (period 256)")
            // JACK maps host time to frames from its estimate of each cycle's start (a DLL over the
            // dummy driver's timer wake-ups): the server's jack_time_to_frames and the test's
            // jack_frame_time are two readings of that estimate, each good to within a period.
            #expect(abs(signed) <= 256, "the cue landed \(signed) samples from its time tag")

            #expect(capture.wait(timeout: 5) { capture.recordedIndex(atFrameTime: Int64(at) + 10) != nil })
            running.send(SIGINT)                                   // (horn still waits for go: the run would go on)
            let result = running.wait(timeout: 15)
            #expect(result.status == 130, "\(result.stderr)")
            let osc = try #require(try base.summary(result)["osc"] as? [String: Any])
            #expect(osc["bundles"] as? Int == 1 && osc["scheduled"] as? Int == 1 && osc["errorReplies"] as? Int == 0, "\(osc)")
            #expect(result.stderr.contains("start bell at ") && result.stderr.contains(", as time-tagged"), "\(result.stderr)")
            // The impulse sits exactly on the sample the reply named, over the bed.
            #expect(try base.captured(capture, at: at) == (0.125, 0.625, 0.125))
        }

        @Test("--osc-tcp: /go sent SLIP-framed over TCP is answered on the connection, SLIP-framed, and the cue lands on the sample the reply names")
        func goOverTCP() throws {
            let live = try base.live(extra: ["--osc-tcp", "127.0.0.1:0"])
            let (capture, running) = (live.capture, live.running)
            #expect(running.waitForErrorOutput(containing: "(TCP, SLIP framing); replies on the connection"), "\(running.errorOutputSoFar)")
            let text = running.errorOutputSoFar
            let marker = try #require(text.range(of: "OSC control on 127.0.0.1:", options: .backwards))
            let port = try #require(UInt16(text[marker.upperBound...].prefix { $0.isNumber }))
            #expect(port != live.port)
            let client = try OSCTCPTestClient(port: port)
            try client.send("/go")
            let go = try #require(client.reply(to: "/go"))
            #expect(go["status"] as? String == "ok", "\(go)")
            let data = try #require(go["data"] as? [String: Any])
            #expect(data["cue"] as? String == "bell")
            let at = try #require(data["sampleTime"] as? Int)
            #expect(capture.wait(timeout: 5) { capture.recordedIndex(atFrameTime: Int64(at) + 10) != nil })
            try client.send("/cue/horn/start")                     // the last manual cue: then /stop ends the run
            #expect(client.reply(to: "/cue/horn/start")?["status"] as? String == "ok")
            try client.send("/stop")
            #expect(client.reply(to: "/stop")?["status"] as? String == "ok")
            let result = running.wait(timeout: 15)
            #expect(result.status == 0, "\(result.stderr)")
            let tcp = try #require(try base.summary(result)["oscTCP"] as? [String: Any])
            #expect(tcp["connections"] as? Int == 1 && tcp["commands"] as? Int == 3 && tcp["replies"] as? Int == 3, "\(tcp)")
            #expect(try base.captured(capture, at: at) == (0.125, 0.625, 0.125))
            print("OSC over TCP, the run's summary: \(result.stdout.split(separator: "\n").last ?? "")")
        }
    }
}
