import Foundation
import Lockstep
import LockstepFiles
@preconcurrency import Rainbow

/// The live display of `lockstep play` on standard error: elapsed and remaining time, the master
/// meter with its clip hold, a meter per layer, the discontinuities so far.
///
/// Redrawn in place (``StatusArea``) on a terminal, fitted to its width and height (layers that do
/// not fit are counted on one row); on a `dumb` terminal one plain line every 2 seconds. The clip
/// hold lights `CLIP` once any master sample reached full scale (0 dBFS) and keeps it lit, with
/// the loudest peak, until the end.
final class LiveDisplay {
    /// Whether anything is shown (a terminal, no `--json`, no `--no-progress`).
    let enabled: Bool
    /// The layers.
    let players: [FilePlayer]
    /// The engine, for the master meter and the discontinuity count.
    let engine: Engine
    /// Seconds the play lasts, nil when it loops or follows transport without `--duration`.
    let length: Double?
    private var lastDraw = Date.distantPast

    /// A display of `players` on `engine`; `offsets` (seconds, per layer) and `duration` (the
    /// `--duration`) give the length shown as remaining.
    init(enabled: Bool, players: [FilePlayer], engine: Engine, offsets: [Double], duration: Double?) {
        self.enabled = enabled
        self.players = players
        self.engine = engine
        var natural: Double? = 0
        for (index, player) in players.enumerated() {
            guard case .times(let passes) = player.playCount, let frames = player.totalFrames else { natural = nil; break }
            let seconds = (index < offsets.count ? offsets[index] : 0) + Double(frames) * Double(passes) / player.fileFormat.sampleRate
            natural = natural.map { max($0, seconds) }
        }
        switch (natural, duration) {
        case (let natural?, let duration?): length = min(natural, duration)
        case (nil, let duration?): length = duration
        case (let natural, nil): length = natural
        }
    }

    /// Draws the display for device time `now` with playback started at `start` (at most ten
    /// times a second; every 2 seconds in plain mode).
    func update(now: Int64, start: Int64) {
        guard enabled else { return }
        let plain = Terminal.display == .plain
        guard Date().timeIntervalSince(lastDraw) >= (plain ? 2 : 0.1) else { return }
        lastDraw = Date()
        let seconds = Double(max(0, now - start)) / engine.sampleRate
        if plain {
            StatusArea.shared.printAbove("play: " + timeText(seconds) + ", master " + masterText().plain + "\n")
            return
        }
        let columns = Terminal.columns - 1
        var rows = ["  " + timeText(seconds) + "   discontinuities: \(engine.discontinuityCount)"]
        let master = masterText()
        rows.append("  " + "master".padding(toLength: 12, withPad: " ", startingAt: 0) + " "
                    + Terminal.meter(master.peakDB, cells: meterCells(columns: columns, label: 12, tail: 22))
                    + " " + master.levels)
        let room = max(1, Terminal.lines - rows.count - 2)
        for (index, player) in players.enumerated() {
            if index == room - 1 && players.count > room {
                rows.append("  … \(players.count - index) more layers")
                break
            }
            let levels = (try? player.queue.currentLevelMeterDB()) ?? []
            let peak = levels.map(\.peakPower).max() ?? -.infinity
            let rms = levels.map(\.averagePower).max() ?? -.infinity
            let name = URL(fileURLWithPath: player.path).lastPathComponent
            rows.append("  " + Terminal.fit(name, cells: 12).padding(toLength: 12, withPad: " ", startingAt: 0) + " "
                        + Terminal.meter(peak, cells: meterCells(columns: columns, label: 12, tail: 22)) + " "
                        + String(format: "peak %6.1f  rms %6.1f", max(peak, -99), max(rms, -99)))
        }
        StatusArea.shared.draw(rows)
    }

    /// Erases the display.
    func finish() {
        guard enabled else { return }
        StatusArea.shared.clear()
    }

    /// `0:05.200 / 0:30.000 (0:24.800 left)`, or the elapsed time alone when the length is open.
    private func timeText(_ seconds: Double) -> String {
        guard let length else { return Terminal.time(seconds) }
        return "\(Terminal.time(seconds)) / \(Terminal.time(length)) (\(Terminal.time(max(0, length - seconds))) left)"
    }

    /// The master's current peak (dBFS), its levels as text (`-6.0 dB`, then `CLIP max +1.2 dB`
    /// once clipped), and the same without colour.
    private func masterText() -> (peakDB: Float, levels: String, plain: String) {
        let peak = engine.masterLevels.map(\.peakPower).max() ?? 0
        let peakDB = Decibels.fromLinear(peak)
        let held = engine.masterPeakHold.max() ?? 0
        let now = String(format: "%6.1f dB", max(peakDB, -99))
        guard held >= 1 else { return (peakDB, now, now.trimmingCharacters(in: .whitespaces)) }
        let clip = String(format: "CLIP max %+.1f dB", Decibels.fromLinear(held))
        return (peakDB, now + "  " + (Terminal.usesColour ? clip.red : clip), now.trimmingCharacters(in: .whitespaces) + ", " + clip)
    }

    /// Cells for a meter's bar on a row of `columns` cells with a `label`-cell name and `tail`
    /// cells of numbers after it: 24 when there is room, fewer on a narrow terminal.
    private func meterCells(columns: Int, label: Int, tail: Int) -> Int {
        max(4, min(24, columns - 2 - label - 1 - 2 - 1 - tail))
    }
}
