import Foundation

/// The tests' independent LTC decoder: `Tests/Fixtures/ltc-decode.c`, a program of the
/// project's own on libltc's decoder (not the encoder path Lockstep generates with), compiled
/// with `cc` next to the test bundle the first time it is needed.
public enum LTCDecoder {
    /// One decoded frame.
    public struct Frame: Hashable, Sendable, CustomStringConvertible {
        /// The label, `HH:MM:SS:FF`.
        public var timecode: String
        /// The frame's drop-frame bit.
        public var dropFrame: Bool
        /// libltc's estimate of the frame's first sample (within a couple of samples: it times
        /// bits by a running average).
        public var start: Int64
        /// libltc's estimate of the frame's last sample.
        public var end: Int64
        /// Whether libltc decoded it as played backwards.
        public var reverse: Bool
        /// The exact sample of the transition that ended the frame (the next frame's first
        /// sample): the signal's sign change nearest to ``end`` + 1; −1 if none lies within 6.
        public var edge: Int64

        /// The line the program printed.
        public var description: String { "\(timecode) df=\(dropFrame ? 1 : 0) \(start)…\(end) edge \(edge)\(reverse ? " reverse" : "")" }
    }

    /// The compiled program's path (compiled on first use).
    public static func program() throws -> String { try FixtureProgram.compiled("ltc-decode") }

    /// Decodes channel `channel` (from 0) of the audio file at `path`; `samplesPerFrame` is the
    /// decoder's hint of the frame length.
    public static func frames(path: String, channel: Int, samplesPerFrame: Int) throws -> [Frame] {
        let result = try CLI.run([path, String(channel), String(samplesPerFrame)], timeout: 120, executable: try program())
        guard result.status == 0 else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "ltc-decode \(path): \(result.stderr)"])
        }
        return result.stdout.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 6, let start = Int64(fields[2]), let end = Int64(fields[3]), let edge = Int64(fields[5]) else { return nil }
            return Frame(timecode: String(fields[0]), dropFrame: fields[1] == "1", start: start, end: end, reverse: fields[4] == "1", edge: edge)
        }
    }
}

/// The C programs in `Tests/Fixtures` the tests run (on libltc and libsndfile), compiled with
/// `cc` next to the test bundle the first time each is needed and again when its source changes.
public enum FixtureProgram {
    private static let lock = NSLock()

    /// The path of `Tests/Fixtures/NAME.c` compiled.
    public static func compiled(_ name: String) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/\(name).c").path
        let output = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().appendingPathComponent(name).path
        let manager = FileManager.default
        let sourceDate = (try? manager.attributesOfItem(atPath: source)[.modificationDate] as? Date) ?? .distantFuture
        if let built = try? manager.attributesOfItem(atPath: output)[.modificationDate] as? Date, built >= sourceDate {
            return output
        }
        let command = "cc -Wall -Wextra -Werror '\(source)' -o '\(output)' $(pkg-config --cflags --libs ltc sndfile jack)"
        let result = try CLI.run(["-c", command], timeout: 120, executable: "/bin/sh")
        guard result.status == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(command)\n\(result.stderr)"])
        }
        return output
    }
}
