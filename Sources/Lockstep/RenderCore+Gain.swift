import CRealtime
import Synchronization

/// Gain targets and ramps.
extension RenderCore {
    @inline(__always)
    func updateGainTarget(_ q: UnsafeMutablePointer<QueueRenderState>) {
        let rampGeneration = q.pointee.rampGeneration.load(ordering: .acquiring)
        if rampGeneration != q.pointee.seenRampGeneration {
            q.pointee.seenRampGeneration = rampGeneration
            q.pointee.activeRampFrames = q.pointee.userRampFrames.load(ordering: .relaxed)
        }
        let panGeneration = q.pointee.panGeneration.load(ordering: .acquiring)
        if panGeneration != q.pointee.seenPanGeneration {
            q.pointee.seenPanGeneration = panGeneration
            let gains = q.pointee.userPanGains.load(ordering: .relaxed)
            if q.pointee.runState == .running { beginPanRamp(q, to: gains) } else {
                let left = Float(bitPattern: UInt32(truncatingIfNeeded: gains))
                let right = Float(bitPattern: UInt32(truncatingIfNeeded: gains >> 32))
                q.pointee.panLeft = left
                q.pointee.panRight = right
                q.pointee.panTargetLeft = left
                q.pointee.panTargetRight = right
                q.pointee.panRemaining = 0
            }
        }
        let generation = q.pointee.volumeGeneration.load(ordering: .acquiring)
        if generation != q.pointee.seenVolumeGeneration {
            q.pointee.seenVolumeGeneration = generation
            let v = Float(bitPattern: q.pointee.userVolumeBits.load(ordering: .relaxed))
            q.pointee.volume = v
            q.pointee.effectiveVolumeBits.store(v.bitPattern, ordering: .relaxed)
        }
        let target = q.pointee.volume * Float(bitPattern: q.pointee.mixerGainBits.load(ordering: .relaxed))
        if target != q.pointee.gainTarget {
            if q.pointee.runState == .running { beginRamp(q, to: target) } else {
                q.pointee.gainTarget = target
                q.pointee.gain = target
                q.pointee.rampRemaining = 0
            }
        }
    }

    /// The length of the queue's gain and pan ramps: its Volume ramp time, or the engine's 5 ms.
    @inline(__always)
    func rampLength(_ q: UnsafeMutablePointer<QueueRenderState>) -> Int {
        let frames = q.pointee.activeRampFrames
        return max(1, frames > 0 ? frames : rampFrames)
    }

    /// Starts ramping the pan gains to `packed` (``PanLaw/packed(_:)``).
    @inline(__always)
    func beginPanRamp(_ q: UnsafeMutablePointer<QueueRenderState>, to packed: UInt64) {
        let left = Float(bitPattern: UInt32(truncatingIfNeeded: packed))
        let right = Float(bitPattern: UInt32(truncatingIfNeeded: packed >> 32))
        let steps = rampLength(q)
        q.pointee.panTargetLeft = left
        q.pointee.panTargetRight = right
        q.pointee.panStepLeft = (left - q.pointee.panLeft) / Float(steps)
        q.pointee.panStepRight = (right - q.pointee.panRight) / Float(steps)
        q.pointee.panRemaining = steps
    }

    @inline(__always)
    func beginRamp(_ q: UnsafeMutablePointer<QueueRenderState>, to target: Float) {
        q.pointee.gainTarget = target
        let steps = rampLength(q)
        q.pointee.rampStep = (target - q.pointee.gain) / Float(steps)
        q.pointee.rampRemaining = steps
    }
}
