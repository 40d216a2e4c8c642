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
    /// WebSocket clients disconnected because they did not read: more messages waited for one
    /// than the server's backlog holds.
    public var disconnected = 0

    /// Counts of zero.
    public init() {}
}
