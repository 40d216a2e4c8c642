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
            One line per port: its name, direction (in or out), whether it is physical, its type and what it is connected to. With --json, one object whose ports array lists them (Docs/JSON.md).

            Examples:
              lockstep ports
              lockstep ports --server show --json
            """
    )

    @Option(help: "The JACK server (default: $JACK_DEFAULT_SERVER or JACK's default).")
    var server: String?

    @OptionGroup(title: "Messages")
    var global: GlobalOptions

    @Flag(help: "Print one JSON object: schema and ports, each with name, client, type, direction, isPhysical, connections.")
    var json = false

    func run() throws {
        let ports: [JACKGraph.Port]
        do { ports = try JACKGraph.listPorts(server: server) } catch {
            throw CLIError(message: "ports: \(error.message)")
        }
        let visible = ports.filter { $0.client != "lockstep-ports" }
        if json {
            print(JSONSchema.line(PortsReport(ports: visible)))
            return
        }
        for port in visible {
            let arrow = port.direction == "output" ? "->" : "<-"
            let links = port.connections.isEmpty ? "" : " \(arrow) " + port.connections.joined(separator: ", ")
            print("\(port.name) (\(port.direction)\(port.isPhysical ? ", physical" : ""), \(port.type))\(links)")
        }
    }
}
