import Foundation
import LockstepOSC

/// liblo-tools' `oscdump` as an independent OSC receiver: it listens on a free port and every
/// message it prints is kept as a line (`/reply/go s "{…}"`).
///
/// ``stop()`` (or releasing it) kills the process: the test process blocks SIGTERM, and its
/// children inherit that mask, so only SIGKILL ends them reliably.
public final class OSCDump: @unchecked Sendable {
    /// The port it listens on.
    public let port: UInt16
    private let process = Process()
    private let output = Output()
    private let readerDone = DispatchSemaphore(value: 0)

    /// What `oscdump` printed (kept apart from the dump, which the reader must not retain).
    private final class Output: @unchecked Sendable {
        let lock = NSLock()
        var text = ""
    }

    /// The path of a liblo-tools program (`oscdump`, `oscsend`), nil when not installed.
    public static func tool(_ name: String) -> String? {
        ["/usr/bin/", "/usr/local/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether `oscdump` and `oscsend` are installed (for `.enabled(if:)`).
    public static var isAvailable: Bool { tool("oscdump") != nil && tool("oscsend") != nil }

    /// Starts `oscdump -L PORT` on a free port and waits until it prints what it receives.
    public init() throws {
        // A free port: bind one, note it, let it go.
        port = try OSCUDPSocket(binding: OSCEndpoint(host: "127.0.0.1", port: 0)).localAddress.port
        process.executableURL = URL(fileURLWithPath: Self.tool("oscdump") ?? "/usr/bin/oscdump")
        process.arguments = ["-L", String(port)]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        DispatchQueue.global().async { [output, readerDone] in
            while true {
                let data = out.fileHandleForReading.availableData
                if data.isEmpty { break }
                output.lock.lock()
                output.text += String(decoding: data, as: UTF8.self)
                output.lock.unlock()
            }
            readerDone.signal()
        }
        // Ready once a probe sent to it comes out.
        let probe = try OSCMessage("/lockstep-test/probe").encoded()
        let sender = try OSCUDPSocket(binding: OSCEndpoint(host: "127.0.0.1", port: 0))
        let target = try OSCPeer.resolve(OSCEndpoint(host: "127.0.0.1", port: port))
        var ready = false
        for _ in 0..<100 where !ready {
            sender.send(probe, to: target)
            ready = line(containing: "/lockstep-test/probe", timeout: 0.05) != nil
        }
        guard ready else {
            stop()
            throw OSCError(.cannotBind, "oscdump did not start listening on port \(port)")
        }
    }

    deinit { stop() }

    /// Every line printed so far.
    public var lines: [String] {
        output.lock.lock()
        defer { output.lock.unlock() }
        return output.text.split(separator: "\n").map(String.init)
    }

    /// Waits for a printed line containing `fragment`.
    public func line(containing fragment: String, timeout: Double = 5) -> String? {
        lines(containing: fragment, count: 1, timeout: timeout).first
    }

    /// Waits until `count` printed lines contain `fragment`, and returns those there are then.
    public func lines(containing fragment: String, count: Int, timeout: Double = 5) -> [String] {
        _ = JACKFixtureSupport.poll(timeout: timeout, interval: 0.005) { lines.filter { $0.contains(fragment) }.count >= count }
        return lines.filter { $0.contains(fragment) }
    }

    /// The JSON object in a printed line `ADDRESS s "{…}"`.
    public static func json(_ line: String) -> [String: Any]? {
        guard let open = line.range(of: " s \""), let close = line.lastIndex(of: "\""), close > open.upperBound else { return nil }
        let body = line[open.upperBound..<close]
        return try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
    }

    /// Stops `oscdump` (SIGKILL) and waits for it.
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        readerDone.wait()
    }
}
