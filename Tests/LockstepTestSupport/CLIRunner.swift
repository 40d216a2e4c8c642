import Foundation

/// Runs the built `lockstep` binary as a real process.
public enum CLI {
    /// What a finished run printed and returned.
    public struct Result: Sendable {
        /// The exit status.
        public var status: Int32
        /// Everything written to standard output.
        public var stdout: String
        /// Everything written to standard error.
        public var stderr: String
        /// The signal that ended the process when it did not exit by itself (SIGILL for a trap,
        /// SIGSEGV, SIGKILL after a timeout, …); nil after a normal exit. ``status`` then holds the
        /// signal's number, not an exit status.
        public var uncaughtSignal: Int32? = nil
        /// Whether the process was still running at the timeout and was killed.
        public var timedOut = false

        /// Whether the process ended by itself (no timeout, no uncaught signal) with a status
        /// below 128: what every run on bad input must do.
        public var endedCleanly: Bool { uncaughtSignal == nil && !timedOut && status < 128 }

        /// A result put together by a test (one file's part of a run over many files).
        public init(status: Int32, stdout: String, stderr: String, uncaughtSignal: Int32? = nil, timedOut: Bool = false) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
            self.uncaughtSignal = uncaughtSignal
            self.timedOut = timedOut
        }
    }

    /// The `lockstep` executable next to the test bundle in the build folder.
    public static var binary: String { executable(named: "lockstep") }

    /// An executable product (`lockstep`, an example such as `AQPlayer`) next to the test bundle
    /// in the build folder.
    public static func executable(named name: String) -> String {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while dir.path.contains(".xctest") { dir.deleteLastPathComponent() }
        return dir.appendingPathComponent(name).path
    }

    /// `XDG_STATE_HOME` of every process started: a folder of this test process's own (edit
    /// journals go there), removed when it exits.
    public static let stateHome: String = {
        let path = NSTemporaryDirectory() + "lockstep-test-state-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: CLI.stateHome) }
        return path
    }()

    /// Starts `lockstep` (or `executable`) with `arguments`; `environment` entries are added to
    /// the test's own. With `withInput`, its standard input is a pipe fed by
    /// ``RunningCLI/send(line:)``.
    public static func spawn(_ arguments: [String], environment: [String: String] = [:],
                             in directory: String? = nil, executable: String = binary,
                             withInput: Bool = false) throws -> RunningCLI {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "JACK_DEFAULT_SERVER")
        // Edit journals in a folder of the test run's own, not the user's ~/.local/state.
        env["XDG_STATE_HOME"] = stateHome
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = withInput ? Pipe() : nil
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        return RunningCLI(process: process, out: out, err: err, input: input)
    }

    /// Runs `lockstep` (or `executable`) to completion (killed after `timeout` seconds).
    public static func run(_ arguments: [String], environment: [String: String] = [:], in directory: String? = nil,
                           timeout: Double = 60, executable: String = binary) throws -> Result {
        try spawn(arguments, environment: environment, in: directory, executable: executable).wait(timeout: timeout)
    }
}

/// A `lockstep` process that is running.
public final class RunningCLI: @unchecked Sendable {
    let process: Process
    private var outData = Data()
    private var errData = Data()
    private let lock = NSLock()
    private let readers = DispatchGroup()

    private let input: Pipe?

    init(process: Process, out: Pipe, err: Pipe, input: Pipe? = nil) {
        self.process = process
        self.input = input
        for (pipe, isOut) in [(out, true), (err, false)] {
            readers.enter()
            DispatchQueue.global().async { [self] in
                while true {
                    let data = pipe.fileHandleForReading.availableData
                    if data.isEmpty { break }
                    lock.lock()
                    if isOut { outData += data } else { errData += data }
                    lock.unlock()
                }
                readers.leave()
            }
        }
    }

    /// The process id.
    public var pid: Int32 { process.processIdentifier }
    /// Whether it is still running.
    public var isRunning: Bool { process.isRunning }

