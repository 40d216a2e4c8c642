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

        /// Creates a port.
        public init(name: String, client: String, type: String, direction: String, isPhysical: Bool, connections: [String]) {
            self.name = name
            self.client = client
            self.type = type
            self.direction = direction
            self.isPhysical = isPhysical
            self.connections = connections
        }
    }

    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// Every port but the listing's own client.
    public var ports: [Port]

    /// Creates a report.
    public init(ports: [Port]) { self.ports = ports }
}
