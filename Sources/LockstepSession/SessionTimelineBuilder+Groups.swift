/// Group cues while a timeline is built: the lists their cues are in, their starts, their lengths.
extension SessionTimelineBuilder {
    /// Whether document cue `index` is a group cue.
    func isGroup(_ index: Int) -> Bool { session.document.cues[index].action.type == .group }

    /// Finds each cue's previous and next cue in its own list and each group's cues, and starts
    /// the cues of a group with it: in a timeline group a cue without a start key starts with the
    /// group and one with `at` that long after it; in a playlist group the first starts with the
    /// group and each next one after the one before, with the group's crossfade. A cue of a group
    /// follows (`after`) or starts with (`with`) only a cue of the same group.
    mutating func resolveGroupMembers() {
        let document = session.document
        previous = Array(repeating: nil, count: document.cues.count)
        next = Array(repeating: nil, count: document.cues.count)
        inheritedCrossfade = Array(repeating: nil, count: document.cues.count)
        children = [:]
        var last: [Int: Int] = [:]          // list (group index, -1 for the cue list) → its last cue so far
        for (index, cue) in document.cues.enumerated() {
            let list = cue.action.parent ?? -1
            if let before = last[list] {
                previous[index] = before
                next[before] = index
            }
            last[list] = index
            if let parent = cue.action.parent { children[parent, default: []].append(index) }
        }
        for (index, cue) in document.cues.enumerated() {
            guard let parent = cue.action.parent else { continue }
            let group = document.cues[parent]
            switch starts[index] {
            case .afterPrevious:
                if previous[index] == nil || group.action.groupMode == .timeline {
                    starts[index] = .with(group.name)
                } else if cue.action.type != .group {
                    // (A group plays no audio of its own to fade in: one follows without a crossfade.)
                    inheritedCrossfade[index] = group.crossfade
                }
            case .at(let time):
                // (A playlist's cue with `at` was reported by the parser.)
                starts[index] = .with(group.name)
                waits[index] += time.samples(at: rate)
            case .after(let name), .with(let name):
                if let target = cueIndex[name], document.cues[target].action.parent != parent {
                    let key = if case .after = starts[index] { "after" } else { "with" }
                    diagnostics.append(.init(.conflict, at: cue.location(of: key),
                        "cue '\(SessionParser.excerpt(cue.name))' is in group '\(SessionParser.excerpt(group.name))', but '\(key)' names '\(SessionParser.excerpt(name))', which is not; a cue of a group starts with the group or after a cue of the same group"))
                    starts[index] = .with(group.name)
                }
            case .manual: break     // (reported by the parser)
            case .atTimecode:
                diagnostics.append(.init(.conflict, at: cue.location(of: "at"),
                    "cue '\(SessionParser.excerpt(cue.name))' is in group '\(SessionParser.excerpt(group.name))', which places it; 'at: tc' places cues of the top level only"))
                starts[index] = .with(group.name)
            }
        }
    }

    /// Resolves every group's length (the deepest groups first).
    mutating func resolveGroupLengths() {
        for index in cues.indices.reversed() where isGroup(index) { resolveGroupLength(index) }
    }

    /// Makes group `group` a ``SessionTimeline/Action/group`` whose length reaches the end of the
    /// last of its cues to end (nil when one loops forever), resolving its cues first, and lists
    /// its audio and group cues (its groups' too) as its members.
    mutating func resolveGroupLength(_ group: Int) {
        guard cues[group].action != .group else { return }
        cues[group].action = .group
        var end: Int64? = cues[group].offsetFromTrigger
        var members: [Int] = []
        for child in children[group] ?? [] {
            if state[child] == 0 { resolveChain(from: child) }
            if isGroup(child) { resolveGroupLength(child) }
            guard state[child] == 2 else { continue }
            if isGroup(child) { members += [child] + cues[child].members }
            else if session.document.cues[child].action.type == .audio { members.append(child) }
            if let current = end {
                end = cues[child].length.map { max(current, cues[child].offsetFromTrigger + $0) }
            }
        }
        cues[group].members = members
        cues[group].length = end.map { $0 - cues[group].offsetFromTrigger }
        if let first = members.first(where: { !isGroup($0) }) { cues[group].layer = cues[first].layer }
        resolvePlaylistLoop(group)
    }
}
