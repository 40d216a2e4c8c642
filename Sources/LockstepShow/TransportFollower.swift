import Lockstep
import LockstepJACK

/// Follows JACK transport (``LiveLayers`` and ``LiveSession`` with `followsTransport`): when the
/// transport starts rolling (or relocates while rolling) it calls `roll` with the transport frame
/// that will play at the next exactly-honoured device sample time; when it stops, `stop` with the
/// frame it stopped at; while stopped, `whileStopped` with the current frame (a relocation).
///
/// Call ``poll()`` every few milliseconds from the main loop.
public final class TransportFollower {
    /// The device whose transport is followed.
    public let device: JACKDevice
    /// The engine whose start times a roll is aligned to.
    public let engine: Engine
    let roll: (_ frameAtStart: Int64, _ startSampleTime: Int64) throws -> Void
    let stop: (_ frame: Int64) -> Void
    let whileStopped: ((_ frame: Int64) -> Void)?
    /// The device sample time of the first roll, once rolled.
    public private(set) var firstStart: Int64?
    /// Whether the transport rolls (as last polled).
    public private(set) var isRolling = false
    /// The transport frame that plays at device time `anchorSampleTime` while rolling.
    private var anchorFrame: Int64 = 0
    private var anchorSampleTime: Int64 = 0

    /// A follower calling `roll`, `stop` and `whileStopped` as the transport changes.
    public init(device: JACKDevice, engine: Engine, roll: @escaping (Int64, Int64) throws -> Void,
         stop: @escaping (Int64) -> Void, whileStopped: ((Int64) -> Void)? = nil) {
        self.device = device
        self.engine = engine
        self.roll = roll
        self.stop = stop
        self.whileStopped = whileStopped
    }

    /// Reads the transport and acts on a change.
    public func poll() throws {
        guard let snapshot = device.transportSnapshot() else { return }
        // Starting: the frame stands still until the transport rolls (after a cycle or more,
        // as slow-sync clients allow), so where it will be at a later sample is not known yet.
        if snapshot.isStarting { return }
        if snapshot.isRolling {
            let expected = anchorFrame + (snapshot.sampleTime - anchorSampleTime)
            if !isRolling || snapshot.frame != expected {
                let start = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime)
                let frame = snapshot.frame + (start - snapshot.sampleTime)
                try roll(frame, start)
                anchorFrame = frame
                anchorSampleTime = start
                isRolling = true
                if firstStart == nil { firstStart = start }
            }
        } else if isRolling {
            stop(snapshot.frame)
            isRolling = false
        } else {
            whileStopped?(snapshot.frame)
        }
    }
}
