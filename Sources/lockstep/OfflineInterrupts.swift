import Dispatch
import Foundation
import LockstepFiles

/// Ends an offline command (`render`, `session render`) cleanly on a signal: SIGINT, SIGTERM,
/// SIGHUP or SIGQUIT delete every temporary file the command was writing (the destination is
/// never touched: an existing file stays as it was), say so on standard error, and exit with
/// 128 + the signal's number. SIGKILL cannot be caught: the next output to the same destination
/// removes what a killed process left (see `AtomicFileOutput`).
enum OfflineInterrupts {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    /// Installs the handlers for `command` (named in the message). Call once, early in `run()`.
    static func install(command: String) {
        for sig in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global(qos: .userInteractive))
            source.setEventHandler {
                AtomicFileOutput.removeAllTemporaryFiles()
                let name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGQUIT"
                StatusArea.shared.clear()
                log.critical("\(command): interrupted (\(name)); nothing was written")
                _exit(128 + sig)
            }
            source.resume()
            sources.append(source)
        }
    }
}
