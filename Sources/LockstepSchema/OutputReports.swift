/// One output port of a live run with where it goes, that destination's playback latency and the
/// delay the run gives it so that every output is heard on the same sample: the `outputs` of
/// `play --json` and `session run --json`, as measured once the outputs were connected; what
/// changed after (a destination that went away and came back, a new latency or delay) is in
/// `outages` and `changes`, each also a `playbackLatencyChange` discontinuity when a delay moved.
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
    /// Every time a port this output was connected to went away during the run (a netjack2 slave
    /// the master gave up), and whether and when the output was connected to it again.
    public var outages: [OutputOutage]
    /// Every change of the output's measured latency or delay after the outputs were connected,
    /// on the sample it applied from.
    public var changes: [OutputLatencyChange]

    /// Creates a record.
    public init(port: String, connections: [String], latency: Int?, delay: Int,
                outages: [OutputOutage] = [], changes: [OutputLatencyChange] = []) {
        self.port = port
        self.connections = connections
        self.latency = latency
        self.delay = delay
        self.outages = outages
        self.changes = changes
    }

    private enum CodingKeys: String, CodingKey {
        case port, connections, latency, delay, outages, changes
    }

    /// Decodes a record; `outages` and `changes` may be absent (reports written before they existed).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        port = try container.decode(String.self, forKey: .port)
        connections = try container.decode([String].self, forKey: .connections)
        latency = try container.decodeIfPresent(Int.self, forKey: .latency)
        delay = try container.decode(Int.self, forKey: .delay)
        outages = try container.decodeIfPresent([OutputOutage].self, forKey: .outages) ?? []
        changes = try container.decodeIfPresent([OutputLatencyChange].self, forKey: .changes) ?? []
    }
}

/// A port an output was connected to that went away while the run played — the ports of a
/// netjack2 slave leave the master's graph when the master gives the slave up — and how the
/// output was connected again when it came back (under the same name, or as `<slave>-01:…`
/// when netmanager renamed the rejoining slave). Times are device sample times of the first cycle
/// after the engine had re-measured its outputs (within a few periods of JACK's notification).
public struct OutputOutage: Sendable, Hashable, Codable {
    /// The port that went away (`hall:to_slave_1`).
    public var destination: String
    /// The netjack2 slave it belonged to, by the name the slave announced; nil for another port.
    public var netSlave: String?
    /// When the engine found it gone (a device sample time).
    public var lostSampleTime: Int64
    /// When the output was connected again (a device sample time); nil when it did not come back
    /// before the run ended.
    public var rejoinedSampleTime: Int64?
    /// The port it was connected to again (`destination`, or the renamed slave's port).
    public var rejoinedAs: String?
    /// How long the output went without it, in frames: `rejoinedSampleTime − lostSampleTime`, or
    /// up to the end of the run.
    public var frames: Int64

    /// Creates a record.
    public init(destination: String, netSlave: String?, lostSampleTime: Int64, rejoinedSampleTime: Int64?, rejoinedAs: String?,
                frames: Int64) {
        self.destination = destination
        self.netSlave = netSlave
        self.lostSampleTime = lostSampleTime
        self.rejoinedSampleTime = rejoinedSampleTime
        self.rejoinedAs = rejoinedAs
        self.frames = frames
    }
}

/// A change of one output's measured playback latency or compensation delay during a run.
public struct OutputLatencyChange: Sendable, Hashable, Codable {
    /// The device sample time from which the new delay applies.
    public var sampleTime: Int64
    /// The playback latency of what the output is connected to now, in frames; nil: nothing.
    public var latency: Int?
    /// The delay the output applies from `sampleTime`, in frames.
    public var delay: Int

    /// Creates a record.
    public init(sampleTime: Int64, latency: Int?, delay: Int) {
        self.sampleTime = sampleTime
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
