/// `lockstep ports --json`: the JACK server's ports and their connections.
public struct PortsReport: Sendable, Hashable, Codable {
    /// One port.
    public struct Port: Sendable, Hashable, Codable {
        /// Its full name, `client:port`.
        public var name: String
        /// Its client.
        public var client: String
        /// Its type (`32 bit float mono audio`, `8 bit raw midi`).
        public var type: String
        /// `input` or `output`.
        public var direction: String
        /// Whether it is a hardware port.
        public var isPhysical: Bool
        /// The ports it is connected to.
        public var connections: [String]
        /// How long until audio leaving the port reaches a playback device, in frames (the
        /// largest of JACK's playback latency range).
        public var playbackLatency: Int
        /// How long ago the audio arriving at the port entered the graph from a capture device,
        /// in frames (the largest of JACK's capture latency range).
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

    /// A netjack2 slave as the master's graph shows it: the client jackd2's `netmanager` made for
    /// it, named after the slave (`jackd -d net -n NAME`), with `to_slave_N` ports (inputs: what
    /// the slave plays) and `from_slave_N` ports (outputs: what it sends back).
    public struct NetSlave: Sendable, Hashable, Codable {
        /// The slave's client name on the master.
        public var name: String
        /// Its `to_slave_N` ports, in order.
        public var toSlave: [String]
        /// Its `from_slave_N` ports, in order.
        public var fromSlave: [String]
        /// The playback latency netjack2 declares on `to_slave_N` in frames: the network latency
        /// (`-l L`) × period / 2.
        public var playbackLatency: Int
        /// The capture latency netjack2 declares on `from_slave_N` in frames: L × period / 2, plus
        /// a period for an asynchronous slave.
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

    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// Every port but the listing's own client (empty with `--net-slaves`).
    public var ports: [Port]
    /// The netjack2 slaves of the server.
    public var netSlaves: [NetSlave]

    /// Creates a report.
    public init(ports: [Port], netSlaves: [NetSlave] = []) {
        self.ports = ports
        self.netSlaves = netSlaves
    }
}
