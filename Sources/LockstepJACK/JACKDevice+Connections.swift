import CJack
import Foundation
import Lockstep
import Synchronization

/// Connecting ports.
extension JACKDevice {
    /// Connects the master outputs, in order, to the physical playback ports (`system:playback_1`, …).
    /// - Returns: the connections made.
    @discardableResult
    public func connectToPhysicalOutputs() -> [(String, String)] {
        let outputs = outputPortNames
        let made: [ConnectionPair] = withClient { client in
            let physical = JACKGraph.ports(client: client, pattern: nil, flags: UInt(JackPortIsPhysical.rawValue | JackPortIsInput.rawValue))
            return zip(outputs, physical).filter { jack_connect(client, $0.0, $0.1) == 0 }.map { ConnectionPair(source: $0.0, destination: $0.1) }
        } ?? []
        return made.map { ($0.source, $0.destination) }
    }

    /// Connects the input ports, in order, to the physical capture ports (`system:capture_1`, …).
    @discardableResult
    public func connectToPhysicalInputs() -> [(String, String)] {
        let inputs = inputPortNames
        let made: [ConnectionPair] = withClient { client in
            let physical = JACKGraph.ports(client: client, pattern: nil, flags: UInt(JackPortIsPhysical.rawValue | JackPortIsOutput.rawValue))
            return zip(physical, inputs).filter { jack_connect(client, $0.0, $0.1) == 0 }.map { ConnectionPair(source: $0.0, destination: $0.1) }
        } ?? []
        return made.map { ($0.source, $0.destination) }
    }

    /// Connects two ports by full name (`client:port`).
    /// - Throws: ``Lockstep/AudioQueueError/Code/invalidParameter`` naming the ports when JACK refuses.
    public func connect(_ source: String, to destination: String) throws(AudioQueueError) {
        let result = withClient { jack_connect($0, source, destination) } ?? -1
        if result != 0 && result != EEXIST {
            throw AudioQueueError(.invalidParameter, "cannot connect '\(source)' to '\(destination)'; check both port names with `lockstep ports`")
        }
        if let connection = ownConnection(source, destination) {
            control.withLock { if !$0.wanted.contains(connection) { $0.wanted.append(connection) } }
        }
        updateLatencies()
    }

    /// Whether `port` (a full name) is a physical port — a driver's, whose audio an xrun loses —
    /// rather than another client's; false for a port that does not exist.
    public func isPhysicalPort(_ port: String) -> Bool {
        withClient { client -> Bool in
            guard let handle = jack_port_by_name(client, port) else { return false }
            return jack_port_flags(handle) & Int32(JackPortIsPhysical.rawValue) != 0
        } ?? false
    }

    /// The connection between `source` and `destination` as seen from the device's side, when
    /// one of them is a port of this client.
    func ownConnection(_ source: String, _ destination: String) -> Connection? {
        let prefix = name + ":"
        if source.hasPrefix(prefix) { return Connection(ours: String(source.dropFirst(prefix.count)), other: destination, oursIsOutput: true) }
        if destination.hasPrefix(prefix) { return Connection(ours: String(destination.dropFirst(prefix.count)), other: source, oursIsOutput: false) }
        return nil
    }

    /// Disconnects two ports by full name.
    public func disconnect(_ source: String, from destination: String) throws(AudioQueueError) {
        if let connection = ownConnection(source, destination) {
            control.withLock { $0.wanted.removeAll { $0 == connection } }
        }
        if (withClient { jack_disconnect($0, source, destination) } ?? -1) != 0 {
            throw AudioQueueError(.invalidParameter, "cannot disconnect '\(source)' from '\(destination)'; are they connected?")
        }
        updateLatencies()
    }

    /// The ports on the server and their connections.
    public func graph() -> [JACKGraph.Port] { withClient { JACKGraph.describe(client: $0) } ?? [] }
}
