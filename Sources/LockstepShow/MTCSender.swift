import Foundation
import Lockstep
import LockstepJACK
import LockstepSession
import LockstepTimecode
import Synchronization

/// MIDI time code out, following a live session: on its own thread, it schedules on a JACK MIDI
/// output (``JACKMIDIOutput``) a full-frame message on the device sample each start, seek,
/// resume or transport relocation plays its first sample on, then every quarter-frame on its
/// exact device sample (``MTCMessages``), a quarter of a second ahead; a pause or stop drops
/// what is scheduled. A change of the player wakes it at once (``SessionPlayer/changes``). The
/// process thread writes each in its cycle at its frame offset.
public final class MTCSender: @unchecked Sendable {
    /// The port it writes.
    public let output: JACKMIDIOutput
    /// The rate and first label it sends (at the player's rate).
    public let setting: SessionPlayer.TimecodeSetting

    private let engine: Engine
    private let player: Mutex<SessionPlayer>
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    /// The short name of the MIDI output it writes (`<client>:mtc_out`).
    public static let portName = "mtc_out"
    /// Keys its events on the output (each quarter-frame an event of its own).
    private let nextKey = Atomic<Int64>(0)

    /// The run's overrides.
    public let overrides: ShowOverrides

    /// How far ahead of the device it schedules, in seconds.
    static let lookahead = 0.25

    /// Creates the sender for `player`'s session (not started: ``start()``).
    /// `overrides`: with `timecodeOutputEnabled` off it sends nothing (a full frame when it is on again).
    public init(output: JACKMIDIOutput, engine: Engine, player: SessionPlayer, setting: SessionPlayer.TimecodeSetting,
                overrides: ShowOverrides = ShowOverrides()) {
        self.overrides = overrides
        self.output = output
        self.engine = engine
        self.player = Mutex(player)
        self.setting = setting
    }

    /// Follows `player` from now on (a player made again at another rate).
    public func replacePlayer(_ player: SessionPlayer) { self.player.withLock { $0 = player } }

    /// Starts the thread.
    /// - Throws: ``TimecodeError`` for a rate the player's sample rate cannot carry.
    public func start() throws {
        _ = try TimecodeClock(rate: setting.rate, sampleRate: Int(player.withLock { $0.rate }.rounded()), start: setting.start)
        let thread = Thread { [self] in run() }
        thread.name = "lockstep.mtc"
        thread.qualityOfService = .userInteractive
        thread.start()
        overrides.observe { [self] _, _ in player.withLock { $0 }.changes.signal() }
    }

    /// Stops the thread and drops what is scheduled.
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        done.wait()
        flush()
    }

    private func run() {
        var followed: (player: ObjectIdentifier, run: Int)?
        var messages: MTCMessages?
        var next: Int64 = 0
        while !stopping.load(ordering: .acquiring) {
            let player = self.player.withLock { $0 }
            let changes = player.changeCount, overridden = overrides.changeCount
            guard overrides.isEnabled(.timecodeOutputEnabled) else {
                // Switched off: nothing scheduled stays; on again, it starts with a full frame.
                if followed != nil { flush() }
                followed = nil
                player.changes.wait(until: Date().addingTimeInterval(0.005)) {
                    stopping.load(ordering: .acquiring) || overrides.changeCount != overridden
                }
                continue
            }
            let mapping = player.clockMapping
            let identity = mapping.map { (ObjectIdentifier(player), $0.run) }
            if identity?.0 != followed?.player || identity?.1 != followed?.run {
                // A locate, a stop or another player: what was scheduled no longer holds.
                flush()
                followed = identity
                if let mapping, let clock = try? TimecodeClock(rate: setting.rate, sampleRate: Int(player.rate.rounded()), start: setting.start) {
                    let fresh = MTCMessages(clock: clock)
                    messages = fresh
                    schedule(mapping.deviceTime, bytes: fresh.fullFrame(atSample: mapping.position))
                    next = fresh.firstQuarter(atOrAfter: mapping.position)
                }
            }
            if let mapping, let messages {
                let horizon = engine.currentTime().sampleTime + Int64(Self.lookahead * player.rate)
                while true {
                    let at = mapping.deviceTime + messages.sample(ofQuarter: next) - mapping.position
                    if at > horizon || !schedule(at, bytes: messages.quarterFrame(next)) { break }
                    next += 1
                }
            }
            // Woken at once by a change (a start or seek lands at least a period ahead: its full
            // frame reaches the process thread before its cycle), else every 5 ms to fill ahead.
            player.changes.wait(until: Date().addingTimeInterval(0.005)) {
                stopping.load(ordering: .acquiring) || player.changeCount != changes || overrides.changeCount != overridden
            }
        }
        done.signal()
    }

    /// Schedules one message on device sample `sampleTime`; false when the output's ring is full.
    @discardableResult
    private func schedule(_ sampleTime: Int64, bytes: [UInt8]) -> Bool {
        output.schedule([.event(key: nextKey.add(1, ordering: .relaxed).newValue, sampleTime: sampleTime, bytes: bytes)])
    }

    /// Drops everything scheduled and not yet sent (a locate, a stop).
    private func flush() { output.schedule([.cancel(from: .min)]) }
}
