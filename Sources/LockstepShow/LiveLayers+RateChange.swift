import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK

extension LiveLayers {
    /// After a sample-rate change stopped every layer (their audio was converted for the old
    /// rate), makes each layer again at the device's new rate — new queue, conversion for the new
    /// ratio — positioned on the file frame it had reached (exact in the file's frames, rounded
    /// once), and starts them together; a layer that had not started yet keeps its remaining
    /// wait, scaled to the new rate. The duration left is scaled too.
    func playOn(after change: Discontinuity) throws {
        let oldRate = rate, newRate = engine.sampleRate
        var frames: [Int64] = []
        var waits: [Int64] = []
        for (player, anchor) in zip(players, anchors) {
            if change.sampleTime >= anchor.deviceTime {
                let played = Double(change.sampleTime - anchor.deviceTime) * player.fileFormat.sampleRate / oldRate
                frames.append(anchor.fileFrame + Int64(played.rounded()))
                waits.append(0)
            } else {
                frames.append(anchor.fileFrame)
                waits.append(Int64((Double(anchor.deviceTime - change.sampleTime) * newRate / oldRate).rounded()))
            }
        }
        let old = Set(players.map { ObjectIdentifier($0.queue) })
        for player in players {
            player.stop()
            try? player.queue.dispose()
        }
        // The old queues' own ports must be gone before the new ones take the names.
        let deadline = Date().addingTimeInterval(2)
        while engine.queues.contains(where: { old.contains(ObjectIdentifier($0)) }) && Date() < deadline { usleep(2_000) }
        var fresh: [FilePlayer] = []
        for (index, player) in players.enumerated() {
            let again = try FilePlayer(path: player.path, engine: engine, playCount: player.playCount,
                                       bufferDuration: player.bufferDuration, bufferCount: player.bufferCount, truncation: .reject,
                                       streamer: player.streamer, channels: player.channelRouting)
            try ready(again, index: index)
            try again.reposition(toFrame: frames[index])
            fresh.append(again)
        }
        let resumedAt = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime) + Int64(newRate * options.lead)
        for wait in Set(waits).sorted() {
            let group = fresh.indices.filter { waits[$0] == wait }
            try engine.start(group.map { fresh[$0].queue }, at: resumedAt + wait, ifLate: .skipAhead)
        }
        end = end.map { resumedAt + Int64((Double(max(0, $0 - change.sampleTime)) * newRate / oldRate).rounded()) }
        let recordingNote = recorder != nil ? " (the recording ends at the change: its file stays at \(Int(oldRate)) Hz)" : ""
        onNote(ShowNote(.notice, "the server's rate changed from \(Int(oldRate)) Hz to \(Int(newRate)) Hz at sample \(change.sampleTime); "
                                 + "every layer plays on from where it was at sample \(resumedAt)\(recordingNote)"))
        let record = ShowRateChange(sampleTime: change.sampleTime, sampleRate: Int(newRate), resumedSampleTime: resumedAt,
                                    resumedJACKFrame: device.jackFrameTime(forSampleTime: resumedAt), fileFrames: frames)
        rateChanges.append(record)
        rate = newRate
        players = fresh
        anchors = zip(frames, waits).map { LayerAnchor(deviceTime: resumedAt + $0.1, fileFrame: $0.0) }
        onPlayersReplaced(fresh)
        onRateChange(record)
    }
}
