extension JACKDevice {
    /// One output port of the device as the latest latency measurement saw it: where it goes, the
    /// playback latency there, the delay it applies, and (with ``withOutputHistory(_:until:)``)
    /// what happened to its destinations during the run.
    public struct OutputCompensation: Sendable, Hashable {
        /// The port's full name (`client:out_1`, `client:<layer>_1`).
        public var port: String
        /// The ports it is connected to.
        public var connections: [String]
        /// The largest playback latency of those ports in frames (JACK's latency ranges); nil when
        /// nothing is connected.
        public var latency: Int?
        /// The delay in frames the port applies (0 without compensation): the largest latency of
        /// all connected outputs minus its own.
        public var delay: Int
        /// Every time a port this output was connected to went away during the run.
        public var outages: [OutputOutage]
        /// Every change of the output's measured latency or delay, on the sample it applied from.
        public var changes: [OutputLatencyChange]

        /// Creates a measurement.
        public init(port: String, connections: [String], latency: Int?, delay: Int,
                    outages: [OutputOutage] = [], changes: [OutputLatencyChange] = []) {
            self.port = port
            self.connections = connections
            self.latency = latency
            self.delay = delay
            self.outages = outages
            self.changes = changes
        }
    }

    /// A port an output was connected to that went away while the run played (a netjack2 slave
    /// the master gave up), and how the output was connected again when it came back. Times are
    /// device sample times of the first cycle after the outputs were re-measured.
    public struct OutputOutage: Sendable, Hashable {
        /// The port that went away (`hall:to_slave_1`).
        public var destination: String
        /// The netjack2 slave it belonged to, by the name the slave announced; nil for another port.
        public var netSlave: String?
        /// When the engine found it gone.
        public var lostSampleTime: Int64
        /// When the output was connected again; nil when it did not come back before the end.
        public var rejoinedSampleTime: Int64?
        /// The port it was connected to again (`destination`, or the renamed slave's port).
        public var rejoinedAs: String?
        /// How long the output went without it, in frames (up to the end when not back).
        public var frames: Int64

        /// Creates an outage.
        public init(destination: String, netSlave: String?, lostSampleTime: Int64, rejoinedSampleTime: Int64?,
                    rejoinedAs: String?, frames: Int64) {
            self.destination = destination
            self.netSlave = netSlave
            self.lostSampleTime = lostSampleTime
            self.rejoinedSampleTime = rejoinedSampleTime
            self.rejoinedAs = rejoinedAs
            self.frames = frames
        }
    }

    /// A change of one output's measured playback latency or compensation delay.
    public struct OutputLatencyChange: Sendable, Hashable {
        /// The device sample time from which the new delay applies.
        public var sampleTime: Int64
        /// The playback latency of what the output is connected to now, in frames; nil: nothing.
        public var latency: Int?
        /// The delay the output applies from `sampleTime`, in frames.
        public var delay: Int

        /// Creates a change.
        public init(sampleTime: Int64, latency: Int?, delay: Int) {
            self.sampleTime = sampleTime
            self.latency = latency
            self.delay = delay
        }
    }
}

extension JACKGraph {
    /// One port of the graph.
    public struct Port: Sendable, Hashable {
        /// The full name, `client:port`.
        public var name: String
        /// The client's name.
        public var client: String
        /// JACK's port type (`32 bit float mono audio`, `8 bit raw midi`).
        public var type: String
        /// `input` or `output`.
        public var direction: String
        /// Whether the port is a physical (hardware) port.
        public var isPhysical: Bool
        /// The ports it is connected to.
        public var connections: [String]
        /// The largest playback latency JACK reports for the port, in frames.
        public var playbackLatency: Int
        /// The largest capture latency JACK reports for the port, in frames.
        public var captureLatency: Int

        /// Creates a port.
        public init(name: String, client: String, type: String, direction: String, isPhysical: Bool, connections: [String],
                    playbackLatency: Int = 0, captureLatency: Int = 0) {
            self.name = name
            self.client = client
            self.type = type
            self.direction = direction
            self.isPhysical = isPhysical
            self.connections = connections
            self.playbackLatency = playbackLatency
            self.captureLatency = captureLatency
        }
    }

    /// A netjack2 slave as the master's graph shows it: its ports and their latencies.
    public struct NetSlave: Sendable, Hashable {
        /// The slave's client name on the master.
        public var name: String
        /// Its `to_slave_N` ports, in order.
        public var toSlave: [String]
        /// Its `from_slave_N` ports, in order.
        public var fromSlave: [String]
        /// The largest playback latency of its `to_slave_N` ports, in frames.
        public var playbackLatency: Int
        /// The largest capture latency of its `from_slave_N` ports, in frames.
        public var captureLatency: Int

        /// Creates a slave.
        public init(name: String, toSlave: [String], fromSlave: [String], playbackLatency: Int, captureLatency: Int) {
            self.name = name
            self.toSlave = toSlave
            self.fromSlave = fromSlave
            self.playbackLatency = playbackLatency
            self.captureLatency = captureLatency
        }
    }
}
