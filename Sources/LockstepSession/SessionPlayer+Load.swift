import Foundation

/// Loading a cue to a time (QLab's load-to-time).
extension SessionPlayer {
    /// How ``load(_:at:change:)`` moves a cue's load time.
    public enum LoadChange: Sendable, Hashable {
        /// To the time given.
        case set
        /// Later by the time given.
        case later
        /// Earlier by the time given (not before 0).
        case earlier
    }

    /// Loads manual cue `name` to `offset` samples: its next go (plain or named, live or at a
    /// sample) places it — and its chain — `offset` samples before the go's sample, so that it
    /// sounds from `offset` samples in, as if it had been fired then; what its chain would have
    /// done before the go (an action cue's edits) counts from those earlier samples. A go unloads
    /// it. Changes no audio until then.
    /// - Returns: the offset the cue is loaded to.
    /// - Throws: ``PlayerError`` for an unknown cue, one that is not manual, or an offset past
    ///   its chain's end (nothing would sound).
    @discardableResult
    public func load(_ name: String, at offset: Int64, change: LoadChange = .set) throws(PlayerError) -> Int64 {
        defer { scheduleArming() }
        return try state.withLock { state throws(PlayerError) -> Int64 in
            let cue = try Self.cue(name, in: state.timeline, verb: "load")
            guard cue.isGoTarget else { _ = try Self.manualCue(name, in: state.timeline, verb: "load"); return 0 }
            let current = state.loaded[cue.index] ?? 0
            let value: Int64 = switch change {
            case .set: offset
            case .later: current + offset
            case .earlier: max(0, current - offset)
            }
            var chainEnd: Int64? = 0
            for other in state.timeline.cues where other.trigger == cue.index {
                guard let length = other.length, let end = chainEnd else { chainEnd = nil; break }
                chainEnd = max(end, other.offsetFromTrigger + length)
            }
            if let chainEnd, value >= chainEnd, value > 0 {
                throw PlayerError(.outOfRange, "load: cue '\(name)' and what it starts end \(chainEnd) samples after its go; load it to less than that")
            }
            state.loaded[cue.index] = value == 0 ? nil : value
            return value
        }
    }

    /// The manual cues (indices) whose next GO at session sample `position` plays them loaded
    /// to a time: by a load command, or by a load cue carried out before `position`.
    public func loadedCues(at position: Int64) -> Set<Int> {
        state.withLock { state in
            Set(state.timeline.manualCues.map(\.index).filter {
                (state.loaded[$0] ?? state.timeline.loadedOffset(of: $0, at: position)) > 0
            })
        }
    }

    /// The time manual cue `name` is loaded to, in samples (0: not loaded).
    public func loadedOffset(of name: String) -> Int64 {
        state.withLock { state in
            state.timeline.cues.first { $0.name == name }.flatMap { state.loaded[$0.index] } ?? 0
        }
    }
}
