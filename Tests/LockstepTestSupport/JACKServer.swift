import CJack
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A private `jackd` (dummy driver) for one test: started by the initializer, stopped by
/// ``stop()`` or at deinitialization, never left behind.
///
/// The server runs `jackd -n NAME -R -d dummy -r RATE -p PERIOD -C 2 -P 2`, so the ports
/// `system:capture_1`, `system:capture_2` (outputs) and `system:playback_1`, `system:playback_2`
/// (inputs) exist. The dummy driver paces cycles with the system clock, so one second of audio
/// takes about one second; it discards what is written to the playback ports and delivers silence
/// on the capture ports. Use ``JACKCapture`` to record what a client plays.
///
/// The initializer returns once the server accepts clients. `jackd`'s output goes to ``logPath``;
/// errors thrown while starting include its tail. Three safety nets keep servers from outliving a
/// test: ``stop()`` at deinit, an `atexit` handler that terminates every server still running
/// when the test process exits, and a watchdog process per server that terminates it if the test
/// process dies without running either (a crash, `SIGKILL`).
///
/// All members may be called from any thread.
public final class JACKServer: @unchecked Sendable {
    /// The server name (`jackd -n`), which clients pass to `jack_client_open`.
    public let name: String
    /// The sample rate the server runs at, in frames per second.
    public let sampleRate: Int
    /// The requested number of periods per buffer. The dummy driver has no such option, so this
    /// is informational only.
    public let periods: Int
    /// Whether realtime scheduling (`-R`) was requested.
    public let realtimeRequested: Bool
    /// Whether the running server was started with `-R`; false when `-R` was not requested or
    /// when the server failed to start with it and was restarted with `-r`.
    public let isRealtime: Bool
    /// The process id of `jackd`.
    public let pid: Int32
    /// The command line that started the running server, for messages.
    public let commandLine: String
    /// The file that receives `jackd`'s standard output and standard error.
    public let logPath: String

    private let logDirectory: String
    private let watchdog: JACKWatchdog?
    private let lock = NSLock()
    private var currentPeriod: Int
    private var exitStatus: Int32?
    private var stopped = false

    /// The process ids jackd2's shared-memory registry lists as servers (it has room for 8).
    /// A server that died uncleanly stays listed until the next ``JACKServer`` starts or
    /// ``kill()`` runs, which clear the slots of processes that no longer exist.
    public static var registeredServerProcessIDs: [Int32] { JACKSharedMemoryRegistry.serverProcessIDs() }

    /// libfaketime's preload library, which makes a process's clocks run at another speed.
    public static let faketimeLibrary = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

    /// The environment under which `jackd`'s dummy driver — which paces its cycles by the system
    /// clock — runs `speed` times as fast as the real clock: a device on an audio clock of its own
    /// (`1.001`: 1000 ppm fast). Its frame times and cycle times are then on its own clock too.
    public static func fastClockEnvironment(_ speed: Double) -> [String: String] {
        ["LD_PRELOAD": faketimeLibrary, "FAKETIME": "+0 x\(speed)"]
    }

    /// Whether a `jackd` executable can be found, for `.enabled(if:)` traits.
    public static var isAvailable: Bool { jackdPath() != nil }

