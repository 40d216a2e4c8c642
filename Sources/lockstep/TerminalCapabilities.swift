import CTinfo
import Foundation

/// What the terminal on standard error can do, from its terminfo entry (ncurses' libtinfo,
/// through the `CTinfo` shim): the strings that return the cursor to the line's start (`cr`),
/// move it up (`cuu`, or `cuu1` repeated) and erase everything below it (`ed`), and the width
/// terminfo gives (`cols`) and whether it shows colours (`colors`).
///
/// Loaded once, for `TERM`. The live display redraws in place only when all three movements are
/// there; a terminal without them — `TERM` unset or `dumb`, an entry missing from the terminfo
/// database, a hardcopy terminal — gets plain lines instead, never an escape sequence it does
/// not understand.
struct TerminalCapabilities: Sendable {
    /// Carriage return (`cr`).
    let carriageReturn: String
    /// Cursor up by a count (`cuu`, with its parameter), or nil: use ``cursorUpOne`` repeated.
    let cursorUp: String?
    /// Cursor up one line (`cuu1`).
    let cursorUpOne: String?
    /// Erase from the cursor to the end of the screen (`ed`).
    let eraseBelow: String
    /// The width terminfo gives (`cols`), or nil.
    let columns: Int?
    /// The colours it shows (`colors`), 0 for none.
    let colours: Int

    /// The capabilities of `TERM` on standard error; nil when the display cannot redraw in place.
    static let current: TerminalCapabilities? = load(term: ProcessInfo.processInfo.environment["TERM"] ?? "")

    /// The capabilities of terminal type `term`; nil when it cannot move its cursor as the display
    /// needs (or has no terminfo entry). The corresponding C function is `setupterm`.
    static func load(term: String) -> TerminalCapabilities? {
        guard !term.isEmpty, term != "dumb", lockstep_setupterm(term, STDERR_FILENO) == 0 else { return nil }
        func string(_ name: String) -> String? { lockstep_tigetstr(name).map { String(cString: $0) } }
        let up = string("cuu"), upOne = string("cuu1")
        guard let cr = string("cr"), let ed = string("ed"), up != nil || upOne != nil else { return nil }
        let cols = lockstep_tigetnum("cols")
        return TerminalCapabilities(carriageReturn: cr, cursorUp: up, cursorUpOne: upOne, eraseBelow: ed,
                                    columns: cols > 0 ? Int(cols) : nil, colours: max(0, Int(lockstep_tigetnum("colors"))))
    }

    /// The string that moves the cursor up `lines` lines (nothing for 0). The corresponding C
    /// function is `tiparm`.
    func up(_ lines: Int) -> String {
        guard lines > 0 else { return "" }
        if let cursorUp, let filled = lockstep_tiparm1(cursorUp, Int32(clamping: lines)) { return String(cString: filled) }
        return String(repeating: cursorUpOne ?? "", count: lines)
    }

    /// Returns to the start of the line, goes up `lines` lines and erases everything below.
    func erase(linesAbove lines: Int) -> String {
        carriageReturn + up(lines) + eraseBelow
    }
}
