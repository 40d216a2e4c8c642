import ArgumentParser
import Foundation
import Lockstep
import LockstepFiles
import Logging

/// The `lockstep` command: plays, renders and inspects layered audio in sample-accurate sync.
@main
struct LockstepCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lockstep",
        abstract: "Plays many audio streams in sample-accurate sync (Audio Queue Services for Linux, over JACK).",
        discussion: """
            Every command takes --verbose, --quiet and --no-progress. '-' as a file reads standard input; -o - writes standard output. Shell completion: lockstep --generate-completion-script bash (or zsh, fish).

            Examples:
              lockstep play drums.wav bass.flac
              lockstep render drums.wav bass.flac -o mix.wav
              lockstep session run show.yaml --control -
            """,
        version: "0.1.0",
        subcommands: [PlayCommand.self, RecordCommand.self, RenderCommand.self, SessionCommand.self, InfoCommand.self, PortsCommand.self]
    )

    /// Runs the command; every failure becomes one line on standard error and a non-zero exit.
    /// The problems worked around in input files (``FileWarnings/shared``) are reported at the
    /// end, one line per file and kind, however the command ended.
    static func main() {
        LoggingSystem.bootstrap { _ in CLILogHandler() }
        // A reader of standard output that goes away is reported as an error, not a silent death.
        signal(SIGPIPE, SIG_IGN)
        raiseOpenFileLimit()
        Terminal.configureColour()
        var name: String?
        do {
            var command = try parseAsRoot(ListenAddress.joiningDashedValues(Array(CommandLine.arguments.dropFirst())))
            name = displayName(of: command)
            CLILogHandler.command.withLock { $0 = name }
            GlobalOptions.of(command)?.apply()
            try command.run()
            reportFileWarnings()
        } catch let error as CLIError {
            StatusArea.shared.clear()
            reportFileWarnings()
            log.critical("\(error.message)")
            Foundation.exit(error.exitCode)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            StatusArea.shared.clear()
            reportFileWarnings()
            let message = self.message(for: error)
                .split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }.joined(separator: "; ")
            if !message.isEmpty {
                log.critical("\(message) (see 'lockstep --help')")
            }
            Foundation.exit(code.rawValue == 0 ? 64 : code.rawValue)
        }
    }
}

extension LockstepCommand {
    /// The command's name as typed: `render`, `session check`, ….
    static func displayName(of command: ParsableCommand) -> String {
        let type = type(of: command)
        let name = type.configuration.commandName ?? String(describing: type)
        let inSession = SessionCommand.configuration.subcommands.contains { ObjectIdentifier($0) == ObjectIdentifier(type) }
        return inSession ? "session \(name)" : name
    }

    /// Logs every warning about an input file, as
    /// `lockstep: COMMAND: warning: FILE: what was worked around; what to do`.
    static func reportFileWarnings() {
        for warning in FileWarnings.shared.all {
            log.warning("\(warning.message)")
        }
    }
}

/// Raises the soft limit on open files to the hard limit: every layer of `play` and every cue of
/// a session holds its file open, and the usual soft limit (1024) is far below what a show with
/// thousands of layers needs. A failure leaves the limit as it was (opening a file then reports
/// the limit by name).
func raiseOpenFileLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// An error as one sentence for the user: an ``AudioQueueError``'s message without its Audio
/// Queue result code (`kAudioFormatUnsupportedDataFormatError, 1718449215` means nothing to a
/// user), a ``FileError``'s or ``CLIError``'s message, else the error's description.
func userMessage(_ error: any Error) -> String {
    switch error {
    case let error as AudioQueueError: error.message
    case let error as FileError: error.description
    case let error as CLIError: error.message
    default: "\(error)"
    }
}

/// A failure the CLI reports as one line.
struct CLIError: Error {
    var message: String
    var exitCode: Int32 = 1
}
