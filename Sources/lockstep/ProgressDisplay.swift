import Foundation
import LockstepFiles

/// The progress of an offline render on standard error, as `sox -S` shows it: the share done, the
/// audio written of the audio expected, the speed as a multiple of real time, the time left, and a
/// bar filling what width remains. Redrawn in place on a terminal (``StatusArea``); on a `dumb`
/// terminal one plain line each 10 %; when standard error is not a terminal (a log file, a pipe,
/// CI), a plain line every ``lineInterval`` seconds and, once one was printed, a last one when
/// the work ends (a render shorter than the interval prints none); nothing with `--no-progress`
/// or `--quiet`.
final class ProgressDisplay {
    /// The environment variable that sets ``lineInterval``.
    static let intervalVariable = "LOCKSTEP_PROGRESS_INTERVAL"
    /// Seconds between plain lines when standard error is not a terminal: 5, or
    /// `LOCKSTEP_PROGRESS_INTERVAL` when that is a number above 0.
    static var lineInterval: Double {
        ProcessInfo.processInfo.environment[intervalVariable].flatMap(Double.init).flatMap { $0 > 0 && $0.isFinite ? $0 : nil } ?? 5
    }

    /// What is being done, first on the line (`rendering`).
    let label: String
    private let started = Date()
    private var lastDraw = Date.distantPast
    private var lastPlainStep = 0
    /// Not a terminal: when the next line is due (seconds since the start), the last report, and
    /// whether a line was printed (then the end gets one) and the end's line already was.
    private let interval = ProgressDisplay.lineInterval
    private var nextLine = ProgressDisplay.lineInterval
    private var last: RenderProgress?
    private var printedLines = false
    private var lastPrinted: RenderProgress?
    private var finished = false

    /// A display for work named `label`.
    init(label: String) {
        self.label = label
    }

    /// The plain line for `progress`: `rendering:  42%, 0:02.520 of 0:06.000, 85.3× realtime, ETA 0:01`.
    private func plainLine(_ progress: RenderProgress, elapsed: Double) -> String {
        "\(label): " + Self.parts(progress, elapsed: elapsed).joined(separator: ", ") + "\n"
    }

    /// Shows `progress` (at most ten redraws a second; the last report is always drawn).
    func update(_ progress: RenderProgress) {
        let elapsed = Date().timeIntervalSince(started)
        if !Terminal.stderrIsTerminal {
            guard Terminal.showsProgress else { return }
            last = progress
            guard elapsed >= nextLine else { return }
            while nextLine <= elapsed { nextLine += interval }
            printedLines = true
            lastPrinted = progress
            Terminal.write(plainLine(progress, elapsed: elapsed))
            return
        }
        switch Terminal.display {
        case .none:
            return
        case .plain:
            let step = Int(progress.fraction * 10)
            guard step > lastPlainStep else { return }
            lastPlainStep = step
            StatusArea.shared.printAbove(plainLine(progress, elapsed: elapsed))
        case .redraw:
            let now = Date()
            guard now.timeIntervalSince(lastDraw) >= 0.1 || progress.fraction >= 1 else { return }
            lastDraw = now
            StatusArea.shared.draw([Self.row(label: label, progress, elapsed: elapsed, columns: Terminal.columns - 1)])
        }
    }

    /// Erases the bar (before the summary line); not on a terminal, prints the last line when
    /// lines were printed (once, however often it is called).
    func finish() {
        if !Terminal.stderrIsTerminal {
            guard printedLines, !finished, let last else { return }
            finished = true
            guard last != lastPrinted else { return }                // the end's line is out already
            Terminal.write(plainLine(last, elapsed: Date().timeIntervalSince(started)))
            return
        }
        StatusArea.shared.clear()
    }

    /// The pieces of the line, most important first: `42%`, `0:02.520 of 0:06.000`,
    /// `85.3× realtime`, `ETA 0:01` (speed and time left once a tenth of a second has passed).
    static func parts(_ progress: RenderProgress, elapsed: Double) -> [String] {
        var parts = [String(format: "%3d%%", Int(progress.fraction * 100)),
                     "\(Terminal.time(progress.seconds)) of \(Terminal.time(progress.totalSeconds))"]
        if elapsed >= 0.1, progress.frames > 0 {
            let speed = progress.seconds / elapsed
            parts.append(String(format: speed >= 100 ? "%.0f× realtime" : "%.1f× realtime", speed))
            let left = (progress.totalSeconds - progress.seconds) / max(speed, 1e-9)
            parts.append("ETA \(Terminal.roughTime(left))")
        }
        return parts
    }

    /// One row of at most `columns` cells: the label and as many parts as fit, then a bar in
    /// the room left when there are at least 12 cells of it.
    static func row(label: String, _ progress: RenderProgress, elapsed: Double, columns: Int) -> String {
        var line = label
        for part in parts(progress, elapsed: elapsed) {
            guard Terminal.width(of: line) + 2 + Terminal.width(of: part) <= columns else { break }
            line += "  " + part
        }
        let room = columns - Terminal.width(of: line) - 4
        if room >= 10 {
            let cells = min(room, 40)
            let filled = Int(progress.fraction * Double(cells))
            line += "  [" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled) + "]"
        }
        return Terminal.fit(line, cells: max(1, columns))
    }
}
