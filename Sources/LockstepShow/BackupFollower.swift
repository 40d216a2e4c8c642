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

    private struct Shared {
        var offset: Double?
        /// The main's relocations followed (or already behind the run at the welcome).
        var relocations = 0
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
    private let finished = DispatchSemaphore(value: 0)

    /// Follows the main on `link` from its run `run` and its `edits`th edit (its welcome's), with the player `player`
    /// gives (the current one), whose moments `moment` takes; `lead` seconds is the room a
    /// relocation's start is given. With `hasher`, the backup sends the hashes of its output to
    /// the main and compares the main's with its own, telling `divergence` what it finds.
    public init(link: ShowLinkBackup, run: SessionPlayer.RunState, edits: Int = 0, player: @escaping @Sendable () -> SessionPlayer,
                moment: @escaping @Sendable (SessionPlayer) -> ShowJournal.Moment, lead: Double = 0.25,
                relocateThreshold: Double = 0.005, hasher: OutputHasher? = nil, note: @escaping Note,
                divergence: @escaping DivergenceNote = { _ in }, onLost: @escaping @Sendable (String) -> Void) {
        self.link = link
        self.hasher = hasher
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
        shared.withLock { $0.relocations = welcome.relocation?.count ?? 0 }
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
        let paused = run.isPaused || !main.isPlaying
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

    /// Measures the offset to the main's moment; relocates past the threshold.
    private func align(to main: ShowJournal.Moment) {
        let player = player()
        guard main.isPlaying, player.isRunning else { return }
        let mine = moment(player)
        let rate = player.rate
        let theirs = Double(main.position) * rate / main.rate + (mine.time - main.time) * rate
        let offset = (Double(mine.position) - theirs) / rate
        let first = shared.withLock { shared in
            defer { shared.offset = offset }
            return shared.offset == nil
        }
        if first { note(String(format: "backup: %.2f ms %@ the main by the system clock", abs(offset) * 1000, offset > 0 ? "ahead of" : "behind"), false) }
        guard abs(offset) > relocateThreshold else { return }
        relocate(to: main, why: String(format: "%.1f ms %@ the main", abs(offset) * 1000, offset > 0 ? "ahead of" : "behind"))
    }

    /// Plays on from where the main will be `lead` seconds from now (its position by the wall clock).
    private func relocate(to main: ShowJournal.Moment, why: String) {
        let player = player()
        let engine = player.engine
        let rate = player.rate
        let now = engine.currentTime().sampleTime
        let at = engine.nearestStartTime(atOrAfter: now + Int64((lead * rate).rounded()))
        let wall = Date().timeIntervalSince1970 + Double(at - now) / rate
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
