/// One message a MIDI or network cue sent in a render (`session render --json`: `messages`), on
/// the output sample its session sample plays on.
public struct CueMessageReport: Sendable, Hashable, Codable {
    /// The cue.
    public var cue: String
    /// `midi` or `network`.
    public var kind: String
    /// The session sample the cue is placed on.
    public var position: Int64
    /// The output sample it is on (the sample of the file the audio placed with it starts on).
    public var sampleTime: Int64
    /// A MIDI message's bytes, in hex (`91 3C 64`).
    public var bytes: String?
    /// A network message's destination (`HOST:PORT`, as written).
    public var destination: String?
    /// A network message's OSC address and arguments, as the session writes them.
    public var message: String?

    /// Creates a report.
    public init(cue: String, kind: String, position: Int64, sampleTime: Int64, bytes: String? = nil,
                destination: String? = nil, message: String? = nil) {
        self.cue = cue
        self.kind = kind
        self.position = position
        self.sampleTime = sampleTime
        self.bytes = bytes
        self.destination = destination
        self.message = message
    }
}
