import Lockstep
import LockstepSession

extension ControlStatus {
    /// The state of `player` now. Call it off the realtime thread (it reads the queues' meters).
    public init(player: SessionPlayer) {
        let timeline = player.timeline
        let position = player.position
        let rate = timeline.rate
        let playhead = player.playhead
        let cues = timeline.cues.map { cue in
            Cue(name: cue.name, number: cue.index + 1, layer: timeline.layers[cue.layer].name,
                state: cue.state(at: position).rawValue, start: cue.start, end: cue.end)
        }
        let next = timeline.nextCue(at: position, playhead: timeline.cues.firstIndex { $0.name == playhead }).map { cue in
            Next(name: cue.name, inSeconds: cue.start.map { Double($0 - position) / rate }, manual: cue.start == nil)
        }
        let layers = zip(timeline.layers.indices, player.queues).map { index, queue in
            let peak = ((try? queue.currentLevelMeterDB()) ?? []).map(\.peakPower).max() ?? -.infinity
            return Layer(name: timeline.layers[index].name, gainDB: timeline.layerGainDB(index, at: position),
                         peakDB: Double(peak))
        }
        self.init(state: player.isRunning ? "playing" : (player.isPaused ? "paused" : "stopped"), position: position,
                  seconds: Double(position) / rate, sampleTime: player.engine.currentTime().sampleTime,
                  sampleRate: Int(rate), cues: cues, next: next, playhead: playhead, layers: layers,
                  discontinuities: player.engine.discontinuityCount)
    }
}
