import Foundation
import Lockstep

/// Relocations: a seek, resume or reset that a following run places on the same sample.
extension SessionPlayer {
    /// A relocation of the whole session (a seek, a resume, a reset while playing): session
    /// sample ``to`` played on the device sample where the mapping before it would have played
    /// ``from`` — which a run in lockstep with this one (its backup) finds on its own device.
    public struct Relocation: Sendable, Hashable, Codable {
        /// The run's relocations so far: each new one counts one more.
        public var count: Int
        /// The session sample, on the mapping before the relocation, of the device sample it
        /// played on.
        public var from: Int64
        /// The session sample it played from.
        public var to: Int64
        /// Whether it was a reset (the run's changes undone first).
        public var isReset: Bool

        /// Creates a relocation.
        public init(count: Int, from: Int64, to: Int64, isReset: Bool) {
            self.count = count
            self.from = from
            self.to = to
            self.isReset = isReset
        }

        /// This relocation with its samples moved from `rate` to `other`.
        public func moved(from rate: Double, to other: Double) -> Relocation {
            guard rate != other else { return self }
            func move(_ sample: Int64) -> Int64 { Int64((Double(sample) * other / rate).rounded()) }
            return Relocation(count: count, from: move(from), to: move(to), isReset: isReset)
        }
    }

    /// Samples a seek, a resume or a reset starts later than it could (0: as soon as every layer
    /// is computed), so that a run following this one hears of it in time to relocate on the
    /// same sample (``Relocation``): the time its layers need to compute mid-file.
    public var relocationLead: Int64 {
        get { state.withLock { $0.relocationLead } }
        set { state.withLock { $0.relocationLead = max(0, newValue) } }
    }

    /// Records a relocation to session sample `position` on device sample `deviceTime` (before
    /// the start: a following run hears of it while this one computes its layers).
    func announceRelocation(to position: Int64, at deviceTime: Int64, isReset: Bool) {
        state.withLock { state in
            // (Never started: there is no mapping a following run shares.)
            guard !state.segments.isEmpty else { return }
            let from = state.originPosition + deviceTime - state.originDevice
            state.relocation = Relocation(count: (state.relocation?.count ?? 0) + 1, from: from, to: position, isReset: isReset)
        }
        noteChange()
    }

    /// The device sample a relocation starts on: ``relocationLead`` after the earliest start
    /// (nil while it is 0: as soon as the layers are computed).
    func relocationTime() -> Int64? {
        let lead = relocationLead
        guard lead > 0 else { return nil }
        return engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime) + lead
    }
}

extension SessionPlayer.RunState {
    /// This state with `relocation` and `pause`.
    func with(relocation: SessionPlayer.Relocation?, pause: SessionPlayer.Pause?) -> SessionPlayer.RunState {
        var state = self
        state.relocation = relocation
        state.pause = pause
        return state
    }
}
