/// `lockstep session render --json`: the file written and the timeline it followed.
public struct SessionRenderReport: Sendable, Hashable, Codable {
    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// The file written (`inputs` holds the session file).
    public var render: RenderReport
    /// The timeline rendered (with the manual cues placed by `--go`).
    public var timeline: TimelineReport
    /// What the MIDI and network cues sent, in time order (nil: the session has none).
    public var messages: [CueMessageReport]?

    /// Creates a report.
    public init(render: RenderReport, timeline: TimelineReport, messages: [CueMessageReport]? = nil) {
        self.render = render
        self.timeline = timeline
        self.messages = messages
    }
}
