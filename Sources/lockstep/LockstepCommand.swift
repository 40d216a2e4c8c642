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
            let report = UsageErrorReport(fullMessage(for: error), fallback: self.message(for: error))
            if !report.message.isEmpty {
                log.critical("\(report.line)")
                // ArgumentParser's hint stays as it wrote it: the option's help, the usage and
                // where the full help is.
                if !report.hint.isEmpty { Terminal.write(report.hint.joined(separator: "\n") + "\n") }
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

/// An ArgumentParser error (a usage or validation error) as the CLI reports it: one line
/// `lockstep: COMMAND: what is wrong` — ArgumentParser's message with its lists folded onto the
/// line (`give one of: u8, s8, …`), first letter in lower case as every message of the CLI — then
/// ArgumentParser's own hint lines unchanged: `Help:  --rate <rate>  …` (the option's help, when
/// one option is concerned), `Usage: lockstep render [<options>] …` and
/// `  See 'lockstep render --help' for more information.`
struct UsageErrorReport: Equatable {
    /// The command named by the hint (`render`, `session render`); empty for the root command.
    var command: String
    /// What is wrong, on one line.
    var message: String
    /// ArgumentParser's hint lines (`Help:`, `Usage:`, `See …`), empty when it gave none.
    var hint: [String]

    /// The error line, without `lockstep: `: `render: the value 'abc' is invalid for '--rate <rate>'`.
    var line: String { command.isEmpty ? message : "\(command): \(message)" }

    /// Splits ArgumentParser's full message (`Error: …` lines, then the hint lines); `fallback`
    /// (its short message) when the full message has no `Error:` part.
    init(_ full: String, fallback: String) {
        let lines = full.split(whereSeparator: \.isNewline).map(String.init)
        let hintStart = lines.firstIndex { $0.hasPrefix("Help:") || $0.hasPrefix("Usage:") } ?? lines.count
        var errorLines = Array(lines[..<hintStart])
        if errorLines.isEmpty { errorLines = fallback.split(whereSeparator: \.isNewline).map(String.init) }
        if let first = errorLines.first, first.hasPrefix("Error: ") { errorLines[0] = String(first.dropFirst(7)) }
        hint = Array(lines[hintStart...])
        // The command from `See 'lockstep session render --help' …`.
        command = ""
        if let see = hint.last(where: { $0.contains("See 'lockstep") }),
           let range = see.range(of: #"'lockstep( [a-z -]+)? --help'"#, options: .regularExpression) {
            command = see[range].dropFirst("'lockstep".count).dropLast("--help'".count).trimmingCharacters(in: .whitespaces)
        }
        message = Self.fold(errorLines)
    }

    /// The error's lines as one: a list (`- u8`, `- s8`) after a line ending in a colon becomes
    /// `give one of: u8, s8`; other lines are joined with `; `.
    static func fold(_ lines: [String]) -> String {
        var parts: [String] = []
        var list: [String] = []
        func flushList() {
            guard !list.isEmpty else { return }
            parts.append("give one of: " + list.joined(separator: ", "))
            list.removeAll()
        }
        for raw in lines {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("- ") { list.append(String(line.dropFirst(2))); continue }
            flushList()
            guard !line.isEmpty else { continue }
            // "…'. Please provide one of the following:" introduces the list folded above.
            var text = line
            for lead in [". Please provide one of the following:", "Please provide one of the following:"] where text.hasSuffix(lead) {
                text = String(text.dropLast(lead.count))
            }
            if !text.isEmpty { parts.append(text) }
        }
        flushList()
        var message = parts.joined(separator: "; ")
        // Lower case first, as every message of the CLI starts ("The value …" → "the value …"),
        // unless the word is an acronym or an option.
        if let first = message.first, first.isUppercase, message.dropFirst().first?.isLowercase == true {
            message = first.lowercased() + message.dropFirst()
        }
        return message
    }
}

/// A failure the CLI reports as one line.
struct CLIError: Error {
    var message: String
    var exitCode: Int32 = 1
}
