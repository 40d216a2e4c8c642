/// Load cues: a manual cue loaded to a time on the timeline.
extension SessionTimeline {
    /// A load cue's effect on its target: from session sample ``at``, the target's next go plays
    /// it ``offset`` samples in.
    public struct Load: Sendable, Hashable {
        /// The load cue's sample.
        public var at: Int64
        /// Samples into the target its next go plays from.
        public var offset: Int64
    }

    /// The offset a go of manual cue `cue` at session sample `sample` plays it from, by the load
    /// cues: the last one carried out at or before `sample` and after the cue's previous go (a go
    /// uses up what was loaded before it); 0 without one.
    public func loadedOffset(of cue: Int, at sample: Int64) -> Int64 {
        guard cues.indices.contains(cue) else { return 0 }
        let previous = cues[cue].placedAt ?? .min
        return cues[cue].loads.last { $0.at <= sample && $0.at > previous }?.offset ?? 0
    }
}
