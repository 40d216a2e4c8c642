import Foundation

/// A static file server on 127.0.0.1 for tests: `python3 -m http.server` serving one directory on
/// a port the system picks, killed by ``stop()`` or when released.
public final class StaticHTTPServer: @unchecked Sendable {
    /// The port it listens on.
    public let port: Int
    private let process: Process

    /// Starts serving `directory`; waits (at most `timeout` seconds) until the server says where it
    /// listens.
    /// - Throws: when python3 cannot be run, or no port is announced in time (the process is then killed).
    public init(directory: String, timeout: Double = 10) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", directory]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // "Serving HTTP on 127.0.0.1 port 41235 (http://127.0.0.1:41235/) ..."
        var text = ""
        var found: Int?
        let deadline = Date().addingTimeInterval(timeout)
        let handle = output.fileHandleForReading
        while found == nil, Date() < deadline, process.isRunning {
            var poll = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&poll, 1, 100) > 0 else { continue }
            let data = handle.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
            if let range = text.range(of: " port "), let number = Int(text[range.upperBound...].prefix { $0.isNumber }) {
                found = number
            }
        }
        guard let found else {
            Self.end(process)
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "python3 -m http.server announced no port: \(text)"])
        }
        port = found
    }

    deinit { stop() }

    /// The URL of `name` in the served directory.
    public func url(_ name: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(name)")! }

    /// Stops the server and waits for it to exit.
    public func stop() { Self.end(process) }

    private static func end(_ process: Process) {
        guard process.isRunning else { return }
        // SIGKILL: the server keeps nothing, and a child may inherit a mask that blocks SIGTERM
        // from the test process's threads.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
