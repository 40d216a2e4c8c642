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
        /// For an edit of a layer's `ports`: the device sample from which it sounds where they
        /// say (``SessionPlayer/portConnector``); nil for any other edit.
        public var routedSampleTime: Int64? = nil
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

    /// The session as edited during the run (its text is what ``SessionFile`` saves).
    public var editedSession: Session { state.withLock { $0.session } }

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
        try control { state throws(PlayerError) -> EditResult in
            let index = try Self.documentIndex(of: name, in: state.document, verb: change.key)
            var document = state.document
            try Self.apply(change, to: &document, at: index, fileRate: state.session.files[index].sampleRate)
            let label = "\(change.key) of cue '\(name)'"
            let next = try reread(document, of: state.session, label: label)
            let newName = document.cues[index].name
            return try commit(next, in: &state, renames: newName == name ? [:] : [name: newName], focus: newName,
                              key: change.key, label: label)
        }
    }

    /// The index of cue `name` in `document`.
    static func documentIndex(of name: String, in document: SessionDocument, verb: String) throws(PlayerError) -> Int {
        guard let index = document.cues.firstIndex(where: { $0.name == name }) else {
            throw PlayerError(.unknownCue, "\(verb): unknown cue '\(name)'\(Suggest.hint(for: name, in: document.cues.map(\.name)))")
        }
        return index
    }

    /// `session` with its document changed to `document`: its text rewritten and read again (so
    /// its files and every check are as `session check` of the saved file), or — a session not read
    /// from a file — the same files with the new document.
    func reread(_ document: SessionDocument, of session: Session, label: String) throws(PlayerError) -> Session {
        guard !session.text.isEmpty else { return Session(editing: session, document: document) }
        let text: String
        do { text = try SessionFileEditor.apply(to: session.text, original: session.document, edited: document) } catch {
            throw PlayerError(.invalidEdit, "\(label) refused: \(error.message)")
        }
        return try reread(text, of: session, label: label)
    }

    /// The session read from `text` (as the file `session` came from), its files known to
    /// `session` not opened again.
    func reread(_ text: String, of session: Session, label: String) throws(PlayerError) -> Session {
        do { return try Session.parse(text: text, path: session.document.path, known: session.files) } catch {
            throw PlayerError(.invalidEdit, "\(label) refused: \(error.diagnostics.map(\.message).joined(separator: "; "))")
        }
    }

    /// Installs `next` and keeps the edit for ``undo()``.
    func commit(_ next: Session, in state: inout State, renames: [String: String], focus: String, key: String,
                label: String, at landing: Int64? = nil) throws(PlayerError) -> EditResult {
        let before = state.session
        let result = try install(next, in: &state, renames: renames, focus: focus, key: key, label: label, at: landing)
        editCounter.add(1, ordering: .releasing)
        state.undoStack.append(EditStep(before: before, after: next, renames: renames, focusBefore: renames.first?.key ?? focus,
                                        focusAfter: focus, key: key))
        state.redoStack = []
        return result
    }

    /// Makes `next` (the session with an edit) the session. Each cue is found again by its name
    /// (`renames`: old name → new): one not placed takes the edit at once, a placed one at its next
    /// start (``SessionTimeline/pendingEdits``); a cue added joins the timeline (a timed one whose
    /// time has passed sounds in step from where the edit lands, as a render of the edited show
    /// has it); a cue removed that sounds stops with a declick fade.
    /// - Throws: ``PlayerError`` (`invalidEdit`) when `next` is not a valid session at this rate or
    ///   changes the layers (made when the run starts).
    func install(_ next: Session, in state: inout State, renames: [String: String], focus: String, key: String,
                 label: String, at landing: Int64? = nil) throws(PlayerError) -> EditResult {
        var builder = SessionTimelineBuilder(session: next, rate: rate)
        var fresh: SessionTimeline
        do throws(SessionError) { fresh = try builder.build() } catch {
            let why = error.diagnostics.map(\.message).joined(separator: "; ")
            throw PlayerError(.invalidEdit, "\(label) refused: \(why)")
        }
        let old = state.timeline
        guard fresh.layers.map(\.name) == old.layers.map(\.name), fresh.channelCount == old.channelCount else {
            throw PlayerError(.invalidEdit, "\(label) refused: the layers and the channels are made when the session starts; add, remove or rename a layer (or change 'channels') in the file and run it again")
        }
        let moved = fresh.layers.indices.filter { fresh.layers[$0].ports != old.layers[$0].ports }
        if directOutputs, timecodeOutput != nil,
           let clash = moved.first(where: { fresh.layers[$0].name == SessionTimecodeOutput.name && !fresh.layers[$0].ports.isEmpty }) {
            throw PlayerError(.invalidEdit, "\(label) refused: layer '\(fresh.layers[clash].name)' would have ports of its own named as the LTC output's; rename the layer")
        }
        // (Last of the checks: it changes the JACK graph, undone only by another edit.)
        let routed = moved.isEmpty ? [:] : try reroute(moved, from: old, to: fresh, label: label)
        let sample = landing ?? state.controlSample
        // A layer's gain: from where the edit lands.
        for index in fresh.layers.indices where fresh.layers[index].gainDB != old.layers[index].gainDB {
            state.touch(layer: index, from: sample)
        }
        var oldIndex: [String: Int] = [:]
        for cue in old.cues { oldIndex[cue.name] = cue.index }
        let renamedFrom = Dictionary(renames.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        let origin = fresh.cues.map { oldIndex[renamedFrom[$0.name] ?? $0.name] }
        var newIndex: [Int: Int] = [:]
        for (index, from) in origin.enumerated() { if let from { newIndex[from] = index } }
        var nextID = ([old.cues, state.initial.cues, old.retired.values.flatMap { $0 }].joined().map(\.id).max() ?? -1) + 1
        var timeline = old
        timeline.layers = fresh.layers
        // A cue removed stops where the edit lands, as a stop does (what it played stays).
        for index in old.cues.indices where newIndex[index] == nil {
            let cue = old.cues[index]
            if cue.start != nil { state.touch(layer: cue.layer, from: sample) }
            timeline.retire(index, at: sample, fade: declickFade(state))
        }
        var cues: [SessionTimeline.Cue] = []
        cues.reserveCapacity(fresh.cues.count)
        timeline.pendingEdits = [:]
        var focusPending = false
        for (index, from) in origin.enumerated() {
            var edited = fresh.cues[index]
            guard let from else {
                // Added: it sounds as the edited show's timeline has it from where the edit lands
                // (a timed cue whose time has passed joins in step, as a render of the edited
                // show plays it there).
                edited.id = nextID
                nextID += 1
                if let start = edited.start, edited.isAudio { state.touch(layer: edited.layer, from: max(start, sample)) }
                cues.append(edited)
                continue
            }
            var current = timeline.cues[from]
            edited.instance = current.instance
            edited.id = current.id
            // The placed cue as it plays, its references moved to the new indices.
            current.index = index
            current.trigger = edited.trigger
            current.group = edited.group
            current.members = edited.members
            current.action = current.action.mapped { newIndex[$0] }
            if let start = current.start {
                let untouched = start >= sample && current.isAudio && current.trigger == nil && current.interruptions.isEmpty
                    && current.levelChanges.isEmpty && (edited.start ?? -1) >= sample
                if untouched {
                    if Self.staticPart(current) != Self.staticPart(edited) || current.start != edited.start {
                        state.touch(layer: current.layer, from: min(start, edited.start!))
                        state.touch(layer: edited.layer, from: min(start, edited.start!))
                    }
                    cues.append(edited)
                } else {
                    if Self.staticPart(current) != Self.staticPart(edited) {
                        timeline.pendingEdits[index] = edited
                        // A gain edit alone of a cue still sounding: its level ramps to the new
                        // gain where the edit lands, over the declick (as a level command
                        // would); its next start takes the new gain as its own.
                        var gainOnly = Self.staticPart(current)
                        gainOnly.gainDB = edited.gainDB
                        let sounds = [.scheduled, .playing, .paused].contains(current.state(at: sample))
                        if current.isAudio, sounds, gainOnly == Self.staticPart(edited) {
                            current.levelChanges.removeAll { $0.start >= sample }
                            current.levelChanges.append(SessionTimeline.AutomationPoint(start: sample, ramp: declickFade(state), gainDB: edited.gainDB))
                            state.touch(layer: current.layer, from: sample)
                        } else if edited.name == focus {
                            focusPending = true
                        }
                    }
                    // (A name is no sound: it applies at once, placed or not.)
                    current.name = edited.name
                    cues.append(current)
                }
            } else {
                // (A level set on a waiting cue stays.) Given a time, it joins in step as an added
                // cue does.
                edited.levelChanges = current.levelChanges
                edited.interruptions = current.interruptions
                if let start = edited.start, edited.isAudio { state.touch(layer: edited.layer, from: max(start, sample)) }
                cues.append(edited)
            }
        }
        timeline.cues = cues
        timeline.structure += 1
        for (index, cue) in cues.enumerated() { fresh.cues[index].id = cue.id }
        fresh.structure = timeline.structure
        for (from, to) in renames {
            for entry in state.fired.indices where state.fired[entry].name == from { state.fired[entry].name = to }
        }
        state.fired.removeAll { name in !fresh.cues.contains { $0.name == name.name } }
        state.loaded = Dictionary(uniqueKeysWithValues: state.loaded.compactMap { from, offset in newIndex[from].map { ($0, offset) } })
        if let playhead = state.playhead {
            var kept = newIndex[playhead]
            // A cue that no longer takes a GO (put in a group): the cue that fires it now, if any.
            var steps = 0
            while let at = kept, !timeline.cues[at].isGoTarget, let trigger = timeline.cues[at].trigger, steps < timeline.cues.count {
                kept = trigger
                steps += 1
            }
            state.playhead = kept.flatMap { timeline.cues[$0].isGoTarget ? $0 : nil }
                ?? (playhead..<old.cues.count).lazy.compactMap { newIndex[$0] }.first { timeline.cues[$0].isGoTarget }
        } else if state.fired.isEmpty {
            state.playhead = timeline.manualCues.first?.index
        }
        state.timeline = timeline
        state.initial = fresh
        state.session = next
        state.edits.append(EditRecord(count: (state.edits.last?.count ?? 0) + 1, text: next.text, renames: renames, sample: sample, rate: rate))
        if state.edits.count > Self.editHistory { state.edits.removeFirst() }
        return EditResult(cue: focus, key: key, sample: sample, atNextStart: focusPending, routedSampleTime: routed.values.max())
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
