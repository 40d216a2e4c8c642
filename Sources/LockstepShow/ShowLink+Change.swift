import LockstepSession

extension ShowLink {
    /// What changed in the main's run since the last state it sent: the gos and gain changes
    /// added (or, when the run was reset, all of them again from the first), the cues whose
    /// pauses, stops or level changes are not as they were, and the rest whole. Small whatever
    /// the length of the show.
    public struct Change: Sendable, Hashable, Codable {
        /// How many of the earlier gos stand (the new ones follow them).
        public var goesFrom: Int
        /// How many of the earlier gain changes stand.
        public var gainsFrom: Int
        /// The new gos and gain changes, the cues changed (with their lists as they stand now:
        /// empty ones for a cue whose changes are gone), and the rest of the run whole.
        public var run: SessionPlayer.RunState

        /// What turns `old` (nil: nothing sent yet) into `new`.
        public init(from old: SessionPlayer.RunState?, to new: SessionPlayer.RunState) {
            let old = old.flatMap { $0.rate == new.rate ? $0 : nil }
            goesFrom = old.map { new.goes.starts(with: $0.goes) ? $0.goes.count : 0 } ?? 0
            gainsFrom = old.map { new.gains.starts(with: $0.gains) ? $0.gains.count : 0 } ?? 0
            var run = new
            run.goes = Array(new.goes.dropFirst(goesFrom))
            run.gains = Array(new.gains.dropFirst(gainsFrom))
            if let old {
                let before = Dictionary(old.cues.map { ($0.cue, $0) }, uniquingKeysWith: { $1 })
                let now = Dictionary(new.cues.map { ($0.cue, $0) }, uniquingKeysWith: { $1 })
                run.cues = new.cues.filter { before[$0.cue] != $0 }
                    + old.cues.filter { now[$0.cue] == nil }.map { .init(cue: $0.cue, interruptions: [], levelChanges: []) }
            }
            self.run = run
        }
    }
}

extension SessionPlayer.RunState {
    /// This state with `change` applied: the main's run as it stands after it.
    public func applying(_ change: ShowLink.Change) -> SessionPlayer.RunState {
        var next = change.run
        next.goes = Array(goes.prefix(change.goesFrom)) + change.run.goes
        next.gains = Array(gains.prefix(change.gainsFrom)) + change.run.gains
        var cues = cues
        for changed in change.run.cues {
            cues.removeAll { $0.cue == changed.cue }
            if !changed.interruptions.isEmpty || !changed.levelChanges.isEmpty { cues.append(changed) }
        }
        next.cues = cues
        return next
    }
}
