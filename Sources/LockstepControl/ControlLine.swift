import LockstepSession

/// The typed-line control surface's language: one command a line, as read from standard input
/// or a FIFO by `lockstep session run --control`.
///
/// ```
/// go [CUE]              fire CUE, or the cue the playhead selects
/// start CUE             fire CUE without moving the playhead
/// stop [CUE]            stop CUE, or every cue
/// pause [CUE]           pause CUE, or the whole session
/// resume [CUE]          resume CUE, or the whole session
/// panic [CUE]           fade everything (or CUE) out, then stop (twice: stop at once)
/// panic-in TIME         the same over TIME
/// load CUE TIME         the next go of manual cue CUE starts it TIME in
/// level CUE DB [RAMP]   set a cue's level
/// gain LAYER DB [RAMP]  ramp a layer's gain
/// next | previous       move the playhead
/// select CUE            put the playhead on CUE
/// seek TIME             jump to a session time
/// reset                 back to the top: stop everything, every cue waits, playhead on the first
/// audition [CUE]        play CUE (or the playhead's) on the audition outputs, apart from the show
/// stop-audition         stop it
/// set CUE KEY VALUE     edit a cue: any key of the session format (name, file, at, gain, target…)
/// add KEY=VALUE… [after CUE] [in GROUP]   add a cue (e.g. add file=door.wav at=manual after bell)
/// duplicate CUE         add a copy of CUE after it
/// delete CUE            remove CUE (a group with its cues)
/// move CUE after OTHER | first [in GROUP] | in GROUP   move CUE in the cue list
/// set-layer LAYER KEY VALUE   edit a layer: gain (heard at once), channel_map
/// learn ACTION          MIDI learn: the next MIDI message becomes a trigger of ACTION (e.g. learn go bell)
/// learn cancel          stop waiting for it
/// unlearn CUE           remove the MIDI triggers that fire CUE
/// status                the state, as one JSON line
/// ```
///
/// A CUE is a name, or a number (its position in the session file, from 1) when no cue has that
/// name.
public enum ControlLine {
    /// The verbs, for help and suggestions.
    public static let verbs = ["go", "start", "stop", "pause", "resume", "panic", "panic-in", "level", "gain", "next",
                               "previous", "select", "seek", "status", "reset", "load", "set", "audition", "stop-audition", "undo", "redo", "save", "learn", "override"] + CueStructureEdit.verbs

    /// The verb of `line` (its first word, lowercased), as the reply's address; empty for a
    /// blank line.
    public static func verb(of line: String) -> String {
        line.split(whereSeparator: \.isWhitespace).first.map { $0.lowercased() } ?? ""
    }

