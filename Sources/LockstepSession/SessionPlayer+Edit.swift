import Foundation

/// Editing cues while the session runs: QLab's cue setters (name, number, waits, continue mode,
/// duration, start and end time, gain).
extension SessionPlayer {
    /// What an edit did.
    public struct EditResult: Sendable, Hashable {
        /// The cue's name after the edit.
        public var cue: String
        /// The session file's key edited (`pre_wait`, `to`…).
        public var key: String
        /// The session sample the edit landed on.
        public var sample: Int64
        /// Whether the cue was placed (scheduled, playing or played) when edited: the edit then
        /// applies from its next start (a GO of it, a start cue, a reset) and what plays now plays
        /// on unchanged. False: the edit applies at once.
        public var atNextStart: Bool
    }

    /// Which start of the layers this is (each start, seek, reset, resume after a halt counts
    /// one) and the session sample it started from: a watcher of the session's position tells a
    /// jump back from it, however little it polls.
    public var currentStart: (count: Int, position: Int64) {
        state.withLock { ($0.run, $0.queueOrigin) }
    }

    /// The session file as edited during the run: the file's document, with every
    /// ``edit(_:_:)`` made since.
    public var document: SessionDocument { state.withLock { $0.document } }

    /// Edits cue `name`: the session is checked again with the change (refused, with what
    /// `session check` would say, if it would not be valid). A cue that waits to be placed (a
    /// manual cue and its chain before its GO) takes the edit at once; a placed one (scheduled,
    /// playing or played) plays on as it was and takes it at its next start. A timed audio cue
    /// that has not begun takes it at once too, when it still starts after the edit lands.
    /// What ``reset()`` returns to includes the edit.
    /// - Throws: ``PlayerError`` for an unknown cue, a value out of range, a key the cue's type
    ///   does not have, or an edit that makes the session invalid (``PlayerError/Kind/invalidEdit``).
    @discardableResult
    public func edit(_ name: String, _ change: CueEdit) throws(PlayerError) -> EditResult {
        let session = self.session, rate = self.rate
        return try control { state throws(PlayerError) -> EditResult in
            guard let index = state.document.cues.firstIndex(where: { $0.name == name }) else {
                throw PlayerError(.unknownCue, "\(change.key): unknown cue '\(name)'\(Suggest.hint(for: name, in: state.document.cues.map(\.name)))")
            }
            var document = state.document
            try Self.apply(change, to: &document, at: index, fileRate: session.files[index].sampleRate)
            var builder = SessionTimelineBuilder(session: Session(editing: session, document: document), rate: rate)
            let fresh: SessionTimeline
            do throws(SessionError) { fresh = try builder.build() } catch {
                let why = error.diagnostics.map(\.message).joined(separator: "; ")
                throw PlayerError(.invalidEdit, "\(change.key) of cue '\(name)' refused: \(why)")
            }
            let sample = state.controlSample
            var atNextStart = false
            for i in fresh.cues.indices {
                let current = state.timeline.cues[i]
                var edited = fresh.cues[i]
                edited.instance = current.instance
                if let start = current.start {
                    let untouched = start >= sample && current.isAudio && current.trigger == nil && current.interruptions.isEmpty
                        && current.levelChanges.isEmpty && (edited.start ?? -1) >= sample
                    if untouched {
                        state.timeline.cues[i] = edited
                        state.touch(layer: current.layer, from: min(start, edited.start!))
                        state.touch(layer: edited.layer, from: min(start, edited.start!))
                    } else if Self.staticPart(current) != Self.staticPart(edited) {
                        state.timeline.pendingEdits[i] = edited
                        if i == index { atNextStart = true }
                    }
                } else {
                    // (A level set on a waiting cue stays.)
                    edited.levelChanges = current.levelChanges
                    edited.interruptions = current.interruptions
                    state.timeline.cues[i] = edited
                    state.timeline.pendingEdits[i] = nil
                }
            }
            if case .name = change {
                // A name is no sound: it applies at once, placed or not.
                state.timeline.cues[index].name = document.cues[index].name
                for entry in state.fired.indices where state.fired[entry].name == name { state.fired[entry].name = document.cues[index].name }
            }
            state.initial = fresh
            state.document = document
            return EditResult(cue: document.cues[index].name, key: change.key, sample: sample, atNextStart: atNextStart)
        }
    }

    /// Takes `document` (another player's edits of the same session) as the session file, before
    /// anything plays: the timeline, what a reset returns to and the playhead are made from it.
    func adopt(_ document: SessionDocument) {
        guard document != session.document else { return }
        var builder = SessionTimelineBuilder(session: Session(editing: session, document: document), rate: rate)
        guard let fresh = try? builder.build() else { return }
        state.withLock { state in
            state.document = document
            state.initial = fresh
            state.timeline = fresh
            state.playhead = fresh.manualCues.first?.index
        }
    }

