import Foundation
import LockstepJACK

/// Tells the user when the JACK server went away and when the device is back on a restarted
/// server (`--reconnect`), once per change.
final class ServerWatch {
    private let device: JACKDevice
    private var waiting = false
    private var since = Date()

    init(device: JACKDevice) { self.device = device }

    /// Checks the device; calls `note` with a sentence on each change.
    func poll(_ note: (String) -> Void) {
        let now = device.isWaitingForServer
        if now && !waiting {
            since = Date()
            note("the JACK server went away; waiting for it to come back (layers hold; Ctrl-C to stop)")
        } else if !now && waiting {
            note(String(format: "the JACK server is back after %.1f s; playing on from where playback stopped", Date().timeIntervalSince(since)))
        }
        waiting = now
    }
}
