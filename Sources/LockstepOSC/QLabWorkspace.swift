import LockstepControl
import LockstepSession

/// A cue as QLab's OSC addresses name it: by number or name (`/cue/{cue}`), by unique ID
/// (`/cue_id/{id}`), or one of QLab's special cues.
public enum QLabCueTarget: Sendable, Hashable {
    /// `/cue/{cue}`: a cue's name or number (as ``LockstepControl/CueReference`` resolves it).
    case reference(CueReference)
    /// `/cue_id/{id}`: a cue's (or the cue list's) unique ID.
    case uniqueID(String)
    /// `/cue/playhead`, `/cue/playbackPosition`: the manual cue a plain go fires.
    case playhead
    /// `/cue/active`: the cue started last of those playing or paused.
    case active
    /// `/cue/selected`: Lockstep's selection is the playhead (QLab's "playhead follows
    /// selection"), so the same cue as ``playhead``.
    case selected
}

/// What QLab's cue addresses do to a cue (or, addressed by its unique ID, the cue list).
public enum QLabCueAction: Sendable, Hashable {
    /// `start`: fire the cue without moving the playhead (the list: go).
    case start
    /// `go`: fire the cue and move the playhead past it (the list: go).
    case go
    /// `stop`: stop the cue (the list: every cue).
    case stop
    /// `pause`: pause the cue (the list: the session).
    case pause
    /// `resume`: resume the cue (the list: the session).
    case resume
    /// `togglePause`: pause a playing cue, resume a paused one (the list: the session).
    case togglePause
    /// `/playheadID/{id}`: put the playhead on the cue.
    case select
    /// `level`: set the cue's own level, in dB.
    case level(Double)
    /// `reset`: the list only: the show back to its top (``LockstepControl/ControlCommand/reset``).
    case reset
    /// `panic`, `panicInTime`: fade out over the seconds given (nil: the panic time), then stop.
    case panic(Double?)
    /// `loadAt`, `loadAt/+`, `loadAt/-`, `load`: load the cue to a time in seconds.
    case loadAt(Double, SessionPlayer.LoadChange)
    /// A setter (`/cue/{cue}/preWait 2`…): edit the cue.
    case edit(CueEdit)
    /// `audition`, `auditionGo`, `preview`, `auditionPreview`: play the cue on the audition
    /// outputs, apart from the show.
    case audition
    /// `/cue/{cue}/{key}/+` or `/-`: move a time (`preWait`, `postWait`, `duration`,
    /// `startTime`, `endTime`) by the seconds given (negative: earlier), not below 0.
    case adjust(String, Double)
}

/// A question QLab's clients ask (Companion's *QLab (advance)* module, QLab Remote…): answered
/// from the session's state, changing nothing.
public enum QLabQuery: Sendable, Hashable {
    /// `/version`: the version of QLab's OSC dictionary Lockstep answers as.
    case version
    /// `/workspaces`: the one workspace a run is.
    case workspaces
    /// `/cueLists`: the one cue list, with its cues.
    case cueLists
    /// `/selectedCues`: the cue at the playhead (Lockstep's selection), or none.
    case selectedCues
    /// `/doubleGoWindowRemaining`: seconds until a plain GO is no longer ignored (0: none is).
    case doubleGoWindowRemaining
    /// `/runningCues`: the cues playing.
    case runningCues
    /// `/runningOrPausedCues`: the cues playing or paused.
    case runningOrPausedCues
    /// `/cue/{cue}/valuesForKeys "[…]"`: the values of the keys asked (null for a key Lockstep
    /// does not know).
    case valuesForKeys(QLabCueTarget, [String])
    /// `/cue/{cue}/{key}`: one key's value (`/cue/1/name`, `/cue_id/{list}/playheadID`).
    case property(QLabCueTarget, String)
    /// `/cue/{cue}/children`: the cue list's cues (those at its top), a group's cues; other cues
    /// have none.
    case children(QLabCueTarget)
    /// `/playheadID`: the unique ID of the cue at the playhead, or `none`.
    case playheadID
    /// A workspace or application setting QLab clients read (`/showMode`, `/alwaysAudition`…),
    /// with Lockstep's fixed answer.
    case setting(String)

