import Foundation
import LockstepControl
import LockstepJACK
import LockstepSchema
import LockstepSession
import LockstepShow
import Synchronization

/// `session run --main` and `--backup-of`: the show link (Docs/ShowSurvival.md).
extension SessionRun {
    /// The link of a run: the main's listener, or the backup's follower (and, once its main is
    /// gone, its own listener with `--main`).
    final class Link: Sendable {
        private let parts = Mutex<(main: ShowLinkMain?, follower: BackupFollower?)>((nil, nil))
        /// Hashes this run's output for the comparison with the other side's.
        let hasher: OutputHasher?

        init(hasher: OutputHasher? = nil) { self.hasher = hasher }

        var main: ShowLinkMain? { parts.withLock { $0.main } }
        var follower: BackupFollower? { parts.withLock { $0.follower } }

        /// What `status` says of it: the main's side once it listens (a backup whose main is
        /// gone listens too with `--main`), else the backup's.
        func status(backupOf main: String?) -> ControlStatus.Link? {
            let (listener, follower) = parts.withLock { ($0.main, $0.follower) }
            if let listener {
                let backups = listener.backups
                var status = ControlStatus.Link(role: "main", address: listener.address, state: backups > 0 ? "joined" : "listening", backups: backups)
                if let position = listener.backupPosition {
                    status.offsetMilliseconds = position.offsetMilliseconds
                    status.steeringPPM = position.steeringPPM
                    status.driftPPM = position.driftPPM
                }
                Self.add(listener.tally, to: &status)
                return status
            }
            guard let main else { return nil }
            var status = ControlStatus.Link(role: "backup", address: main, state: follower?.isFollowing == true ? "following" : "alone",
                                            offsetMilliseconds: follower?.offset.map { ($0 * 1_000_000).rounded() / 1000 })
            status.steeringPPM = follower?.steeringPPM
            status.driftPPM = follower?.driftPPM
            Self.add(follower?.tally, to: &status)
            return status
        }

        private static func add(_ tally: OutputComparison.Tally?, to status: inout ControlStatus.Link) {
            guard let tally else { return }
            status.comparedBlocks = tally.compared
            status.differingBlocks = tally.differing
            status.firstDivergence = tally.first?.position
        }

        func set(main: ShowLinkMain) { parts.withLock { $0.main = main } }
        func set(follower: BackupFollower) { parts.withLock { $0.follower = follower } }

        /// Stops following the main, and tells a backup the main ended; once.
        func stop() {
            let (main, follower) = parts.withLock { parts in
                defer { parts = (nil, nil) }
                return parts
            }
            follower?.stop()
            main?.stop()
            hasher?.stop()
        }
    }

    /// Seconds a main's seek, resume or reset starts later than it could, besides the change
    /// lead: the time its backup needs to compute every layer mid-file.
    static let relocationSeconds = 0.3

    /// How a backup on a free clock steers (nil: the device is not steered, `--free-clock` not given).
    static func steering(of device: JACKDevice) -> BackupFollower.Steering? {
        guard device.isSteered else { return nil }
        return BackupFollower.Steering(steer: { device.steer(ratio: $0) }, delay: { device.steeringDelay / device.sampleRate })
    }

    /// A backup's welcome from its main (nil when this run is not a backup).
    func joinMain() throws -> (ShowLinkBackup, ShowLinkBackup.Welcome)? {
        guard let options = command.link, let endpoint = options.backupEndpoint, let passcode = options.passcode else { return nil }
        do {
            return try ShowLinkBackup.join(host: endpoint.host, port: Int(endpoint.port), passcode: passcode, text: session.text)
        } catch {
            throw CLIError(message: "\(command.command): --backup-of: \(error.message)")
        }
    }

    /// The session a backup runs: its file's, or the main's as edited when that differs (the
    /// same media, as the main found them next to its file).
    func adopt(_ welcome: ShowLinkBackup.Welcome?) throws -> Session {
        guard let welcome, welcome.text != session.text else { return session }
        do throws(SessionError) {
            return try Session.parse(text: welcome.text, path: session.document.path)
        } catch {
            throw CLIError(message: "\(command.command): --backup-of: the main's session as edited is not valid here: \(error.diagnostics.map(\.message).joined(separator: "; "))")
        }
    }

