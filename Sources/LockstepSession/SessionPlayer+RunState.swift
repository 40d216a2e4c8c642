import Foundation
import Lockstep

/// What a run added to its session: the record a rate change carries to the new rate, and the
/// show journal keeps so that a crashed run resumes where it was (`session run --resume`).
extension SessionPlayer {
    /// What a run added to the timeline its (edited) session file makes: the manual cues fired and
    /// where, the layer gain changes, each cue's pauses, stops and level changes, the playhead,
    /// the cues loaded to a time and the double-GO window's state — everything a player made
    /// afresh from the same session needs to play on exactly as this one would
    /// (``SessionPlayer/restore(_:)``).
    public struct RunState: Sendable, Hashable, Codable {
        /// A manual cue fired: on session sample `sample`, loaded `offset` samples in.
        public struct Go: Sendable, Hashable, Codable {
            /// The cue.
            public var cue: String
            /// The session sample of the go.
            public var sample: Int64
            /// The time it was loaded to (0: none).
            public var offset: Int64

            /// Creates a go.
            public init(cue: String, sample: Int64, offset: Int64) {
                self.cue = cue
                self.sample = sample
                self.offset = offset
            }
        }

        /// A change of a layer's gain.
        public struct GainChange: Sendable, Hashable, Codable {
            /// The layer's index.
            public var layer: Int
            /// The change.
            public var point: SessionTimeline.AutomationPoint

            /// Creates a change.
            public init(layer: Int, point: SessionTimeline.AutomationPoint) {
                self.layer = layer
                self.point = point
            }
        }

        /// A cue's pauses, stops and level changes, as they stand.
        public struct CueChanges: Sendable, Hashable, Codable {
            /// The cue.
            public var cue: String
            /// Its pauses and stops (``SessionTimeline/Cue/interruptions``).
            public var interruptions: [SessionTimeline.Interruption]
            /// Its level changes (``SessionTimeline/Cue/levelChanges``).
            public var levelChanges: [SessionTimeline.AutomationPoint]

            /// Creates a cue's changes.
            public init(cue: String, interruptions: [SessionTimeline.Interruption], levelChanges: [SessionTimeline.AutomationPoint]) {
                self.cue = cue
                self.interruptions = interruptions
                self.levelChanges = levelChanges
            }
        }

        /// The rate every sample count here is at.
        public var rate: Double
        /// The manual cues fired, in order.
        public var goes: [Go] = []
        /// The layer gain changes, in order.
        public var gains: [GainChange] = []
        /// The cues with pauses, stops or level changes.
        public var cues: [CueChanges] = []
        /// The cue at the playhead (nil: past the last manual cue).
        public var playhead: String?
        /// Manual cues loaded to a time: name → samples.
        public var loaded: [String: Int64] = [:]
        /// The session sample of the last plain go (the double-GO window counts from there).
        public var lastPlainGo: Int64?
        /// Plain gos the double-GO window ignored.
        public var ignoredGos = 0
        /// Whether the session was paused (or halted), rather than playing.
        public var isPaused: Bool
        /// The paused position (while paused).
        public var pausedPosition: Int64
        /// The run's latest relocation (a seek, a resume or a reset while playing), for a run
        /// that follows this one (nil: none yet).
        public var relocation: Relocation?
        /// The run's latest pause, announced before its fade began, for a run that follows this
        /// one (nil: none yet).
        public var pause: Pause?

        /// Creates a run state.
        public init(rate: Double, goes: [Go] = [], gains: [GainChange] = [], cues: [CueChanges] = [], playhead: String? = nil,
                    loaded: [String: Int64] = [:], lastPlainGo: Int64? = nil, ignoredGos: Int = 0, isPaused: Bool, pausedPosition: Int64) {
            self.rate = rate
            self.goes = goes
            self.gains = gains
            self.cues = cues
            self.playhead = playhead
            self.loaded = loaded
            self.lastPlainGo = lastPlainGo
            self.ignoredGos = ignoredGos
            self.isPaused = isPaused
            self.pausedPosition = pausedPosition
        }

