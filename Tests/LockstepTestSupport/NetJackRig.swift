import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A netjack2 master and two slaves on this machine, each `jackd` in a network namespace of its
/// own: `Scripts/netjack-rig.sh` run as a child process, driven through its standard input.
///
/// The script bounds everything it starts (`timeout` on every process, a time limit of its own,
/// a cleanup trap that stops the servers and deletes its namespaces); closing its input — which
/// the kernel does when this process dies — ends it too. ``stop()`` (also at deinit) asks it to
/// quit and waits, then kills it.
public final class NetJackRig: @unchecked Sendable {
    /// The master's JACK server name (dummy driver + `netmanager`).
    public let master: String
    /// The slaves' client names on the master (`<name>:to_slave_N`), B then C.
    public let slaves: [String]
    /// The slaves' own JACK server names, B then C.
    public let slaveServers: [String]
    /// The period of every server, in frames.
    public let period: Int
    /// The netjack2 network latency (`jackd -d net -l`), in cycles.
    public let networkLatency: Int

    private let process: Process
    private let input: FileHandle
    private let output: Int32
    private var buffer: [UInt8] = []
    private let lock = NSLock()

    /// Why a rig cannot run here (printed by the script as `skip: …`).
    public struct Unavailable: Error, CustomStringConvertible {
        /// The script's reason.
        public var description: String
    }

    /// The rig failed: it did not come up, or it ended or stopped answering.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }

    /// The script, found from this file's place in the package.
    public static var scriptPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Scripts/netjack-rig.sh").path
    }

    /// Starts the rig and waits (up to `startTimeout` seconds) until the slaves show on the master.
    /// - Parameters:
    ///   - seconds: The rig's own time limit, from its start.
    ///   - period: Frames per period of every server.
    ///   - networkLatency: The slaves' `-l`.
    /// - Throws: ``Unavailable`` when namespaces cannot be made here (not root, tools missing);
    ///   ``Failure`` when the rig does not come up.
    public init(seconds: Int, period: Int = 256, networkLatency: Int = 2, startTimeout: Double = 40) throws {
        // The rig needs three of jackd2's eight server slots: free those of dead servers first.
        _ = JACKSharedMemoryRegistry.reclaimDeadServers()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Self.scriptPath, "--seconds", String(seconds), "--period", String(period),
                             "--latency", String(networkLatency)]
        let stdin = Pipe()
        let stdout = Pipe()
        // Its standard error (retries, and the servers' logs when it fails) is kept to explain a
        // failure; with LOCKSTEP_NETJACK_DEBUG it goes to ours as it comes.
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = ProcessInfo.processInfo.environment["LOCKSTEP_NETJACK_DEBUG"] == nil ? stderr : FileHandle.standardError
        try process.run()
        self.process = process
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading.fileDescriptor
        self.period = period
        self.networkLatency = networkLatency
        var fields: [String: String] = [:]
        let deadline = Date().addingTimeInterval(startTimeout)
        var line: String?
        repeat {
            line = Self.readLine(output, buffer: &buffer, until: deadline)
        } while line != nil && !(line!.hasPrefix("ready ") || line!.hasPrefix("skip: "))
        guard let line else {
            let running = process.isRunning
            process.terminate()
            process.waitUntilExit()
            // The script has ended: what it wrote is in the pipe (a few lines, within its buffer).
            let said = Self.readAvailable(stderr.fileHandleForReading.fileDescriptor)
            throw Failure(description: "Scripts/netjack-rig.sh did not come up within \(Int(startTimeout)) s (\(running ? "still starting" : "exit \(process.terminationStatus)")); it said:\n\(said.suffix(4000))")
        }
        if line.hasPrefix("skip: ") {
            process.waitUntilExit()
            throw Unavailable(description: String(line.dropFirst(6)))
        }
        for field in line.split(separator: " ").dropFirst() {
            let parts = field.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        master = fields["master"] ?? ""
        slaves = (fields["slaves"] ?? "").split(separator: ",").map(String.init)
        slaveServers = (fields["slave_servers"] ?? "").split(separator: ",").map(String.init)
    }

    deinit { stop() }

    /// Sends one command (`loss b 5`, `counters`, `slaves`) and returns the script's one-line answer.
    /// - Throws: ``Failure`` when the rig has ended or does not answer.
    @discardableResult
    public func send(_ command: String, timeout: Double = 10) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        guard process.isRunning else { throw Failure(description: "the netjack2 rig has ended") }
        try input.write(contentsOf: Data((command + "\n").utf8))
        guard let answer = Self.readLine(output, buffer: &buffer, until: Date().addingTimeInterval(timeout)) else {
            throw Failure(description: "the netjack2 rig did not answer '\(command)'")
        }
        return answer
    }

    /// Packets dropped so far by the loss rules, per namespace (`m`, `b`, `c`).
    public func droppedPackets() throws -> [String: Int] {
        let answer = try send("counters")
        var result: [String: Int] = [:]
        for field in answer.split(separator: " ").dropFirst() {
            let parts = field.split(separator: "=")
            if parts.count == 2, let n = Int(parts[1]) { result[String(parts[0])] = n }
        }
        return result
    }

    /// Asks the script to clean up and waits for it (10 s), then kills it. Idempotent.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        if process.isRunning {
            try? input.write(contentsOf: Data("quit\n".utf8))
            try? input.close()
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning {
                // SIGTERM runs the script's cleanup trap; SIGKILL only if that hangs too.
                process.terminate()
                let last = Date().addingTimeInterval(5)
                while process.isRunning && Date() < last { usleep(20_000) }
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            }
            // Servers the script had to kill leave their registry slots behind.
            _ = JACKSharedMemoryRegistry.reclaimDeadServers()
        }
    }

    /// What can be read from `fd` now, without waiting.
    private static func readAvailable(_ fd: Int32) -> String {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { break }
            data.append(contentsOf: chunk[..<count])
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Reads one line from `fd` (through `buffer`), or nil at end of input or `deadline`.
    private static func readLine(_ fd: Int32, buffer: inout [UInt8], until deadline: Date) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(left, 1) * 1000)) >= 0 else { return nil }
            guard poller.revents != 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }
}
