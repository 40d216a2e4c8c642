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

    /// A cue's state at session sample `position`: playing, done, scheduled, or waiting (for go).
    static func state(of cue: SessionTimeline.Cue, at position: Int64) -> String {
        guard let start = cue.start else { return "waiting" }
        if position < start { return "scheduled" }
        if let end = cue.end, position >= end { return "done" }
        return "playing"
    }

    /// The next cue to start after `position`: the earliest scheduled one, else the first
    /// manual cue still waiting.
    static func next(in timeline: SessionTimeline, at position: Int64) -> SessionTimeline.Cue? {
        let scheduled = timeline.cues.filter { ($0.start ?? .min) > position }.min { $0.start! < $1.start! }
        return scheduled ?? timeline.waitingCues.first
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
        if let next = Self.next(in: timeline, at: position) {
            header += next.start.map { "   next: \(next.name) in \(Terminal.time(Double($0 - position) / rate))" }
                ?? "   next: \(next.name) (waits for go)"
        }
        rows.append(header)
        rows += notes.map { "  > " + $0 }
        // The cues around now: everything playing, then up to 4 to come.
        let playing = timeline.cues.filter { Self.state(of: $0, at: position) == "playing" }
        let coming = timeline.cues.filter { ["scheduled", "waiting"].contains(Self.state(of: $0, at: position)) }
            .sorted { ($0.start ?? .max) < ($1.start ?? .max) }.prefix(4)
        for cue in playing + coming {
            let mark = Self.state(of: cue, at: position) == "playing" ? "▶" : " "
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
