/// Looping playlist groups (`mode: playlist`, `loop: N | forever`): every cue of the group sounds
/// again each pass, one pass after another with the group's crossfade between the last cue of a
/// pass and the first of the next. A cue of such a group is placed once; its ``Cue/repeats``
/// says where in its played time each pass sounds, so pauses, stops, fades and level changes act
/// on every pass as on any cue, and the audio stays a function of session time.
extension SessionTimeline.Cue {
    /// How a cue of a looping playlist sounds again: its passes start ``period`` samples apart
    /// (of its played time), each ``passLength`` long.
    public struct Repeats: Sendable, Hashable {
        /// Samples from one pass's start to the next.
        public var period: Int64
        /// One pass's length.
        public var passLength: Int64
        /// How many passes; nil: forever.
        public var count: Int?
        /// The group's crossfade: the first cue of the list fades in over it from the second pass
        /// on, the last fades out over it before every pass but the last.
        public var crossfade: Int64
        /// Whether it is the group's first cue, and its last.
        public var isFirst: Bool, isLast: Bool

        /// Its whole length: every pass (nil: forever).
        public var length: Int64? { count.map { Int64($0 - 1) * period + passLength } }
    }

    /// The cue as pass `pass` plays it: its length one pass, with the crossfades of that pass.
    func pass(_ pass: Int) -> SessionTimeline.Cue {
        guard let repeats else { return self }
        var view = self
        view.repeats = nil
        view.length = repeats.passLength
        if repeats.isFirst && pass > 0 { view.crossfadeIn = repeats.crossfade }
        if repeats.isLast, repeats.count.map({ pass < $0 - 1 }) ?? true { view.crossfadeOut = repeats.crossfade }
        return view
    }

    /// The stretches of `[from, to)` in which it sounds (``stretches(from:to:)``), each split into
    /// its passes when it repeats: the cue sample then counts from its pass's start. A cue loaded
    /// to a time sounds from its go's sample (``placedAt``), its chain placed before it: what
    /// lies before was never heard, live or rendered.
    func soundingStretches(from: Int64, to: Int64) -> [Stretch] {
        let all = stretches(from: max(from, placedAt ?? from), to: to)
        guard let repeats, repeats.period > 0 else { return all }
        var result: [Stretch] = []
        for stretch in all {
            // Played time p of the cue runs over [k0, k0 + n); pass j sounds over [jP, jP + L).
            let k0 = stretch.cueSample, n = stretch.to - stretch.from
            var j = k0 / repeats.period
            while j * repeats.period < k0 + n {
                let a = max(k0, j * repeats.period), b = min(k0 + n, j * repeats.period + repeats.passLength)
                if a < b {
                    result.append(Stretch(from: stretch.from + a - k0, to: stretch.from + b - k0,
                                          cueSample: a - j * repeats.period, pass: Int(j)))
                }
                j += 1
            }
        }
        return result
    }
}

extension SessionTimeline {
    /// Lets looping playlist cue `cue`'s group play to the end of the pass it is in at session
    /// sample `sample` (the pass its first cue is in), then end: every cue of the group gets that
    /// many passes, and the group the length they make.
    /// - Returns: whether `cue`'s end moved.
    mutating func devampRepeats(_ cue: Int, at sample: Int64) -> Bool {
        guard let repeats = cues[cue].repeats, let group = cues[cue].group,
              let first = cues.indices.first(where: { cues[$0].group == group && cues[$0].repeats?.isFirst == true }),
              cues[first].state(at: sample) == .playing || cues[first].awaitsResume else { return false }
        let passes = Int(cues[first].samplesPlayed(before: sample) / repeats.period) + 1
        if let count = repeats.count, passes >= count { return false }
        for member in cues.indices where cues[member].group == group && cues[member].repeats != nil {
            cues[member].repeats!.count = passes
            cues[member].length = cues[member].repeats!.length
        }
        // The group ends with its last cue's last pass.
        if let last = cues.indices.last(where: { cues[$0].group == group && cues[$0].repeats?.isLast == true }),
           let lastLength = cues[last].length, let lastStart = cues[last].start, let groupStart = cues[group].start {
            cues[group].length = lastStart - groupStart + lastLength
        }
        return true
    }
}

extension SessionTimelineBuilder {
    /// Makes the cues of playlist group `group` repeat its `loop` passes (nothing for a group that
    /// plays once), or reports why they cannot: a looping playlist holds audio cues of a length.
    /// Call once the group's cues are placed; sets the group's length.
    mutating func resolvePlaylistLoop(_ group: Int) {
        let cue = session.document.cues[group]
        guard cue.action.groupMode == .playlist, cue.loop != .times(1), let members = children[group], !members.isEmpty else { return }
        let name = SessionParser.excerpt(cue.name)
        var lengths: [Int64] = []
        for child in members {
            let childCue = session.document.cues[child]
            guard childCue.action.type == .audio, let length = cues[child].length else {
                diagnostics.append(.init(.conflict, at: childCue.location,
                    "cue '\(SessionParser.excerpt(childCue.name))' is in looping playlist '\(name)', which repeats audio cues of a length: \(childCue.action.type != .audio ? "move this \(childCue.action.type.rawValue) cue out of the group" : "give it a loop count")"))
                return
            }
            lengths.append(length)
        }
        let crossfade = cue.crossfade?.samples(at: rate) ?? 0
        if crossfade > lengths[0] || crossfade > lengths[lengths.count - 1] {
            diagnostics.append(.init(.conflict, at: cue.location(of: "crossfade"),
                "group '\(name)': crossfade \(cue.crossfade!) is longer than its \(crossfade > lengths[0] ? "first" : "last") cue, which it crossfades into the next pass; shorten the crossfade"))
            return
        }
        let origin = cues[group].offsetFromTrigger
        let last = members[members.count - 1]
        let period = cues[last].offsetFromTrigger - origin + lengths[lengths.count - 1] - crossfade
        guard period > 0 else { return }
        let count: Int? = if case .times(let n) = cue.loop { n } else { nil }
        for (i, child) in members.enumerated() {
            let repeats = SessionTimeline.Cue.Repeats(period: period, passLength: lengths[i], count: count, crossfade: crossfade,
                                                      isFirst: i == 0, isLast: i == members.count - 1)
            cues[child].repeats = repeats
            cues[child].length = repeats.length
        }
        cues[group].length = count.map { Int64($0 - 1) * period + period + crossfade }
    }
}
