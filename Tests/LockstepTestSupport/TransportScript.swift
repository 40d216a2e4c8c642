import CJack
import Foundation

/// Drives JACK transport the way the transport-follow tests need, and checks what a follower
/// played against it.
public enum TransportScript {
    /// Rolls from frame 0 for 0.7 s, stops for 0.4 s, relocates to `relocateFrame` and rolls
    /// for 0.7 s more.
    public static func rollStopRelocate(_ server: JACKServer, relocateFrame: UInt32 = 96000) throws {
        try server.withClient(named: "transport-driver") { client in
            _ = jack_transport_locate(client, 0)
            _ = jack_transport_start(client)
        }
        usleep(700_000)
        try server.withClient(named: "transport-driver") { client in jack_transport_stop(client) }
        usleep(400_000)
        try server.withClient(named: "transport-driver") { client in
            _ = jack_transport_locate(client, relocateFrame)
            _ = jack_transport_start(client)
        }
        usleep(700_000)
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
    }

    /// Compares a ramp-file follower's capture with the transport (see ``Check``).
    public static func check(_ capture: JACKCapture, step: Float, relocateFrame: Int = 96000) -> Check {
        let left = capture.channel(0)
        let fadeStart = (left.lastIndex { $0 != 0 } ?? left.count) - 400
        var result = Check()
        for cycle in capture.cycles where cycle.transportRolling {
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
        return result
    }
}