        /// This state with every sample count moved to `rate` (rounded to the nearest sample).
        public func moved(to rate: Double) -> RunState {
            guard rate != self.rate else { return self }
            let factor = rate / self.rate
            func move(_ sample: Int64) -> Int64 { Int64((Double(sample) * factor).rounded()) }
            func move(_ point: SessionTimeline.AutomationPoint) -> SessionTimeline.AutomationPoint {
                .init(start: move(point.start), ramp: move(point.ramp), gainDB: point.gainDB, curve: point.curve)
            }
            var moved = self
            moved.rate = rate
            moved.goes = goes.map { Go(cue: $0.cue, sample: move($0.sample), offset: move($0.offset)) }
            moved.gains = gains.map { GainChange(layer: $0.layer, point: move($0.point)) }
            moved.cues = cues.map { changes in
                CueChanges(cue: changes.cue,
                           interruptions: changes.interruptions.map {
                               .init(fadeStart: move($0.fadeStart), fade: move($0.fade), resume: $0.resume.map(move), isStop: $0.isStop)
                           },
                           levelChanges: changes.levelChanges.map(move))
            }
            moved.loaded = loaded.mapValues(move)
            moved.lastPlainGo = lastPlainGo.map(move)
            moved.pausedPosition = move(pausedPosition)
            moved.relocation = relocation?.moved(from: self.rate, to: rate)
            moved.pause = pause?.moved(from: self.rate, to: rate)
            return moved
        }
    }

    /// What this run added so far (see ``RunState``).
    public func runState() -> RunState {
        state.withLock { state in
            let cues = state.timeline.cues
            return RunState(rate: rate,
                            goes: state.fired.map { RunState.Go(cue: $0.name, sample: $0.sample, offset: $0.offset) },
                            gains: state.gainChanges.map { RunState.GainChange(layer: $0.layer, point: $0.point) },
                            cues: cues.filter { !$0.interruptions.isEmpty || !$0.levelChanges.isEmpty }.map {
                                RunState.CueChanges(cue: $0.name, interruptions: $0.interruptions, levelChanges: $0.levelChanges)
                            },
                            playhead: state.playhead.map { cues[$0].name },
                            loaded: Dictionary(uniqueKeysWithValues: state.loaded.map { (cues[$0.key].name, $0.value) }),
                            lastPlainGo: state.lastPlainGo, ignoredGos: state.ignoredGos,
                            isPaused: !state.phase.isRunning, pausedPosition: state.pausedPosition)
                .with(relocation: state.relocation, pause: state.pause)
        }
    }

    /// Plays `run` (at any rate: moved to this player's) into this player, made afresh from the
    /// same session and not started: each go again on its sample, then each cue's pauses, stops
    /// and level changes and each gain change as they stood, the playhead, the loaded cues; a
    /// paused run stays paused at its position. Start it from the position to play on from.
    ///
    /// - Returns: what no longer fits the session (a cue or layer gone): one line each.
    @discardableResult
    public func restore(_ run: RunState) -> [String] {
        let run = run.moved(to: rate)
        var problems: [String] = []
        for go in run.goes {
            do throws(PlayerError) {
                if go.offset > 0 { try load(go.cue, at: go.offset) }
                try self.go(go.cue, atPosition: go.sample)
            } catch {
                problems.append("go \(go.cue) at sample \(go.sample): \(error.message)")
            }
        }
        state.withLock { state in
            for gain in run.gains {
                guard gain.layer < state.timeline.layers.count else {
                    problems.append("gain of layer \(gain.layer): the session has \(state.timeline.layers.count) layers")
                    continue
                }
                state.timeline.addAutomation(layer: gain.layer, gain.point)
                state.gainChanges.append((gain.layer, gain.point))
            }
            for changes in run.cues {
                guard let index = state.timeline.cues.firstIndex(where: { $0.name == changes.cue }) else {
                    problems.append("cue \(changes.cue): not in the session")
                    continue
                }
                state.timeline.cues[index].interruptions = changes.interruptions
                state.timeline.cues[index].levelChanges = changes.levelChanges
            }
            let cues = state.timeline.cues
            func index(_ name: String) -> Int? { cues.firstIndex { $0.name == name } }
            state.playhead = run.playhead.flatMap(index)
            state.loaded = Dictionary(uniqueKeysWithValues: run.loaded.compactMap { entry in index(entry.key).map { ($0, entry.value) } })
            state.lastPlainGo = run.lastPlainGo
            state.ignoredGos = run.ignoredGos
            state.pausedPosition = run.pausedPosition
            state.pause = run.pause
        }
        noteChange()
        return problems
    }
}
