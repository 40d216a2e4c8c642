import Foundation
import Lockstep
import LockstepJACK

/// Starts a private `jackd` when none runs, and stops it at exit.
final class ServerLauncher {
    enum Mode: String, CaseIterable {
        case auto, dummy, alsa, never
    }

    private var child: BoundChild?
    /// How the running server was started, to start it again after it died.
    private var spawned: (executable: String, arguments: [String], environment: [String: String])?
    private(set) var description = ""

    /// Whether the machine has an ALSA sound card.
    static var hasSoundCard: Bool {
        guard let cards = try? String(contentsOfFile: "/proc/asound/cards", encoding: .utf8) else { return false }
        return !cards.contains("no soundcards") && cards.contains("]:")
    }

    /// Makes sure a server named `server` runs for `command` (`play`, `session run`), starting one
    /// as `--start-server` (`modeName`) allows, and tells the user on standard error when it did.
    func ensureServer(for command: String, named server: String?, mode: Mode) throws {
        if let message = try ensureServer(named: server, mode: mode, command: command) {
            log.notice("\(message)")
        }
    }

    /// Makes sure a server named `server` (nil: the default) runs, starting one if `mode` allows.
    /// - Returns: a sentence for the user when a server was started, else nil.
    func ensureServer(named server: String?, mode: Mode, command: String = "play", sampleRate: Int = 48000,
                      period: Int = 1024) throws -> String? {
        if JACKGraph.serverIsRunning(server) { return nil }
        let shownName = server ?? ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"] ?? "default"
        let driver: String
        switch mode {
        case .never:
            throw CLIError(message: "\(command): no JACK server '\(shownName)' is running and --start-server never forbids starting one; start jackd (or PipeWire's JACK) first")
        case .dummy: driver = "dummy"
        case .alsa: driver = "alsa"
        case .auto: driver = Self.hasSoundCard ? "alsa" : "dummy"
        }
        guard let jackd = Self.findJackd() else {
            throw CLIError(message: "\(command): no JACK server is running and jackd is not installed; install jackd2 (Scripts/setup.sh) or start a server")
        }
        var lastError = ""
        for realtime in [true, false] {
            var arguments: [String] = []
            if server != nil || ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"] != nil {
                arguments += ["-n", shownName]
            }
            arguments += [realtime ? "-R" : "-r", "-d", driver, "-r", String(sampleRate), "-p", String(period)]
            var environment = ProcessInfo.processInfo.environment
            environment["JACK_NO_AUDIO_RESERVATION"] = "1"
            let child: BoundChild
            do {
                child = try BoundChild(executable: jackd, arguments: arguments, environment: environment)
            } catch {
                throw CLIError(message: "\(command): cannot run \(jackd): \(error)")
            }
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline && child.isRunning {
                if JACKGraph.serverIsRunning(server) {
                    self.child = child
                    spawned = (jackd, arguments, environment)
                    log.info("started \(([jackd] + arguments).joined(separator: " "))")
                    description = "jackd (\(driver) driver, \(sampleRate) Hz, period \(period)\(realtime ? ", realtime" : ""))"
                    return "no JACK server '\(shownName)' was running; started \(description), pid \(child.pid) — it stops when lockstep exits"
                }
                usleep(20_000)
            }
            child.terminate()
            lastError = child.outputTail(lines: 2)
        }
        throw CLIError(message: "\(command): could not start jackd with the \(driver) driver (\(lastError)); start a JACK server yourself")
    }

    /// Stops the server this launcher started (SIGTERM, then SIGKILL after 3 s) and reaps it.
    func stop() {
        child?.terminate()
        child = nil
    }

    /// Starts the server this launcher started again if it has died (for `--reconnect`: the device
    /// then finds it and plays on). Main thread.
    /// - Returns: a sentence for the user when it did, else nil.
    func restartIfDied() -> String? {
        guard let old = child, !old.isRunning, let spawned else { return nil }
        guard let child = try? BoundChild(executable: spawned.executable, arguments: spawned.arguments,
                                          environment: spawned.environment) else { return nil }
        self.child = child
        return "the jackd lockstep started died (\(old.outputTail(lines: 1))); started it again, pid \(child.pid)"
    }

    /// The pid of the server this launcher started, or nil.
    var serverProcessID: Int32? { child?.pid }

    static func findJackd() -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        for dir in paths + ["/usr/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: dir + "/jackd") {
            return dir + "/jackd"
        }
        return nil
    }
}
