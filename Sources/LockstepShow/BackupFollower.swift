import Foundation
import Lockstep
import LockstepSession
import Synchronization

/// A backup's run following its main over a show link (`session run --backup-of`): each state
/// the main sends is applied to the backup's player on the main's session samples
/// (``SessionPlayer/follow(_:)``); a pause, a resume or a jump of the main's position is followed
/// by the wall clock; and every clock message measures how far the backup's session time is from
/// the main's (``offset``) — past ``relocateThreshold`` the backup plays on from where the main
/// is. When the link is lost the backup plays on by itself (``onLost``).
///
/// On a thread of its own; never on the realtime thread.
public final class BackupFollower: Sendable {
    /// A note for the operator: its text, and whether it is a warning.
    public typealias Note = @Sendable (String, Bool) -> Void
    /// Told each divergence of the backup's output from the main's and each agreement after one
    /// (the kinds ``ShowLinkMain/Event/Kind/diverged`` and ``ShowLinkMain/Event/Kind/agrees``).
    public typealias DivergenceNote = @Sendable (ShowLinkMain.Event) -> Void

    /// Seconds of the backup's session time ahead of (positive) or behind the main's, as last
    /// measured (nil: not measured yet, or not both playing).
    public var offset: Double? { shared.withLock { $0.offset } }
    /// Whether the link is still up.
    public var isFollowing: Bool { shared.withLock { $0.lost == nil } }
    /// Seconds of offset past which the backup relocates to the main's position.
    public let relocateThreshold: Double
    /// Parts per million the backup's session plays faster than its device's frames (nil: not
    /// steered).
    public var steeringPPM: Double? {
        steering == nil ? nil : shared.withLock { ($0.correction * -1e6 * 10).rounded() / 10 }
    }
    /// Of ``steeringPPM``, the part that takes up the difference of the two clocks (the steering
    /// loop's integral; the rest corrects the offset of the moment): steadier, it says how much
    /// faster or slower the backup's device runs than the main's (nil: not steered).
    public var driftPPM: Double? {
        steering == nil ? nil : shared.withLock { ($0.integral * -1e6 * 10).rounded() / 10 }
    }

    /// How a backup on a clock of its own steers: its playback rate (engine samples per device
    /// frame, ``LockstepJACK``'s steering stage), and how late its samples sound after they are
    /// computed.
    public struct Steering: Sendable {
        /// Sets the ratio of session samples to device frames.
        public var steer: @Sendable (Double) -> Void
        /// Seconds between the device's clock for a sample and its sound (the stage's delay).
        public var delay: @Sendable () -> Double

        /// Creates a steering.
        public init(steer: @escaping @Sendable (Double) -> Void, delay: @escaping @Sendable () -> Double) {
            self.steer = steer
            self.delay = delay
        }

        /// The controller's time constant (s): a critically damped loop, so an offset decays
        /// with no overshoot and a constant drift leaves none.
        static let timeConstant = 1.5
        /// The farthest the rate moves from the device's.
        static let maximumCorrection = 0.005
    }

    private struct Shared {
        var offset: Double?
        /// The steering loop: the rate correction (the ratio is 1 − correction), its integral
        /// part, and when the offset was last measured.
        var correction = 0.0
        var integral = 0.0
        var measured: Date?
        /// Measurements in a row past ``relocateThreshold``.
        var beyond = 0
        /// The main's relocations and pauses followed (or already behind the run at the welcome).
        var relocations = 0
        var pauses = 0
        var lost: String?
        var stopping = false
    }
    private let shared = Mutex(Shared())
    private let link: ShowLinkBackup
    private let player: @Sendable () -> SessionPlayer
    private let moment: @Sendable (SessionPlayer) -> ShowJournal.Moment
    private let note: Note
    private let onLost: @Sendable (String) -> Void
    private let lead: Double
    private let comparison: OutputComparison?
    private let hasher: OutputHasher?
    private let divergence: DivergenceNote
    private let steering: Steering?
    private let wallClock: @Sendable (Int64) -> Double?
    private let finished = DispatchSemaphore(value: 0)

