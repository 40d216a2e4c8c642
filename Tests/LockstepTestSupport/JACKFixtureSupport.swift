import CJack
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An error from the JACK test fixtures (``JACKServer``, ``JACKCapture``, ``JACKRampSource``,
/// ``JACKStaller``).
///
/// Every description says what went wrong and, where a `jackd` was involved, ends with the tail
/// of its log, so a failing CI run shows the server's own explanation.
public enum JACKFixtureError: Error, Sendable, CustomStringConvertible {
    /// No `jackd` executable was found (searched `LOCKSTEP_JACKD`, `PATH`, `/usr/bin`).
    case jackdNotFound
    /// An argument was out of range; the string says which and why.
    case invalidArgument(String)
    /// A JACK server with this name already accepts clients, so a private one cannot be started.
    case serverNameInUse(String)
    /// `posix_spawn` failed with `errno`.
    case spawnFailed(command: String, errno: Int32)
    /// `jackd` exited before it accepted clients.
    case serverExitedDuringStartup(command: String, exitDescription: String, logTail: String)
    /// `jackd` did not accept clients within the timeout.
    case serverStartTimedOut(command: String, seconds: Double, logTail: String)
    /// The operation needs a running server, but this one was stopped, killed or died.
    case serverNotRunning(name: String, logTail: String)
    /// `jack_client_open` failed; `status` holds the `JackStatus` bits it reported.
    case clientOpenFailed(client: String, server: String, status: UInt32)
    /// `jack_port_register` failed.
    case portRegistrationFailed(client: String, port: String)
    /// `jack_activate` failed with `code`.
    case activationFailed(client: String, code: Int32)
    /// `jack_connect` failed with `code` (17, EEXIST, is filtered out: already connected is fine).
    case connectionFailed(source: String, destination: String, code: Int32)
    /// `jack_set_buffer_size` failed, or the server kept another size.
    case bufferSizeChangeFailed(requested: Int, code: Int32, actual: Int, logTail: String)
    /// A port did not appear within the timeout.
    case portNotFound(String, seconds: Double)

    /// What went wrong and what to do, with the `jackd` log tail where there is one.
    public var description: String {
        func withLog(_ text: String, _ log: String) -> String {
            log.isEmpty ? text : text + "\n--- jackd log (tail) ---\n" + log
        }
        switch self {
        case .jackdNotFound:
            return "jackd was not found: install jackd2 (apt-get install jackd2) or set LOCKSTEP_JACKD "
                + "to the executable's path."
        case .invalidArgument(let text):
            return "Invalid JACK fixture argument: \(text)."
        case .serverNameInUse(let name):
            return "A JACK server named '\(name)' is already running; stop it (or pick another name) "
                + "before starting a private test server."
        case .spawnFailed(let command, let code):
            return "Could not start `\(command)`: \(String(cString: strerror(code))) (errno \(code))."
        case .serverExitedDuringStartup(let command, let exit, let log):
            return withLog("jackd exited during startup (\(exit)); command: \(command)", log)
        case .serverStartTimedOut(let command, let seconds, let log):
            return withLog("jackd did not accept clients within \(seconds) s; command: \(command)", log)
        case .serverNotRunning(let name, let log):
            return withLog("The JACK test server '\(name)' is not running (stopped, killed or crashed).", log)
        case .clientOpenFailed(let client, let server, let status):
            return "jack_client_open('\(client)') on server '\(server)' failed, status 0x"
                + String(status, radix: 16) + " (\(JACKFixtureError.describe(status: status)))."
        case .portRegistrationFailed(let client, let port):
            return "jack_port_register('\(port)') failed for client '\(client)'."
        case .activationFailed(let client, let code):
            return "jack_activate failed for client '\(client)' (code \(code))."
        case .connectionFailed(let source, let destination, let code):
            return "jack_connect('\(source)' → '\(destination)') failed (code \(code)); "
                + "check that both ports exist and that the first is an output, the second an input."
        case .bufferSizeChangeFailed(let requested, let code, let actual, let log):
            return withLog("jack_set_buffer_size(\(requested)) failed (code \(code)); the server runs "
                           + "with \(actual) frames per period.", log)
        case .portNotFound(let name, let seconds):
            return "The JACK port '\(name)' did not appear within \(seconds) s."
        }
    }

    /// Names the `JackStatus` bits set in `status`.
    static func describe(status: UInt32) -> String {
        let names: [(JackStatus, String)] = [
            (JackFailure, "failure"), (JackInvalidOption, "invalid option"), (JackNameNotUnique, "name not unique"),
            (JackServerStarted, "server started"), (JackServerFailed, "cannot connect to server"),
            (JackServerError, "server error"), (JackNoSuchClient, "no such client"),
            (JackLoadFailure, "load failure"), (JackInitFailure, "init failure"), (JackShmFailure, "shm failure"),
            (JackVersionError, "protocol version mismatch"), (JackBackendError, "backend error"),
            (JackClientZombie, "client zombified"),
        ]
        let set = names.filter { status & $0.0.rawValue != 0 }.map(\.1)
        return set.isEmpty ? "no status bits" : set.joined(separator: ", ")
    }
}

/// Small helpers shared by the JACK fixtures. Not realtime code unless a member says so.
enum JACKFixtureSupport {
    /// The audio port type string (`JACK_DEFAULT_AUDIO_TYPE`, a C macro Swift does not import).
    static let audioPortType = "32 bit float mono audio"

    /// A process-wide counter for unique default names.
    static let nameCounter = Atomic<Int>(0)

    /// The next value of ``nameCounter``.
    static func nextSerial() -> Int {
        nameCounter.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// A default client name, `<prefix>-<pid>-<serial>`: unique on the machine, not only in this
    /// process. jackd2 names a client's notification socket `/dev/shm/jack_<client>_<uid>_0`
    /// whatever its server, so two clients of one name opening at the same moment on two servers
    /// of the machine (another test process's, a netjack2 slave's) take each other's socket and
    /// both fail ("no server is running").
    static func uniqueClientName(_ prefix: String) -> String {
        "\(prefix)-\(getpid())-\(nextSerial())"
    }

    /// Opens a client on `serverName` without ever starting a server.
    static func openClient(named name: String, serverName: String) throws(JACKFixtureError) -> OpaquePointer {
        var status = jack_status_t(rawValue: 0)
        guard let client = lockstep_jack_client_open(name, serverName, 1, &status) else {
            throw .clientOpenFailed(client: name, server: serverName, status: status.rawValue)
        }
        return client
    }

    /// The client's actual name (JACK may have made it unique).
    static func clientName(_ client: OpaquePointer) -> String {
        guard let name = jack_get_client_name(client) else { return "" }
        return String(cString: name)
    }

    /// The full name ("client:port") of `port`.
    static func portName(_ port: OpaquePointer) -> String {
        guard let name = jack_port_name(port) else { return "" }
        return String(cString: name)
    }

    /// Registers an audio port, input or output.
    static func registerAudioPort(_ client: OpaquePointer, name: String,
                                  input: Bool) throws(JACKFixtureError) -> OpaquePointer {
        let flags = input ? JackPortIsInput.rawValue : JackPortIsOutput.rawValue
        guard let port = jack_port_register(client, name, audioPortType, UInt(flags), 0) else {
            throw .portRegistrationFailed(client: clientName(client), port: name)
        }
        return port
    }

    /// Connects `source` (an output port) to `destination` (an input port); an existing
    /// connection counts as success.
    static func connect(_ client: OpaquePointer, _ source: String,
                        _ destination: String) throws(JACKFixtureError) {
        let code = jack_connect(client, source, destination)
        if code != 0 && code != EEXIST {
            throw .connectionFailed(source: source, destination: destination, code: code)
        }
    }

    /// Converts a NULL-terminated `const char **` list from JACK into strings and frees it.
    static func takeStringList(_ list: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> [String] {
        guard let list else { return [] }
        defer { jack_free(list) }
        var names: [String] = []
        var index = 0
        while let entry = list[index] {
            names.append(String(cString: entry))
            index += 1
        }
        return names
    }

    /// CLOCK_MONOTONIC in nanoseconds. Realtime-safe (vDSO, no allocation).
    @inline(__always)
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// Polls `condition` every `interval` seconds until it holds or `timeout` seconds pass;
    /// returns whether it held.
    static func poll(timeout: Double, interval: Double = 0.002, _ condition: () -> Bool) -> Bool {
        let deadline = monotonicNanoseconds() + UInt64(max(0, timeout) * 1e9)
        while true {
            if condition() { return true }
            if monotonicNanoseconds() >= deadline { return condition() }
            Thread.sleep(forTimeInterval: interval)
        }
    }

    /// Allocates a zero-filled buffer and touches every page, so a realtime thread writing it
    /// later takes no page faults.
    static func allocateZeroed<T: BitwiseCopyable>(_ type: T.Type, count: Int,
                                                   zero: T) -> UnsafeMutablePointer<T> {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: max(1, count))
        pointer.initialize(repeating: zero, count: max(1, count))
        return pointer
    }
}
