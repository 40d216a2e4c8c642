import Lockstep

extension DiscontinuityRecord {
    /// The record of the engine's `discontinuity`, as the JSON outputs write it (`detail` left out
    /// when the kind has none).
    public init(_ discontinuity: Discontinuity) {
        self.init(kind: discontinuity.kind.rawValue, sampleTime: discontinuity.sampleTime, frames: discontinuity.length,
                  queues: discontinuity.queues, detail: discontinuity.detail != 0 ? discontinuity.detail : nil)
    }
}
