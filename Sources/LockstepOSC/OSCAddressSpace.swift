import Foundation
import LockstepControl
import LockstepSession

/// What an OSC message asks for: a show command, or something about the connection itself.
public enum OSCRequest: Sendable, Hashable {
    /// A command for the ``LockstepControl/ControlDispatcher``.
    case command(ControlCommand)
    /// `/connect [PASSCODE]`: authorise this client.
    case connect(String?)
    /// `/updates 1|0`: start or stop pushing `/update/…` messages to this client.
    case updates(Bool)
    /// `/udpReplyPort N`: send this client's replies and updates to port N.
    case replyPort(UInt16)
    /// `/thump`: a keep-alive; answered with `thump`.
    case thump
    /// `/updates` without an argument: whether this client gets updates.
    case updatesState
    /// One of QLab's queries (`/workspaces`, `/cueLists`, `/cue/{cue}/valuesForKeys`…).
    case query(QLabQuery)
    /// A cue command on a cue named by unique ID or as QLab's special cues (`/cue_id/{id}/start`,
    /// `/cue/playhead/pause`, `/playheadID/{id}`), resolved against the session when carried out.
    case cueCommand(QLabCueTarget, QLabCueAction)
}

/// QLab's OSC dictionary, and Lockstep's own addresses, mapped onto ``OSCRequest``s.
///
/// | address | arguments | request |
/// | --- | --- | --- |
/// | `/go` | none, a cue name, or a cue number | ``ControlCommand/go(_:)`` |
/// | `/stop`, `/pause`, `/resume`, `/panic` | none | the whole show |
/// | `/cue/{cue}/start`, `/stop`, `/pause`, `/resume`, `/go` | none | one cue |
/// | `/cue/{cue}/level` | dB, or row 0, column 0, dB | the cue's level |
/// | `/reset` | none | the show back to its top ``ControlCommand/reset`` |
/// | `/undo`, `/redo` | none | the last cue edit undone, or made again (``ControlCommand/undo``) |
/// | `/lockstep/save` | none, or `"force"` | the run's edits written into the session file (``ControlCommand/save(force:)``) |
/// | `/lockstep/set` | cue, key, value (strings; no value: the key removed) | any key of a cue, as the session file writes it |
/// | `/lockstep/add` | `"KEY=VALUE"`… then `"after"`, cue / `"in"`, group / `"first"` | a cue added (``CueStructureEdit``) |
/// | `/lockstep/duplicate`, `/lockstep/delete` | cue | a cue copied after itself, or removed |
/// | `/lockstep/set-layer` | layer, key, value | a layer's `gain` or `channel_map` |
/// | `/lockstep/unlearn` | cue | the MIDI triggers that fire the cue removed |
/// | `/lockstep/learn` | the action (`"go bell"`), or `"cancel"` | MIDI learn: the next MIDI message becomes its trigger |
/// | `/lockstep/move` | cue, then `"after"`, cue / `"first"` / `"in"`, group | a cue moved |
/// | `/playhead/{cue}`, `/playhead/next`, `/playhead/previous`, `/select/{cue}`, `/select_id/{id}`, `/select/next`, `/select/previous` | none | the playhead (Lockstep's selection) |
/// | `/lockstep/layer/{layer}/gain` | dB [, ramp: seconds, or a time such as `"250ms"`, `"4800 samples"`] | a layer's gain |
/// | `/lockstep/cue/{cue}/level` | dB [, ramp, as for a layer's gain] | a cue's level over a ramp (a fade from a controller) |
/// | `/lockstep/seek` | seconds (a number), or a time (`"1:30"`, `"96000 samples"`) | seek |
/// | `/overrides/{key}` | none (asks), or 1 / 0 | a show-control override on or off (``LockstepControl/ShowOverrides``) |
/// | `/lockstep/status` | none | status |
/// | `/connect` | [passcode] | authorise |
/// | `/updates` | 1 or 0 | subscribe |
/// | `/udpReplyPort` | port | reply port |
/// | `/thump` | none | keep-alive |
/// | `/version`, `/workspaces`, `/cueLists`, `/selectedCues`, `/runningCues`, `/runningOrPausedCues`, `/playheadID`, `/doubleGoWindowRemaining` | none | ``QLabQuery`` |
/// | `/cue/{cue}/valuesForKeys` | a JSON array of keys (one string) | the values |
/// | `/cue/{cue}/{key}`, `/cue/{cue}/children` | none | one value, the list's cues |
/// | `/cue_id/{id}/…`, `/cue/playhead/…`, `/cue/selected/…`, `/cue/active/…` | as `/cue/{cue}/…` | by unique ID, the playhead (twice), the cue started last |
/// | `/cue_id/{list}/reset`, `/cue_id/{list}/playhead/next`, `/cue_id/{list}/playhead/previous` | none | the cue list's reset and playhead |
/// | `/cue/{cue}/togglePause`, `/playheadID/{id}` | none | pause or resume; the playhead |
/// | `/showMode`, `/alwaysAudition`, `/auditionWindow`, `/auditionMonitors`, `/overrideWindow`, `/liveFadePreview`, `/settings/general/minGoTime` | none | Lockstep's fixed answer |
///
/// `{cue}` is a cue's name, or its number in the session file (from 1). Every address may also
/// come as QLab's `/workspace/{id}/…` form (Lockstep has one workspace: the id is not checked).
public enum OSCAddressSpace {
    /// The addresses, for suggestions and help.
    public static let addresses = [
        "/go", "/stop", "/pause", "/resume", "/panic", "/reset", "/undo", "/redo", "/lockstep/save", "/lockstep/set", "/lockstep/add", "/lockstep/duplicate",
        "/lockstep/delete", "/lockstep/move", "/lockstep/group", "/overrides/{key}", "/lockstep/learn", "/lockstep/unlearn", "/lockstep/set-layer", "/cue/{cue}/start", "/cue/{cue}/stop", "/cue/{cue}/pause",
        "/cue/{cue}/resume", "/cue/{cue}/go", "/cue/{cue}/level", "/playhead/{cue}", "/select/{cue}", "/select_id/{id}",
        "/select/next", "/select/previous", "/playhead/next", "/playhead/previous", "/doubleGoWindowRemaining",
        "/lockstep/layer/{layer}/gain", "/lockstep/cue/{cue}/level", "/lockstep/seek", "/lockstep/status", "/connect", "/updates", "/udpReplyPort", "/thump",
        "/version", "/workspaces", "/cueLists", "/selectedCues", "/runningCues", "/runningOrPausedCues", "/playheadID",
        "/cue/{cue}/audition", "/cue/{cue}/preview", "/auditionGo", "/cue/{cue}/valuesForKeys", "/cue/{cue}/children", "/cue/{cue}/togglePause", "/cue_id/{id}/valuesForKeys", "/cue_id/{id}/start",
        "/showMode", "/alwaysAudition", "/auditionMonitors", "/overrideWindow", "/liveFadePreview", "/settings/general/minGoTime",
    ]

