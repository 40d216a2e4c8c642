import Foundation
import Lockstep
import LockstepFiles
import LockstepSession
@preconcurrency import Rainbow
import Synchronization

/// What standard error is and what may be drawn on it.
///
/// Live output (progress bars, meters) goes to standard error, and only when it is a terminal:
/// redrawn in place (``Display/redraw``) with the cursor movements of its terminfo entry
/// (``TerminalCapabilities``) unless `TERM` is unset, `dumb` or has none, where plain lines are
/// printed now and then instead (``Display/plain``). With `--no-progress` or `--quiet`, or when
/// standard error is a file or a pipe, nothing live is shown (``Display/none``) — except a
/// render's progress, which ``ProgressDisplay`` writes to a file or pipe as a plain line every
/// few seconds. Colour (through
/// Rainbow) is used only when redrawing, and never when `NO_COLOR` is set to anything.
enum Terminal {
    /// How live output is shown.
    enum Display: Sendable {
        /// Redrawn in place with cursor movement, fitted to the terminal's width.
        case redraw
        /// Plain lines, printed now and then, no escape sequences.
        case plain
        /// Not shown.
        case none
    }

    private static let progressSwitch = Atomic<Bool>(true)

    /// Whether progress and live displays may be shown at all (off with `--no-progress` or
    /// `--quiet`).
    static var showsProgress: Bool {
        get { progressSwitch.load(ordering: .relaxed) }
        set { progressSwitch.store(newValue, ordering: .relaxed) }
    }

    /// Whether standard error is an interactive terminal.
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Whether the terminal cannot move its cursor as the live display needs: `TERM` unset or
    /// `dumb`, or its terminfo entry missing or without `cr`, `cuu`/`cuu1` and `ed`
    /// (``TerminalCapabilities``).
    static var isDumb: Bool { TerminalCapabilities.current == nil }

    /// How live output is shown now.
    static var display: Display {
        guard showsProgress, stderrIsTerminal else { return .none }
        return isDumb ? .plain : .redraw
    }

    /// Whether messages and displays on standard error use colour: a terminal that redraws and
    /// shows at least 8 colours (terminfo's `colors`), and no `NO_COLOR` (https://no-color.org:
    /// any non-empty value turns colour off).
    static var usesColour: Bool {
        let noColour = ProcessInfo.processInfo.environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        return stderrIsTerminal && (TerminalCapabilities.current?.colours ?? 0) >= 8 && !noColour
    }

    /// Sets Rainbow up for standard error (Rainbow itself looks at standard output).
    static func configureColour() {
        Rainbow.enabled = usesColour
        Rainbow.outputTarget = usesColour ? .console : .unknown
    }

    /// The terminal's width in columns: `TIOCGWINSZ` on standard error, else `$COLUMNS`, else
    /// terminfo's `cols`, else 80.
    static var columns: Int {
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = ProcessInfo.processInfo.environment["COLUMNS"], let value = Int(text), value > 0 { return value }
        return TerminalCapabilities.current?.columns ?? 80
    }

    /// The terminal's height in lines (`TIOCGWINSZ`, else `$LINES`, else 24).
    static var lines: Int {
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 { return Int(size.ws_row) }
        if let text = ProcessInfo.processInfo.environment["LINES"], let value = Int(text), value > 0 { return value }
        return 24
    }

    /// The cells `text` takes on a terminal: escape sequences take none, East Asian wide
    /// characters and most emoji two, everything else one.
    static func width(of text: String) -> Int {
        var cells = 0
        var inEscape = false
        for character in text {
            if inEscape {
                if character.isLetter { inEscape = false }
                continue
            }
            if character == "\u{1B}" { inEscape = true; continue }
            cells += cellWidth(character)
        }
        return cells
    }

    /// `text` cut to at most `cells` terminal cells (escape sequences kept; a colour left open by
    /// the cut is reset).
    static func fit(_ text: String, cells: Int) -> String {
        guard width(of: text) > cells else { return text }
        var result = ""
        var used = 0
        var inEscape = false
        for character in text {
            if inEscape {
                result.append(character)
                if character.isLetter { inEscape = false }
                continue
            }
            if character == "\u{1B}" { inEscape = true; result.append(character); continue }
            let cell = cellWidth(character)
            if used + cell > cells { break }
            used += cell
            result.append(character)
        }
        return result.contains("\u{1B}") ? result + "\u{1B}[0m" : result
    }

    private static func cellWidth(_ character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first?.value else { return 0 }
        switch scalar {
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F,
             0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }

    /// Writes `text` to `descriptor` whole (retrying after signals and short writes).
    static func write(_ text: String, to descriptor: Int32 = STDERR_FILENO) {
        var bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeMutableBytes { Glibc.write(descriptor, $0.baseAddress! + done, $0.count - done) }
            if wrote < 0 {
                if errno == EINTR { continue }
                return
            }
            done += wrote
        }
        bytes.removeAll()
    }

    /// Formats seconds as `m:ss.fff` (or `h:mm:ss.fff`).
    static func time(_ seconds: Double) -> String { SessionTime.clock(seconds) }

    /// Formats seconds as `m:ss` (or `h:mm:ss`), rounded to the second: for estimates.
    static func roughTime(_ seconds: Double) -> String {
        let whole = Int(max(0, seconds.isFinite ? seconds : 0).rounded())
        let (hours, minutes, secs) = (whole / 3600, whole / 60 % 60, whole % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, secs) : String(format: "%d:%02d", minutes, secs)
    }

    /// Formats a dBFS value, `-inf` for silence.
    static func decibels(_ value: Float) -> String {
        value == -.infinity ? "-inf dBFS" : String(format: "%.2f dBFS", value)
    }

    /// A level meter `[=====     ]` of `cells` cells inside the brackets for `db` dBFS (−60…0),
    /// green, then yellow above −12 dB and red above −3 dB when colour is on.
    static func meter(_ db: Float, cells: Int = 24) -> String {
        let cells = max(1, cells)
        let filled = db.isFinite ? max(0, min(cells, Int(((db + 60) / 60) * Float(cells)))) : 0
        let bar = String(repeating: "=", count: filled)
        let coloured = !usesColour ? bar : db > -3 ? bar.red : db > -12 ? bar.yellow : bar.green
        return "[" + coloured + String(repeating: " ", count: cells - filled) + "]"
    }
}

/// An encoding for summary lines: `WAV 32-bit float`, `FLAC 24-bit integer`, `AU µ-law`, `MP3`,
/// `Ogg Vorbis`.
func encodingSummary(_ encoding: AudioFileEncoding) -> String {
    encoding.sampleFormat.map { "\(encoding.type) \($0)" } ?? encoding.type.description
}

/// Parses a gain such as `-6`, `-6dB`, `+3 dB` or `-inf` (at most +12 dB), as session files do.
func parseGain(_ text: String) -> Double? { SessionGain.parse(text) }