    /// Whether QLab answers it for the application rather than a workspace (its reply then
    /// carries no `workspace_id`).
    public var isApplicationLevel: Bool {
        switch self {
        case .version, .workspaces: return true
        case .setting(let name): return QLabWorkspace.applicationSettings.contains(name)
        default: return false
        }
    }
}

/// A Lockstep run as QLab's OSC clients see it: one workspace (named after the session file),
/// holding one cue list ("Main Cue List") of Audio cues — the session's cues, in file order.
///
/// Unique IDs are stable: the workspace's is derived from the session file's name, each cue's
/// from its name, the cue list's from the workspace's, so a controller set up with them finds
/// the same cues in the next run. A cue's QLab `number` is its `number:` key (empty without one);
/// its state (`isRunning`, `isPaused`, elapsed time) is read from the session player, the same
/// state the dispatcher's `status` reports.
public struct QLabWorkspace: Sendable, Hashable {
    /// The version of QLab's OSC dictionary Lockstep answers as (`/version`).
    public static let dictionaryVersion = "5.0.0"
    /// The cue list's name.
    public static let cueListName = "Main Cue List"
    /// The settings QLab answers for the application (no `workspace_id` in the reply).
    static let applicationSettings: Set<String> = ["alwaysAudition", "auditionWindow", "auditionMonitors", "overrideWindow"]
    /// Lockstep's answers to the settings QLab clients read: always in show mode (a run plays
    /// the show; there is no edit mode), no audition, no override window, no live fade preview;
    /// the minimum time between GOs is the run's double-GO window (``Snapshot/doubleGoSeconds``;
    /// the value here is a placeholder).
    public static let settings: [String: ControlValue] = [
        "showMode": .bool(true), "alwaysAudition": .bool(false), "auditionWindow": .bool(false),
        "auditionMonitors": .bool(false), "overrideWindow": .bool(false), "liveFadePreview": .bool(false),
        "settings/general/minGoTime": .number(0),
    ]
    /// The keys a cue answers, for `valuesForKeys` and `/cue/{cue}/{key}`.
    public static let cueKeys: Set<String> = [
        "uniqueID", "number", "name", "listName", "displayName", "type", "colorName", "flagged", "armed", "notes", "parent",
        "isRunning", "isPaused", "isLoaded", "isBroken", "isAuditioning", "isActionRunning", "duration", "actionElapsed",
        "percentActionElapsed", "preWait", "postWait", "preWaitElapsed", "postWaitElapsed", "percentPreWaitElapsed",
        "percentPostWaitElapsed", "continueMode", "autoLoad", "infiniteLoop", "holdLastFrame", "hasFileTargets",
        "hasCueTargets", "fileTarget", "playheadID", "playbackPositionID", "cues", "startTime", "endTime",
    ]

    /// The keys a setter (`/cue/{cue}/{key} value`) edits.
    public static let settableKeys: Set<String> = ["name", "number", "preWait", "postWait", "duration", "startTime",
                                                   "endTime", "continueMode"]
    /// The keys `/{key}/+` and `/-` move.
    public static let adjustableKeys: Set<String> = ["preWait", "postWait", "duration", "startTime", "endTime"]

    /// The workspace's unique ID.
    public let uniqueID: String
    /// Its display name: the session file's name.
    public let displayName: String
    /// Whether clients must `/connect` with a passcode.
    public let hasPasscode: Bool
    /// The cue list's unique ID.
    public let cueListID: String
    /// Each cue's unique ID, in file order: made from its name when the run began, and kept
    /// through renames.
    public let cueIDs: [String]

    /// The workspace of `session`.
    public init(session: Session, hasPasscode: Bool) {
        let fileName = session.document.path.split(separator: "/").last.map(String.init) ?? session.document.path
        displayName = fileName
        uniqueID = Self.identifier("lockstep workspace " + fileName)
        cueListID = Self.identifier("lockstep cue list " + uniqueID)
        self.hasPasscode = hasPasscode
        var ids: [String] = []
        for name in session.document.cues.map(\.name) {
            var id = Self.identifier("lockstep cue " + name)
            var salt = 1
            while ids.contains(id) || id == cueListID {      // never twice (a hash collision)
                id = Self.identifier("lockstep cue \(salt) " + name)
                salt += 1
            }
            ids.append(id)
        }
        cueIDs = ids
    }