    /// Starts a private server and waits until it accepts clients.
    ///
    /// - Parameters:
    ///   - name: The server name; by default `lockstep-test-<pid>-<counter>`, unique per process.
    ///   - sampleRate: Frames per second (`-r`).
    ///   - period: Frames per period (`-p`); JACK wants a power of two, at least 16.
    ///   - periods: Informational (the dummy driver has no periods option).
    ///   - realtime: Start with `-R`; if the server then fails to start, it is restarted with `-r`.
    ///   - extraDriverArguments: Appended after the dummy driver's arguments.
    ///   - extraServerArguments: Inserted before `-d dummy` (for example `["-t", "2000"]`).
    ///   - environment: More environment for `jackd` (for example libfaketime's, to run its
    ///     clock fast: ``JACKServer/fastClockEnvironment(_:)``).
    ///   - startTimeout: Seconds to wait for the server to accept clients.
    /// - Throws: ``JACKFixtureError`` — `.jackdNotFound`, `.serverNameInUse`, `.spawnFailed`,
    ///   `.serverExitedDuringStartup` or `.serverStartTimedOut` (with the log tail),
    ///   `.invalidArgument`.
    public init(name: String? = nil, sampleRate: Int = 48000, period: Int = 256, periods: Int = 2,
                realtime: Bool = true, extraDriverArguments: [String] = [],
                extraServerArguments: [String] = [], environment extraEnvironment: [String: String] = [:],
                startTimeout: Double = 10) throws {
        guard sampleRate >= 1000 && sampleRate <= 384_000 else {
            throw JACKFixtureError.invalidArgument("sampleRate \(sampleRate) is outside 1000…384000")
        }
        guard period >= 16 && period <= 8192 else {
            throw JACKFixtureError.invalidArgument("period \(period) is outside 16…8192 frames")
        }
        guard periods >= 1 else { throw JACKFixtureError.invalidArgument("periods must be at least 1") }
        guard let jackd = JACKServer.jackdPath() else { throw JACKFixtureError.jackdNotFound }
        let serverName = name ?? "lockstep-test-\(getpid())-\(JACKFixtureSupport.nextSerial())"
        guard !serverName.isEmpty, !serverName.contains("/"), serverName.utf8.count < 64 else {
            throw JACKFixtureError.invalidArgument("server name '\(serverName)' must be 1…63 bytes without '/'")
        }
        if JACKServer.acceptsClients(serverName) { throw JACKFixtureError.serverNameInUse(serverName) }
        // Free the registry slots of servers that died uncleanly (jackd allows only 8).
        JACKSharedMemoryRegistry.reclaimDeadServers()

        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("lockstep-jackd-\(serverName)-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let log = directory + "/jackd.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)

        var environment = ProcessInfo.processInfo.environment
        environment["JACK_DEFAULT_SERVER"] = nil
        environment["JACK_NO_AUDIO_RESERVATION"] = "1"
        environment.merge(extraEnvironment) { _, new in new }
        let envp = environment.map { "\($0.key)=\($0.value)" }

        let comm = String(URL(fileURLWithPath: jackd).lastPathComponent.prefix(15))
        var attempt: (pid: pid_t, command: String, realtime: Bool, watchdog: JACKWatchdog?)?
        var lastError: Error?
        for useRealtime in realtime ? [true, false] : [false] {
            let arguments = [jackd, "-n", serverName, useRealtime ? "-R" : "-r"] + extraServerArguments
                + ["-d", "dummy", "-r", String(sampleRate), "-p", String(period), "-C", "2", "-P", "2"]
                + extraDriverArguments
            let command = arguments.joined(separator: " ")
            JACKServer.appendToLog(log, "### \(command)\n")
            let child: pid_t
            do {
                child = try JACKServer.spawn(arguments, environment: envp, logPath: log)
            } catch {
                lastError = error
                break
            }
            JACKProcessRegistry.register(child, serverName: serverName, logDirectory: directory)
            let watchdog = JACKWatchdog.arm(serverPID: child, executableName: comm, serverName: serverName,
                                            environment: envp)
            do {
                try JACKServer.waitUntilReady(pid: child, name: serverName, command: command,
                                              logPath: log, timeout: startTimeout)
                attempt = (child, command, useRealtime, watchdog)
                break
            } catch {
                JACKServer.terminate(pid: child, grace: 1)
                JACKProcessRegistry.unregister(child)
                watchdog?.disarm()
                JACKServer.removeServerFiles(name: serverName)
                lastError = error
                // Only an early exit suggests -R itself is the problem; a timeout would just repeat.
                guard case JACKFixtureError.serverExitedDuringStartup = error else { break }
            }
        }
        guard let attempt else {
            try? FileManager.default.removeItem(atPath: directory)
            throw lastError ?? JACKFixtureError.jackdNotFound
        }

        self.name = serverName
        self.sampleRate = sampleRate
        self.periods = periods
        self.realtimeRequested = realtime
        self.isRealtime = attempt.realtime
        self.pid = attempt.pid
        self.commandLine = attempt.command
        self.logPath = log
        self.logDirectory = directory
        self.watchdog = attempt.watchdog
        self.currentPeriod = period
    }

    deinit {
        stop()
        if ProcessInfo.processInfo.environment["LOCKSTEP_KEEP_JACK_LOGS"] == nil {
            try? FileManager.default.removeItem(atPath: logDirectory)
        }
    }

    /// The current frames per period (changes with ``setBufferSize(_:)``).
    public var period: Int {
        lock.lock()
        defer { lock.unlock() }
        return currentPeriod
    }

