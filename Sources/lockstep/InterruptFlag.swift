import ArgumentParser
import Foundation
import LockstepFiles
import Synchronization

/// Signals that end a live command (SIGINT from Ctrl-C, SIGTERM, SIGHUP when the terminal
/// closes) turned into a flag the main loop polls: the command fades out, closes what it wrote,
/// prints its summary and exits with 128 + the signal's number, as shells expect.
///
/// A clean stop needs the JACK server to answer. When it does not (the server is stopped with
/// SIGSTOP, frozen, or hung), libjack calls block, so a watchdog ends the process anyway: a second
/// signal, or ``gracePeriod`` seconds after the first, deletes this process's temporary files, says
/// why on standard error and exits with 128 + the signal's number. Recordings keep what was written
/// (their header is kept valid while recording).
final class InterruptFlag: @unchecked Sendable {
    private let raised = Atomic<Int32>(0)
    private var sources: [DispatchSourceSignal] = []
    /// Seconds a clean stop may take before the watchdog ends the process.
    static let gracePeriod = 5.0

    /// Installs the handlers; `command` names the command in the watchdog's message.
    init(command: String = "lockstep") {
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [weak self] in
                guard let self else { return }
                let (first, _) = self.raised.compareExchange(expected: 0, desired: sig, ordering: .acquiringAndReleasing)
                if first {
                    DispatchQueue.global().asyncAfter(deadline: .now() + Self.gracePeriod) {
                        Self.forceExit(command: command, signal: sig,
                                       reason: "did not stop within \(Int(Self.gracePeriod)) s (is the JACK server stopped or frozen?)")
                    }
                } else {
                    Self.forceExit(command: command, signal: sig, reason: "a second signal arrived before the clean stop finished")
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Ends the process now: temporary files deleted, the reason on standard error, 128 + `signal`.
    private static func forceExit(command: String, signal: Int32, reason: String) -> Never {
        AtomicFileOutput.removeAllTemporaryFiles()
        let line = "lockstep: \(command): \(reason); exiting without a clean stop\n"
        _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
        _exit(128 + signal)
    }

    /// The signal received, or 0.
    var received: Int32 { raised.load(ordering: .acquiring) }

    /// Ends the command with 128 + the signal received (130 for Ctrl-C), if one was.
    func exitIfRaised() throws {
        let signal = received
        if signal != 0 { throw ExitCode(128 + signal) }
    }
}
