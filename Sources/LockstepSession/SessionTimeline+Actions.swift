import Foundation

extension SessionTimeline {
    /// What a cue does (its `type`), with the cues and layers it acts on resolved to indices.
    public enum Action: Sendable, Hashable {
        /// Plays its file on its layer.
        case audio
        /// Moves a cue's own level or a layer's gain to `gainDB` over the cue's length, along
        /// `curve`; with `stopsTarget`, stops the target cue at the end.
        case fade(FadeTarget, gainDB: Double, curve: SessionDocument.FadeCurve, stopsTarget: Bool)
        /// Stops the cue (5 ms fade while it plays).
        case stop(Int)
        /// Pauses the playing cue (5 ms fade).
        case pause(Int)
        /// Plays the paused cue on.
        case resume(Int)
        /// Ends the looping cue at the end of the pass it is in.
        case devamp(Int)
        /// Fires the manual cue (again if it played).
        case start(Int)
        /// Puts the playhead on the manual cue.
        case goto(Int)
        /// Loads the manual cue to `offset` samples in: its next go plays it from there.
        case load(Int, offset: Int64)
        /// Nothing: a gap of its length.
        case wait
        /// Holds cues that start with it (``Cue/members``); its length reaches the end of the last.
        case group
        /// Sends `message` to `destination` (`HOST:PORT`) on its first sample, live.
        case network(destination: String, message: NetworkMessage)
        /// Sends `message` on the MIDI output on its first sample, live.
        case midi(MIDICueMessage)

        /// The cue it acts on, if any.
        public var targetCue: Int? {
            switch self {
            case .fade(.cue(let cue), _, _, _), .stop(let cue), .pause(let cue), .resume(let cue), .devamp(let cue),
                 .start(let cue), .goto(let cue), .load(let cue, _):
                return cue
            case .audio, .wait, .group, .network, .midi, .fade(.layer, _, _, _): return nil
            }
        }

        /// The same action with its target cue's index moved by `index` (kept where it has none:
        /// the target went; the action is then cut with its cue or refused by the check).
        func mapped(_ index: (Int) -> Int?) -> Action {
            func move(_ cue: Int) -> Int { index(cue) ?? cue }
            switch self {
            case .fade(.cue(let cue), let gain, let curve, let stops): return .fade(.cue(move(cue)), gainDB: gain, curve: curve, stopsTarget: stops)
            case .stop(let cue): return .stop(move(cue))
            case .pause(let cue): return .pause(move(cue))
            case .resume(let cue): return .resume(move(cue))
            case .devamp(let cue): return .devamp(move(cue))
            case .start(let cue): return .start(move(cue))
            case .goto(let cue): return .goto(move(cue))
            case .load(let cue, let offset): return .load(move(cue), offset: offset)
            case .audio, .wait, .group, .network, .midi, .fade(.layer, _, _, _): return self
            }
        }
    }

    /// What a fade moves.
    public enum FadeTarget: Sendable, Hashable {
        /// A cue's own level.
        case cue(Int)
        /// A layer's gain.
        case layer(Int)
    }

    /// What carrying out placed action cues did besides editing the timeline.
    public struct ActionOutcome: Sendable, Hashable {
        /// Per layer, the earliest session sample whose audio changed.
        public var touched: [Int: Int64] = [:]
        /// The manual cue a goto cue put the playhead on (the last one, when several did).
        public var playhead: Int?
        /// Cues placed by start cues (with their chains).
        public var placed: [Int] = []

        mutating func touch(_ layer: Int, from sample: Int64) { touched[layer] = min(touched[layer] ?? .max, sample) }
    }

    /// The fade of a stop, pause or resume an action cue makes while its target plays (5 ms, as
    /// the control surfaces' ``SessionPlayer/declickSeconds``).
    var actionFade: Int64 { Int64((SessionPlayer.declickSeconds * rate).rounded()) }

    /// Carries out the action cues among `placed` (just placed), each on its first sample, in
    /// time order: the edits they make are on the timeline from those samples on (a fade is a
    /// level change of its target, a stop an interruption…), so the audio stays a function of
    /// session time. A start cue's cue (and its chain) is placed too, and its actions carried out
    /// in turn (at most ``maximumStartDepth`` starts deep: a start cue that starts itself stops
    /// there).
    @discardableResult
    public mutating func applyActions(of placed: [Int]) -> ActionOutcome {
        var outcome = ActionOutcome()
        apply(placed, depth: 0, into: &outcome)
        return outcome
    }

    /// How many start cues deep ``applyActions(of:)`` follows.
    public static let maximumStartDepth = 8

