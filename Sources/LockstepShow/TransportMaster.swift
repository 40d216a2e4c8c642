import Lockstep
import LockstepJACK
import LockstepSession

/// Drives JACK transport from a session (`session run --transport-master`): transport frame =
/// session sample. When the session starts, seeks or resumes (a new run of the player) it
/// locates the transport and starts it rolling; when the session pauses or stops it stops the
/// transport and locates it to the paused position. A locate asked for during the cycle a
/// snapshot shows lands (JACK 2) three cycles after it, so it asks for the session sample of
/// that cycle; while both roll it compares the transport's frame at each cycle with the
/// session's and locates again when they differ (a locate asked late in a cycle lands a cycle
/// later than meant).
///
/// Everything here runs on the show's thread, never the process thread, and never waits for the
/// transport: `jack_transport_locate`, `_start` and `_stop` only ask the server. Call ``poll()``
/// every few milliseconds.
public final class TransportMaster {
    /// The device whose transport it drives.
    public let device: JACKDevice
    private let engine: Engine
    private var run: Int?
    private var stoppedAt: Int64?
    /// The device sample time before which a locate asked for may not have landed yet.
    private var settlesAt: Int64 = .min
    /// Cycles after a snapshot's that a locate asked for then lands on (measured with JACK 2).
    static let landingCycles: Int64 = 3
    /// Locates asked for (the first of each run included).
    public private(set) var locates = 0

    /// A master of `device`'s transport.
    public init(device: JACKDevice, engine: Engine) {
        self.device = device
        self.engine = engine
    }

    /// Follows `player` one step: locates, starts or stops the transport as the session changed.
    public func poll(_ player: SessionPlayer) {
        guard let snapshot = device.transportSnapshot() else { return }
        let period = Int64(max(1, snapshot.period))
        guard let mapping = player.clockMapping else {
            let position = player.position
            if run != nil || stoppedAt != position {
                device.stopTransport()
                device.locateTransport(to: position)
                run = nil
                stoppedAt = position
            }
            return
        }
        stoppedAt = nil
        // The session sample at the start of the cycle a locate asked for now lands on.
        let next = mapping.position + snapshot.sampleTime + Self.landingCycles * period - mapping.deviceTime
        if run != mapping.run {
            guard next >= 0 else { return }      // the session starts later than that cycle
            locate(to: next, settling: snapshot.sampleTime + 2 * Self.landingCycles * period)
            device.startTransport()
            run = mapping.run
            return
        }
        guard snapshot.isRolling, !snapshot.isStarting, snapshot.sampleTime >= settlesAt else { return }
        let now = mapping.position + snapshot.sampleTime - mapping.deviceTime
        if now >= 0 && Int64(snapshot.frame) != now {
            locate(to: next, settling: snapshot.sampleTime + 2 * Self.landingCycles * period)
        }
    }

    /// Stops the transport (the show ends).
    public func stop() { device.stopTransport() }

    private func locate(to frame: Int64, settling: Int64) {
        device.locateTransport(to: frame)
        settlesAt = settling
        locates += 1
    }
}
