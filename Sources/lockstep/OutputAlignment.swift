import Foundation
import LockstepJACK
import LockstepSchema
import LockstepSession

extension OutputAlignmentReport {
    /// Reads the graph of `server` (nil: the default) and places the session's outputs as
    /// `session run` connects them: the master outputs to `connections` (one port: all to it) or,
    /// without, to the physical playback ports in order; each layer's channel N to its N-th port.
    /// - Throws: ``CLIError`` when no server runs or a destination port does not exist.
    static func measure(timeline: SessionTimeline, channels: Int, server: String?, connections: [String]) throws -> Self {
        let ports: [JACKGraph.Port]
        do { ports = try JACKGraph.listPorts(server: server) } catch {
            throw CLIError(message: "session check --jack: \(error.message)")
        }
        let byName = Dictionary(ports.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let slaves = JACKGraph.netSlaves(in: ports)
        var pairs: [(String, String?)] = []
        let physical = ports.filter { $0.isPhysical && $0.direction == "input" && $0.type.hasSuffix("audio") }.map(\.name)
        let master = connections.isEmpty ? physical : connections
        for c in 0..<channels {
            pairs.append(("out_\(c + 1)", master.count == 1 ? master[0] : (c < master.count ? master[c] : nil)))
        }
        for layer in timeline.layers where !layer.ports.isEmpty {
            for c in 0..<channels {
                pairs.append(("\(layer.name)_\(c + 1)", c < layer.ports.count ? layer.ports[c] : nil))
            }
        }
        for case let (output, destination?) in pairs where byName[destination] == nil {
            throw CLIError(message: "session check --jack: \(output) goes to '\(destination)', which the server has no port named; check it with 'lockstep ports'")
        }
        let latencies = pairs.map { $0.1.flatMap { byName[$0]?.playbackLatency } }
        let alignment = JACKGraph.alignmentDelays(latencies)
        let outputs = pairs.enumerated().map { i, pair in
            Output(output: pair.0, destination: pair.1, latency: latencies[i], delay: alignment.delays[i],
                   netSlave: pair.1.flatMap { destination in slaves.first { $0.toSlave.contains(destination) }?.name })
        }
        return Self(server: server ?? ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"] ?? "default",
                    latency: alignment.latency, outputs: outputs)
    }

    /// The report as a text table.
    var text: String {
        var rows = [["output", "to", "playback latency", "delay (--align-outputs)"]]
        for output in outputs {
            let to = (output.destination ?? "-") + (output.netSlave.map { " (netjack2 slave \($0))" } ?? "")
            rows.append([output.output, to, output.latency.map(String.init) ?? "-", String(output.delay)])
        }
        var widths = Array(repeating: 0, count: rows[0].count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        let lines = rows.map { row in
            row.enumerated().map { i, cell in
                i >= 2 ? String(repeating: " ", count: widths[i] - cell.count) + cell
                       : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        return "outputs on JACK server '\(server)' (every output heard \(latency) frames after it is rendered, when aligned):\n"
            + lines.joined(separator: "\n")
    }
}
