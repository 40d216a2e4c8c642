import Foundation
import Lockstep
import LockstepJACK

/// Says when the JACK server went away and when the device is back on a restarted server,
/// once per change.
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

    /// Discontinuities looked at so far (of the engine's total).
    private var seen = 0
    private var waited = 0

    /// The next sample-rate change the engine reported, waiting for it up to a second in all.
    func next(_ engine: Engine) -> Report {
        // Only what came since the last look (a copy of the whole log every 2 ms cost the main
        // thread dearly among thousands of underruns), and by the total, so a change is found
        // however far the log's ring has turned.
        let (recent, total) = engine.discontinuities(after: seen)
        seen = total
        if let change = recent.last(where: { $0.kind == .sampleRateChange }) {
            waited = 0
            return .change(change)
        }
        waited += 1
        if waited > 500 { return .missing }
        usleep(2_000)
        return .pending
    }
}

/// What both shows check first at every step: whether the device failed, whether the server went
/// away or came back, and whether a change of the server's rate stopped the layers — which a
/// show plays on through (`playOn`) unless it follows transport.
final class ShowMonitor {
    /// What the check found.
    enum Finding {
        /// Nothing: the step goes on.
        case fine
        /// A rate change is being handled (or its report is awaited): the step ends here.
        case busy
        /// The show ends.
        case end(ShowEnd)
    }

    private let engine: Engine
    private let serverWatch: ServerWatch
    private let rateReports = RateChangeReports()

    init(device: JACKDevice, engine: Engine) {
        self.engine = engine
        serverWatch = ServerWatch(device: device)
    }

    /// Checks the device and the server (noting each change with `note`); when `layersStopped`
    /// on a rate change, hands the change to `playOn` (a show following transport ends instead).
    func check(layersStopped: Bool, followsTransport: Bool, note: (ShowNote) -> Void,
               playOn: (Discontinuity) throws -> Void) -> Finding {
        if engine.deviceError != nil { return .end(.failed) }
        serverWatch.poll { note(ShowNote(.notice, $0)) }
        guard layersStopped else { return .fine }
        // The server's rate changed and every layer stopped on that sample rather than play at
        // the wrong pitch.
        guard !followsTransport else { return .end(.failed) }
        switch rateReports.next(engine) {
        case .change(let change):
            do { try playOn(change) } catch {
                note(ShowNote(.error, "cannot play on at the new rate: \(error)"))
                return .end(.failed)
            }
            return .busy
        case .pending: return .busy
        case .missing: return .end(.failed)
        }
    }
}
