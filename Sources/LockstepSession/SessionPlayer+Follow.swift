import Foundation
import Lockstep

/// A player that follows another run of the same session (a backup following its main): the
/// other run's ``SessionPlayer/RunState`` applied to this one as it plays, each change on the
/// session sample the other run placed it on.
extension SessionPlayer {
    /// Samples every live change (GO, stop, fade, level…) lands later than it could, so that a
    /// backup following this run (``follow(_:)``) hears of it in time to place it on the same
    /// session sample; the standby cue is not armed while it is above 0 (an armed GO lands on the
    /// next cycle). 0 (the default): as soon as the device can.
    public var changeLead: Int64 {
        get { state.withLock { $0.changeLead } }
        set {
            state.withLock { $0.changeLead = max(0, newValue) }
            if newValue > 0 { disarm() } else { scheduleArming() }
        }
    }

    /// Brings this playing run to `run`, another run's state of the same session: the gos it
    /// has and this one has not yet (each on its own session sample, loaded as it was), its
    /// gain changes, each cue's pauses, stops and level changes as they stand there, its
    /// playhead, loaded cues and double-GO state. Every layer whose audio changes is recomputed
    /// from the change's sample, as any control change is. The whole session's pause and
    /// position are not touched (the caller follows those).
    ///
    /// - Returns: what could not be followed exactly: a cue or layer this session lacks, or a
    ///   change whose sample this device had already played (how many samples late).
    @discardableResult
    public func follow(_ run: RunState) -> [String] {
        let run = run.moved(to: rate)
        let fade = Int64((Self.declickSeconds * rate).rounded())
        return control { state -> [String] in
            var problems: [String] = []
            func late(_ what: String, _ sample: Int64) {
                if let earliest = state.earliestChangeable, sample < earliest {
                    problems.append("\(what) on sample \(sample): \(earliest - sample) samples after it here")
                }
            }
            for go in run.goes.dropFirst(state.fired.count) {
                guard let index = state.timeline.cues.firstIndex(where: { $0.name == go.cue }) else {
                    problems.append("go \(go.cue): not in this session")
                    continue
                }
                late("go \(go.cue)", go.sample)
                if go.offset > 0 { state.loaded[index] = go.offset }
                _ = state.refire(index, at: go.sample, fade: fade)
                state.fired.append((go.cue, go.sample, state.lastOffset))
            }
            for gain in run.gains.dropFirst(state.gainChanges.count) {
                guard gain.layer < state.timeline.layers.count else {
                    problems.append("gain of layer \(gain.layer): this session has \(state.timeline.layers.count) layers")
                    continue
                }
                late("gain of layer \(state.timeline.layers[gain.layer].name)", gain.point.start)
                state.timeline.addAutomation(layer: gain.layer, gain.point)
                state.gainChanges.append((gain.layer, gain.point))
                state.touch(layer: gain.layer, from: gain.point.start)
            }
            let wanted = Dictionary(run.cues.map { ($0.cue, $0) }, uniquingKeysWith: { $1 })
            for index in state.timeline.cues.indices {
                let cue = state.timeline.cues[index]
                let interruptions = wanted[cue.name]?.interruptions ?? []
                let levels = wanted[cue.name]?.levelChanges ?? []
                guard interruptions != cue.interruptions || levels != cue.levelChanges else { continue }
                // From the first pause, stop or level change that differs.
                let changed = Set(interruptions).symmetricDifference(cue.interruptions).map(\.fadeStart)
                    + Set(levels).symmetricDifference(cue.levelChanges).map(\.start)
                let from = changed.min() ?? 0
                late("a change of \(cue.name)", from)
                state.timeline.cues[index].interruptions = interruptions
                state.timeline.cues[index].levelChanges = levels
                if cue.isAudio { state.touch(layer: cue.layer, from: from) }
            }
            let cues = state.timeline.cues
            func index(_ name: String) -> Int? { cues.firstIndex { $0.name == name } }
            state.playhead = run.playhead.flatMap(index)
            state.loaded = Dictionary(uniqueKeysWithValues: run.loaded.compactMap { entry in index(entry.key).map { ($0, entry.value) } })
            state.lastPlainGo = run.lastPlainGo
            state.ignoredGos = run.ignoredGos
            return problems
        }
    }
}
