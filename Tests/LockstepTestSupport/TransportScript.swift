import CJack
import Foundation
import Testing

/// Drives JACK transport the way the transport-follow tests need, and checks what a follower
/// played against it.
public enum TransportScript {
    /// Rolls from frame 0 for 0.7 s of JACK's frame clock, stops for 0.4 s, relocates to
    /// `relocateFrame` and rolls for 0.7 s more.
    public static func rollStopRelocate(_ server: JACKServer, relocateFrame: UInt32 = 96000) throws {
        let rate = Double(server.sampleRate)
        try server.withClient(named: "transport-driver") { client in
            // Waits until `seconds` of frames have passed on the server's clock.
            func pass(_ seconds: Double) {
                let start = jack_frame_time(client), frames = UInt32(seconds * rate)
                _ = JACKFixtureSupport.poll(timeout: seconds * 4 + 2, interval: 0.002) { jack_frame_time(client) &- start >= frames }
            }
            _ = jack_transport_locate(client, 0)
            jack_transport_start(client)
            pass(0.7)
            jack_transport_stop(client)
            pass(0.4)
            _ = jack_transport_locate(client, relocateFrame)
            jack_transport_start(client)
            pass(0.7)
        }
    }

    /// Runs `lockstep` with `arguments` (a follower of the transport whose client is
    /// `clientName`, connected to the capture), waits until it says it follows the transport,
    /// drives the transport with ``rollStopRelocate(_:relocateFrame:)``, interrupts it, and
    /// checks the capture.
    public static func runFollower(_ arguments: [String], clientName: String, server: JACKServer,
                                   capture: JACKCapture, step: Float) throws -> (result: CLI.Result, check: Check) {
        let running = try CLI.spawn(arguments)
        try server.waitForPort("\(clientName):out_1", timeout: 10)
        #expect(running.waitForErrorOutput(containing: "waiting for it to roll"), "\(running.errorOutputSoFar)")
        try rollStopRelocate(server)
        running.send(SIGINT)
        let result = running.wait(timeout: 10)
        return (result, check(capture, step: step))
    }

    /// What a transport follower played: each captured non-silent frame of channel 0 while the
    /// transport rolled, read as a ramp value `(file frame + 1) × step`, against the transport
    /// frame at that moment (frames of the final fade-out are left out).
    public struct Check: Sendable {
        /// Frames compared.
        public var checked = 0
        /// Frames whose file frame differs from the transport frame.
        public var mismatches = 0
        /// Whether frames at or after `relocateFrame` were heard.
        public var sawRelocatedSegment = false
        /// Cycles with sound while the transport stood still (the first two after a stop are
        /// allowed to finish the period in flight).
        public var loudStoppedCycles = 0
    }

    /// Compares a ramp-file follower's capture with the transport (see ``Check``).
    public static func check(_ capture: JACKCapture, step: Float, relocateFrame: Int = 96000) -> Check {
        // The capture may still be running: its cycles are read first, and only those whose
        // frames the channel snapshot holds are checked.
        let cycles = capture.cycles
        let left = capture.channel(0)
        let fadeStart = (left.lastIndex { $0 != 0 } ?? left.count) - 400
        var result = Check()
        let complete = cycles.filter { $0.firstRecordedFrame + $0.frames <= left.count }
        for cycle in complete where cycle.transportRolling {
            for i in 0..<cycle.frames {
                let value = left[cycle.firstRecordedFrame + i]
                if value == 0 || cycle.firstRecordedFrame + i >= fadeStart { continue }
                let fileFrame = Int(value / step) - 1
                let transportFrame = Int(cycle.transportFrame) + i
                if fileFrame != transportFrame {
                    if result.mismatches < 5 { print("mismatch: file \(fileFrame) transport \(transportFrame) cycle \(cycle)") }
                    result.mismatches += 1
                }
                if transportFrame >= relocateFrame { result.sawRelocatedSegment = true }
                result.checked += 1
            }
        }
        let stopped = complete.filter { !$0.transportRolling }.dropFirst(2)
        result.loudStoppedCycles = stopped.filter { cycle in
            (0..<cycle.frames).contains { left[cycle.firstRecordedFrame + $0] != 0 }
        }.count
        return result
    }
}
