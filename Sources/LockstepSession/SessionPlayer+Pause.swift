import Foundation
import Lockstep

/// Pausing the whole session on a stated sample (a fade computed into the layers), announced
/// so that a run following this one pauses on the same sample.
extension SessionPlayer {
    /// A pause of the whole session, announced before it begins: every layer fades out from
    /// session sample ``position`` — which a run in lockstep with this one (its backup) pauses on
    /// too.
    public struct Pause: Sendable, Hashable, Codable {
        /// The run's pauses so far: each new one counts one more.
        public var count: Int
        /// The session sample the fade begins on, and the paused position.
        public var position: Int64

        /// Creates a pause.
        public init(count: Int, position: Int64) {
            self.count = count
            self.position = position
        }

        /// This pause with its sample moved from `rate` to `other`.
        public func moved(from rate: Double, to other: Double) -> Pause {
            guard rate != other else { return self }
            return Pause(count: count, position: Int64((Double(position) * other / rate).rounded()))
        }
    }

    /// Seconds a pause fades out over.
    public static let pauseFadeSeconds = 0.005

    /// Pauses: every layer fades out over ``pauseFadeSeconds`` from the first session sample it
    /// can still change (or from `position`, when that is later: a run following its main pauses
    /// on the main's sample), then stops; the paused position is that sample. The pause is
    /// announced (``RunState/pause``) before its fade begins. ``beginPause(at:)`` and
    /// ``finishPause()``, one after the other.
    /// - Returns: the session sample the pause began on (nil: not playing).
    @discardableResult
    public func pause(at position: Int64? = nil) -> Int64? {
        let at = beginPause(at: position)
        finishPause()
        return at
    }

    /// Begins a pause (``pause(at:)``): announces it and has every layer fade out from its
    /// sample, and returns that sample (nil: not playing). The layers stop at ``finishPause()``.
    @discardableResult
    public func beginPause(at position: Int64? = nil) -> Int64? {
        let wasPlaying = state.withLock { $0.phase == .playing && $0.timeline.pauseFade == nil }
        guard wasPlaying else { return nil }
        return control(at: position) { state -> Int64 in
            let sample = state.controlSample
            state.timeline.pauseFade = sample
            for layer in state.timeline.layers.indices { state.touch(layer: layer, from: sample) }
            state.pause = Pause(count: (state.pause?.count ?? 0) + 1, position: sample)
            return sample
        }
    }

    /// Ends the pause ``beginPause(at:)`` began: waits until its fade is rendered, then stops
    /// every layer; the session is paused at the pause's sample. Without one begun, does nothing.
    public func finishPause() {
        guard let at = state.withLock({ $0.phase == .playing ? $0.timeline.pauseFade : nil }) else { return }
        let fade = Int64((Self.pauseFadeSeconds * rate).rounded())
        engine.waitUntilRendered(through: deviceTime(forPosition: at + fade) + Int64(max(1, engine.device.periodFrames)), timeout: 1)
        endSegment()
        try? halt()
        state.withLock { state in
            state.timeline.pauseFade = nil
            state.phase = .paused
            state.pausedPosition = at
        }
        noteChange()
    }
}