    /// The request `message` makes.
    /// - Throws: ``LockstepControl/ControlError`` for an unknown address or arguments of the
    ///   wrong number or type, saying what the address takes.
    public static func request(for message: OSCMessage) throws(ControlError) -> OSCRequest {
        var parts = message.address.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        // QLab's /workspace/{id}/… form: a Lockstep run is one workspace, whatever the id; and
        // /cue_id/{list}/cue/…, a cue of the one cue list.
        // (Companion's QLab module can send the prefix twice: its workspace and an action's.)
        while parts.count >= 3 && parts[0] == "workspace" { parts.removeFirst(2) }
        if parts.count >= 4 && parts[0] == "cue_id" && parts[2] == "cue" { parts.removeFirst(2) }
        let arguments = message.arguments
        let address = message.address
        func none() throws(ControlError) {
            guard arguments.isEmpty else { throw ControlError(.malformed, "\(address) takes no arguments; it was sent \(list(arguments))") }
        }
        func numbers(_ counts: Set<Int>, _ form: String) throws(ControlError) -> [Double] {
            let values = arguments.compactMap { $0.number ?? $0.text.flatMap(SessionGain.parse) }
            guard counts.contains(arguments.count), values.count == arguments.count, values.allSatisfy({ !$0.isNaN }) else {
                throw ControlError(.malformed, "\(address) takes \(form); it was sent \(list(arguments))")
            }
            return values
        }
        func setting(_ name: String) throws(ControlError) -> OSCRequest {
            guard arguments.isEmpty else { throw ControlError(.unsupported, "\(address): Lockstep cannot change \(name); send it without arguments to read it") }
            return .query(.setting(name))
        }
        /// A load time: seconds, or QLab's hours, minutes, seconds.
        func loadTime() throws(ControlError) -> Double {
            let values = try numbers([1, 3], "a time in seconds (or QLab's hours, minutes, seconds)")
            let seconds = values.count == 3 ? values[0] * 3600 + values[1] * 60 + values[2] : values[0]
            return try checked { () throws(ControlRangeError) in try ControlRange.time(seconds: seconds, for: address) }.seconds(at: 1)
        }
        /// A panic's fade in seconds, 0 to an hour.
        func fadeTime() throws(ControlError) -> Double {
            let seconds = try numbers([1], "a fade time in seconds")[0]
            return try checked { () throws(ControlRangeError) in try ControlRange.ramp(seconds: seconds, for: address) }.seconds(at: 1)
        }
        /// The seconds a `/{key}/+` or `/-` moves a time by (negative for `-`).
        func adjustment(_ key: String, up: Bool) throws(ControlError) -> Double {
            let seconds = try numbers([1], "the seconds to move \(key) by")[0]
            guard seconds.isFinite, abs(seconds) <= SessionTime.maximumSeconds else {
                throw ControlError(.outOfRange, "\(address): \(seconds) s is out of range; send up to a week (\(Int(SessionTime.maximumSeconds)) s)")
            }
            return up ? seconds : -seconds
        }
        func cue(_ name: String) throws(ControlError) -> CueReference {
            guard !name.isEmpty else { throw ControlError(.malformed, "\(address) names no cue; write the cue's name or number, e.g. /cue/1/start") }
            return .name(name)
        }

        switch parts.count {
        case 1:
            switch parts[0] {
            case "go":
                switch arguments.first {
                case nil: return .command(.go(nil))
                case let argument? where arguments.count == 1:
                    if let text = argument.text { return .command(.go(try cue(text))) }
                    if let number = argument.number, number == number.rounded(), number >= 1, number < 1e9 {
                        return .command(.go(.number(Int(number))))
                    }
                    fallthrough
                default: throw ControlError(.malformed, "/go takes nothing, a cue name or a cue number; it was sent \(list(arguments))")
                }
            case "stop": try none(); return .command(.stop)
            case "pause": try none(); return .command(.pause)
            case "resume": try none(); return .command(.resume)
            case "panic": try none(); return .command(.panic)
            case "reset": try none(); return .command(.reset)
            case "undo": try none(); return .command(.undo)
            case "redo": try none(); return .command(.redo)
            case "auditionGo", "preview", "auditionPreview": try none(); return .command(.audition(nil))
            case "panicInTime": return .command(.panicIn(.seconds(try fadeTime())))
            case "loadAt": return .cueCommand(.playhead, .loadAt(try loadTime(), .set))
            case let key where QLabWorkspace.settableKeys.contains(key) && !arguments.isEmpty:
                // (QLab's /{key} value: the cue at the playhead.)
                return .cueCommand(.playhead, .edit(try Self.edit(key, arguments, address: address)!))
            case "thump": return .thump
            case "version": try none(); return .query(.version)
            case "workspaces": try none(); return .query(.workspaces)
            case "cueLists": try none(); return .query(.cueLists)
            case "selectedCues": try none(); return .query(.selectedCues)
            case "runningCues": try none(); return .query(.runningCues)
            case "runningOrPausedCues": try none(); return .query(.runningOrPausedCues)
            case "playheadID", "playheadId", "playbackPositionID", "playbackPositionId": try none(); return .query(.playheadID)
            case "doubleGoWindowRemaining": try none(); return .query(.doubleGoWindowRemaining)
            case let name where QLabWorkspace.settings[name] != nil: return try setting(name)
            case "connect":
                guard arguments.count <= 1, arguments.allSatisfy({ $0.text != nil }) else {
                    throw ControlError(.malformed, "/connect takes the passcode as one string; it was sent \(list(arguments))")
                }
                return .connect(arguments.first?.text)
            case "updates":
                if arguments.isEmpty { return .updatesState }
                let value = try numbers([1], "1 (send me updates) or 0 (stop)")[0]
                return .updates(value != 0)
            case "udpReplyPort":
                let value = try numbers([1], "a UDP port (1 to 65535)")[0]
                guard value == value.rounded(), value >= 1, value <= 65535 else {
                    throw ControlError(.outOfRange, "/udpReplyPort \(value) is not a UDP port; send 1 to 65535")
                }
                return .replyPort(UInt16(value))
            default: break
            }
        case 2:
            switch (parts[0], parts[1]) {
            // (A sequence starts at a cue a GO fires: Lockstep's manual cues.)
            case ("select", "next"), ("playhead", "next"), ("playhead", "nextSequence"): try none(); return .command(.selectNext)
            case ("select", "previous"), ("playhead", "previous"), ("playhead", "previousSequence"):
                try none()
                return .command(.selectPrevious)
            case ("loadAt", "+"), ("loadAt", "-"):
                return .cueCommand(.playhead, .loadAt(try loadTime(), parts[1] == "+" ? .later : .earlier))
            case (let key, "+"), (let key, "-"):
                guard QLabWorkspace.adjustableKeys.contains(key) else { break }
                return .cueCommand(.playhead, .adjust(key, try adjustment(key, up: parts[1] == "+")))
            case ("playhead", let name), ("select", let name): try none(); return .command(.selectPlayhead(try cue(name)))
            case ("select_id", let id), ("selectId", let id):
                try none()
                guard !id.isEmpty else { throw ControlError(.malformed, "\(address) names no cue; write a cue's unique ID, e.g. /select_id/{id}") }
                return .cueCommand(.uniqueID(id), .select)
            case ("playheadID", let id), ("playheadId", let id), ("playbackPositionID", let id), ("playbackPositionId", let id):
                try none()
                guard !id.isEmpty else { throw ControlError(.malformed, "\(address) names no cue; write a cue's unique ID, e.g. /playheadID/{id}") }
                return .cueCommand(.uniqueID(id), .select)
            case ("overrides", let name):
                // QLab's show-control overrides: no argument asks; 1 or 0 (T or F) sets.
                guard let key = ShowOverrides.Key(rawValue: name) else {
                    throw ControlError(.malformed, "\(address): no override '\(name)'; the overrides are \(ShowOverrides.Key.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                if arguments.isEmpty { return .command(.override(key, nil)) }
                let value = try numbers([1], "1 (on) or 0 (off), or nothing to ask")[0]
                guard value == 0 || value == 1 else { throw ControlError(.outOfRange, "\(address) takes 1 (on) or 0 (off); it was sent \(list(arguments))") }
                return .command(.override(key, value == 1))
            case ("lockstep", "status"): try none(); return .command(.status)
            case ("lockstep", "save"):
                switch arguments.count {
                case 0: return .command(.save(force: false))
                case 1 where arguments[0].text?.lowercased() == "force": return .command(.save(force: true))
                default: throw ControlError(.malformed, "/lockstep/save takes nothing, or the string \"force\" (to save over a file changed on disk); it was sent \(list(arguments))")
                }
            case ("lockstep", "set"):
                guard (2...3).contains(arguments.count), arguments.allSatisfy({ $0.text != nil || $0.number != nil }) else {
                    throw ControlError(.malformed, "/lockstep/set takes a cue, a key and a value (no value: the key removed), e.g. \"bell\" \"file\" \"media/bell.wav\"; it was sent \(list(arguments))")
                }
                let words = arguments.map { $0.text ?? $0.number.map { String($0) } ?? "" }
                guard arguments.count == 3 else { return .command(.restructure(.set(try cue(words[0]), [CueValueChange(key: words[1].lowercased(), value: nil)]))) }
                return .command(try ControlLine.edit(try cue(words[0]), key: words[1], value: words[2]))
            case ("lockstep", let verb) where ["add", "duplicate", "delete", "move", "group", "set-layer", "unlearn"].contains(verb):
                guard !arguments.isEmpty, arguments.allSatisfy({ $0.text != nil }) else {
                    throw ControlError(.malformed, "/lockstep/\(verb) takes strings (as the typed command's words: /lockstep/add \"file=door.wav\" \"at=manual\" \"after\" \"bell\"); it was sent \(list(arguments))")
                }
                return .command(.restructure(try CueStructureEdit.parse(typed: [verb] + arguments.compactMap(\.text))))
            case ("lockstep", "learn"):
                guard arguments.count == 1, let action = arguments[0].text, !action.isEmpty else {
                    throw ControlError(.malformed, "/lockstep/learn takes the action the MIDI message will send, one string (\"go bell\"), or \"cancel\"; it was sent \(list(arguments))")
                }
                return .command(.learnMIDI(action.lowercased() == "cancel" ? nil : action))
            case ("lockstep", "seek"):
                guard arguments.count == 1 else { throw ControlError(.malformed, "/lockstep/seek takes one time: seconds, or a string such as \"1:30\" or \"96000 samples\"; it was sent \(list(arguments))") }
                // The range is checked before the number becomes samples (1e30 s, 2^62: no trap).
                if let seconds = arguments[0].number {
                    do { return .command(.seek(try SessionTime.seconds(seconds, as: "/lockstep/seek"))) } catch {
                        throw ControlError(error.isOutOfRange ? .outOfRange : .malformed, "/lockstep/seek: \(arguments[0]) \(error.reason)")
                    }
                }
                if let text = arguments[0].text {
                    do { return .command(.seek(try SessionTime.parse(text, as: "/lockstep/seek"))) } catch {
                        throw ControlError(error.isOutOfRange ? .outOfRange : .malformed, "/lockstep/seek: \(arguments[0]) \(error.reason)")
                    }
                }
                throw ControlError(.malformed, "/lockstep/seek: \(arguments[0]) is not a time; send seconds (a number, 0 to a week) or a string: \(SessionTime.formsHint)")
            default: break
            }
        case 3 where parts == ["settings", "general", "minGoTime"]:
            return try setting("settings/general/minGoTime")
        case 3 where parts[0] == "cue" || parts[0] == "cue_id":
            let target: QLabCueTarget
            if parts[0] == "cue_id" {
                guard !parts[1].isEmpty else { throw ControlError(.malformed, "\(address) names no cue; write the cue's unique ID, e.g. /cue_id/{id}/start") }
                target = .uniqueID(parts[1])
            } else {
                switch parts[1] {
                case "playhead", "playbackPosition": target = .playhead
                case "active": target = .active
                case "selected": target = .selected
                default: target = .reference(try cue(parts[1]))
                }
            }
            /// A cue named by name or number becomes the command itself; any other is resolved
            /// when carried out.
            func act(_ action: QLabCueAction, _ plain: (CueReference) -> ControlCommand) -> OSCRequest {
                if case .reference(let reference) = target { return .command(plain(reference)) }
                return .cueCommand(target, action)
            }
            switch parts[2] {
            case "start": try none(); return act(.start, ControlCommand.startCue)
            case "stop": try none(); return act(.stop, ControlCommand.stopCue)
            case "pause": try none(); return act(.pause, ControlCommand.pauseCue)
            case "resume": try none(); return act(.resume, ControlCommand.resumeCue)
            case "go": try none(); return act(.go) { .go($0) }
            case "togglePause": try none(); return .cueCommand(target, .togglePause)
            case "reset": try none(); return .cueCommand(target, .reset)
            case "panic": try none(); return act(.panic(nil)) { .panicCue($0, fade: nil) }
            case "panicInTime":
                let seconds = try fadeTime()
                return act(.panic(seconds)) { .panicCue($0, fade: .seconds(seconds)) }
            case "loadAt":
                let seconds = try loadTime()
                return act(.loadAt(seconds, .set)) { .loadCue($0, .seconds(seconds), .set) }
            case "load": try none(); return act(.loadAt(0, .set)) { .loadCue($0, .seconds(0), .set) }
            case "audition", "auditionGo", "preview", "auditionPreview":
                try none()
                return act(.audition) { .audition($0) }
            case "level":
                let values = try numbers([1, 3], "a level in dB (or QLab's row 0, column 0, dB)")
                if values.count == 3 && (values[0] != 0 || values[1] != 0) {
                    throw ControlError(.outOfRange, "\(address): Lockstep cues have one level (row 0, column 0); it was sent row \(values[0]), column \(values[1])")
                }
                let decibels = values.last!
                try checked { () throws(ControlRangeError) in try ControlRange.gain(decibels, for: address) }
                return act(.level(decibels)) { .setCueLevel($0, decibels: decibels, ramp: 0) }
            case "valuesForKeys":
                let form = "a JSON array of keys as one string, e.g. \"[\\\"number\\\",\\\"name\\\"]\""
                guard arguments.count == 1, let text = arguments[0].text else { throw ControlError(.malformed, "\(address) takes \(form); it was sent \(list(arguments))") }
                guard let keys = try? JSONDecoder().decode([String].self, from: Data(text.utf8)) else {
                    throw ControlError(.malformed, "\(address): \(text.prefix(80)) is not a JSON array of keys; send \(form)")
                }
                return .query(.valuesForKeys(target, keys))
            case "children": try none(); return .query(.children(target))
            case let key where QLabWorkspace.cueKeys.contains(key):
                if arguments.isEmpty { return .query(.property(target, key)) }
                guard let change = try Self.edit(key, arguments, address: address) else {
                    throw ControlError(.unsupported, "\(address): \(key) is read-only in Lockstep; the keys a cue takes are \(QLabWorkspace.settableKeys.sorted().joined(separator: ", "))")
                }
                return act(.edit(change)) { .editCue($0, change) }
            default: break
            }
        case 4 where parts[0] == "cue_id" && parts[2] == "playhead" && ["next", "previous", "nextSequence", "previousSequence"].contains(parts[3]):
            // The cue list's playhead (Lockstep has one list: the id is not checked).
            try none()
            return .command(parts[3].hasPrefix("next") ? .selectNext : .selectPrevious)
        case 4 where (parts[0] == "cue" || parts[0] == "cue_id") && parts[2] == "loadAt" && (parts[3] == "+" || parts[3] == "-"):
            let seconds = try loadTime()
            let change: SessionPlayer.LoadChange = parts[3] == "+" ? .later : .earlier
            let target: QLabCueTarget = parts[0] == "cue_id" ? .uniqueID(parts[1])
                : parts[1] == "playhead" || parts[1] == "selected" ? .playhead : .reference(try cue(parts[1]))
            if case .reference(let reference) = target { return .command(.loadCue(reference, .seconds(seconds), change)) }
            return .cueCommand(target, .loadAt(seconds, change))
        case 4 where (parts[0] == "cue" || parts[0] == "cue_id") && QLabWorkspace.adjustableKeys.contains(parts[2])
                && (parts[3] == "+" || parts[3] == "-"):
            let target: QLabCueTarget = parts[0] == "cue_id" ? .uniqueID(parts[1])
                : parts[1] == "playhead" || parts[1] == "selected" ? .playhead : .reference(try cue(parts[1]))
            return .cueCommand(target, .adjust(parts[2], try adjustment(parts[2], up: parts[3] == "+")))
        case 4 where parts[0] == "lockstep" && ((parts[1] == "layer" && parts[3] == "gain") || (parts[1] == "cue" && parts[3] == "level")):
            // The gain (a number or "-6dB"/"-inf"), then the ramp: seconds as a number, or a time
            // in the one syntax as a string ("250ms", "0:02", "4800 samples"). A cue's level
            // with a ramp is a fade from a controller (QLab's /cue/{cue}/level takes none).
            guard arguments.count == 1 || arguments.count == 2 else {
                throw ControlError(.malformed, "\(address) takes a gain in dB and, optionally, a ramp (seconds, or a time such as \"250ms\" or \"4800 samples\"); it was sent \(list(arguments))")
            }
            guard let decibels = arguments[0].number ?? arguments[0].text.flatMap(SessionGain.parse) else {
                throw ControlError(.malformed, "\(address): \(arguments[0]) is not a gain; send dB as a number, or a string such as \"-6dB\" or \"-inf\"")
            }
            try checked { () throws(ControlRangeError) in try ControlRange.gain(decibels, for: address) }
            var ramp = SessionTime.seconds(0)
            if arguments.count == 2 {
                ramp = try checked { () throws(ControlRangeError) -> SessionTime in
                    if let seconds = arguments[1].number { return try ControlRange.ramp(seconds: seconds, for: address) }
                    if let text = arguments[1].text { return try ControlRange.ramp(text: text, for: address) }
                    throw ControlRange.rampProblem(arguments[1].description, for: address)
                }
            }
            if parts[1] == "cue" { return .command(.setCueLevel(try cue(parts[2]), decibels: decibels, ramp: ramp)) }
            return .command(.setLayerGain(layer: parts[2], decibels: decibels, ramp: ramp))
        default: break
        }
        let pattern = parts.count == 3 && (parts[0] == "cue" || parts[0] == "cue_id") ? "/\(parts[0])/{\(parts[0] == "cue" ? "cue" : "id")}/\(parts[2])" : address
        throw ControlError(.unknownCommand, "unknown address \(address)\(Suggest.hint(for: pattern, in: addresses)); Lockstep answers /go, /stop, "
                           + "/pause, /resume, /panic, /reset, /cue/{cue}/start|stop|pause|resume|go|level, /playhead/{cue}, /select/{cue}, /select/next|previous, "
                           + "/lockstep/layer/{layer}/gain, /lockstep/cue/{cue}/level, /lockstep/seek, /lockstep/status, /connect, /updates, /udpReplyPort, /thump, "
                           + "QLab's queries (/version, /workspaces, /cueLists, /cue/{cue}/valuesForKeys…) and /cue_id/{id}/…")
    }

    /// The edit QLab's setter `/cue/{cue}/{key} value` makes (nil for a key that cannot be set):
    /// `name` and `number` take a string (a number too; an empty number clears it), the times
    /// (`preWait`, `postWait`, `duration`, `startTime`, `endTime`) seconds, `continueMode` 0 (do
    /// not continue), 1 (auto-continue) or 2 (auto-follow).
    static func edit(_ key: String, _ arguments: [OSCArgument], address: String) throws(ControlError) -> CueEdit? {
        guard QLabWorkspace.settableKeys.contains(key) else { return nil }
        let isTime = ["preWait", "postWait", "duration", "startTime", "endTime"].contains(key)
        guard arguments.count == 1 || (isTime && arguments.count == 3) else {
            throw ControlError(.malformed, "\(address) sets \(key) from one argument\(isTime ? " (seconds, or QLab's hours, minutes, seconds)" : ""); it was sent \(arguments.count)")
        }
        let argument = arguments[0]
        func seconds() throws(ControlError) -> SessionTime? {
            let values = arguments.compactMap(\.number)
            guard values.count == arguments.count, values.allSatisfy({ !$0.isNaN }) else {
                throw ControlError(.malformed, "\(address): \(arguments.map(\.description).joined(separator: ", ")) is not a time; send seconds as a number (or hours, minutes, seconds)")
            }
            let value = values.count == 3 ? values[0] * 3600 + values[1] * 60 + values[2] : values[0]
            do throws(TimeSyntaxError) { return value == 0 ? nil : try SessionTime.seconds(value, as: address) } catch {
                throw ControlError(.outOfRange, error.description)
            }
        }
        switch key {
        case "name":
            guard let text = argument.text else { throw ControlError(.malformed, "\(address): a name is a string; it was sent \(argument)") }
            return .name(text)
        case "number":
            let text = argument.text ?? argument.number.map { $0 == $0.rounded() ? String(Int64($0)) : String($0) }
            guard let text else { throw ControlError(.malformed, "\(address): a cue number is a string; it was sent \(argument)") }
            return .number(text.isEmpty ? nil : text)
        case "preWait": return .preWait(try seconds())
        case "postWait": return .postWait(try seconds())
        case "startTime": return .from(try seconds())
        case "endTime": return .to(try seconds())
        case "duration":
            guard let time = try seconds() else { throw ControlError(.outOfRange, "\(address): a duration of 0 leaves nothing to play; send more than 0 s") }
            return .duration(time)
        case "continueMode":
            switch argument.number {
            case 0?: return .continueMode(.none)
            case 1?: return .continueMode(.autoContinue)
            case 2?: return .continueMode(.autoFollow)
            default: throw ControlError(.outOfRange, "\(address): the continue mode is 0 (do not continue), 1 (auto-continue) or 2 (auto-follow); it was sent \(argument)")
            }
        default: return nil
        }
    }

    /// Runs a range check (``LockstepSession/ControlRange``), its error as a ``LockstepControl/ControlError``.
    @discardableResult
    static func checked<T>(_ body: () throws(ControlRangeError) -> T) throws(ControlError) -> T {
        do { return try body() } catch { throw ControlError(.outOfRange, error.message) }
    }

    /// `no arguments`, or `2 arguments (s:"x", i:3)`.
    static func list(_ arguments: [OSCArgument]) -> String {
        arguments.isEmpty ? "no arguments"
            : "\(arguments.count) argument\(arguments.count == 1 ? "" : "s") (\(arguments.map(\.description).joined(separator: ", ")))"
    }
}
