/// What the MIDI surface of `session run --midi` saw, in the `midi` field of its `--json` summary.
public struct MIDIInputSummary: Sendable, Hashable, Codable {
    /// The JACK MIDI input port.
    public var port: String
    /// Samples from each event to the sample its commands land on; absent when they are carried out
    /// as soon as they come (the default).
    public var latency: Int64?
    /// Messages read.
    public var received: Int
    /// Messages a trigger matched.
    public var matched: Int
    /// Messages no trigger matched.
    public var unmatched: Int
    /// Messages that were not valid MIDI.
    public var broken: Int
    /// Commands the session refused (the reply was an error).
    public var refused: Int
    /// Dropped by the port: the ring was full, or a message was longer than it holds.
    public var dropped: Int
    /// The last broken message, in hex.
    public var lastBroken: String?

    /// Creates a summary.
    public init(port: String, latency: Int64?, received: Int, matched: Int, unmatched: Int, broken: Int, refused: Int,
                dropped: Int, lastBroken: String?) {
        self.port = port
        self.latency = latency
        self.received = received
        self.matched = matched
        self.unmatched = unmatched
        self.broken = broken
        self.refused = refused
        self.dropped = dropped
        self.lastBroken = lastBroken
    }
}
