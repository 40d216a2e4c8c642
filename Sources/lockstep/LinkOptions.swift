import ArgumentParser
import Foundation
import LockstepOSC

/// `session run`'s show link: a main that a backup joins (`--main`), or a backup of a main
/// (`--backup-of`), with the passcode they share (Docs/ShowSurvival.md).
struct LinkOptions: ParsableArguments {
    @Option(name: .customLong("main"), help: ArgumentHelp("Run as a show's main: a backup ('session run --backup-of') joins on [HOST:]PORT (HOST defaults to 127.0.0.1, this machine only) and plays every change on the same session sample; each change lands --link-lead later for it.", valueName: "[HOST:]PORT"))
    var main: String?

    @Option(name: .customLong("backup-of"), help: ArgumentHelp("Run as the backup of the main at HOST:PORT: the same session file, where the main is and every change it makes on the same session sample; its own commands are refused while the main is there, taken once the link is lost.", valueName: "HOST:PORT"))
    var backupOf: String?

    @Option(name: .customLong("link-passcode"), help: ArgumentHelp("The passcode main and backup share (else $LOCKSTEP_LINK_PASSCODE).", valueName: "text"))
    var passcodeOption: String?

    @Option(name: .customLong("link-lead"), help: ArgumentHelp("With --main: seconds each change lands later than it could, beyond a period, so that the backup has it in time (0 to 1).", valueName: "seconds"))
    var lead: Double = 0.02

    @Flag(name: .customLong("free-clock"), help: ArgumentHelp("With --backup-of: this machine's audio clock is not the main's (no shared word clock): steer the playback rate (libsoxr, within 0.5 %) to stay within 1 ms of the main instead of jumping. The master outputs are then resampled, not the main's bit for bit; layers with ports of their own cannot be steered."))
    var freeClock = false

    /// The passcode (option, else environment).
    var passcode: String? { passcodeOption ?? ProcessInfo.processInfo.environment["LOCKSTEP_LINK_PASSCODE"] }

    /// Where the main listens (nil: not a main).
    var mainEndpoint: OSCEndpoint? { main.flatMap { try? OSCEndpoint.parse($0, option: "--main") } }
    /// The main a backup joins (nil: not a backup).
    var backupEndpoint: OSCEndpoint? { backupOf.flatMap { try? OSCEndpoint.parse($0, option: "--backup-of") } }

    func validate() throws {
        if let main {
            do { _ = try OSCEndpoint.parse(main, option: "--main") } catch { throw ValidationError(error.message) }
        }
        if let backupOf {
            guard backupOf.contains(":") else { throw ValidationError("--backup-of \(backupOf): write the main's HOST:PORT (its --main)") }
            do { _ = try OSCEndpoint.parse(backupOf, option: "--backup-of") } catch { throw ValidationError(error.message) }
        }
        if main != nil || backupOf != nil {
            guard let passcode, !passcode.isEmpty else {
                throw ValidationError("\(main != nil ? "--main" : "--backup-of") needs the passcode main and backup share: --link-passcode TEXT or LOCKSTEP_LINK_PASSCODE")
            }
        } else if passcodeOption != nil {
            throw ValidationError("--link-passcode needs --main [HOST:]PORT or --backup-of HOST:PORT")
        }
        if freeClock && backupOf == nil { throw ValidationError("--free-clock steers a backup: give --backup-of HOST:PORT too") }
        guard (0...1).contains(lead) else { throw ValidationError("--link-lead \(lead) is out of range; give 0 to 1 seconds") }
    }
}
