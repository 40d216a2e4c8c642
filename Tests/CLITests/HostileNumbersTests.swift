import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Synchronization
import Testing

/// Numbers at and past every limit, for every numeric option of every command and every numeric key
/// of a session, each run through the built binary as a real process. Every run must end by itself
/// (no trap, no hang) with a status below 128; a failure must name its culprit (the option, or the
/// session line of the key) in one message; nothing but a finished output may be left in the folder,
/// the inputs must be byte-identical, and whatever is rendered must hold finite samples.
@Suite("lockstep CLI: numbers at and past every limit, for every option and session key")
struct HostileNumbersTests {
    /// Values for options: zero and signs, the smallest and largest doubles, overflowing integers,
    /// non-finite spellings, a week and past it, and things that are not numbers.
    static let optionValues = [
        "0", "-0", "-1", "1e-300", "0.5", "1e15", "1e308", "1e309", "inf", "-inf", "nan", "NaN",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551616",
        "604800", "604801", "99999999:00:00", "168:00:01", "0x10", "1_000", "12abc", "", " ",
    ]

    /// Values for session keys: the option values in YAML's spellings plus sample counts near
    /// Int64.max, YAML's non-number scalars, lists and mappings.
    static let sessionValues = [
        "0", "-0", "-1", "0.5", "1e-300", "1e15", "1e308", "1e309", ".inf", "-.inf", ".nan", "inf", "nan",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551616",
        "\"9223372036854775807 samples\"", "\"9223372036854775808 samples\"", "\"-1 samples\"", "\"1e300 samples\"",
        "\"0 samples\"", "99999999:00:00", "\"168:00:00\"", "\"168:00:01\"", "604800", "604801",
        "0x10", "1_000", "true", "null", "~", "[1, 2]", "{a: 1}", "\"\"", "manual", "forever", "+12dB",
        "12.0001dB", "-inf dB", "1e400dB", "-1e400dB", "1000000", "1000001", "4096", "768000", "768001",
    ]

    /// A session with every numeric key on a line of its own: `KEY` lines are the ones mutated.
    static let sessionTemplate: [(key: String?, line: String)] = [
        ("rate", "rate: 48000"),
        ("channels", "channels: 2"),
        (nil, "layers:"),
        (nil, "  a:"),
        ("layer gain", "    gain: 0dB"),
        (nil, "cues:"),
        (nil, "  - name: one"),
        (nil, "    layer: a"),
        (nil, "    file: GOOD.wav"),
        ("at", "    at: 0"),
        ("offset", "    offset: 0"),
        ("from", "    from: 0"),
        ("to", "    to: \"480 samples\""),
        ("fade_in", "    fade_in: 0"),
        ("fade_out", "    fade_out: 0"),
        ("loop", "    loop: 1"),
        ("gain", "    gain: 0dB"),
        (nil, "  - name: two"),
        (nil, "    layer: a"),
        (nil, "    file: GOOD.wav"),
        (nil, "    after: one"),
        ("crossfade", "    crossfade: 0"),
        (nil, "  - name: three"),
        (nil, "    layer: a"),
        (nil, "    file: GOOD.wav"),
        (nil, "    at: manual"),
        (nil, "automation:"),
        (nil, "  - layer: a"),
        ("automation at", "    at: 0.001"),
        ("automation gain", "    gain: -3dB"),
        ("automation ramp", "    ramp: 0"),
    ]

    /// The session with `key`'s value replaced by `value` (the template itself for nil), and the
    /// 1-based line of that key.
    static func session(key: String?, value: String) -> (text: String, line: Int) {
        var line = 0
        let lines = sessionTemplate.enumerated().map { index, entry -> String in
            guard let key, entry.key == key else { return entry.line }
            line = index + 1
            let colon = entry.line.firstIndex(of: ":")!
            return entry.line[...colon] + " " + value
        }
        return (lines.joined(separator: "\n") + "\n", line)
    }

    /// One hostile run: the arguments, the files it starts with, and what its failure must mention.
    struct Case: Sendable, CustomStringConvertible {
        var arguments: [String]
        var session: String?
        /// Any one of these in standard error names the culprit.
        var culprits: [String]
        /// Check the session with the others in one `session check` first and stop there when it
        /// is refused: `render` loads it the same way (every sixth case is rendered anyway, and
        /// must then fail exactly when the check refused).
        var checkFirst = false
        var description: String { (arguments.map { $0.isEmpty ? "''" : $0 }).joined(separator: " ") }
    }

    static let noServer = ["--server", "lockstep-hostile-none", "--start-server", "never"]

