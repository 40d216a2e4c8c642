import Lockstep
import Synchronization

/// Steering: the engine's master outputs at a rate of their own, for a backup whose audio clock
/// is not its main's (``enableSteering()``).
extension JACKDevice {
    /// Puts libsoxr's variable-rate resampler between the engine and the master outputs, so that
    /// ``steer(ratio:)`` can play the engine's samples slightly faster or slower than the device's
    /// frames. From then on the engine's sample time counts the engine's samples (the device's
    /// frames plus what steering added or took away); ``steeringDelay`` says how late they play.
    ///
    /// Call before the engine plays: the stage starts with its own delay in silence. At a ratio
    /// of 1 the output is the engine's, delayed and filtered (not bit for bit).
    /// - Throws: ``Lockstep/AudioQueueError`` when the device has inputs or per-queue outputs (the
    ///   stage resamples the master outputs only), or libsoxr cannot make the resampler.
    public func enableSteering() throws(AudioQueueError) {
        guard realtime.pointee.steering.load(ordering: .acquiring) == 0 else { return }
        guard realtime.pointee.inputCount == 0 else {
            throw AudioQueueError(.invalidDevice, "a device with inputs cannot be steered: the stage resamples the master outputs only")
        }
        let hasDirect = control.withLock { !$0.directRecords.isEmpty }
        guard !hasDirect else {
            throw AudioQueueError(.invalidDevice, "a device with per-queue ports cannot be steered: the stage resamples the master outputs only")
        }
        guard let stage = JACKSteering(channelCount: realtime.pointee.channelCount) else {
            throw AudioQueueError(.invalidDevice, "libsoxr cannot make a variable-rate resampler for steering")
        }
        let pointer = UnsafeMutablePointer<JACKSteering>.allocate(capacity: 1)
        pointer.initialize(to: stage)
        realtime.pointee.steering.store(UInt(bitPattern: pointer), ordering: .releasing)
    }

    /// Whether ``enableSteering()`` put the steering stage in.
    public var isSteered: Bool { steeringStage != nil }

    /// Plays `ratio` engine samples per device frame from the next cycle on, slewed over a
    /// period; clamped to 1 ± 0.005. Without steering, does nothing.
    public func steer(ratio: Double) {
        guard let stage = steeringStage, ratio.isFinite else { return }
        let clamped = min(1 + JACKSteering.maximumDeviation, max(1 - JACKSteering.maximumDeviation, ratio))
        stage.pointee.requested.store(clamped.bitPattern, ordering: .relaxed)
    }

    /// The ratio of engine samples to device frames asked for (1 without steering).
    public var steeringRatio: Double {
        steeringStage.map { Double(bitPattern: $0.pointee.requested.load(ordering: .relaxed)) } ?? 1
    }

    /// Engine samples between the first one the latest cycle rendered and the one that played on
    /// its first frame, as measured through the stage (a pilot channel carries each sample's
    /// position): how much later than the device's clock says the engine's samples sound (0
    /// without steering).
    public var steeringDelay: Double {
        steeringStage.map { Double(bitPattern: $0.pointee.delay.load(ordering: .relaxed)) } ?? 0
    }

    /// Frames of silence played because the steering stage ran short (0 without steering).
    public var steeringShortFrames: Int { steeringStage?.pointee.shortFrames.load(ordering: .relaxed) ?? 0 }

    var steeringStage: UnsafeMutablePointer<JACKSteering>? {
        UnsafeMutablePointer(bitPattern: realtime.pointee.steering.load(ordering: .acquiring))
    }
}
