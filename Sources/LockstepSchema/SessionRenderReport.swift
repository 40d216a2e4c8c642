/// `lockstep session render --json`: the file written and the timeline it followed.
public struct SessionRenderReport: Sendable, Hashable, Codable {
    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// The file written (`inputs` holds the session file).
    public var render: RenderReport
    /// The timeline rendered (with the manual cues placed by `--go`).
    public var timeline: TimelineReport

    /// Creates a report.
    public init(render: RenderReport, timeline: TimelineReport) {
        self.render = render
        self.timeline = timeline
    }
}