    /// Writes `line` and a newline to the process's standard input (spawned `withInput`).
    /// - Returns: false when it could not be written (the process has exited: a broken pipe is
    ///   the test's failure to report, not a crash of the whole test run).
    @discardableResult
    public func send(line: String) -> Bool {
        send(data: Data((line + "\n").utf8))
    }

    /// Writes `data` to the process's standard input (spawned `withInput`), as it is.
    /// - Returns: false when it could not be written (see ``send(line:)``).
    @discardableResult
    public func send(data: Data) -> Bool {
        guard let input else { return false }
        return (try? input.fileHandleForWriting.write(contentsOf: data)) != nil
    }

    /// The bytes written to standard output so far.
    public var outputByteCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return outData.count
    }

    /// Everything written to standard output so far, as bytes.
    public var outputDataSoFar: Data {
        lock.lock()
        defer { lock.unlock() }
        return outData
    }

    /// Closes the process's standard input (end of file).
    public func closeInput() { try? input?.fileHandleForWriting.close() }

    /// Everything written to standard error so far.
    public var errorOutputSoFar: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: errData, as: UTF8.self)
    }

    /// Everything written to standard output so far.
    public var outputSoFar: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: outData, as: UTF8.self)
    }

    /// The bytes written to standard error so far: a mark for
    /// ``waitForErrorOutput(containing:after:timeout:)``.
    public var errorByteCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return errData.count
    }

    /// Waits until standard error, from byte `offset` on, holds `fragment`; returns false after
    /// `timeout` seconds or when the process exits first.
    public func waitForErrorOutput(containing fragment: String, after offset: Int = 0, timeout: Double = 10) -> Bool {
        wait(for: fragment, in: \.errData, after: offset, timeout: timeout)
    }

    /// Waits until standard output, from byte `offset` on, holds `fragment`; returns false after
    /// `timeout` seconds or when the process exits first.
    public func waitForOutput(containing fragment: String, after offset: Int = 0, timeout: Double = 10) -> Bool {
        wait(for: fragment, in: \.outData, after: offset, timeout: timeout)
    }

    private func wait(for fragment: String, in stream: KeyPath<RunningCLI, Data>, after offset: Int, timeout: Double) -> Bool {
        func found() -> Bool {
            lock.lock()
            defer { lock.unlock() }
            return String(decoding: self[keyPath: stream].dropFirst(offset), as: UTF8.self).contains(fragment)
        }
        return JACKFixtureSupport.poll(timeout: timeout, interval: 0.005) { found() || !process.isRunning } && found()
    }

    /// Sends `line` (a typed command) and waits until standard error holds `reply` after it: the
    /// command's answer. False when the line could not be sent or no answer came in `timeout`.
    @discardableResult
    public func send(line: String, awaiting reply: String, timeout: Double = 10) -> Bool {
        let mark = errorByteCount
        return send(line: line) && waitForErrorOutput(containing: reply, after: mark, timeout: timeout)
    }

    /// Sends `line` and waits until standard output holds `output` after it (a `status` line's
    /// JSON). False when the line could not be sent or nothing came in `timeout`.
    @discardableResult
    public func send(line: String, awaitingOutput output: String, timeout: Double = 10) -> Bool {
        let mark = outputByteCount
        return send(line: line) && waitForOutput(containing: output, after: mark, timeout: timeout)
    }

    /// Waits until standard output holds `fragment`; returns false after `timeout` seconds or when
    /// the process exits first.
    public func waitForOutput(containing fragment: String, timeout: Double = 10) -> Bool {
        JACKFixtureSupport.poll(timeout: timeout, interval: 0.005) {
            outputSoFar.contains(fragment) || !process.isRunning
        } && outputSoFar.contains(fragment)
    }

    /// Sends a signal (SIGINT, SIGTERM, …).
    public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits for the process to exit (SIGKILL after `timeout` seconds) and returns what it printed.
    public func wait(timeout: Double = 60) -> CLI.Result {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        let timedOut = process.isRunning
        if timedOut { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        readers.wait()
        lock.lock()
        defer { lock.unlock() }
        let signal = process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
        return CLI.Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                          stderr: String(decoding: errData, as: UTF8.self), uncaughtSignal: signal, timedOut: timedOut)
    }
}
