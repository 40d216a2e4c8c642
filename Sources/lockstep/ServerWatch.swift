import Foundation
import Lockstep
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

/// The engine's reports of sample-rate changes, one at a time: the render thread stops the queues
/// on the change's sample first, and its report follows on the callback thread.
final class RateChangeReports {
    /// What ``next(_:)`` found.
    enum Report {
        /// A change not handled yet.
        case change(Discontinuity)
        /// The report has not arrived yet (the caller waited 2 ms; ask again).
        case pending
        /// No report came within a second: give up.
        case missing
    }

    private var handled = 0
    private var waited = 0

    /// The next sample-rate change the engine reported, waiting for it up to a second in all.
    func next(_ engine: Engine) -> Report {
        let reported = engine.discontinuities.filter { $0.kind == .sampleRateChange }
        if reported.count > handled, let change = reported.last {
            handled = reported.count
            waited = 0
            return .change(change)
        }
        waited += 1
        if waited > 500 { return .missing }
        usleep(2_000)
        return .pending
    }
}
