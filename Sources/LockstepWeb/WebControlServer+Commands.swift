import Foundation
import LockstepControl

/// The page's commands: where each is carried out (``Place``), and carrying it out.
extension WebControlServer {
    /// Where a command is carried out.
    enum Place {
        /// On an ordinary thread (``reading``): a state of thousands of layers takes a fraction of
        /// a second to make.
        case reading
        /// On ``commands``: an edit, which may write the show file and wait for the disk; a
        /// command that recomputes every layer (a seek, a load, a stop of the show, a reset).
        case commands
        /// On the thread that read it: what a cue or a layer does — a GO, a cue's start, stop or
        /// level, a layer's gain, a selection — which must reach the engine within its period and
        /// holds the event loop (every connection's reads) for no longer than that.
        case here
    }

    /// A command parsed once: the command and its address, or why it is not one.
    typealias Parsed = Result<(command: ControlCommand, address: String), ControlError>

    /// Parses `text` and says where it is carried out.
    static func parse(_ text: String) -> (Parsed, Place) {
        let parsed = Parsed { () throws(ControlError) in try WebCommand.parse(text) }
        guard case .success(let command) = parsed else { return (parsed, .here) }
        switch command.command {
        case .status: return (parsed, .reading)
        case .go, .startCue, .stopCue, .pauseCue, .resumeCue, .setCueLevel, .setLayerGain, .selectNext, .selectPrevious,
             .selectPlayhead, .panicCue:
            return (parsed, .here)
        default: return (parsed, .commands)
        }
    }

    /// Whether `command` edits the show (a right of its own: ``Options/editToken``).
    static func isEdit(_ command: ControlCommand) -> Bool {
        switch command {
        case .editCue, .restructure, .learnMIDI, .undo, .redo, .save: true
        default: false
        }
    }

    /// Counts one more of `counter` in the statistics.
    func count(_ counter: WritableKeyPath<Statistics, Int>) {
        state.withLock { $0.statistics[keyPath: counter] += 1 }
    }

    /// Carries out one JSON command, parsed (an edit only when `mayEdit`); the reply, and whether
    /// it parsed.
    func execute(_ parsed: Parsed, mayEdit: Bool) -> (ControlReply, Bool) {
        count(\.commands)
        guard let show = state.withLock({ $0.show }) else {
            count(\.errorReplies)
            return (.error("", .wrongState, "the session is starting; send the command again in a moment"), true)
        }
        let command: ControlCommand, address: String
        switch parsed {
        case .success(let parsed): (command, address) = parsed
        case .failure(let error):
            count(\.errorReplies)
            log("web: \(error.message)")
            return (.error("", error), false)
        }
        if Self.isEdit(command) && !mayEdit {
            count(\.errorReplies)
            return (.error(address, .unauthorized, "this page may run the show but not edit it: open the edit URL lockstep printed (it ends in edit=…)"), true)
        }
        if let refusal = Self.mediaRefusal(command, folder: show.dispatcher.player.session.document.baseDirectory) {
            count(\.errorReplies)
            return (.error(address, .outOfRange, refusal), true)
        }
        let reply = show.dispatcher.execute(command, address: address)
        if !reply.isOK { count(\.errorReplies) }
        if command != .status { log("web: \(reply.summary)") }
        return (reply, true)
    }

    /// Carries out `text` on the event loop that read it when its place is ``Place/here``: its
    /// reply (nil: it belongs elsewhere, the reading task takes it).
    func carryOutOnEventLoop(_ text: String, mayEdit: Bool) -> String? {
        let (parsed, place) = Self.parse(text)
        guard place == .here else { return nil }
        return execute(parsed, mayEdit: mayEdit).0.json
    }

    /// Carries out `text` where its kind belongs (``Place``), the caller's thread for `here`.
    func execute(_ text: String, mayEdit: Bool) async -> (ControlReply, Bool) {
        let (parsed, place) = Self.parse(text)
        switch place {
        case .reading: return await run(on: reading) { self.execute(parsed, mayEdit: mayEdit) }
        case .commands: return await withTaskExecutorPreference(commands) { execute(parsed, mayEdit: mayEdit) }
        case .here: return execute(parsed, mayEdit: mayEdit)
        }
    }
}
