import CJack
import Foundation
import Lockstep
import LockstepSchema

/// Reads the JACK graph: ports, their properties and connections.
public enum JACKGraph {
    /// One port of the graph: `name`, `client`, `type`, `direction`, `isPhysical`, `connections`
    /// (the object `ports --json` lists, LockstepSchema's type).
    public typealias Port = PortsReport.Port

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
            return Port(name: name, client: String(name.split(separator: ":", maxSplits: 1).first ?? ""),
                        type: type, direction: flags & Int32(JackPortIsInput.rawValue) != 0 ? "input" : "output",
                        isPhysical: flags & Int32(JackPortIsPhysical.rawValue) != 0, connections: connections)
        }
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
