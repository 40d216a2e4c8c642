import Foundation

/// Two network namespaces joined by a veth pair (`Scripts/netns-pair.sh`, run as a child that
/// holds them while its standard input is open: closing it, or this process dying, deletes them),
/// for two machines' processes on two network stacks.
public final class NetnsPair: @unchecked Sendable {
    /// The namespaces' names, and each one's address on the pair.
    public let a: String
    public let b: String
    public let aAddress: String
    public let bAddress: String

    private let process: Process
    private let input: FileHandle

    /// Why namespaces cannot be made here (the script's `skip:` line).
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    /// Makes the pair (held for at most `seconds`).
    /// - Throws: ``Unavailable`` when namespaces cannot be made here; a `CocoaError` when the
    ///   script fails.
    public init(seconds: Int = 900) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Scripts/netns-pair.sh").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, "--seconds", String(seconds)]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        self.process = process
        input = stdin.fileHandleForWriting
        var line = ""
        let reader = stdout.fileHandleForReading
        while !line.hasSuffix("\n") {
            let byte = reader.readData(ofLength: 1)
            if byte.isEmpty { break }
            line += String(decoding: byte, as: UTF8.self)
        }
        if line.hasPrefix("skip: ") {
            process.waitUntilExit()
            throw Unavailable(description: String(line.dropFirst(6)).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        var fields: [String: String] = [:]
        for field in line.split(whereSeparator: { $0 == " " || $0 == "\n" }).dropFirst() {
            let parts = field.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        guard line.hasPrefix("ready "), let a = fields["a"], let b = fields["b"], let aAddress = fields["a_address"], let bAddress = fields["b_address"] else {
            process.terminate()
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "Scripts/netns-pair.sh said: \(line)"])
        }
        (self.a, self.b, self.aAddress, self.bAddress) = (a, b, aAddress, bAddress)
    }

    /// The arguments that run `command` in namespace `namespace` (`ip netns exec`, which becomes
    /// the command: its process id is the command's).
    public static func arguments(in namespace: String, _ command: [String]) -> [String] {
        ["netns", "exec", namespace] + command
    }

    /// `ip`'s path, for ``CLI/spawn(_:environment:in:executable:withInput:)``.
    public static var ip: String { ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "ip" }

    /// Deletes the namespaces (also at deinit).
    public func stop() {
        try? input.close()
        process.waitUntilExit()
    }

    deinit { stop() }
}
