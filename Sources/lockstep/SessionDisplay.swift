import Foundation
import Lockstep
import LockstepSession
import Logging

/// The live display of `session run` on standard error: the time, the cue list around now (what
/// plays, what is next and in how long), and a meter per layer.
///
/// Redrawn in place (``StatusArea``) on a terminal, fitted to its width and height; on a `dumb`
/// terminal one plain line every 2 seconds. Messages (control answers, errors, late starts) are
/// logged above it, where they stay.
final class SessionDisplay {
    /// Whether anything is drawn (a terminal, no `--json`, no `--no-progress`).
    let enabled: Bool
    /// The session being played.
    let player: SessionPlayer
    private var lastDraw = Date.distantPast

    /// A display of `player`, drawn only when `enabled`.
    init(enabled: Bool, player: SessionPlayer) {
        self.enabled = enabled
        self.player = player
    }

    /// Shows a message (a control command's answer or error, a late start) above the display, or
    /// alone on standard error when there is no display.
    func note(_ message: String, level: Logger.Level = .notice) {
        log.log(level: level, "\(message)")
    }

    /// Draws the display (at most ten times a second; every 2 seconds in plain mode).
    func update() {
        guard enabled else { return }
        let plain = Terminal.display == .plain
        guard Date().timeIntervalSince(lastDraw) >= (plain ? 2 : 0.1) else { return }
        lastDraw = Date()
        let timeline = player.timeline
        let position = player.position
        let rate = timeline.rate
        let state = player.isRunning ? "playing" : (player.isPaused ? "paused" : "stopped")
        var header = "\(Terminal.time(Double(position) / rate))  \(state)   discontinuities: \(player.engine.discontinuityCount)"
        let playhead = player.playhead
        if let next = timeline.nextCue(at: position, playhead: timeline.cues.firstIndex { $0.name == playhead }) {
            header += next.start.map { "   next: \(next.name) in \(Terminal.time(Double($0 - position) / rate))" }
                ?? "   next: \(next.name) (waits for go)"
        }
        if plain {
            StatusArea.shared.printAbove("session: " + header + "\n")
            return
        }
        var rows = ["  " + header]
        // The cues around now: everything playing, then up to 4 to come; then the layers' meters,
        // as many as the terminal's height leaves room for.
        let playing = timeline.cues.filter { [.playing, .paused].contains($0.state(at: position)) }
        let coming = timeline.cues.filter { [.scheduled, .waiting].contains($0.state(at: position)) }
            .sorted { ($0.start ?? .max) < ($1.start ?? .max) }.prefix(4)
        let room = max(2, Terminal.lines - 2)
        for cue in (playing + coming).prefix(max(1, room / 2)) {
            let mark = switch cue.state(at: position) {
            case .playing: "▶"
            case .paused: "‖"
            default: cue.name == playhead ? "»" : " "
            }
            let when = cue.start.map { Terminal.time(Double($0) / rate) } ?? "go"
            let name = Terminal.fit(cue.name, cells: 18).padding(toLength: 18, withPad: " ", startingAt: 0)
            let layer = Terminal.fit(timeline.layers[cue.layer].name, cells: 12).padding(toLength: 12, withPad: " ", startingAt: 0)
            rows.append("  \(mark) \(name) \(layer) \(when)")
        }
        let cells = max(4, min(24, Terminal.columns - 1 - 2 - 14 - 1 - 2 - 10))
        for (index, queue) in player.queues.enumerated() {
            if rows.count == room - 1 && player.queues.count > index + 1 {
                rows.append("  … \(player.queues.count - index) more layers")
                break
            }
            let levels = (try? queue.currentLevelMeterDB()) ?? []
            let peak = levels.map(\.peakPower).max() ?? -.infinity
            let name = Terminal.fit(timeline.layers[index].name, cells: 14).padding(toLength: 14, withPad: " ", startingAt: 0)
            rows.append("  \(name) \(Terminal.meter(peak, cells: cells)) " + String(format: "%6.1f dB", max(peak, -99)))
        }
        StatusArea.shared.draw(rows)
    }

    /// Erases the display.
    func finish() {
        guard enabled else { return }
        StatusArea.shared.clear()
    }
}