    /// Follows the main on `link` from its run `run` and its `edits`th edit (its welcome's), with the player `player`
    /// gives (the current one), whose moments `moment` takes; `lead` seconds is the room a
    /// relocation's start is given; `wallClock` gives a device sample's wall-clock time (nil:
    /// the engine's estimate of now is used); `steering` steers a backup on a free clock. With `hasher`, the backup sends the hashes of its output to
    /// the main and compares the main's with its own, telling `divergence` what it finds.
    public init(link: ShowLinkBackup, run: SessionPlayer.RunState, edits: Int = 0, player: @escaping @Sendable () -> SessionPlayer,
                moment: @escaping @Sendable (SessionPlayer) -> ShowJournal.Moment, lead: Double = 0.25,
                relocateThreshold: Double = 0.005, hasher: OutputHasher? = nil, steering: Steering? = nil,
                wallClock: @escaping @Sendable (Int64) -> Double? = { _ in nil }, note: @escaping Note,
                divergence: @escaping DivergenceNote = { _ in }, onLost: @escaping @Sendable (String) -> Void) {
        self.link = link
        self.hasher = hasher
        self.steering = steering
        self.wallClock = wallClock
        self.comparison = hasher.map(OutputComparison.init)
        self.divergence = divergence
        self.player = player
        self.moment = moment
        self.lead = lead
        self.relocateThreshold = relocateThreshold
        self.note = note
        self.onLost = onLost
        let thread = Thread { [self] in follow(from: run, edits: edits) }
        thread.name = "lockstep-backup"
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    /// The comparison of the backup's output with the main's (nil without a hasher).
    public var tally: OutputComparison.Tally? { comparison?.tally }

    /// Stops following (the run ends) and closes the link.
    public func stop() {
        let running = shared.withLock { shared in
            defer { shared.stopping = true }
            return !shared.stopping
        }
        guard running else { return }
        link.close()
        finished.wait()
    }

    private func follow(from welcome: SessionPlayer.RunState, edits welcomeEdits: Int) {
        defer { finished.signal() }
        // The main's run as it stands: the welcome's, with each change applied.
        var run = welcome
        shared.withLock {
            $0.relocations = welcome.relocation?.count ?? 0
            $0.pauses = welcome.pause?.count ?? 0
        }
        // The main's edits the welcome's text holds.
        var edits = welcomeEdits
        var lastExchange = Date.distantPast
        while !shared.withLock({ $0.stopping }) {
            if Date().timeIntervalSince(lastExchange) >= ShowJournal.clockInterval {
                exchangeHashes()
                lastExchange = Date()
            }
            guard let event = link.next(timeout: ShowJournal.clockInterval) else { continue }
            switch event {
            case .message(.state(let change, let main)):
                run = run.applying(change)
                apply(run, main: main)
            case .message(.clock(let main)):
                align(to: main)
            case .message(.edits(let records)):
                let player = player()
                for record in records where record.count > edits {
                    edits = record.count
                    do {
                        let result = try player.follow(edit: record)
                        note("backup: the main's edit \(record.count) made on session sample \(result.sample)", false)
                    } catch {
                        note("backup: cannot make the main's edit \(record.count): \(error.message)", true)
                    }
                }
            case .message(.hashes(let blocks)):
                comparison?.receive(blocks)
            case .message(.samples(let start, let samples)):
                guard let found = comparison?.exact(start: start, samples: samples) else { continue }
                divergence(ShowLinkMain.Event(found, peer: link.main, subject: "backup:"))
            case .message(.end):
                lose("the main ended its run")
                return
            case .message:
                continue
            case .lost(let why):
                lose(shared.withLock { $0.stopping } ? nil : "the link to the main at \(link.main) is lost (\(why))")
                return
            }
        }
    }

    /// Sends the blocks hashed since the last call to the main, compares the main's with the
    /// backup's, and sends the backup's samples of a block where a divergence starts.
    private func exchangeHashes() {
        // (The main shows its backup's offset and steering too.)
        if let offset = shared.withLock({ $0.offset }) {
            link.send(.position(offsetMilliseconds: (offset * 1_000_000).rounded() / 1000, steeringPPM: steeringPPM, driftPPM: driftPPM))
        }
        guard let hasher, let comparison else { return }
        let fresh = hasher.takeFresh()
        if !fresh.isEmpty { link.send(.hashes(fresh)) }
        for finding in comparison.compare(sending: link.send) {
            divergence(ShowLinkMain.Event(finding, peer: link.main, subject: "backup:"))
        }
    }

    private func lose(_ why: String?) {
        guard let why else { return }
        shared.withLock { $0.lost = why; $0.offset = nil }
        onLost(why)
    }

    /// Applies the main's run: its changes on their samples; its relocation (a seek, a resume,
    /// a reset) on the sample the main's started on; its pause.
    private func apply(_ run: SessionPlayer.RunState, main: ShowJournal.Moment) {
        let player = player()
        let mine = player.runState().moved(to: run.rate)
        let relocation = run.relocation.flatMap { $0.count > shared.withLock({ $0.relocations }) ? $0.moved(from: run.rate, to: player.rate) : nil }
        if let relocation {
            shared.withLock { $0.relocations = relocation.count }
        }
        // (A run that never played has no mapping in common with the main's: the clock then.)
        if let relocation, !player.segments.isEmpty {
            // Where this run's mapping (in lockstep with the main's) plays the main's `from`.
            let at = player.deviceTime(forPosition: relocation.from)
            do {
                if relocation.isReset {
                    _ = try player.reset(at: at)
                    if !player.isRunning { try player.start(from: relocation.to, at: at) }
                } else if player.isRunning {
                    try player.seek(to: relocation.to, at: at)
                } else {
                    try player.start(from: relocation.to, at: at)
                }
                note("backup: \(relocation.isReset ? "reset" : "relocated") with the main: session sample \(relocation.to) on device sample \(at), where the main played it", false)
            } catch {
                note("backup: cannot follow the main's \(relocation.isReset ? "reset" : "relocation") to session sample \(relocation.to): \(error.message)", true)
            }
        } else if !run.goes.starts(with: mine.goes) || run.gains.count < mine.gains.count {
            // The main reset (or went another way) with no relocation to follow: start over
            // from the session as written.
            do { _ = try player.reset() } catch { note("backup: cannot follow the main's reset: \(error.message)", true) }
        }
        // (A reset's state is the main's after it: this run is reset too.)
        for problem in player.follow(run) { note("backup: \(problem)", true) }
        // A pause the main announced: its fade on the same session sample (the main's state
        // says it paused only once its fade is over).
        var announced = false
        if let pause = run.pause?.moved(from: run.rate, to: player.rate), pause.count > shared.withLock({ $0.pauses }) {
            shared.withLock { $0.pauses = pause.count }
            announced = true
            if player.isRunning, let at = player.pause(at: pause.position) {
                note("backup: paused with the main on session sample \(at)" + (at == pause.position ? "" : " (the main's was \(pause.position): too late for it)"), at != pause.position)
            }
        }
        // (A relocation is announced before the main plays from it: it plays, whatever its state
        // says yet.)
        let paused = (relocation == nil && (run.isPaused || !main.isPlaying)) || announced
        if paused && player.isRunning {
            player.pause()
            _ = try? player.seek(to: Int64((Double(run.pausedPosition) * player.rate / run.rate).rounded()))
            note("backup: paused with the main", false)
        } else if !paused && !player.isRunning {
            relocate(to: main, why: "resumed with the main")
        } else if relocation == nil {
            align(to: main)
        }
    }

    /// Measures the offset to the main's moment; steers by it (with ``Steering``); relocates
    /// past the threshold.
    private func align(to main: ShowJournal.Moment) {
        let player = player()
        guard main.isPlaying, player.isRunning else { return }
        let mine = moment(player)
        let rate = player.rate
        let theirs = Double(main.position) * rate / main.rate + (mine.time - main.time) * rate
        let offset = (Double(mine.position) - theirs) / rate
        let (first, ratio) = shared.withLock { shared in
            defer { shared.offset = offset }
            // (Past the threshold the backup jumps instead: the loop does not take the jump in.)
            let steers = steering != nil && abs(offset) <= relocateThreshold
            return (shared.offset == nil, steers ? Self.steer(&shared, offset: offset) : nil)
        }
        if first { note(String(format: "backup: %.2f ms %@ the main by the system clock%@", abs(offset) * 1000, offset > 0 ? "ahead of" : "behind",
                               steering == nil ? "" : "; steering its playback rate to the main's (a free clock)"), false) }
        if let steering, let ratio { steering.steer(ratio) }
        // (One measurement past the threshold may be a late clock message; the next confirms it.)
        let confirmed = shared.withLock { shared in
            defer { shared.beyond = abs(offset) > relocateThreshold ? shared.beyond + 1 : 0 }
            return shared.beyond > 0
        }
        guard abs(offset) > relocateThreshold, confirmed else { return }
        relocate(to: main, why: String(format: "%.1f ms %@ the main", abs(offset) * 1000, offset > 0 ? "ahead of" : "behind"))
    }

    /// One step of the steering loop (a PI controller, critically damped): the session's rate
    /// moves against the offset and its integral, so a constant drift of the clocks is taken up
    /// by the integral with no offset left. Returns the ratio of session samples to device frames.
    private static func steer(_ shared: inout Shared, offset: Double) -> Double {
        let now = Date()
        let elapsed = shared.measured.map { min(0.5, max(0, now.timeIntervalSince($0))) } ?? 0
        shared.measured = now
        let omega = 1 / Steering.timeConstant
        let limit = Steering.maximumCorrection
        shared.integral = min(limit, max(-limit, shared.integral + omega * omega * offset * elapsed))
        shared.correction = min(limit, max(-limit, 2 * omega * offset + shared.integral))
        return 1 - shared.correction
    }

    /// Plays on from where the main will be `lead` seconds from now (its position by the wall clock).
    private func relocate(to main: ShowJournal.Moment, why: String) {
        let player = player()
        let engine = player.engine
        let rate = player.rate
        let now = engine.currentTime().sampleTime
        let at = engine.nearestStartTime(atOrAfter: now + Int64((lead * rate).rounded()))
        let wall = (wallClock(at) ?? Date().timeIntervalSince1970 + Double(at - now) / rate) + (steering?.delay() ?? 0)
        let position = max(0, Int64((Double(main.position) * rate / main.rate + (wall - main.time) * rate).rounded()))
        do {
            if player.isRunning {
                try player.seek(to: position, at: at)
            } else {
                try player.start(from: position, at: at)
            }
            note("backup: \(why): playing on from session sample \(position) on device sample \(at), where the main is by the system clock", false)
        } catch {
            note("backup: \(why), but cannot play on from session sample \(position): \(error.message)", true)
        }
    }
}