    /// Opens the main's end of the link, or starts following the main a backup joined.
    func startLink(joined: (ShowLinkBackup, ShowLinkBackup.Welcome)?, show: LiveSession, dispatcher: ControlDispatcher,
                   device: JACKDevice, notes: NoteQueue, display: SessionDisplay) throws -> Link {
        guard let options = command.link, let passcode = options.passcode else { return Link() }
        let fileText = session.text
        let hasher: OutputHasher?
        do {
            hasher = try OutputHasher(engine: show.engine, channels: session.document.channelCount, player: { dispatcher.player })
        } catch {
            hasher = nil
            display.note("link: cannot hash this run's output to compare it with the other side's: \(error.message)")
        }
        let link = Link(hasher: hasher)
        /// Tells the operator and every subscriber of a divergence found, or an agreement.
        let divergence: @Sendable (ShowLinkMain.Event) -> Void = { event in
            notes.add(event.text)
            let state = event.kind == .agrees ? "agrees" : event.exact == true ? "diverged" : "differs"
            dispatcher.updates.publish([ControlUpdate(.divergence, position: event.position, state: state,
                                                      frames: state == "differs" ? Int64(OutputHasher.blockFrames) : nil,
                                                      peer: event.peer, outputs: event.outputs)])
        }
        let moment = Self.moment(on: device)
        let name = command.command
        let period = Int64(device.periodFrames)
        /// Listens for a backup (with `--main`): each change lands a period and the lead later,
        /// so the backup has it before its sample.
        let openMain: @Sendable () throws(LinkError) -> String? = {
            guard let endpoint = options.mainEndpoint else { return nil }
            let player = dispatcher.player
            player.changeLead = period + Int64((options.lead * player.rate).rounded())
            player.relocationLead = player.changeLead + Int64((Self.relocationSeconds * player.rate).rounded())
            let main = try ShowLinkMain(host: endpoint.host, port: Int(endpoint.port), passcode: passcode,
                                        player: { dispatcher.player }, moment: moment, hasher: hasher, fileText: fileText, note: { event in
                                            if event.kind == .diverged || event.kind == .agrees { return divergence(event) }
                                            notes.add(event.text)
                                            if event.kind == .joined || event.kind == .left {
                                                dispatcher.updates.publish([ControlUpdate(.link, state: event.kind.rawValue, peer: event.peer)])
                                            }
                                        })
            link.set(main: main)
            return "link: a backup may join on \(main.address) (each change lands \(player.changeLead) samples ahead for it, a seek, resume or reset \(player.relocationLead))"
        }
        dispatcher.link = { [link] in link.status(backupOf: joined?.0.main) }
        guard let (backup, welcome) = joined else {
            do {
                if let note = try openMain() { display.note(note) }
            } catch {
                throw CLIError(message: "\(name): --main: \(error.message)")
            }
            return link
        }
        if let resumed = show.resumed {
            display.note("link: joined the main at \(backup.main): playing from session sample \(resumed.position)"
                         + (resumed.sampleTime.map { " on device sample \($0)" } ?? " (paused, as the main is)") + ", where the main is by the system clock")
        }
        dispatcher.refusal = "this run is the backup of the main at \(backup.main): send commands to the main (this one takes them once the link is lost)"
        link.set(follower: BackupFollower(link: backup, run: welcome.run, edits: welcome.edits, player: { dispatcher.player }, moment: moment, lead: 0.3,
                                          hasher: hasher, steering: Self.steering(of: device),
                                          wallClock: { device.wallClock(forSampleTime: $0) }, note: { text, _ in notes.add(text) }, divergence: divergence,
                                          onLost: { why in
                                              dispatcher.refusal = nil
                                              notes.add("link: \(why): this backup plays on and takes commands")
                                              dispatcher.updates.publish([ControlUpdate(.link, state: "lost", peer: backup.main)])
                                              // With --main too, it is now the main a backup joins.
                                              do throws(LinkError) {
                                                  if let note = try openMain() { notes.add(note) }
                                              } catch {
                                                  notes.add("link: --main: \(error.message)")
                                              }
                                          }))
        return link
    }
}
