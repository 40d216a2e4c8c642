/// QLab's cue model while a timeline is built: continue modes and waits become starts, targets
/// become cue indices.
extension SessionTimelineBuilder {
    /// Makes each cue's start from its own start key, its pre-wait, its group and the previous
    /// cue's continue mode: a cue an auto-continue leads into starts with it (plus its post-wait),
    /// one an auto-follow leads into starts after it, one after a `continue: none` waits for its
    /// GO; a cue of a group starts with the group (timeline) or after the cue before it (playlist).
    /// The previous and next cue are those of the same list (the cue list, or the group's).
    mutating func resolveContinueModes() {
        let document = session.document
        starts = document.cues.map(\.start)
        waits = document.cues.map { $0.action.preWait?.samples(at: rate) ?? 0 }
        resolveGroupMembers()
        for (index, cue) in document.cues.enumerated() {
            guard let mode = cue.action.continueMode else { continue }
            let name = SessionParser.excerpt(cue.name)
            guard let nextIndex = next[index] else {
                if mode != .none {
                    diagnostics.append(.init(.conflict, at: cue.location(of: "continue"),
                        "cue '\(name)' is the last cue\(cue.action.parent == nil ? "" : " of its group"), so 'continue: \(mode.rawValue)' has no cue to lead into; remove it"))
                }
                continue
            }
            let next = document.cues[nextIndex]
            guard next.start == .afterPrevious else {
                if mode != .none {
                    let key = ["at", "after", "with"].first { next.keyLocations[$0] != nil } ?? "at"
                    diagnostics.append(.init(.conflict, at: next.location(of: key),
                        "cue '\(SessionParser.excerpt(next.name))' starts by its own '\(key)', but '\(name)' leads into it (continue: \(mode.rawValue)); remove one of them"))
                }
                continue
            }
            switch mode {
            case .none:
                if cue.action.parent != nil {
                    diagnostics.append(.init(.conflict, at: cue.location(of: "continue"),
                        "cue '\(name)' is in a group, whose cues start with it, so the next one cannot wait for a GO; remove 'continue: none'"))
                } else {
                    starts[nextIndex] = .manual
                }
            case .autoContinue:
                starts[nextIndex] = .with(cue.name)
                waits[nextIndex] += cue.action.postWait?.samples(at: rate) ?? 0
            case .autoFollow: starts[nextIndex] = .after(cue.name)
            }
        }
    }

    /// Resolves every action cue's target (a name, else a cue number) and makes its
    /// ``SessionTimeline/Action``; an action cue sits on its target's layer (a layer fade on its
    /// layer).
    mutating func resolveActions(layerIndex: [String: Int]) {
        let document = session.document
        var numbers: [String: Int] = [:]
        for (index, cue) in document.cues.enumerated() { if let number = cue.number { numbers[number] = index } }
        for (index, cue) in document.cues.enumerated() where cue.action.type != .audio && cue.action.type != .group {
            let action = cue.action
            let name = SessionParser.excerpt(cue.name)
            var target: Int?
            if let written = action.target {
                target = cueIndex[written] ?? numbers[written]
                if target == nil {
                    diagnostics.append(.init(.unknownCue, at: cue.location(of: "target"),
                        "cue '\(name)': unknown target '\(SessionParser.excerpt(written))'\(suggestion(for: written, in: cues.map(\.name))); name a cue (or its number) of this session"))
                    continue
                }
            }
            func audioTarget() -> Int? {
                guard let target else { return nil }
                let type = document.cues[target].action.type
                guard type == .audio || type == .group else {
                    diagnostics.append(.init(.conflict, at: cue.location(of: "target"),
                        "cue '\(name)': its target '\(SessionParser.excerpt(cues[target].name))' is a \(type.rawValue) cue; a \(action.type.rawValue) cue acts on an audio or group cue"))
                    return nil
                }
                return target
            }
            func manualTarget() -> Int? {
                guard let target else { return nil }
                guard cues[target].trigger == target else {
                    diagnostics.append(.init(.conflict, at: cue.location(of: "target"),
                        "cue '\(name)': its target '\(SessionParser.excerpt(cues[target].name))' is not a manual cue (it has a place on the timeline, or starts with another); a \(action.type.rawValue) cue \(action.type == .goto ? "puts the playhead on" : "fires") a cue with 'at: manual'"))
                    return nil
                }
                return target
            }
            let resolved: SessionTimeline.Action?
            switch action.type {
            case .audio, .group: resolved = nil     // (a group's action is made with its length)
            case .wait: resolved = .wait
            case .network:
                // (A missing destination or message was reported by the parser.)
                resolved = action.destination.flatMap { destination in action.message.map { .network(destination: destination, message: $0) } }
            case .midi: resolved = action.midi.map { .midi($0) }      // (what is wrong was reported)
            case .fade:
                if cue.keyLocations["layer"] != nil {
                    if action.stopsTarget {
                        diagnostics.append(.init(.conflict, at: cue.location(of: "stop_target"),
                            "cue '\(name)': a layer fade has no cue to stop; remove 'stop_target' or fade a cue ('target:')"))
                    }
                    resolved = layerIndex[cue.layer].map {
                        .fade(.layer($0), gainDB: action.level ?? 0, curve: action.curve, stopsTarget: false)
                    }
                } else {
                    resolved = audioTarget().map {
                        .fade(.cue($0), gainDB: action.level ?? 0, curve: action.curve, stopsTarget: action.stopsTarget)
                    }
                }
            case .stop: resolved = audioTarget().map { .stop($0) }
            case .pause: resolved = audioTarget().map { .pause($0) }
            case .resume: resolved = audioTarget().map { .resume($0) }
            case .devamp: resolved = audioTarget().map { .devamp($0) }
            case .start: resolved = manualTarget().map { .start($0) }
            case .goto: resolved = manualTarget().map { .goto($0) }
            case .load: resolved = manualTarget().map { .load($0, offset: action.loadTime?.samples(at: rate) ?? 0) }
            }
            guard let resolved else { continue }
            cues[index].action = resolved
            if case .fade(.layer(let layer), _, _, _) = resolved { cues[index].layer = layer }
            else if let target = resolved.targetCue { cues[index].layer = cues[target].layer }
        }
    }
}
