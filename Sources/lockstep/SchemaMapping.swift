import LockstepJACK
import LockstepSchema

// The JSON outputs' types (LockstepSchema) made from the library's own, at the edge.

extension OutputCompensation {
    /// The record of a device output as `--json` writes it.
    init(_ output: JACKDevice.OutputCompensation) {
        self.init(port: output.port, connections: output.connections, latency: output.latency, delay: output.delay,
                  outages: output.outages.map {
                      OutputOutage(destination: $0.destination, netSlave: $0.netSlave, lostSampleTime: $0.lostSampleTime,
                                   rejoinedSampleTime: $0.rejoinedSampleTime, rejoinedAs: $0.rejoinedAs, frames: $0.frames)
                  },
                  changes: output.changes.map { OutputLatencyChange(sampleTime: $0.sampleTime, latency: $0.latency, delay: $0.delay) })
    }
}

extension PortsReport.Port {
    /// The record of a graph port as `ports --json` writes it.
    init(_ port: JACKGraph.Port) {
        self.init(name: port.name, client: port.client, type: port.type, direction: port.direction, isPhysical: port.isPhysical,
                  connections: port.connections, playbackLatency: port.playbackLatency, captureLatency: port.captureLatency)
    }
}

extension PortsReport.NetSlave {
    /// The record of a netjack2 slave as `ports --json` writes it.
    init(_ slave: JACKGraph.NetSlave) {
        self.init(name: slave.name, toSlave: slave.toSlave, fromSlave: slave.fromSlave,
                  playbackLatency: slave.playbackLatency, captureLatency: slave.captureLatency)
    }
}
