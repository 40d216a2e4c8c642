/// What an OSC server has received, answered, pushed and dropped (every drop is counted here,
/// none is silent).
public struct OSCStatistics: Sendable, Hashable, Codable {
    /// Datagrams read from the socket: each one is ``admitted``, ``floodDropped`` or counted in
    /// ``clientsTurnedAway``.
    public var received = 0
    /// Datagrams (or TCP frames) let past the rate limit and the client table, each answered.
    public var admitted = 0
    /// Show commands handed to the dispatcher (answered ok or error).
    public var commands = 0
    /// Replies sent.
    public var replies = 0
    /// Of those, replies with status `error`.
    public var errorReplies = 0
    /// `/update/…` messages sent to subscribers.
    public var updatesSent = 0
    /// Messages refused for want of `/connect PASSCODE`.
    public var refused = 0
    /// Datagrams liblo could not decode as an OSC message.
    public var malformed = 0
    /// Datagrams larger than the limit.
    public var oversized = 0
    /// OSC bundles received (their messages are counted as commands).
    public var bundles = 0
    /// Commands of bundles time-tagged ahead, placed on the sample of their time.
    public var scheduled = 0
    /// Bundles refused because their time tag lay too far ahead.
    public var tooFarAhead = 0
    /// TCP connections accepted.
    public var connections = 0
    /// TCP connections closed by the server for an oversized frame (a client that does not read
    /// its replies is cut off too, counted in ``sendFailures``).
    public var disconnected = 0
    /// Messages dropped because their client sent too many too fast.
    public var floodDropped = 0
    /// Datagrams the kernel dropped because they came faster than they were read.
    public var kernelDropped = 0
    /// Datagrams dropped because the client table was full of authorised or subscribed clients.
    public var clientsTurnedAway = 0
    /// Replies or updates the kernel did not take (send buffer full, host unreachable).
    public var sendFailures = 0
    /// Clients known now.
    public var clients = 0
    /// Clients subscribed to updates now.
    public var subscribers = 0
    /// How soon the cues of untimed GOs (`/go`, `/cue/{name}/start`) sounded after their packet
    /// arrived (UDP; nil before the first).
    public var goLatency: GoLatency?

    /// Device frames from a GO's arrival (the kernel's timestamp of the datagram, on the host
    /// clock, translated to the device's frames) to its cue's first sample, over the GOs
    /// carried out (the latest 100 000).
    public struct GoLatency: Sendable, Hashable, Codable {
        /// GOs measured.
        public var count: Int
        /// The median, in device frames.
        public var p50Frames: Int64
        /// The 99th percentile, in device frames.
        public var p99Frames: Int64
        /// The largest, in device frames.
        public var maxFrames: Int64

        /// The summary of `frames` (nil when empty).
        public init?(_ frames: [Int64]) {
            guard !frames.isEmpty else { return nil }
            let sorted = frames.sorted()
            count = sorted.count
            p50Frames = sorted[sorted.count / 2]
            p99Frames = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
            maxFrames = sorted[sorted.count - 1]
        }
    }

    /// No traffic yet.
    public init() {}

    /// Everything that was received but not carried out: malformed, oversized, too far ahead,
    /// floods, kernel drops, refusals and turned-away clients.
    public var dropped: Int { malformed + oversized + tooFarAhead + floodDropped + kernelDropped + refused + clientsTurnedAway }
}
