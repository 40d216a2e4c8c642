import Logging
@preconcurrency import Rainbow
import Synchronization

/// The swift-log handler of the CLI: each message is one `lockstep: …` line on standard error,
/// printed above the live display (``StatusArea``) so that neither garbles the other.
///
/// Warnings read `lockstep: COMMAND: warning: what was done; what to do` (the command as typed,
/// `render`, `session run`, …); every other level reads `lockstep: message`. On a terminal with
/// colour (see ``Terminal/usesColour``) `warning` is yellow and an error's first word red.
struct CLILogHandler: LogHandler {
    /// The level every logger of the process logs at (set from `--verbose` / `--quiet`).
    static let level = Mutex<Logger.Level>(.notice)
    /// The command as typed (`render`, `session check`), named in warnings; nil before parsing.
    static let command = Mutex<String?>(nil)

    /// Metadata is accepted and not printed: messages are sentences for people.
    var metadata: Logger.Metadata = [:]
    /// Not used: nothing of the CLI's messages comes from task-local metadata.
    var metadataProvider: Logger.MetadataProvider?

    /// The process-wide level (``level``).
    var logLevel: Logger.Level {
        get { Self.level.withLock { $0 } }
        set { Self.level.withLock { $0 = newValue } }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Prints the message above the live display.
    func log(event: LogEvent) {
        StatusArea.shared.printAbove(Self.line(level: event.level, message: event.message.description) + "\n")
    }

    /// The line printed for `message` at `level` (without the newline).
    static func line(level: Logger.Level, message: String) -> String {
        let colour = Terminal.usesColour
        switch level {
        case .warning:
            let prefix = command.withLock { $0 }.map { "lockstep: \($0): " } ?? "lockstep: "
            return prefix + (colour ? "warning".yellow : "warning") + ": " + message
        case .critical, .error:
            return (colour ? "lockstep".red : "lockstep") + ": " + message
        default:
            return "lockstep: " + message
        }
    }
}
