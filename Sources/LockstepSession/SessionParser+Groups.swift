/// Group cues in the session format: a group's `children:` and the starts of the cues inside it.
extension SessionParser {
    /// How deep groups may nest.
    public static let maximumGroupDepth = 16

    /// Reads group `group`'s `cues:` (`node`) into `list`, right after the group.
    mutating func parseGroupCues(_ node: YAMLNode?, of group: Int, item: YAMLNode, label: String,
                                 into list: inout CueListState) {
        let name = Self.excerpt(list.cues[group].name)
        guard let node else {
            report(.missingKey, item, "\(label) ('\(name)'): a group cue needs 'children:', the list of cues it holds")
            return
        }
        guard case .sequence(let sequence) = node.content, !sequence.isEmpty else {
            report(.invalidValue, node, "\(label) ('\(name)'): 'children' must be a list of at least one cue, each starting with '- '")
            return
        }
        var depth = 1
        var parent = list.cues[group].action.parent
        while let above = parent {
            depth += 1
            parent = list.cues[above].action.parent
        }
        guard depth <= Self.maximumGroupDepth else {
            report(.invalidValue, node, "\(label) ('\(name)'): groups nest at most \(Self.maximumGroupDepth) deep; move these cues up a level")
            return
        }
        parseCueList(sequence, parent: group, labelPrefix: "\(label).", into: &list)
    }

    /// Checks the start of a cue inside a group: it starts with its group, so not by its own GO,
    /// and in a playlist not at a time of its own either.
    mutating func checkGroupMember(_ cue: inout SessionDocument.Cue, startKeys: [(String, YAMLNode)], label: String,
                                   in list: CueListState) {
        guard let parent = cue.action.parent, let (key, value) = startKeys.first else { return }
        let group = list.cues[parent]
        let name = cue.name.isEmpty ? "" : " ('\(Self.excerpt(cue.name))')"
        if cue.start == .manual {
            report(.conflict, value, "\(label)\(name) is in group '\(Self.excerpt(group.name))' and starts with it; remove 'at: manual' and fire the group")
            cue.start = .afterPrevious
        } else if key == "at" && group.action.groupMode == .playlist {
            report(.conflict, value, "\(label)\(name) is in playlist group '\(Self.excerpt(group.name))', which plays its cues one after another; remove 'at' (or use 'offset', or 'mode: timeline' on the group)")
            cue.start = .afterPrevious
        }
    }
}