    static func optionCases() -> [Case] {
        var cases: [Case] = []
        let good = "cues:\n  - { name: one, layer: a, file: GOOD.wav, at: 0 }\n  - { name: bell, layer: a, file: GOOD.wav, at: manual }\n"
        let server = ["JACK server", "no server"]
        // An output too long for its container names the output, whichever option made it long.
        for value in optionValues {
            func add(_ arguments: [String], _ option: String, session: Bool = false, serverFails: Bool = false) {
                let output = arguments.contains("x.wav") && !serverFails ? ["x.wav: the output would be"] : []
                let osc = option.hasPrefix("--osc") ? ["OSC: cannot"] : []          // a host that does not resolve
                cases.append(Case(arguments: arguments, session: session ? good : nil,
                                  culprits: [option] + (serverFails ? server : []) + output + osc))
            }
            add(["render", "GOOD.wav", "-o", "x.wav", "--rate", value], "--rate")
            add(["render", "GOOD.wav", "-o", "x.wav", "--channels", value], "--channels")
            add(["render", "GOOD.wav", "-o", "x.wav", "--gain", value], "--gain")
            add(["render", "GOOD.wav", "-o", "x.wav", "--offset", value], "--offset")
            add(["session", "check", "S.yaml", "--rate", value], "--rate", session: true)
            add(["session", "render", "S.yaml", "-o", "x.wav", "--rate", value], "--rate", session: true)
            add(["session", "render", "S.yaml", "-o", "x.wav", "--duration", value], "--duration", session: true)
            add(["session", "render", "S.yaml", "-o", "x.wav", "--duration", "0.1", "--go", "bell@\(value)"], "--go", session: true)
            add(["play", "GOOD.wav", "--gain", value] + noServer, "--gain", serverFails: true)
            add(["play", "GOOD.wav", "--offset", value] + noServer, "--offset", serverFails: true)
            add(["play", "GOOD.wav", "--duration", value] + noServer, "--duration", serverFails: true)
            let recordServer = ["--server", "lockstep-hostile-none"]        // record never starts a server
            add(["record", "-o", "x.wav", "--port", "a:b", "--duration", value] + recordServer, "--duration", serverFails: true)
            add(["record", "-o", "x.wav", "--port", "a:b", "--channels", value] + recordServer, "--channels", serverFails: true)
            add(["record", "-o", "x.wav", "--port", "a:b", "--start-at", value] + recordServer, "--start-at", serverFails: true)
            add(["session", "run", "S.yaml", "--duration", value] + noServer, "--duration", session: true, serverFails: true)
            add(["session", "run", "S.yaml", "--from", value] + noServer, "--from", session: true, serverFails: true)
            add(["session", "run", "S.yaml", "--osc", value] + noServer, "--osc", session: true, serverFails: true)
            add(["session", "run", "S.yaml", "--osc", "127.0.0.1:\(value)"] + noServer, "--osc", session: true, serverFails: true)
            add(["session", "run", "S.yaml", "--osc-tcp", value] + noServer, "--osc-tcp", session: true, serverFails: true)
            add(["session", "run", "S.yaml", "--osc", "0", "--osc-reply-port", value] + noServer, "--osc-reply-port",
                session: true, serverFails: true)
        }
        return cases
    }

    static func sessionCases() -> [Case] {
        var cases: [Case] = []
        for key in sessionTemplate.compactMap(\.key) {
            for value in sessionValues {
                let (text, line) = session(key: key, value: value)
                // --duration 0.1 bounds what a valid but far-away time renders (a debug build mixes
                // slowly, and 720 of these run); "three" is manual.
                cases.append(Case(arguments: ["session", "render", "S.yaml", "-o", "x.wav", "--duration", "0.1"],
                                  session: text, culprits: ["S.yaml:\(line):", "'\(key.split(separator: " ").last!)'"],
                                  checkFirst: true))
            }
        }
        return cases
    }

    /// Writes the fixtures of `c` into its own folder under `root`.
    static func prepare(_ c: Case, in root: String, index: Int, good: Data) throws {
        let dir = "\(root)/case-\(index)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        try good.write(to: URL(fileURLWithPath: "\(dir)/GOOD.wav"))
        if let session = c.session { try session.write(toFile: "\(dir)/S.yaml", atomically: false, encoding: .utf8) }
    }

