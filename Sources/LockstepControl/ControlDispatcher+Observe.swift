import Foundation
import Lockstep
import LockstepSchema
import LockstepSession

/// Observing: what the session did by itself between two polls (or before a command), as
/// updates — cue state changes on their samples, discontinuities, late starts, heartbeats.
extension ControlDispatcher {
    /// The updates since the last observation of `state` (whose record of each cue's state it
    /// moves on to the session's position now).
    static func observe(_ state: inout State, now: ContinuousClock.Instant, options: Options) -> [ControlUpdate] {
        let player = state.player
        let timeline = player.timeline
        let position = player.position
        let running = player.isRunning
        let rate = player.rate
        var updates: [ControlUpdate] = []
        if state.cueStates.count != timeline.cues.count || state.cueStarts.count != timeline.cues.count
            || state.structure != timeline.structure {
            state.structure = timeline.structure
            state.baseline()
        }
        // Each cue is looked at where it lies in the timeline (copied only when its state
        // changed): at 4096 cues and 200 polls a second, copying every one took a fifth of a core.
        timeline.cues.withUnsafeBufferPointer { cues in
            for index in cues.indices {
                let now = cues[index].state(at: position)
                let start = cues[index].start
                var before = state.cueStates[index]
                // Placed anew since the last poll (a cue fired again): as if it had been seen
                // scheduled, so that a start and end between two polls is still reported.
                if let start, start != state.cueStarts[index], ![.waiting, .scheduled].contains(before) {
                    before = .scheduled
                }
                state.cueStarts[index] = start
                state.cueStates[index] = now
                guard now != before else { continue }
                let cue = cues[index]
                let resumedAt = cue.interruptions.compactMap(\.resume).last { $0 <= position }
                var changes: [(ControlUpdate.Kind, Int64?)] = []
                // A cue that started (or was resumed) and ended between two polls is reported as both.
                let sounded = (cue.start ?? .max) < (cue.end ?? .max)
                if [.waiting, .scheduled].contains(before) && [.done, .stopped, .paused].contains(now) && sounded {
                    changes.append((.cueStarted, cue.firstHeard))
                } else if before == .paused && [.done, .stopped].contains(now), let resumedAt {
                    changes.append((.cueResumed, resumedAt))
                }
                switch now {
                case .playing where before == .paused: changes.append((.cueResumed, resumedAt))
                case .playing: changes.append((.cueStarted, cue.firstHeard))
                case .paused: changes.append((.cuePaused, cue.interruptions.last { !$0.isStop && $0.silentFrom <= position }?.silentFrom))
                case .stopped: changes.append((.cueStopped, cue.interruptions.filter(\.isStop).map(\.silentFrom).min()))
                case .done: changes.append((.cueEnded, cue.end))
                case .waiting, .scheduled: break                       // (a seek back to before it started)
                }
                for (kind, exact) in changes {
                    // The exact sample when it lies in the stretch played since the last poll (from
                    // its first sample: a change made after that poll can land on it); else (a seek)
                    // where the session is now.
                    let sample = exact.flatMap { state.lastPosition <= $0 && $0 <= position ? $0 : nil } ?? position
                    updates.append(ControlUpdate(kind, cue: cue.name, layer: timeline.layers[cue.layer].name, position: sample,
                                                 sampleTime: running ? player.deviceTime(forPosition: sample) : nil,
                                                 seconds: Double(sample) / rate))
                }
            }
        }
        let engine = player.engine
        if engine.discontinuityCount > state.seenDiscontinuities {
            let (recent, total) = engine.discontinuities(after: state.seenDiscontinuities)
            for gap in recent {
                updates.append(ControlUpdate(.discontinuity, sampleTime: gap.sampleTime,
                                             discontinuity: DiscontinuityRecord(gap)))
            }
            state.seenDiscontinuities = total
        }
        let late = player.lateStarts
        for start in late.dropFirst(state.seenLateStarts) {
            updates.append(ControlUpdate(.late, position: start.position, sampleTime: start.sampleTime,
                                         seconds: Double(start.position) / rate, frames: start.skippedFrames))
        }
        state.seenLateStarts = max(state.seenLateStarts, late.count)
        if now - state.lastHeartbeat >= .seconds(options.heartbeatInterval) {
            state.lastHeartbeat = now
            updates.append(ControlUpdate(.heartbeat, position: position, sampleTime: engine.currentTime().sampleTime,
                                         seconds: Double(position) / rate,
                                         state: running ? "playing" : (player.isPaused ? "paused" : "stopped")))
        }
        state.lastPosition = position
        return updates
    }
}
