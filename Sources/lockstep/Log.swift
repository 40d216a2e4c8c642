import ArgumentParser
import Foundation
import LockstepShow
import Logging

/// The CLI's diagnostics: every message that is not a command's result goes through this
/// swift-log logger to standard error, as `lockstep: …` lines (see ``CLILogHandler``).
///
/// Levels: `.critical` for the error that ends the command (always shown), `.error` for a failure
/// the command survives (a bad control command), `.warning` for a problem worked around,
/// `.notice` for what the user should know (a server started, OSC listening, a summary when
/// standard output carries audio), `.info` and `.debug` for the details `--verbose` adds (files
/// opened and their formats, the server's rate and period, …).
let log = Logger(label: "lockstep")

/// The global options every command takes (`@OptionGroup`): how much it says on standard error.
struct GlobalOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Say more on standard error: files opened and their formats, the JACK server started and its settings, the output's encoding.")
    var verbose = false

    @Flag(name: .shortAndLong, help: "Say less on standard error: only errors (no warnings, notices, progress or live display).")
    var quiet = false

    @Flag(name: .customLong("no-progress"), help: "No progress bar or live display on standard error, even on a terminal.")
    var noProgress = false

    func validate() throws {
        if verbose && quiet { throw ValidationError("--verbose and --quiet contradict each other; give one of them") }
    }

    /// The log level these options ask for: `.debug` with `--verbose`, `.error` with `--quiet`,
    /// else `.notice`.
    var logLevel: Logger.Level { verbose ? .debug : quiet ? .error : .notice }

    /// Applies the options: the log level, and whether progress and live displays are drawn.
    func apply() {
        CLILogHandler.level.withLock { $0 = logLevel }
        Terminal.showsProgress = !(noProgress || quiet)
    }

    /// The global options of a parsed command (every command holds them as `global`), found by
    /// reflection so that `main` applies them before the command runs.
    static func of(_ command: ParsableCommand) -> GlobalOptions? {
        for child in Mirror(reflecting: command).children {
            if let group = child.value as? OptionGroup<GlobalOptions> { return group.wrappedValue }
        }
        return nil
    }
}

extension ShowNote.Level {
    /// The log level the CLI prints this note at.
    var logLevel: Logger.Level {
        switch self {
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        }
    }
}
