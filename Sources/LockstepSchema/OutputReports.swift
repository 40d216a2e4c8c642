/// One output port of a live run with where it goes, that destination's playback latency and the
/// delay the run gives it so that every output is heard on the same sample: the `outputs` of
/// `play --json` and `session run --json`, as measured once the outputs were connected (a later
/// change is a `playbackLatencyChange` discontinuity).
public struct OutputCompensation: Sendable, Hashable, Codable {
    /// The port's full name (`client:out_1`, `client:<layer>_1`).
    public var port: String
    /// The ports it is connected to.
    public var connections: [String]
    /// The largest playback latency of those ports in frames (JACK's latency ranges); nil when
    /// nothing is connected.
    public var latency: Int?
    /// The delay in frames the port applies (0 without `--align-outputs`): the largest latency of
    /// all connected outputs minus its own.
    public var delay: Int

    /// Creates a record.
    public init(port: String, connections: [String], latency: Int?, delay: Int) {
        self.port = port
        self.connections = connections
        self.latency = latency
        self.delay = delay
    }
}

/// Where a session's outputs would go on a running JACK server, each destination's playback
/// latency (netjack2 slaves' `to_slave_N` included) and the delay `session run --align-outputs`
/// would give each output: the `outputs` of `session check --jack --json`.
public struct OutputAlignmentReport: Sendable, Hashable, Codable {
    /// One output port of the run: master `out_N` or a layer's `<layer>_N`.
    public struct Output: Sendable, Hashable, Codable {
        /// The port's short name.
        public var output: String
        /// The port it would be connected to (nil: none).
        public var destination: String?
        /// The destination's playback latency in frames (nil: not connected).
        public var latency: Int?
        /// The delay `--align-outputs` gives the port, in frames.
        public var delay: Int
        /// The netjack2 slave the destination belongs to, if any.
        public var netSlave: String?

        /// Creates an output.
        public init(output: String, destination: String?, latency: Int?, delay: Int, netSlave: String?) {
            self.output = output
            self.destination = destination
            self.latency = latency
            self.delay = delay
            self.netSlave = netSlave
        }
    }

    /// The JACK server read.
    public var server: String
    /// The largest playback latency: every output is heard this long after it was rendered.
    public var latency: Int
    /// The outputs, master first.
    public var outputs: [Output]

    /// Creates a report.
    public init(server: String, latency: Int, outputs: [Output]) {
        self.server = server
        self.latency = latency
        self.outputs = outputs
    }
}
