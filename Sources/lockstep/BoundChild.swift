import CSpawn
import Foundation

/// A child process stopped when lockstep goes, however it goes — also by SIGKILL — so a server
/// lockstep started is never orphaned and shuts down cleanly (a keeper process watches lockstep,
/// lets the server drop lockstep's dead client, then sends SIGTERM; see `CSpawn`). Its output goes
/// to a log file that is unlinked as soon as the child runs: lockstep keeps a descriptor to read
/// the tail of it, and nothing is left in the temporary folder whatever happens.
final class BoundChild {
    /// The child's process id (the server's).
    let pid: Int32
    /// The keeper's process id: signals sent to it reach the child; it exits as the child does.
    private let keeper: Int32
    private let log: Int32
    private var exited = false

    /// Starts `executable` with `arguments` and `environment`.
    /// - Throws: ``CLIError`` when the log or the process cannot be created.
    init(executable: String, arguments: [String], environment: [String: String]) throws {
        let logPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("lockstep-\(URL(fileURLWithPath: executable).lastPathComponent)-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log").path
        let fd = open(logPath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CLIError(message: "cannot create a log for \(executable) in \(FileManager.default.temporaryDirectory.path): \(String(cString: strerror(errno)))")
        }
        // The file lives on through the descriptors only: nothing to clean up, ever.
        unlink(logPath)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child: pid_t = -1
        let keeper = argv.withUnsafeBufferPointer { arguments in
            envp.withUnsafeBufferPointer { environment in
                lockstep_spawn_kept(executable, arguments.baseAddress, environment.baseAddress, fd, 1000, &child)
            }
        }
        guard keeper > 0, child > 0 else {
            let code = errno
            close(fd)
            throw CLIError(message: "cannot start \(executable): \(String(cString: strerror(code)))")
        }
        pid = child
        self.keeper = keeper
        log = fd
    }

    deinit {
        terminate()
        close(log)
    }

    /// Whether the child still runs (reaps it once it has exited).
    var isRunning: Bool {
        if exited { return false }
        var status: Int32 = 0
        let result = waitpid(keeper, &status, WNOHANG)
        if result == keeper || (result < 0 && errno == ECHILD) { exited = true }
        return !exited
    }

    /// Stops the child: SIGTERM, then SIGKILL after `grace` seconds; reaps it. Idempotent.
    func terminate(grace: Double = 3) {
        guard isRunning else { return }
        kill(keeper, SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        while isRunning && Date() < deadline { usleep(10_000) }
        if isRunning {
            kill(keeper, SIGKILL)                   // the child follows (its death signal)
            var status: Int32 = 0
            _ = waitpid(keeper, &status, 0)
            exited = true
        }
    }

    /// The last `lines` lines the child wrote, joined with " / ".
    func outputTail(lines: Int) -> String {
        let size = lseek(log, 0, SEEK_END)
        guard size > 0 else { return "" }
        let length = Int(min(size, 8192))
        var buffer = [UInt8](repeating: 0, count: length)
        let read = pread(log, &buffer, length, size - off_t(length))
        guard read > 0 else { return "" }
        return String(decoding: buffer[0..<read], as: UTF8.self)
            .split(separator: "\n").suffix(lines).joined(separator: " / ")
    }
}