    /// A UUID-shaped identifier (`8-4-4-4-12` upper-case hex) derived from `text` by two 64-bit
    /// FNV-1a hashes: the same text always gives the same identifier.
    static func identifier(_ text: String) -> String {
        func fnv(_ basis: UInt64) -> UInt64 {
            text.utf8.reduce(basis) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        }
        let hex = [fnv(0xcbf2_9ce4_8422_2325), fnv(0x84222325_cbf29ce4)].map { value -> String in
            let digits = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }

    /// The session's state at one moment, for answering queries.
    public struct Snapshot: Sendable {
        /// The timeline, with every cue's placement, pauses and stops.
        public var timeline: SessionTimeline
        /// The session file as edited so far: each cue's number, type, waits and continue mode.
        public var document: SessionDocument
        /// The session sample playing.
        public var position: Int64
        /// Whether the session plays (not paused, not stopped).
        public var isRunning: Bool
        /// The manual cue a plain go fires.
        public var playhead: String?
        /// The double-GO window, in seconds.
        public var doubleGoSeconds: Double
        /// Seconds left of the window after the last plain GO (0 when none would be ignored).
        public var doubleGoRemaining: Double
        /// The manual cues (indices) loaded to a time: their next GO plays them from there.
        public var loaded: Set<Int>
        /// The cue being auditioned, by name (nil: none).
        public var auditioning: String?

        /// The state of `player` now, with the cue `auditioning` auditioned.
        public init(player: SessionPlayer, auditioning: String? = nil) {
            self.auditioning = auditioning
            timeline = player.timeline
            document = player.document
            position = player.position
            isRunning = player.isRunning
            playhead = player.playhead
            let window = player.doubleGoWindow
            doubleGoSeconds = Double(window) / player.rate
            let now = position
            let since = player.lastPlainGoPosition.map { now - $0 } ?? window
            doubleGoRemaining = since >= 0 && since < window ? Double(window - since) / player.rate : 0
            loaded = player.loadedCues(at: position)
        }
    }

    /// A cue or the cue list.
    enum Item: Equatable {
        case list
        case cue(Int)
    }

    /// The cue (or list) `target` names.
    /// - Throws: ``LockstepControl/ControlError`` saying why none is named.
    func item(_ target: QLabCueTarget, in snapshot: Snapshot) throws(ControlError) -> Item {
        let timeline = snapshot.timeline
        switch target {
        case .uniqueID(let id):
            if id == cueListID { return .list }
            if let index = cueIDs.firstIndex(of: id), timeline.cues.indices.contains(index) { return .cue(index) }
            throw ControlError(.unknownCue, "no cue has the unique ID \(id); /cueLists lists the cues with theirs")
        case .reference(let reference):
            let name = try ControlDispatcher.resolve(reference, in: timeline, numbers: snapshot.document.cues.map(\.number))
            if let index = timeline.cues.firstIndex(where: { $0.name == name }) { return .cue(index) }
            throw ControlError(.unknownCue, "unknown cue '\(name)'\(Suggest.hint(for: name, in: timeline.cues.map(\.name)))")
        case .playhead, .selected:
            guard let name = snapshot.playhead, let index = timeline.cues.firstIndex(where: { $0.name == name }) else {
                throw ControlError(.nothingWaiting, "no cue is at the playhead (it is past the last manual cue); select one, or /reset")
            }
            return .cue(index)
        case .active:
            let active = timeline.cues.filter { isRunning($0, snapshot) || isPaused($0, snapshot) }
                .max { ($0.start ?? 0, $0.index) < ($1.start ?? 0, $1.index) }
            guard let active else { throw ControlError(.wrongState, "no cue is active: none is playing or paused") }
            return .cue(active.index)
        }
    }

    /// Whether a cue sounds now (the session playing).
    func isRunning(_ cue: SessionTimeline.Cue, _ snapshot: Snapshot) -> Bool {
        snapshot.isRunning && cue.state(at: snapshot.position) == .playing
    }

    /// Whether a cue is paused, or would sound but the whole session is paused.
    func isPaused(_ cue: SessionTimeline.Cue, _ snapshot: Snapshot) -> Bool {
        let state = cue.state(at: snapshot.position)
        return state == .paused || (state == .playing && !snapshot.isRunning)
    }

    /// The cue dictionary QLab's `/cueLists`, `/runningCues`… hold for `item`.
    func dictionary(_ item: Item, in snapshot: Snapshot) -> ControlValue {
        var fields: [String: ControlValue] = [:]
        for key in ["uniqueID", "number", "name", "listName", "type", "colorName", "flagged", "armed"] {
            fields[key] = value(key, of: item, in: snapshot)
        }
        if case .cue(let index) = item, snapshot.timeline.cues[index].action != .group {} else {
            fields["cues"] = value("cues", of: item, in: snapshot)
        }
        return .object(fields)
    }

    /// The cues of the list, as dictionaries, those `include` keeps.
    func cues(in snapshot: Snapshot, where include: (SessionTimeline.Cue) -> Bool = { _ in true }) -> ControlValue {
        .array(snapshot.timeline.cues.filter(include).map { dictionary(.cue($0.index), in: snapshot) })
    }

    /// The value of `key` for `item`; nil for a key it does not have.
    func value(_ key: String, of item: Item, in snapshot: Snapshot) -> ControlValue? {
        let timeline = snapshot.timeline
        switch item {
        case .list:
            let running = timeline.cues.contains { isRunning($0, snapshot) }
            switch key {
            case "uniqueID": return .string(cueListID)
            case "number", "notes": return .string("")
            case "name", "listName", "displayName": return .string(Self.cueListName)
            case "type": return .string("Cue List")
            case "playheadID", "playbackPositionID":
                return .string(snapshot.playhead.flatMap { name in timeline.cues.firstIndex { $0.name == name } }.map { cueIDs[$0] } ?? "none")
            case "cues": return cues(in: snapshot) { $0.group == nil }
            case "isRunning", "isActionRunning": return .bool(running)
            case "isPaused": return .bool(!running && timeline.cues.contains { isPaused($0, snapshot) })
            case "parent", "fileTarget": return .null
            case "hasFileTargets": return .bool(false)
            default: return commonValue(key)
            }
        case .cue(let index):
            let cue = timeline.cues[index]
            let written = snapshot.document.cues[index]
            let rate = timeline.rate
            let pass = Double(cue.regionEnd - cue.regionStart) / cue.fileRate
            let duration = cue.length.map { Double($0) / rate } ?? pass
            let active = isRunning(cue, snapshot) || isPaused(cue, snapshot)
            let elapsed = active ? Double(cue.samplesPlayed(before: snapshot.position)) / rate : 0
            switch key {
            case "uniqueID": return .string(cueIDs[index])
            case "number": return .string(written.number ?? "")
            case "name", "listName", "displayName": return .string(written.name)
            case "type": return .string(written.action.type.qlabName)
            case "notes": return .string("")
            case "parent": return .string(cue.group.map { cueIDs[$0] } ?? cueListID)
            case "isRunning", "isActionRunning": return .bool(isRunning(cue, snapshot))
            case "isPaused": return .bool(isPaused(cue, snapshot))
            case "duration": return .number(duration)
            case "actionElapsed": return .number(elapsed)
            case "percentActionElapsed":
                guard active, duration > 0 else { return .number(0) }
                return .number(cue.length == nil ? elapsed.truncatingRemainder(dividingBy: pass) / pass : min(1, elapsed / duration))
            case "infiniteLoop": return .bool(cue.length == nil)
            case "preWait": return .number(written.action.preWait?.seconds(at: rate) ?? 0)
            case "postWait": return .number(written.action.postWait?.seconds(at: rate) ?? 0)
            case "continueMode":
                let mode: Int64 = switch written.action.continueMode { case .autoContinue: 1; case .autoFollow: 2; case .none?, nil: 0 }
                return .integer(mode)
            case "startTime": return .number(cue.isAudio ? Double(cue.regionStart) / cue.fileRate : 0)
            case "endTime": return .number(cue.isAudio ? Double(cue.regionEnd) / cue.fileRate : 0)
            case "hasFileTargets": return .bool(cue.isAudio)
            case "fileTarget": return cue.isAudio ? .string(cue.path) : .null
            case "hasCueTargets": return .bool(snapshot.timeline.cues[index].action.targetCue != nil)
            case "isLoaded": return .bool(snapshot.loaded.contains(index))
            case "isAuditioning": return .bool(snapshot.auditioning == written.name)
            case "cues": return cues(in: snapshot) { $0.group == index }
            case "playheadID", "playbackPositionID": return nil
            default: return commonValue(key)
            }
        }
    }

    /// What every cue and the list answer alike.
    private func commonValue(_ key: String) -> ControlValue? {
        switch key {
        case "colorName": return .string("none")
        case "flagged", "isLoaded", "isBroken", "isAuditioning", "autoLoad", "holdLastFrame", "hasCueTargets", "infiniteLoop":
            return .bool(false)
        case "armed": return .bool(true)
        case "duration", "actionElapsed", "percentActionElapsed", "preWait", "postWait", "preWaitElapsed", "postWaitElapsed",
             "percentPreWaitElapsed", "percentPostWaitElapsed":
            return .number(0)
        case "continueMode": return .integer(0)
        default: return nil
        }
    }

    /// The answer to `query` (whatever is not about the client's connection).
    /// - Throws: ``LockstepControl/ControlError`` for a cue that is not there or a key it lacks.
    func answer(_ query: QLabQuery, in snapshot: Snapshot) throws(ControlError) -> ControlValue {
        switch query {
        case .version: return .string(Self.dictionaryVersion)
        case .workspaces:
            return .array([.object(["uniqueID": .string(uniqueID), "displayName": .string(displayName),
                                    "hasPasscode": .bool(hasPasscode), "version": .string(Self.dictionaryVersion)])])
        case .cueLists: return .array([dictionary(.list, in: snapshot)])
        case .selectedCues:
            let index = snapshot.playhead.flatMap { name in snapshot.timeline.cues.firstIndex { $0.name == name } }
            return .array(index.map { [dictionary(.cue($0), in: snapshot)] } ?? [])
        case .doubleGoWindowRemaining: return .number(snapshot.doubleGoRemaining)
        case .runningCues: return cues(in: snapshot) { isRunning($0, snapshot) }
        case .runningOrPausedCues: return cues(in: snapshot) { isRunning($0, snapshot) || isPaused($0, snapshot) }
        case .playheadID: return value("playheadID", of: .list, in: snapshot) ?? .null
        case .valuesForKeys(let target, let keys):
            let item = try item(target, in: snapshot)
            return .object(Dictionary(keys.map { ($0, value($0, of: item, in: snapshot) ?? .null) }, uniquingKeysWith: { a, _ in a }))
        case .property(let target, let key):
            let item = try item(target, in: snapshot)
            guard let value = value(key, of: item, in: snapshot) else {
                throw ControlError(.unsupported, "\(item == .list ? "the cue list" : "an Audio cue") has no \(key) in Lockstep")
            }
            return value
        case .children(let target):
            return try value("cues", of: item(target, in: snapshot), in: snapshot) ?? .array([])
        case .setting("settings/general/minGoTime"): return .number(snapshot.doubleGoSeconds)
        case .setting(let name):
            guard let value = Self.settings[name] else { throw ControlError(.unsupported, "Lockstep has no setting \(name)") }
            return value
        }
    }

    /// The show command `action` on `target` makes.
    /// - Throws: ``LockstepControl/ControlError`` for a cue that is not there or an action the
    ///   cue list does not take.
    func command(_ action: QLabCueAction, on target: QLabCueTarget, in snapshot: Snapshot) throws(ControlError) -> ControlCommand {
        switch try item(target, in: snapshot) {
        case .list:
            switch action {
            case .start, .go: return .go(nil)
            case .stop: return .stop
            case .pause: return .pause
            case .resume: return .resume
            case .togglePause: return snapshot.isRunning ? .pause : .resume
            case .reset: return .reset
            case .panic(let seconds): return seconds.map { .panicIn(.seconds($0)) } ?? .panic
            case .select, .level, .loadAt, .edit, .adjust, .audition:
                let what = switch action {
                case .select: "put at the playhead"
                case .level: "levelled"
                case .edit, .adjust: "edited"
                case .audition: "auditioned"
                default: "loaded"
                }
                throw ControlError(.unsupported, "the cue list cannot be \(what); name one of its cues")
            }
        case .cue(let index):
            let cue = snapshot.timeline.cues[index]
            let reference = CueReference.name(cue.name)
            switch action {
            case .start: return .startCue(reference)
            case .go: return .go(reference)
            case .stop: return .stopCue(reference)
            case .pause: return .pauseCue(reference)
            case .resume: return .resumeCue(reference)
            case .togglePause: return cue.state(at: snapshot.position) == .paused ? .resumeCue(reference) : .pauseCue(reference)
            case .select: return .selectPlayhead(reference)
            case .level(let decibels): return .setCueLevel(reference, decibels: decibels, ramp: 0)
            case .reset: throw ControlError(.unsupported, "Lockstep resets the whole show (/reset), not one cue; stop the cue (/cue/{cue}/stop) and it can be fired again")
            case .panic(let seconds): return .panicCue(reference, fade: seconds.map { .seconds($0) })
            case .loadAt(let seconds, let change): return .loadCue(reference, .seconds(seconds), change)
            case .edit(let change): return .editCue(reference, change)
            case .audition: return .audition(reference)
            case .adjust(let key, let seconds):
                guard case .number(let current)? = value(key, of: .cue(index), in: snapshot) else {
                    throw ControlError(.unsupported, "\(key) of cue '\(cue.name)' is not a time")
                }
                let moved = max(0, current + seconds)
                guard let change = try OSCAddressSpace.edit(key, [.double(moved)], address: "/cue/\(cue.name)/\(key)") else {
                    throw ControlError(.unsupported, "\(key) cannot be moved")
                }
                return .editCue(reference, change)
            }
        }
    }

    /// The QLab-style updates (address and arguments) a ``LockstepControl/ControlUpdate``
    /// makes: a cue's change → `/update/workspace/{id}/cue_id/{cue}`; the playhead moving →
    /// `/update/workspace/{id}/cueList/{list}/playbackPosition {cue}` (no argument: none waits);
    /// the whole session pausing, resuming, seeking or stopping → every cue's update.
    /// Cues are found by their names in `document` (the session as edited).
    func updates(for update: ControlUpdate, document: SessionDocument) -> [(address: String, arguments: [OSCArgument])] {
        let prefix = "/update/workspace/\(uniqueID)"
        func cueUpdate(_ index: Int) -> (String, [OSCArgument]) { ("\(prefix)/cue_id/\(cueIDs[index])", []) }
        switch update.kind {
        case .cueStarted, .cueEnded, .cueStopped, .cuePaused, .cueResumed, .cueLevel, .cueEdited, .cueLoaded:
            guard let name = update.cue, let index = document.cues.firstIndex(where: { $0.name == name }) else { return [] }
            return [cueUpdate(index)]
        case .playhead:
            let id = update.cue.flatMap { name in document.cues.firstIndex { $0.name == name } }.map { cueIDs[$0] }
            return [("\(prefix)/cueList/\(cueListID)/playbackPosition", id.map { [.string($0)] } ?? [])]
        case .paused, .resumed, .seeked, .stopped, .panic, .reset:
            return cueIDs.indices.map(cueUpdate)
        case .layerGain, .discontinuity, .heartbeat, .layerStarted, .layerEnded, .recordStarted, .recordEnded, .rateChange, .late, .chase, .link, .divergence:
            return []
        }
    }

    /// `/update/workspace/{id}/disconnect`: the workspace goes away (the run ends).
    var disconnectAddress: String { "/update/workspace/\(uniqueID)/disconnect" }
}
