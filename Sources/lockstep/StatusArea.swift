import Dispatch
import Foundation

/// The rows of live output at the bottom of the terminal (a progress bar, meters), redrawn in
/// place, and the one way messages reach standard error while they are shown.
///
/// Every row is cut to the terminal's width less one column, so no row wraps (a wrapped row would
/// make the next redraw move the cursor up too little and leave garbage behind). The width is read
/// again at every draw, and a change of size (`SIGWINCH`) redraws at once: the rows drawn before
/// are erased by the number of screen lines they take at the new width, as terminals that rewrap
/// on resize (tmux, VTE, kitty) show them. ``printAbove(_:to:)`` erases the rows, prints its text
/// (a log message, a control command's answer on standard output) and draws the rows again below
/// it, so the text stays on the screen instead of being overwritten by the next redraw.
///
/// Cursor movement uses the terminal's own strings from terminfo (carriage return `cr`, cursor up
/// `cuu`, erase below `ed`: ``TerminalCapabilities``); nothing is drawn unless
/// ``Terminal/display`` is ``Terminal/Display/redraw``, which needs all three. Any thread may call it.
final class StatusArea: @unchecked Sendable {
    /// The status area of standard error.
    static let shared = StatusArea()

    private let lock = NSLock()
    /// The rows as last requested (uncut).
    private var rows: [String] = []
    /// The cells each row took when drawn (its cut width).
    private var drawnWidths: [Int] = []
    private var resizeSource: DispatchSourceSignal?

    /// Replaces the rows shown (redraw mode only; otherwise nothing is drawn).
    func draw(_ newRows: [String]) {
        guard Terminal.display == .redraw else { return }
        lock.lock()
        defer { lock.unlock() }
        watchResizes()
        rows = newRows
        Terminal.write(eraseSequence() + render())
    }

    /// Prints `text` (which ends with a newline) on `descriptor` above the rows, then draws them
    /// again.
    func printAbove(_ text: String, to descriptor: Int32 = STDERR_FILENO) {
        lock.lock()
        defer { lock.unlock() }
        guard !drawnWidths.isEmpty else {
            Terminal.write(text, to: descriptor)
            return
        }
        Terminal.write(eraseSequence())
        drawnWidths = []
        Terminal.write(text, to: descriptor)
        Terminal.write(render())
    }

    /// Erases the rows and forgets them (the display is finished).
    func clear() {
        lock.lock()
        defer { lock.unlock() }
        if !drawnWidths.isEmpty { Terminal.write(eraseSequence()) }
        rows = []
        drawnWidths = []
    }

    /// Draws the rows again at the terminal's current width.
    func redraw() {
        lock.lock()
        defer { lock.unlock() }
        guard !rows.isEmpty, Terminal.display == .redraw else { return }
        Terminal.write(eraseSequence() + render())
    }

    /// The rows cut to the width, each followed by a newline; records what was drawn.
    private func render() -> String {
        let cells = max(1, Terminal.columns - 1)
        let cut = rows.map { Terminal.fit($0, cells: cells) }
        drawnWidths = cut.map(Terminal.width(of:))
        return cut.map { $0 + "\n" }.joined()
    }

    /// Moves the cursor to the first drawn row and erases everything below it.
    private func eraseSequence() -> String {
        guard !drawnWidths.isEmpty else { return "" }
        let columns = max(1, Terminal.columns)
        let lines = drawnWidths.reduce(0) { $0 + max(1, ($1 + columns - 1) / columns) }
        return TerminalCapabilities.current?.erase(linesAbove: lines) ?? ""
    }

    /// Starts redrawing on `SIGWINCH` (once).
    private func watchResizes() {
        guard resizeSource == nil else { return }
        signal(SIGWINCH, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global())
        source.setEventHandler { StatusArea.shared.redraw() }
        source.resume()
        resizeSource = source
    }
}