    /// Parses one line.
    /// - Throws: ``ControlError`` saying what is wrong and how to write it.
    public static func parse(_ line: String) throws(ControlError) -> ControlCommand {
        let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let verb = words.first?.lowercased() else { throw ControlError(.malformed, "an empty line is not a command") }
        let rest = words.dropFirst().joined(separator: " ")
        let cue: CueReference? = rest.isEmpty ? nil : .name(rest)
        func needsCue() throws(ControlError) -> CueReference {
            guard let cue else { throw ControlError(.malformed, "'\(verb)' needs a cue: write '\(verb) CUE' (a cue name, or its number)") }
            return cue
        }
        func noArguments() throws(ControlError) {
            guard rest.isEmpty else { throw ControlError(.malformed, "'\(verb)' takes nothing after it; write just '\(verb)'") }
        }
        switch verb {
        case "go": return .go(cue)
        case "start": return .startCue(try needsCue())
        case "stop": return cue.map(ControlCommand.stopCue) ?? .stop
        case "pause": return cue.map(ControlCommand.pauseCue) ?? .pause
        case "resume": return cue.map(ControlCommand.resumeCue) ?? .resume
        case "panic": return cue.map { .panicCue($0, fade: nil) } ?? .panic
        case "panic-in":
            do { return .panicIn(try ControlRange.ramp(text: rest, for: "panic-in")) } catch { throw ControlError(.outOfRange, error.message) }
        case "load":
            guard words.count >= 3 else {
                throw ControlError(.malformed, "'\(line)' is not 'load CUE TIME'; write e.g. load 3 0:30 (the cue's next go starts it 30 s in)")
            }
            do { return .loadCue(.name(words[1]), try SessionTime.parse(words[2...].joined(separator: " "), as: "load"), .set) } catch {
                throw ControlError(error.isOutOfRange ? .outOfRange : .malformed, error.description)
            }
        case "set":
            guard words.count >= 4 || (words.count == 3 && words[2].lowercased() == "number") else {
                throw ControlError(.malformed, "'\(line)' is not 'set CUE KEY VALUE'; write e.g. set bell pre_wait 1.5 (keys: \(CueEdit.keys.joined(separator: ", ")))")
            }
            return try edit(.name(words[1]), key: words[2], value: words[3...].joined(separator: " "))
        case "add", "duplicate", "delete", "move", "group", "set-layer", "unlearn": return .restructure(try CueStructureEdit.parse(typed: CueStructureEdit.words(line)))
        case "learn":
            guard !rest.isEmpty else {
                throw ControlError(.malformed, "'learn' needs the action the MIDI message will send: write e.g. 'learn go bell' (or 'learn cancel')")
            }
            return .learnMIDI(rest.lowercased() == "cancel" ? nil : rest)
        case "audition": return .audition(cue)
        case "stop-audition": try noArguments(); return .stopAudition
        case "undo": try noArguments(); return .undo
        case "redo": try noArguments(); return .redo
        case "override":
            let keys = ShowOverrides.Key.allCases.map(\.rawValue).joined(separator: ", ")
            guard (2...3).contains(words.count), let key = ShowOverrides.Key.allCases.first(where: { $0.rawValue.lowercased() == words[1].lowercased() }) else {
                throw ControlError(.malformed, "write 'override KEY on|off' (or 'override KEY' to ask); the keys are \(keys)")
            }
            guard words.count == 3 else { return .override(key, nil) }
            switch words[2].lowercased() {
            case "on", "1", "true": return .override(key, true)
            case "off", "0", "false": return .override(key, false)
            default: throw ControlError(.malformed, "override \(key.rawValue) takes on or off, not '\(words[2])'")
            }
        case "save":
            guard words.count == 1 || (words.count == 2 && words[1].lowercased() == "force") else {
                throw ControlError(.malformed, "'\(line)' is not 'save' or 'save force'")
            }
            return .save(force: words.count == 2)
        case "next": try noArguments(); return .selectNext
        case "previous": try noArguments(); return .selectPrevious
        case "status": try noArguments(); return .status
        case "reset": try noArguments(); return .reset
        case "select": return .selectPlayhead(try needsCue())
        case "seek":
            do { return .seek(try SessionTime.parse(rest, as: "seek")) } catch { throw ControlError(error.isOutOfRange ? .outOfRange : .malformed, error.description) }
        case "level", "gain":
            let what = verb == "level" ? "CUE" : "LAYER"
            guard words.count >= 3 && words.count <= 5, let decibels = SessionGain.parse(words[2]) else {
                throw ControlError(.malformed, "'\(line)' is not '\(verb) \(what) DB [RAMP]'; write e.g. \(verb) \(verb == "level" ? "bell" : "drums") -12dB 2")
            }
            var ramp = SessionTime.seconds(0)
            if words.count > 3 {
                // The ramp takes the one time syntax: 2, 1.5s, 250ms, 0:02, "4800 samples".
                let text = words[3...].joined(separator: " ")
                do { ramp = try ControlRange.ramp(text: text, for: verb) } catch { throw ControlError(.outOfRange, error.message) }
            }
            return verb == "level" ? .setCueLevel(.name(words[1]), decibels: decibels, ramp: ramp)
                : .setLayerGain(layer: words[1], decibels: decibels, ramp: ramp)
        default:
            throw ControlError(.unknownCommand, "unknown command '\(verb)'\(Suggest.hint(for: verb, in: verbs)); the commands are \(verbs.joined(separator: ", "))")
        }
    }

    /// The edit of `cue`'s `key` to `value` as typed.
    /// - Throws: ``ControlError`` for an unknown key or a value that is not one.
    public static func edit(_ cue: CueReference, key: String, value: String) throws(ControlError) -> ControlCommand {
        if !CueEdit.keys.contains(key.lowercased()) {
            guard CueValue.keys.contains(key.lowercased()) else {
                throw ControlError(.malformed, "unknown cue key '\(key)'\(Suggest.hint(for: key.lowercased(), in: CueValue.keys)); a cue's keys are \(CueValue.keys.joined(separator: ", "))")
            }
            let text = value.trimmingCharacters(in: .whitespaces)
            return .restructure(.set(cue, [CueValueChange(key: key.lowercased(), value: text.lowercased() == "none" ? nil : text)]))
        }
        do { return .editCue(cue, try CueEdit.parse(key: key, value: value)) } catch {
            throw ControlError(error.isOutOfRange ? .outOfRange : .malformed, error.message)
        }
    }
}
