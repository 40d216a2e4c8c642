import Foundation
import LockstepTestSupport
import Testing

/// The docs cannot drift from the program: every fenced block in README.md and Docs/*.md marked
/// `<!-- docs-test -->` (on the line before its opening fence) is run, and what each `$ lockstep …`
/// line prints must be the lines the docs show under it, exactly (standard output and standard
/// error as they came, trailing spaces aside). Marked blocks run offline only — render, info, session check, session render, and pipes
/// through sox — in a folder holding `Examples/` (a link to the repository's) and copies of the
/// example layers (`drums.wav`, `bass.flac`, `pad.aiff`). On a mismatch the issue shows the real
/// output, to paste in.
@Suite("the commands shown in the docs print what the docs show")
struct DocsTests {
    /// The repository's root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// One `$ lockstep …` line of a marked block and the lines shown under it.
    struct Example: CustomTestStringConvertible, Sendable {
        var file: String
        var line: Int
        var command: String
        var expected: [String]
        var testDescription: String { "\(file):\(line): \(command)" }
    }

    /// Every example of every marked block, in file order.
    static func examples() throws -> [Example] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root + "/Docs").filter { $0.hasSuffix(".md") }.sorted()
        var examples: [Example] = []
        for name in ["README.md"] + docs.map({ "Docs/" + $0 }) {
            let lines = try String(contentsOfFile: root + "/" + name, encoding: .utf8).components(separatedBy: "\n")
            var index = 0
            while index < lines.count {
                defer { index += 1 }
                guard lines[index].trimmingCharacters(in: .whitespaces) == "<!-- docs-test -->" else { continue }
                index += 1
                let fence = lines[index].prefix { $0 == " " }.count
                guard lines[index].dropFirst(fence).hasPrefix("```") else {
                    examples.append(Example(file: name, line: index + 1, command: "(the marker is not followed by a fence)", expected: []))
                    continue
                }
                index += 1
                var current: Example?
                while index < lines.count, !lines[index].dropFirst(fence).hasPrefix("```") {
                    let text = String(lines[index].dropFirst(fence))
                    if text.hasPrefix("$ ") {
                        if let current { examples.append(current) }
                        current = Example(file: name, line: index + 1, command: String(text.dropFirst(2)), expected: [])
                    } else {
                        current?.expected.append(text)
                    }
                    index += 1
                }
                if let current { examples.append(current) }
            }
        }
        return examples
    }

    @Test("there are marked examples, and each marked block has a fence and a command")
    func found() throws {
        let all = try Self.examples()
        #expect(all.count >= 10, "\(all.count) examples")
        for example in all {
            #expect(example.command.hasPrefix("lockstep ") || example.command.contains("| lockstep "), "\(example.testDescription)")
        }
    }

    @Test("a documented command prints what the docs show", arguments: try DocsTests.examples())
    func runs(_ example: Example) throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-docs")
        let dir = temp.path
        try FileManager.default.createSymbolicLink(atPath: dir + "/Examples", withDestinationPath: Self.root + "/Examples")
        for layer in ["drums.wav", "bass.flac", "pad.aiff"] {
            try FileManager.default.copyItem(atPath: Self.root + "/Examples/Layers/" + layer, toPath: dir + "/" + layer)
        }
        let script = "exec 2>&1; lockstep() { '\(CLI.binary)' \"$@\"; }; cd '\(dir)'; " + example.command
        let result = try CLI.run(["-c", script], environment: ["NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "100"],
                                 executable: "/bin/bash")
        func trimmed(_ line: String) -> String { String(line.reversed().drop { $0 == " " }.reversed()) }
        var printed = (result.stdout + result.stderr).components(separatedBy: "\n").map(trimmed)
        if printed.last == "" { printed.removeLast() }
        var expected = example.expected.map(trimmed)
        while expected.last?.isEmpty == true { expected.removeLast() }
        #expect(printed == expected, """
            \(example.testDescription) printed:
            \(printed.joined(separator: "\n"))
            """)
    }
}
