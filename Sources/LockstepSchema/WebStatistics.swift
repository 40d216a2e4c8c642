/// What the web cue page's server did (`--web`), for a run's summary.
public struct WebStatistics: Sendable, Hashable, Codable {
    /// WebSocket clients accepted.
    public var clients = 0
    /// Commands received (socket and POST).
    public var commands = 0
    /// Commands answered with an error.
    public var errorReplies = 0
    /// Requests refused for their Host, Origin or token, or for too many clients.
    public var refused = 0
    /// Messages dropped for a client that did not read them in time.
    public var dropped = 0

    /// Counts of zero.
    public init() {}
}