    /// Whether `jackd` is still running (false after ``stop()``, ``kill()`` or a crash).
    public var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return processAliveLocked()
    }

    /// The environment a child process (for example the `lockstep` CLI) needs to use this server:
    /// `JACK_DEFAULT_SERVER`, `JACK_NO_START_SERVER` and `JACK_NO_AUDIO_RESERVATION`.
    public var clientEnvironment: [String: String] {
        ["JACK_DEFAULT_SERVER": name, "JACK_NO_START_SERVER": "1", "JACK_NO_AUDIO_RESERVATION": "1"]
    }

    /// The whole `jackd` log so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The last `maxLines` lines of the `jackd` log.
    public func logTail(maxLines: Int = 30) -> String { JACKServer.tail(of: logPath, maxLines: maxLines) }

    /// Stops the server: `SIGTERM`, up to 3 s for it to exit, then `SIGKILL`. Idempotent; also
    /// called at deinit. Clients still open receive their shutdown callbacks.
    public func stop() { shutDown(signal: SIGTERM, grace: 3) }

    /// Kills the server at once with `SIGKILL`, as a crash would (for tests of server death).
    /// Reaps it, then removes the socket, semaphore and shared-memory files it left in `/dev/shm`
    /// and frees its slot in jackd2's shared-memory registry, which has room for only 8 servers.
    public func kill() { shutDown(signal: SIGKILL, grace: 0) }

    /// Changes the frames per period with `jack_set_buffer_size` from a short-lived client.
    ///
    /// Returns after the server reports the new size; clients receive their buffer-size callbacks
    /// before their next process cycle.
    /// - Throws: `.invalidArgument`, `.serverNotRunning`, `.clientOpenFailed`,
    ///   `.bufferSizeChangeFailed`.
    public func setBufferSize(_ frames: Int) throws {
        guard frames >= 16 && frames <= 8192 else {
            throw JACKFixtureError.invalidArgument("buffer size \(frames) is outside 16…8192 frames")
        }
        let actual = try withClient(named: "lockstep-bufsize") { client -> Int in
            let code = jack_set_buffer_size(client, jack_nframes_t(frames))
            let actual = Int(jack_get_buffer_size(client))
            if code != 0 || actual != frames {
                throw JACKFixtureError.bufferSizeChangeFailed(requested: frames, code: code, actual: actual,
                                                              logTail: logTail())
            }
            return actual
        }
        lock.lock()
        currentPeriod = actual
        lock.unlock()
    }

    /// Opens a short-lived client on this server, passes it to `body` and closes it afterwards.
    ///
    /// - Throws: `.serverNotRunning`, `.clientOpenFailed`, or what `body` throws.
    public func withClient<T>(named clientName: String = "lockstep-fixture",
                              _ body: (OpaquePointer) throws -> T) throws -> T {
        guard isRunning else { throw JACKFixtureError.serverNotRunning(name: name, logTail: logTail()) }
        let client = try JACKFixtureSupport.openClient(named: clientName, serverName: name)
        defer { jack_client_close(client) }
        return try body(client)
    }

    /// The full names of the server's ports whose names match the regular expression `pattern`
    /// (all ports when nil), in JACK's order.
    public func portNames(matching pattern: String? = nil) throws -> [String] {
        try withClient(named: "lockstep-lsp") { client in
            JACKFixtureSupport.takeStringList(jack_get_ports(client, pattern, nil, 0))
        }
    }

    /// The full names of the ports connected to `port`; empty when it does not exist.
    public func connections(of port: String) throws -> [String] {
        try withClient(named: "lockstep-lsp") { client in
            guard let handle = jack_port_by_name(client, port) else { return [] }
            return JACKFixtureSupport.takeStringList(jack_port_get_all_connections(client, handle))
        }
    }

    /// Waits until the port `name` exists (for example a port a CLI under test registers).
    ///
    /// - Throws: `.portNotFound` after `timeout` seconds, `.serverNotRunning`, `.clientOpenFailed`.
    public func waitForPort(_ portName: String, timeout: Double = 5) throws {
        let found = try withClient(named: "lockstep-portwait") { client in
            JACKFixtureSupport.poll(timeout: timeout, interval: 0.005) {
                jack_port_by_name(client, portName) != nil
            }
        }
        if !found { throw JACKFixtureError.portNotFound(portName, seconds: timeout) }
    }

    /// Waits until some port whose full name matches the regular expression `pattern` exists on
    /// the server named `serverName` (one this process did not start, e.g. a `jackd` the CLI
    /// started); false after `timeout` seconds or when no client can be opened there.
    public static func waitForPort(matching pattern: String, onServer serverName: String, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var client: OpaquePointer?
        defer { if let client { jack_client_close(client) } }
        return JACKFixtureSupport.poll(timeout: timeout, interval: 0.01) {
            if client == nil { client = try? JACKFixtureSupport.openClient(named: "lockstep-portwait", serverName: serverName) }
            guard let client, Date() < deadline else { return false }
            return !JACKFixtureSupport.takeStringList(jack_get_ports(client, pattern, nil, 0)).isEmpty
        }
    }

    /// Waits until a port whose full name matches `pattern` exists (true) or none does (with
    /// `present` false): a client under test registered, or went away; false after `timeout`.
    public func waitForPorts(matching pattern: String, present: Bool = true, timeout: Double = 10) -> Bool {
        (try? withClient(named: "lockstep-portwait") { client in
            JACKFixtureSupport.poll(timeout: timeout, interval: 0.01) {
                JACKFixtureSupport.takeStringList(jack_get_ports(client, pattern, nil, 0)).isEmpty != present
            }
        }) ?? false
    }

    /// Waits until `port` is connected to `other` (for example a connection a CLI under test
    /// makes after registering its ports).
    ///
    /// - Throws: `.portNotFound` (naming the connection) after `timeout` seconds,
    ///   `.serverNotRunning`, `.clientOpenFailed`.
    public func waitForConnection(_ port: String, to other: String, timeout: Double = 5) throws {
        let found = try withClient(named: "lockstep-connwait") { client in
            JACKFixtureSupport.poll(timeout: timeout, interval: 0.005) {
                guard let handle = jack_port_by_name(client, port) else { return false }
                return jack_port_connected_to(handle, other) != 0
            }
        }
        if !found { throw JACKFixtureError.portNotFound("\(port) → \(other)", seconds: timeout) }
    }

    // MARK: - Process management

    private func processAliveLocked() -> Bool {
        if stopped || exitStatus != nil { return false }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid || (result < 0 && errno == ECHILD) {
            exitStatus = result == pid ? status : -1
            JACKProcessRegistry.unregister(pid)
            return false
        }
        return true
    }

    private func shutDown(signal: Int32, grace: Double) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        let wasAlive = processAliveLocked()
        stopped = true
        if wasAlive {
            Glibc.kill(pid, signal)
            if let status = JACKServer.waitForExit(pid: pid, timeout: grace) {
                exitStatus = status
            } else {
                Glibc.kill(pid, SIGKILL)
                exitStatus = JACKServer.waitForExit(pid: pid, timeout: 5) ?? -1
            }
            JACKProcessRegistry.unregister(pid)
        }
        watchdog?.disarm()
        // A server that was killed, crashed, or shut down while clients hung leaves files and
        // shared memory behind. Both are found by this server's unique name and pid, so removing
        // them is safe (and a no-op after a clean exit).
        JACKServer.removeServerFiles(name: name)
        JACKSharedMemoryRegistry.reclaimDeadServers()
    }

    static func describeExit(_ status: Int32) -> String {
        if status < 0 { return "exit status unknown" }
        if status & 0x7f == 0 { return "exit code \((status >> 8) & 0xff)" }
        return "killed by signal \(status & 0x7f)"
    }

    /// Reaps `pid`, polling for up to `timeout` seconds; returns its wait status, or nil if it
    /// is still running.
    static func waitForExit(pid: pid_t, timeout: Double) -> Int32? {
        var status: Int32 = 0
        var result: pid_t = 0
        _ = JACKFixtureSupport.poll(timeout: timeout, interval: 0.005) {
            result = waitpid(pid, &status, WNOHANG)
            return result != 0 && !(result < 0 && errno == EINTR)
        }
        if result == pid { return status }
        if result < 0 && errno == ECHILD { return -1 }
        return nil
    }

    /// Sends `SIGTERM`, waits `grace` seconds, then `SIGKILL`s and reaps.
    static func terminate(pid: pid_t, grace: Double) {
        Glibc.kill(pid, SIGTERM)
        if waitForExit(pid: pid, timeout: grace) == nil {
            Glibc.kill(pid, SIGKILL)
            _ = waitForExit(pid: pid, timeout: 5)
        }
    }

    static func waitUntilReady(pid: pid_t, name: String, command: String, logPath: String,
                               timeout: Double) throws {
        let socket = socketPath(name: name)
        let deadline = JACKFixtureSupport.monotonicNanoseconds() + UInt64(timeout * 1e9)
        var round = 0
        while true {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid || (result < 0 && errno == ECHILD) {
                JACKProcessRegistry.unregister(pid)
                throw JACKFixtureError.serverExitedDuringStartup(
                    command: command, exitDescription: describeExit(result == pid ? status : -1),
                    logTail: tail(of: logPath, maxLines: 30))
            }
            // Probe only once the socket exists (or now and then, should the socket live
            // elsewhere), so libjack does not print a connection error every 20 ms.
            if access(socket, F_OK) == 0 || round % 10 == 9, acceptsClients(name, evenWithoutSocket: true) {
                return
            }
            if JACKFixtureSupport.monotonicNanoseconds() >= deadline {
                throw JACKFixtureError.serverStartTimedOut(command: command, seconds: timeout,
                                                           logTail: tail(of: logPath, maxLines: 30))
            }
            round += 1
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// Whether a server named `name` accepts clients now (opens and closes a probe client).
    /// Unless `evenWithoutSocket`, a missing socket file answers "no" without a probe (and
    /// without libjack's error messages).
    static func acceptsClients(_ name: String, evenWithoutSocket: Bool = false) -> Bool {
        if !evenWithoutSocket && access(socketPath(name: name), F_OK) != 0 { return false }
        var status = jack_status_t(rawValue: 0)
        guard let client = lockstep_jack_client_open("lockstep-probe", name, 1, &status) else { return false }
        jack_client_close(client)
        return true
    }

    /// The server's socket, `/dev/shm/jack_<name>_<uid>_0` with jackd2's default tmpdir.
    static func socketPath(name: String) -> String { "/dev/shm/jack_\(name)_\(getuid())_0" }

    /// Removes the socket and semaphore files a server that died left in `/dev/shm`.
    static func removeServerFiles(name: String) {
        let uid = getuid()
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm") else { return }
        let prefixes = ["jack_\(name)_\(uid)_", "jack_sem.\(uid)_\(name)_"]
        for entry in entries where prefixes.contains(where: { entry.hasPrefix($0) }) {
            unlink("/dev/shm/" + entry)
        }
    }

    static func jackdPath() -> String? {
        let environment = ProcessInfo.processInfo.environment
        if let explicit = environment["LOCKSTEP_JACKD"], access(explicit, X_OK) == 0 { return explicit }
        let directories = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + ["/usr/bin", "/usr/local/bin"]
        for directory in directories where !directory.isEmpty {
            let candidate = directory + "/jackd"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    static func appendToLog(_ path: String, _ text: String) {
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: Data(text.utf8))
    }

    static func tail(of path: String, maxLines: Int) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return "" }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.suffix(maxLines).joined(separator: "\n")
    }

    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// Looks up a libc function Swift's Glibc module hides behind `_GNU_SOURCE`.
    private static func libcFunction<F>(_ name: String, as type: F.Type) -> F? {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }

    /// `pipe2(O_CLOEXEC)` (looked up at run time), or `pipe` + `FD_CLOEXEC` where it is missing.
    static func makeCloseOnExecPipe(_ fds: inout [Int32]) -> Bool {
        if let pipe2 = libcFunction("pipe2", as: Pipe2.self) {
            return fds.withUnsafeMutableBufferPointer { pipe2($0.baseAddress, O_CLOEXEC) } == 0
        }
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// Adds actions that close every descriptor above 2 in the child, so `jackd` does not hold
    /// pipes of other processes the tests started: `posix_spawn_file_actions_addclosefrom_np`
    /// (glibc 2.34+, looked up at run time), else one close per descriptor open now.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        if let closeFrom = libcFunction("posix_spawn_file_actions_addclosefrom_np", as: CloseFrom.self),
           closeFrom(&actions, 3) == 0 {
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap({ Int32($0) }) where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }

    /// Starts `arguments[0]` with `posix_spawn`: stdin from `stdinDescriptor` (or /dev/null),
    /// stdout and stderr appended to `logPath` (or /dev/null), every other descriptor closed,
    /// signal mask and the usual signal dispositions reset.
    static func spawn(_ arguments: [String], environment: [String], logPath: String?,
                      stdinDescriptor: Int32? = nil) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdinDescriptor {
            posix_spawn_file_actions_adddup2(&actions, stdinDescriptor, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 1, logPath ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        closeInheritedDescriptors(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2, SIGCHLD] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let code = posix_spawn(&child, arguments[0], &actions, &attributes, argv, envp)
        guard code == 0 else {
            throw JACKFixtureError.spawnFailed(command: arguments.joined(separator: " "), errno: code)
        }
        return child
    }
}

/// A `/bin/sh` process that terminates a server when the test process dies without stopping it
/// (a crash, `SIGKILL`): it blocks reading a pipe whose only writer is the test process, and on
/// end-of-file sends `SIGTERM` (then `SIGKILL` after 3 s) and removes the server's socket and
/// semaphore files. Its shared memory and registry slot are reclaimed by the next `JACKServer`
/// (`JACKSharedMemoryRegistry.reclaimDeadServers()`) or the next `jackd` that starts.
struct JACKWatchdog {
    /// The shell's process id.
    let pid: pid_t
    /// The pipe's write end (close-on-exec, so no other child inherits it).
    let pipe: Int32

    /// Starts a watchdog for `serverPID`; nil if the pipe or the shell could not be created.
    static func arm(serverPID: pid_t, executableName: String, serverName: String,
                    environment: [String]) -> JACKWatchdog? {
        var fds: [Int32] = [-1, -1]
        guard JACKServer.makeCloseOnExecPipe(&fds) else { return nil }
        defer { close(fds[0]) }
        // $1 jackd's pid, $2 its comm, $3 the server name, $4 the uid. A zombie counts as gone.
        let script = """
            read line
            alive() { [ "$(cat /proc/$1/comm 2>/dev/null)" = "$2" ] && ! grep -q '^State:.*Z' /proc/$1/status 2>/dev/null; }
            if alive "$1" "$2"; then
              kill -TERM "$1" 2>/dev/null
              i=0
              while alive "$1" "$2" && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
              alive "$1" "$2" && kill -KILL "$1" 2>/dev/null && sleep 0.2
            fi
            rm -f "/dev/shm/jack_$3_$4_"* "/dev/shm/jack_sem.$4_$3_"*
            """
        let arguments = ["/bin/sh", "-c", script, "lockstep-jackd-watchdog", String(serverPID), executableName,
                         serverName, String(getuid())]
        guard let pid = try? JACKServer.spawn(arguments, environment: environment, logPath: nil,
                                              stdinDescriptor: fds[0]) else {
            close(fds[1])
            return nil
        }
        return JACKWatchdog(pid: pid, pipe: fds[1])
    }

    /// Stops the watchdog without letting it act: kills and reaps it, then closes the pipe
    /// (closing first would make it terminate the server). Call once.
    func disarm() {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(pipe)
    }
}

/// The `jackd` processes this test process started and has not reaped; an `atexit` handler
/// terminates whatever is left when the process exits (a server that was never deinitialized)
/// and removes its files and log directory.
enum JACKProcessRegistry {
    struct Entry: Sendable {
        var serverName: String
        var logDirectory: String
    }

    private static let servers = Mutex<[pid_t: Entry]>([:])
    private static let exitHandlerInstalled: Bool = {
        atexit { JACKProcessRegistry.terminateAll() }
        return true
    }()

    static func register(_ pid: pid_t, serverName: String, logDirectory: String) {
        _ = exitHandlerInstalled
        servers.withLock { $0[pid] = Entry(serverName: serverName, logDirectory: logDirectory) }
    }

    static func unregister(_ pid: pid_t) {
        _ = servers.withLock { $0.removeValue(forKey: pid) }
    }

    /// Terminates (`SIGTERM`, then `SIGKILL` after 2 s) and reaps every registered server.
    static func terminateAll() {
        let left = servers.withLock { servers -> [pid_t: Entry] in
            let copy = servers
            servers.removeAll()
            return copy
        }
        guard !left.isEmpty else { return }
        for pid in left.keys { kill(pid, SIGTERM) }
        var pending = Set(left.keys)
        _ = JACKFixtureSupport.poll(timeout: 2, interval: 0.01) {
            pending = pending.filter { JACKServer.waitForExit(pid: $0, timeout: 0) == nil }
            return pending.isEmpty
        }
        for pid in pending {
            kill(pid, SIGKILL)
            _ = JACKServer.waitForExit(pid: pid, timeout: 2)
        }
        let keepLogs = ProcessInfo.processInfo.environment["LOCKSTEP_KEEP_JACK_LOGS"] != nil
        for entry in left.values {
            JACKServer.removeServerFiles(name: entry.serverName)
            if !keepLogs { try? FileManager.default.removeItem(atPath: entry.logDirectory) }
        }
        JACKSharedMemoryRegistry.reclaimDeadServers()
    }
}