    /// A cue without what placing it and controlling it change.
    static func staticPart(_ cue: SessionTimeline.Cue) -> SessionTimeline.Cue {
        var cue = cue
        cue.start = nil
        cue.placedAt = nil
        cue.interruptions = []
        cue.levelChanges = []
        cue.instance = 0
        return cue
    }

    /// Makes `change` to cue `index` of `document` (its file at `fileRate`), checking its value
    /// and that the cue's type has the key.
    static func apply(_ change: CueEdit, to document: inout SessionDocument, at index: Int, fileRate: Double) throws(PlayerError) {
        var cue = document.cues[index]
        let type = cue.action.type
        let label = "\(change.key) of cue '\(cue.name)'"
        func requireAudio() throws(PlayerError) {
            guard type == .audio else {
                throw PlayerError(.invalidEdit, "\(label): a \(type.rawValue) cue plays no file region; only an audio cue has \(change.key)")
            }
        }
        func checked(_ time: SessionTime?) throws(PlayerError) -> SessionTime? {
            guard let time else { return nil }
            guard time.isInRange else {
                throw PlayerError(.outOfRange, "\(label): \(time) is out of range; a time is 0 to a week (\(Int(SessionTime.maximumSeconds)) s)")
            }
            return time
        }
        switch change {
        case .name(let new):
            let trimmed = new.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, trimmed.count <= SessionParser.maximumValueLength else {
                throw PlayerError(.outOfRange, "\(label): a cue's name is 1 to \(SessionParser.maximumValueLength) characters")
            }
            guard trimmed == cue.name || !document.cues.contains(where: { $0.name == trimmed }) else {
                throw PlayerError(.invalidEdit, "\(label): another cue is named '\(trimmed)'; give every cue its own name")
            }
            if let trigger = document.triggers.firstIndex(where: { ($0.action ?? "").split(whereSeparator: \.isWhitespace).contains { $0 == cue.name } }) {
                throw PlayerError(.invalidEdit, "\(label): MIDI trigger \(trigger + 1) ('\(document.triggers[trigger].action ?? "")') names the cue; rename it in the session file")
            }
            let old = cue.name
            for other in document.cues.indices {
                switch document.cues[other].start {
                case .after(old): document.cues[other].start = .after(trimmed)
                case .with(old): document.cues[other].start = .with(trimmed)
                default: break
                }
                if document.cues[other].action.target == old { document.cues[other].action.target = trimmed }
            }
            cue = document.cues[index]
            cue.name = trimmed
        case .number(let new):
            if let new {
                guard !new.isEmpty, !new.contains(where: \.isWhitespace), new.count <= SessionParser.maximumValueLength else {
                    throw PlayerError(.outOfRange, "\(label): a cue number has no spaces, such as 1, 2.5 or A3")
                }
                if let other = document.cues.firstIndex(where: { $0.number == new }), other != index {
                    throw PlayerError(.invalidEdit, "\(label): cue '\(document.cues[other].name)' has number \(new); give every cue its own number")
                }
            }
            cue.number = new
        case .preWait(let time): cue.action.preWait = try checked(time)
        case .postWait(let time): cue.action.postWait = try checked(time)
        case .continueMode(let mode):
            cue.action.continueMode = mode
            // As in QLab, a cue waits for its GO because the cue before it does not continue:
            // the next cue of the list, manual, now starts by this one's continue mode.
            let parent = cue.action.parent
            if mode != .none, let next = document.cues.indices.dropFirst(index + 1).first(where: { document.cues[$0].action.parent == parent }),
               document.cues[next].start == .manual {
                document.cues[next].start = .afterPrevious
            }
        case .duration(let time):
            let time = try checked(time)!
            switch type {
            case .fade, .wait: cue.action.duration = time
            case .audio:
                // Each pass of the region that long: `to` moves (in seconds of the file).
                let from = cue.from.map { Self.seconds($0, fileRate: fileRate) } ?? 0
                guard case .seconds(let length) = time else {
                    throw PlayerError(.outOfRange, "\(label): give an audio cue's duration in seconds")
                }
                cue.to = .seconds(from + length)
            default:
                throw PlayerError(.invalidEdit, "\(label): a \(type.rawValue) cue has no duration; fade, wait and audio cues have one")
            }
        case .from(let time):
            try requireAudio()
            cue.from = try checked(time)
        case .to(let time):
            try requireAudio()
            cue.to = try checked(time)
        case .gain(let decibels):
            try requireAudio()
            guard decibels.isFinite || decibels == -.infinity, decibels <= SessionGain.maximum else {
                throw PlayerError(.outOfRange, "\(label): \(decibels) dB is out of range; a gain is -inf to \(SessionGain.maximum) dB")
            }
            cue.gainDB = decibels
        }
        document.cues[index] = cue
    }

    /// A file position in seconds (one given in samples read at `fileRate`).
    static func seconds(_ time: SessionTime, fileRate: Double) -> Double {
        switch time {
        case .seconds(let s): return s
        case .samples(let n): return Double(n) / fileRate
        }
    }
}