    private mutating func apply(_ placed: [Int], depth: Int, into outcome: inout ActionOutcome) {
        let actions = placed.filter { !cues[$0].isAudio && cues[$0].start != nil }
            .sorted { (cues[$0].start!, $0) < (cues[$1].start!, $1) }
        for index in actions {
            let cue = cues[index]
            let at = cue.start!
            switch cue.action {
            case .audio, .wait, .group, .network, .midi: break
            case .fade(.cue(let group), let gainDB, let curve, let stopsTarget):
                for target in controlledCues(of: group) where cues[target].start != nil {
                    addLevelChange(target, AutomationPoint(start: at, ramp: cue.length ?? 0, gainDB: gainDB, curve: curve))
                    if stopsTarget, [.scheduled, .playing, .paused].contains(cues[target].state(at: at + (cue.length ?? 0))) {
                        interrupt(target, Interruption(fadeStart: at + (cue.length ?? 0), fade: 0, isStop: true))
                    }
                    outcome.touch(cues[target].layer, from: at)
                }
            case .fade(.layer(let layer), let gainDB, let curve, _):
                addAutomation(layer: layer, AutomationPoint(start: at, ramp: cue.length ?? 0, gainDB: gainDB, curve: curve))
                outcome.touch(layer, from: at)
            case .stop(let group):
                for target in controlledCues(of: group) {
                    let state = cues[target].state(at: at)
                    guard [.scheduled, .playing, .paused].contains(state) else { continue }
                    interrupt(target, Interruption(fadeStart: at, fade: state == .playing ? actionFade : 0, isStop: true))
                    outcome.touch(cues[target].layer, from: at)
                }
            case .pause(let group):
                for target in controlledCues(of: group) where cues[target].state(at: at) == .playing && !cues[target].awaitsResume {
                    interrupt(target, Interruption(fadeStart: at, fade: actionFade, isStop: false))
                    outcome.touch(cues[target].layer, from: at)
                }
            case .resume(let group):
                for target in controlledCues(of: group) {
                    if let from = resume(target, at: at) { outcome.touch(cues[target].layer, from: from) }
                }
            case .devamp(let group):
                // (A looping playlist's cues all change with its first: each one's layer is recomputed.)
                for target in controlledCues(of: group) where devamp(target, at: at) || cues[target].repeats != nil {
                    outcome.touch(cues[target].layer, from: at)
                }
            case .start(let target):
                guard depth < Self.maximumStartDepth, cues[target].isGoTarget, !cues[target].awaitsResume else { continue }
                for other in cues.indices where cues[other].trigger == target && cues[other].isAudio
                    && cues[other].start != nil && (cues[other].end ?? .max) > at {
                    outcome.touch(cues[other].layer, from: at)
                }
                let started = refire(target, at: at, fade: actionFade)
                for other in started where cues[other].isAudio { outcome.touch(cues[other].layer, from: cues[other].start ?? at) }
                outcome.placed += started
                apply(started, depth: depth + 1, into: &outcome)
            case .goto(let target):
                outcome.playhead = target
            case .load(let target, let offset):
                cues[target].loads.append(Load(at: at, offset: offset))
            }
        }
    }

    /// The cues a stop, pause, resume, fade or devamp of cue `cue` acts on: the cue, and a
    /// group's members.
    public func controlledCues(of cue: Int) -> [Int] { [cue] + cues[cue].members }

    /// Lets cue `cue`, looping, play to the end of the pass it is in at session sample `sample`
    /// (the next pass when that end is at or before `sample`), and end there.
    /// - Returns: whether its end moved.
    mutating func devamp(_ cue: Int, at sample: Int64) -> Bool {
        if cues[cue].repeats != nil { return devampRepeats(cue, at: sample) }
        let target = cues[cue]
        guard target.state(at: sample) == .playing || target.awaitsResume else { return false }
        let regionFrames = Double(target.regionEnd - target.regionStart)
        guard regionFrames > 0 else { return false }
        let passLength = regionFrames * rate / target.fileRate
        let played = Double(target.samplesPlayed(before: sample))
        var passes = Int((played / passLength).rounded(.down)) + 1
        if let count = target.playCount, passes >= count { return false }
        var length = Int64((Double(passes) * passLength).rounded())
        if length <= Int64(played) {
            passes += 1
            length = Int64((Double(passes) * passLength).rounded())
        }
        if let count = target.playCount, passes >= count { return false }
        cues[cue].playCount = passes
        cues[cue].length = length
        return true
    }
}

extension SessionTimeline {
    /// What action cue `cue` does, in a few words (`fade bed`, `fade layer music`, `stop bed`,
    /// `wait`); nil for an audio cue.
    public func actionSummary(_ cue: Cue) -> String? {
        func name(_ index: Int) -> String { cues.indices.contains(index) ? cues[index].name : "?" }
        switch cue.action {
        case .audio: return nil
        case .wait: return "wait"
        case .network(let destination, let message): return "network \(destination) \(message)"
        case .midi(let message): return "midi \(message)"
        case .group: return "group of \(cue.members.filter { cues[$0].isAudio }.count)"
        case .fade(.cue(let target), _, _, _): return "fade \(name(target))"
        case .fade(.layer(let layer), _, _, _): return "fade layer \(layers.indices.contains(layer) ? layers[layer].name : "?")"
        case .stop(let target): return "stop \(name(target))"
        case .pause(let target): return "pause \(name(target))"
        case .resume(let target): return "resume \(name(target))"
        case .devamp(let target): return "devamp \(name(target))"
        case .start(let target): return "start \(name(target))"
        case .goto(let target): return "goto \(name(target))"
        case .load(let target, let offset): return "load \(name(target)) to \(String(format: "%.3f", Double(offset) / rate)) s"
        }
    }
}
