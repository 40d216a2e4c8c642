import Foundation
import Synchronization

/// Turns terminal echo off on standard input (canonical line input stays), and back on.
struct TerminalEcho {
    private var saved = termios()

    /// Turns echo off; nil when standard input is not a terminal.
    static func off() -> TerminalEcho? {
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        var echo = TerminalEcho()
        guard tcgetattr(STDIN_FILENO, &echo.saved) == 0 else { return nil }
        var quiet = echo.saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        return echo
    }

    /// Restores the terminal as it was.
    func restore() {
        var saved = self.saved
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }
}

/// Lines from other threads (the OSC server's log) for the run loop to show.
final class NoteQueue: Sendable {
    private let lines = Mutex<[String]>([])

    func add(_ line: String) { lines.withLock { $0.append(line) } }

    /// The lines added since the last call.
    func take() -> [String] { lines.withLock { list in defer { list.removeAll() }; return list } }
}

/// Reads control commands, one a line, on a thread of its own: from standard input, a file, or
/// a FIFO (reopened after each writer closes it).
final class ControlReader: @unchecked Sendable {
    private let lines = Mutex<[String]>([])
    private let finished = Atomic<Bool>(false)
    private let closed = Atomic<Bool>(false)
    let path: String

    init(path: String) {
        self.path = path
        let thread = Thread { [self] in self.read() }
        thread.name = "lockstep-control"
        thread.start()
    }

    /// Whether no more commands can come (standard input or a plain file reached its end).
    var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// The commands received since the last call.
    func take() -> [String] { lines.withLock { list in defer { list.removeAll() }; return list } }

    func close() { closed.store(true, ordering: .releasing) }

    private func read() {
        var isFIFO = false
        if path != "-" {
            var info = stat()
            if stat(path, &info) == 0 { isFIFO = (info.st_mode & S_IFMT) == S_IFIFO }
        }
        repeat {
            let handle: UnsafeMutablePointer<FILE>? = path == "-" ? fdopen(dup(STDIN_FILENO), "r") : fopen(path, "r")
            guard let handle else {
                log.error("control: cannot open '\(path)': \(String(cString: strerror(errno))); no commands will be read")
                break
            }
            var buffer: UnsafeMutablePointer<CChar>?
            var capacity = 0
            while getline(&buffer, &capacity, handle) >= 0 {
                let line = String(cString: buffer!).trimmingCharacters(in: .whitespacesAndNewlines)
                if !line.isEmpty && !line.hasPrefix("#") { lines.withLock { $0.append(line) } }
                if closed.load(ordering: .acquiring) { break }
            }
            free(buffer)
            fclose(handle)
        } while isFIFO && !closed.load(ordering: .acquiring)
        finished.store(true, ordering: .releasing)
    }
}
