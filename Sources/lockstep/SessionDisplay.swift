import Foundation
import Lockstep
import LockstepSession

/// The live display of `session run` on a terminal: the time, the cue list around now (what
/// plays, what is next and in how long), and a meter per layer.
final class SessionDisplay {
    let enabled: Bool
    let player: SessionPlayer
    private var lastDraw = Date.distantPast
    private var lines = 0
    private var notes: [String] = []

    init(enabled: Bool, player: SessionPlayer) {
        self.enabled = enabled
        self.player = player
    }

    /// Shows a message (a control command's answer or error) in the display, or on standard
    /// error when there is no display.
    func note(_ message: String) {
        guard enabled else {
            FileHandle.standardError.write(Data("lockstep: \(message)\n".utf8))
            return
        }
        notes.append(message)
        if notes.count > 3 { notes.removeFirst(notes.count - 3) }
        lastDraw = .distantPast
        update()
    }

    func update() {
        guard enabled, Date().timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = Date()
        let timeline = player.timeline
        let position = player.position
        let rate = timeline.rate
        var rows: [String] = []
        let state = player.isRunning ? "playing" : (player.isPaused ? "paused" : "stopped")
        var header = "  \(Terminal.time(Double(position) / rate))  \(state)   discontinuities: \(player.engine.discontinuityCount)"
        let playhead = player.playhead
        if let next = timeline.nextCue(at: position, playhead: timeline.cues.firstIndex { $0.name == playhead }) {
            header += next.start.map { "   next: \(next.name) in \(Terminal.time(Double($0 - position) / rate))" }
                ?? "   next: \(next.name) (waits for go)"
        }
        rows.append(header)
        rows += notes.map { "  > " + $0 }
        // The cues around now: everything playing, then up to 4 to come.
        let playing = timeline.cues.filter { [.playing, .paused].contains($0.state(at: position)) }
        let coming = timeline.cues.filter { [.scheduled, .waiting].contains($0.state(at: position)) }
            .sorted { ($0.start ?? .max) < ($1.start ?? .max) }.prefix(4)
        for cue in playing + coming {
            let mark = switch cue.state(at: position) {
            case .playing: "▶"
            case .paused: "‖"
            default: cue.name == playhead ? "»" : " "
            }
            let when = cue.start.map { Terminal.time(Double($0) / rate) } ?? "go"
            let name = cue.name.padding(toLength: 18, withPad: " ", startingAt: 0)
            let layer = timeline.layers[cue.layer].name.padding(toLength: 12, withPad: " ", startingAt: 0)
            rows.append("  \(mark) \(name) \(layer) \(when)")
        }
        for (index, queue) in player.queues.enumerated() {
            let levels = (try? queue.currentLevelMeterDB()) ?? []
            let peak = levels.map(\.peakPower).max() ?? -.infinity
            let name = timeline.layers[index].name.padding(toLength: 14, withPad: " ", startingAt: 0)
            rows.append("  \(name) \(LiveDisplay.bar(peak)) " + String(format: "%6.1f dB", max(peak, -99)))
        }
        var text = lines > 0 ? "\u{1B}[\(lines)A\u{1B}[J" : ""
        text += rows.map { "\u{1B}[K" + $0 }.joined(separator: "\n") + "\n"
        lines = rows.count
        FileHandle.standardError.write(Data(text.utf8))
    }

    func finish() {
        guard enabled, lines > 0 else { return }
        FileHandle.standardError.write(Data("\u{1B}[\(lines)A\u{1B}[J".utf8))
    }
}
