import ArgumentParser
import Foundation
import LockstepJACK
import LockstepSchema

/// `lockstep ports`: the JACK server's ports and connections.
struct PortsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ports",
        abstract: "List the JACK server's ports and their connections.",
        discussion: """
            One line per port: its name, direction (in or out), whether it is physical, its type, its latencies in frames when not 0 (the largest of JACK's playback and capture latency ranges) and what it is connected to. Then the netjack2 slaves the server has (jackd2's netmanager makes a client per slave with to_slave_N and from_slave_N ports), each with the latencies netjack2 declares. With --json, one object whose ports array lists the ports and netSlaves array the slaves (Docs/JSON.md). --net-slaves lists only the slaves.

            Examples:
              lockstep ports
              lockstep ports --server show --json
              lockstep ports --net-slaves
            """
    )

    @Option(help: "The JACK server (default: $JACK_DEFAULT_SERVER or JACK's default).")
    var server: String?

    @OptionGroup(title: "Messages")
    var global: GlobalOptions

    @Flag(help: "Print one JSON object: schema, ports (name, client, type, direction, isPhysical, connections, playbackLatency, captureLatency) and netSlaves (name, toSlave, fromSlave, playbackLatency, captureLatency).")
    var json = false

    @Flag(name: .customLong("net-slaves"), help: "List only the netjack2 slaves of the server (jackd2's netmanager) with the latencies their ports declare.")
    var netSlavesOnly = false

    func run() throws {
        let ports: [JACKGraph.Port]
        do { ports = try JACKGraph.listPorts(server: server) } catch {
            throw CLIError(message: "ports: \(error.message)")
        }
        let visible = ports.filter { $0.client != "lockstep-ports" }
        let slaves = JACKGraph.netSlaves(in: visible)
        if json {
            print(JSONSchema.line(PortsReport(ports: netSlavesOnly ? [] : visible.map(PortsReport.Port.init), netSlaves: slaves.map(PortsReport.NetSlave.init))))
            return
        }
        for port in visible where !netSlavesOnly {
            let arrow = port.direction == "output" ? "->" : "<-"
            let links = port.connections.isEmpty ? "" : " \(arrow) " + port.connections.joined(separator: ", ")
            let latencyText = (port.playbackLatency == 0 ? "" : ", playback latency \(port.playbackLatency)")
                + (port.captureLatency == 0 ? "" : ", capture latency \(port.captureLatency)")
            print("\(port.name) (\(port.direction)\(port.isPhysical ? ", physical" : ""), \(port.type)\(latencyText))\(links)")
        }
        for slave in slaves {
            print("netjack2 slave \(slave.name): \(slave.toSlave.count) to_slave (playback latency \(slave.playbackLatency)), "
                  + "\(slave.fromSlave.count) from_slave (capture latency \(slave.fromSlave.isEmpty ? 0 : slave.captureLatency))")
        }
    }
}