    /// Runs one `session check` over the sessions of `indices` (hundreds of files, one process)
    /// and returns, per refused case, the standard-error block its failure printed (the block's
    /// first line names its file). A check that does not end cleanly is a problem of its own.
    static func checkAll(_ indices: [Int], in root: String) throws -> (refusals: [Int: CLI.Result], problems: [String]) {
        guard !indices.isEmpty else { return ([:], []) }
        let r = try CLI.run(["session", "check"] + indices.map { "case-\($0)/S.yaml" }, in: root, timeout: 120)
        guard r.endedCleanly, !r.stderr.contains("Fatal error") else {
            return ([:], ["session check of \(indices.count) sessions did not end cleanly (status \(r.status), signal \(r.uncaughtSignal.map(String.init) ?? "none"), timed out \(r.timedOut)): \(r.stderr.suffix(400))"])
        }
        var blocks: [Int: String] = [:]
        var current: Int?
        for line in r.stderr.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("lockstep: ") {
                current = line.firstMatch(of: /case-(\d+)\/S\.yaml/).flatMap { Int($0.1) }
            }
            if let current, !line.contains("warning:") { blocks[current, default: ""] += line + "\n" }
        }
        let refusals = blocks.mapValues { CLI.Result(status: 1, stdout: "", stderr: $0) }
        let expected = refusals.isEmpty ? 0 : 1
        let problems = r.status == expected ? [] : ["session check of \(indices.count) sessions exited \(r.status) with \(refusals.count) refused"]
        return (refusals, problems)
    }

    /// Runs case `c` (prepared in its folder; `refusal` is what `session check` said of its
    /// session, when it refused it) and returns what went wrong (empty when everything held).
    static func run(_ c: Case, in root: String, index: Int, good: Data, refusal: CLI.Result?) -> [String] {
        let dir = "\(root)/case-\(index)"
        var problems: [String] = []
        do {
            let before = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
            let refused = c.checkFirst && index % 6 != 0 ? refusal : nil
            let r = try refused ?? CLI.run(c.arguments, in: dir, timeout: 30)
            if !r.endedCleanly {
                problems.append("did not end cleanly (status \(r.status), signal \(r.uncaughtSignal.map(String.init) ?? "none"), timed out \(r.timedOut)): \(r.stderr.suffix(400))")
            }
            if r.stderr.contains("Fatal error") { problems.append("Swift runtime error: \(r.stderr.suffix(400))") }
            if c.checkFirst, (refusal == nil) != (r.status == 0) {
                problems.append("session check \(refusal == nil ? "accepted" : "refused") it, render exited \(r.status): \(r.stderr.prefix(400))")
            }
            var after = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
            if r.status == 0, after.contains("x.wav") {
                after.removeAll { $0 == "x.wav" }
                let reader = try AudioFileReader(path: "\(dir)/x.wav")
                let count = Int(reader.frameCount) * reader.format.channelCount
                var samples = [Float](repeating: 0, count: count)
                _ = try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
                if !samples.allSatisfy(\.isFinite) { problems.append("the output holds non-finite samples") }
                if samples.contains(where: { abs($0) > 1 }) { problems.append("the output clips (GOOD.wav is 0.1, +12 dB at most)") }
            }
            if after != before { problems.append("left \(Set(after).subtracting(before).sorted()) (status \(r.status))") }
            if try Data(contentsOf: URL(fileURLWithPath: "\(dir)/GOOD.wav")) != good { problems.append("GOOD.wav changed") }
            if r.status != 0 {
                let lines = r.stderr.split(separator: "\n").filter { !$0.contains("warning:") }
                if lines.isEmpty { problems.append("failed (status \(r.status)) without a word") }
                if !c.culprits.contains(where: { r.stderr.contains($0) }) {
                    problems.append("the error names none of \(c.culprits): \(r.stderr.prefix(400))")
                }
            }
        } catch {
            problems.append("fixture: \(error)")
        }
        try? FileManager.default.removeItem(atPath: dir)
        return problems.map { "\(c): \($0)" }
    }

    /// Runs every case, two at a time, and records each problem as a test issue. The sessions of
    /// `checkFirst` cases are checked by one `session check` first.
    static func runAll(_ cases: [Case]) throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-numbers")
        let goodPath = "\(temp.path)/GOOD.wav"
        let writer = try AudioFileWriter(path: goodPath, type: .wav,
                                         format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float32))
        let samples = Signals.constant(0.1, frames: 480)
        try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 480) }
        try writer.close()
        let good = try Data(contentsOf: URL(fileURLWithPath: goodPath))
        for (index, c) in cases.enumerated() { try prepare(c, in: temp.path, index: index, good: good) }
        let (refusals, checkProblems) = try checkAll(cases.indices.filter { cases[$0].checkFirst }, in: temp.path)
        let results = Mutex<[[String]]>(Array(repeating: [], count: cases.count))
        DispatchQueue.concurrentPerform(iterations: cases.count) { index in
            let problems = run(cases[index], in: temp.path, index: index, good: good, refusal: refusals[index])
            results.withLock { $0[index] = problems }
        }
        let problems = checkProblems + results.withLock { $0 }.flatMap { $0 }
        for problem in problems.prefix(40) { Issue.record(Comment(rawValue: problem)) }
        #expect(problems.isEmpty, "\(problems.count) of \(cases.count) runs went wrong")
    }

    @Test("the session template itself renders: every mutation starts from a valid session")
    func templateIsValid() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-numbers")
        let writer = try AudioFileWriter(path: "\(temp.path)/GOOD.wav", type: .wav,
                                         format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float32))
        try Signals.constant(0.1, frames: 480).withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 480) }
        try writer.close()
        try Self.session(key: nil, value: "").text.write(toFile: "\(temp.path)/S.yaml", atomically: false, encoding: .utf8)
        let r = try CLI.run(["session", "render", "S.yaml", "-o", "x.wav", "--duration", "0.1"], in: temp.path, timeout: 30)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try AudioFileReader(path: "\(temp.path)/x.wav").frameCount == 4800)
    }

    @Test("every numeric option of render, play, record and session check/render/run, at and past its limits")
    func options() throws {
        try Self.runAll(Self.optionCases())
    }

    @Test("every numeric key of a session (times, gains, loop, rate, channels, automation), at and past its limits")
    func sessionKeys() throws {
        try Self.runAll(Self.sessionCases())
    }
}
