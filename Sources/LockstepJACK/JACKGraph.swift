import CJack
import Foundation
import Lockstep

/// Reads the JACK graph: ports, their properties and connections.
public enum JACKGraph {
    /// The netjack2 slaves among `ports`: every client with `to_slave_N` input ports.
    public static func netSlaves(in ports: [Port]) -> [NetSlave] {
        func number(_ port: Port, _ prefix: String) -> Int? {
            let short = port.name.dropFirst(port.client.count + 1)
            return short.hasPrefix(prefix) ? Int(short.dropFirst(prefix.count)) : nil
        }
        var order: [String] = []
        var byClient: [String: (to: [(Int, Port)], from: [(Int, Port)])] = [:]
        for port in ports where port.type.hasSuffix("audio") {
            if port.direction == "input", let n = number(port, "to_slave_") {
                if byClient[port.client] == nil { order.append(port.client) }
                byClient[port.client, default: ([], [])].to.append((n, port))
            } else if port.direction == "output", let n = number(port, "from_slave_") {
                byClient[port.client, default: ([], [])].from.append((n, port))
            }
        }
        return order.compactMap { client in
            guard let entry = byClient[client] else { return nil }
            let to = entry.to.sorted { $0.0 < $1.0 }.map(\.1)
            let from = entry.from.sorted { $0.0 < $1.0 }.map(\.1)
            return NetSlave(name: client, toSlave: to.map(\.name), fromSlave: from.map(\.name),
                            playbackLatency: to.map(\.playbackLatency).max() ?? 0,
                            captureLatency: from.map(\.captureLatency).max() ?? 0)
        }
    }

    /// The name a netjack2 slave announced, from its client name on the master. jackd2's
    /// netmanager opens a client named after the slave; when a slave rejoins while the client of
    /// its last session still exists, jackd gives the new one `<name>-01` (… `-99`). Names without
    /// such a suffix are returned unchanged.
    public static func announcedSlaveName(ofClient client: String) -> String {
        let scalars = Array(client.unicodeScalars)
        guard scalars.count > 3, scalars[scalars.count - 3] == "-",
              scalars.suffix(2).allSatisfy({ ("0"..."9").contains($0) }) else { return client }
        return String(String.UnicodeScalarView(scalars.dropLast(3)))
    }

    /// Whether `port` (a full name) is one of the ports netjack2's netmanager gives a slave on the
    /// master: `to_slave_N`, `from_slave_N`, `midi_to_slave_N`, `midi_from_slave_N`.
    public static func isNetSlavePort(_ port: String) -> Bool {
        guard let colon = port.firstIndex(of: ":") else { return false }
        let short = port[port.index(after: colon)...]
        for prefix in ["to_slave_", "from_slave_", "midi_to_slave_", "midi_from_slave_"] where short.hasPrefix(prefix) {
            let number = short.dropFirst(prefix.count)
            return !number.isEmpty && number.allSatisfy(\.isNumber)
        }
        return false
    }

    /// Where a connection to `port`, which is gone, can be made again among the ports `existing`
    /// (full names): `port` itself when it is back; for a netjack2 slave's port, the port of the
    /// same short name of a client with the same announced name (a slave that rejoined as
    /// `<name>-01`, or back under its own name after having been `<name>-01`); nil when there is
    /// none (or several: the choice would be a guess).
    public static func successor(of port: String, among existing: [String]) -> String? {
        if existing.contains(port) { return port }
        guard isNetSlavePort(port), let colon = port.firstIndex(of: ":") else { return nil }
        let client = announcedSlaveName(ofClient: String(port[..<colon]))
        let short = port[colon...]
        let candidates = existing.filter { other in
            guard other.hasSuffix(short), let c = other.firstIndex(of: ":"), other[c...] == short else { return false }
            return announcedSlaveName(ofClient: String(other[..<c])) == client
        }
        return candidates.count == 1 ? candidates[0] : nil
    }

    /// Full names of the ports matching `pattern` (a regular expression, nil for all) and `flags`.
    static func ports(client: OpaquePointer, pattern: String?, flags: UInt) -> [String] {
        guard let list = jack_get_ports(client, pattern, nil, flags) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        var names: [String] = []
        var i = 0
        while let entry = list[i] {
            names.append(String(cString: entry))
            i += 1
        }
        return names
    }

    /// Every port on the server with its connections.
    static func describe(client: OpaquePointer) -> [Port] {
        ports(client: client, pattern: nil, flags: 0).compactMap { name in
            guard let port = jack_port_by_name(client, name) else { return nil }
            let flags = jack_port_flags(port)
            var connections: [String] = []
            if let list = jack_port_get_all_connections(client, port) {
                var i = 0
                while let entry = list[i] {
                    connections.append(String(cString: entry))
                    i += 1
                }
                jack_free(UnsafeMutableRawPointer(mutating: list))
            }
            let type = jack_port_type(port).map { String(cString: $0) } ?? ""
            var playback = jack_latency_range_t()
            var capture = jack_latency_range_t()
            jack_port_get_latency_range(port, JackPlaybackLatency, &playback)
            jack_port_get_latency_range(port, JackCaptureLatency, &capture)
            return Port(name: name, client: String(name.split(separator: ":", maxSplits: 1).first ?? ""),
                        type: type, direction: flags & Int32(JackPortIsInput.rawValue) != 0 ? "input" : "output",
                        isPhysical: flags & Int32(JackPortIsPhysical.rawValue) != 0, connections: connections,
                        playbackLatency: Int(max(playback.min, playback.max)), captureLatency: Int(max(capture.min, capture.max)))
        }
    }

    /// The delays that align outputs of the given playback latencies at their far ends (nil: an
    /// output with nothing connected, which gets no delay): each output is delayed by the largest
    /// latency minus its own, so that all are heard `latency` frames after they were rendered.
    public static func alignmentDelays(_ latencies: [Int?]) -> (latency: Int, delays: [Int]) {
        let largest = latencies.compactMap { $0 }.max() ?? 0
        return (largest, latencies.map { $0.map { largest - $0 } ?? 0 })
    }

    /// Routes libjack's own error and info messages: silent by default (Lockstep reports
    /// failures itself), to standard error when `LOCKSTEP_JACK_DEBUG` is set. Called before every
    /// client open.
    static func quietLibjack() {
        if ProcessInfo.processInfo.environment["LOCKSTEP_JACK_DEBUG"] != nil { return }
        jack_set_error_function { _ in }
        jack_set_info_function { _ in }
    }

    /// Opens a short-lived client on `server` and lists every port with its connections.
    /// - Throws: ``Lockstep/AudioQueueError/Code/invalidDevice`` when no server runs.
    public static func listPorts(server: String? = nil) throws(AudioQueueError) -> [Port] {
        var status = jack_status_t(rawValue: 0)
        let serverName = server ?? ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"]
        quietLibjack()
        guard let client = lockstep_jack_client_open("lockstep-ports", serverName, 1, &status) else {
            throw AudioQueueError(.invalidDevice, JACKDevice.describeOpenFailure(status: status, server: serverName))
        }
        defer { jack_client_close(client) }
        return describe(client: client)
    }

    /// Whether a JACK server named `server` (nil: the default) accepts clients now.
    public static func serverIsRunning(_ server: String? = nil) -> Bool {
        var status = jack_status_t(rawValue: 0)
        let serverName = server ?? ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"]
        quietLibjack()
        guard let client = lockstep_jack_client_open("lockstep-probe", serverName, 1, &status) else { return false }
        jack_client_close(client)
        return true
    }
}
