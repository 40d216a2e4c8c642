import Foundation
import Lockstep
import Synchronization

/// Connects a layer's own outputs to the ports its `ports:` names, during a run: the live run's
/// JACK device (`LockstepShow` makes `JACKDevice` one).
public protocol LayerPortConnector: AnyObject, Sendable {
    /// Connects output `output` (a full port name) to `port`.
    func connect(_ output: String, to port: String) throws(AudioQueueError)
    /// Disconnects output `output` from `port` (nothing when they are not connected).
    func disconnect(_ output: String, from port: String) throws(AudioQueueError)
}

extension SessionPlayer {
    /// Who connects layers' own outputs when an edit changes a layer's `ports` (nil: such an edit
    /// is refused when the player makes outputs of its own, ``directOutputs``). Set it once the
    /// run has connected the ports the session names.
    public var portConnector: (any LayerPortConnector)? {
        get { connectorBox.withLock { $0 } }
        set { connectorBox.withLock { $0 = newValue } }
    }

    /// How long a route change waits for the device to take it before it says "its next cycle".
    static let routeWait = 0.5

    /// Routes the layers whose `ports` an edit changes, from `old` to `fresh`: each gets outputs of
    /// its own (a layer that had none), is connected to its new ports and leaves the master mix —
    /// or goes back into the master mix (no ports) — on one cycle's first frame, never doubled
    /// and never missing; a layer moved between ports of its own is silent there while JACK
    /// connects the new ports (a few cycles), then sounds on them from a cycle's first frame.
    /// Undone as a whole when a connection fails.
    /// - Returns: per layer, the device sample from which it sounds where its new ports say.
    /// - Throws: ``PlayerError`` (`invalidEdit`) when the run cannot route live or JACK refuses.
    func reroute(_ layers: [Int], from old: SessionTimeline, to fresh: SessionTimeline,
                 label: String) throws(PlayerError) -> [Int: Int64] {
        guard directOutputs else { return [:] }        // (offline: ports are not used)
        guard let connector = portConnector else {
            throw PlayerError(.invalidEdit, "\(label) refused: this run connects layers' ports only when it starts (a backup on its own clock resamples the master outputs only); change them in the file and run it again")
        }
        var routed: [Int: Int64] = [:]
        for index in layers {
            let queue = queues[index]
            let before = old.layers[index].ports, after = fresh.layers[index].ports
            let name = fresh.layers[index].name
            do throws(AudioQueueError) {
                if before.isEmpty {
                    // Out of the master mix onto outputs of its own, connected while silent.
                    queue.setRoute(toMaster: true, directOutputs: false)
                    let outputs = try queue.enableDirectOutputs()
                    try connect(outputs, to: after, with: connector, undoing: { queue.setRoute(toMaster: true, directOutputs: true) })
                    routed[index] = waitForRoute(queue, queue.setRoute(toMaster: false, directOutputs: true))
                } else if after.isEmpty {
                    // Back into the master mix; its own outputs silent, then disconnected.
                    routed[index] = waitForRoute(queue, queue.setRoute(toMaster: true, directOutputs: false))
                    disconnect(queue.directOutputNames, from: before, with: connector)
                } else {
                    // Other ports of its own: silent while JACK connects them.
                    _ = waitForRoute(queue, queue.setRoute(toMaster: false, directOutputs: false))
                    let outputs = queue.directOutputNames
                    disconnect(outputs, from: before, with: connector)
                    try connect(outputs, to: after, with: connector, undoing: {
                        try? self.connect(outputs, to: before, with: connector, undoing: {})
                        queue.setRoute(toMaster: false, directOutputs: true)
                    })
                    routed[index] = waitForRoute(queue, queue.setRoute(toMaster: false, directOutputs: true))
                }
            } catch {
                throw PlayerError(.invalidEdit, "\(label) refused: layer '\(name)': \(error.message)")
            }
        }
        return routed
    }

    /// Connects `outputs` to `ports` channel by channel (extra outputs stay unconnected); on a
    /// failure, disconnects what it connected, calls `undoing` and rethrows.
    private func connect(_ outputs: [String], to ports: [String], with connector: any LayerPortConnector,
                         undoing: () -> Void) throws(AudioQueueError) {
        var made: [(String, String)] = []
        for (output, port) in zip(outputs, ports) {
            do throws(AudioQueueError) {
                try connector.connect(output, to: port)
                made.append((output, port))
            } catch {
                for (output, port) in made { try? connector.disconnect(output, from: port) }
                undoing()
                throw error
            }
        }
    }

    private func disconnect(_ outputs: [String], from ports: [String], with connector: any LayerPortConnector) {
        for (output, port) in zip(outputs, ports) { try? connector.disconnect(output, from: port) }
    }

    /// The device sample from which `queue` renders route `generation`: waits (a few cycles at
    /// most) for the device to take it; when it does not render meanwhile (the device stopped),
    /// the next cycle's start, on which it takes it.
    private func waitForRoute(_ queue: OutputQueue, _ generation: UInt8) -> Int64 {
        // Polled, not `Engine.waitUntilRendered`: this runs under the player's lock, which the
        // engine's callback thread (that signals rendering) may be waiting for.
        let deadline = Date().addingTimeInterval(Self.routeWait)
        while Date() < deadline {
            if let at = queue.routeAppliedSampleTime(generation) { return at }
            usleep(500)
        }
        return engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime)
    }
}
