/// What an OSC server has received, answered, pushed and dropped (every drop is counted here,
/// none is silent).
public struct OSCStatistics: Sendable, Hashable, Codable {
    /// Datagrams read from the socket.
    public var received = 0
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

    /// No traffic yet.
    public init() {}

    /// Everything that was received but not carried out: malformed, oversized, too far ahead,
    /// floods, kernel drops, refusals and turned-away clients.
    public var dropped: Int { malformed + oversized + tooFarAhead + floodDropped + kernelDropped + refused + clientsTurnedAway }
}
