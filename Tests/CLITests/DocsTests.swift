import Foundation
import LockstepTestSupport
import Testing

/// The docs cannot drift from the program: every fenced block in README.md and Docs/*.md marked
/// `<!-- docs-test -->` (on the line before its opening fence) is run, and what each `$ …` line
/// prints must be the lines the docs show under it, exactly (standard output and standard error as
/// they came, trailing spaces aside). The `$` lines of one block run in order in one folder, so a
/// block may make its inputs first (`$ sox -n … film-5.1.wav synth …`, which prints nothing) and
/// then show what `lockstep` makes of them; every block runs at least one `lockstep` command.
/// Marked blocks run offline only — render, info, session check, session render, completion, and
/// pipes through sox — in a fresh folder holding `Examples/` (a link to the repository's) and
/// copies of the example layers (`drums.wav`, `bass.flac`, `pad.aiff`). On a mismatch the issue
/// shows the real output, to paste in.
@Suite("the commands shown in the docs print what the docs show")
struct DocsTests {
    /// The repository's root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// One `$ …` line of a marked block and the lines shown under it.
    struct Example: Sendable {
        var line: Int
        var command: String
        var expected: [String]
    }

    /// One marked block: its examples, run in order in one folder.
    struct Block: CustomTestStringConvertible, Sendable {
        var file: String
        var line: Int
        var examples: [Example]
        var testDescription: String { "\(file):\(line): \(examples.first?.command ?? "(no command)")" }
    }

    /// Every marked block, in file order.
    static func blocks() throws -> [Block] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root + "/Docs").filter { $0.hasSuffix(".md") }.sorted()
        var blocks: [Block] = []
        for name in ["README.md"] + docs.map({ "Docs/" + $0 }) {
            let lines = try String(contentsOfFile: root + "/" + name, encoding: .utf8).components(separatedBy: "\n")
            var index = 0
            while index < lines.count {
                defer { index += 1 }
                guard lines[index].trimmingCharacters(in: .whitespaces) == "<!-- docs-test -->" else { continue }
                index += 1
                var block = Block(file: name, line: index + 1, examples: [])
                let fence = lines[index].prefix { $0 == " " }.count
                guard lines[index].dropFirst(fence).hasPrefix("```") else {
                    blocks.append(block)                                    // (found() reports it)
                    continue
                }
                index += 1
                while index < lines.count, !lines[index].dropFirst(fence).hasPrefix("```") {
                    let text = String(lines[index].dropFirst(fence))
                    if text.hasPrefix("$ ") {
                        block.examples.append(Example(line: index + 1, command: String(text.dropFirst(2)), expected: []))
                    } else if !block.examples.isEmpty {
                        block.examples[block.examples.count - 1].expected.append(text)
                    }
                    index += 1
                }
                blocks.append(block)
            }
        }
        return blocks
    }

    @Test("there are marked examples, and each marked block has a fence and runs lockstep")
    func found() throws {
        let all = try Self.blocks()
        #expect(all.flatMap(\.examples).count >= 10, "\(all.flatMap(\.examples).count) examples")
        for block in all {
            #expect(block.examples.contains { $0.command.hasPrefix("lockstep ") || $0.command.contains("| lockstep ") || $0.command.contains(" lockstep ") },
                    "\(block.testDescription)")
        }
    }

    @Test("a documented block prints what the docs show", arguments: try DocsTests.blocks())
    func runs(_ block: Block) throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-docs")
        let dir = temp.path
        try FileManager.default.createSymbolicLink(atPath: dir + "/Examples", withDestinationPath: Self.root + "/Examples")
        for layer in ["drums.wav", "bass.flac", "pad.aiff"] {
            try FileManager.default.copyItem(atPath: Self.root + "/Examples/Layers/" + layer, toPath: dir + "/" + layer)
        }
        func trimmed(_ line: String) -> String { String(line.reversed().drop { $0 == " " }.reversed()) }
        for example in block.examples {
            let script = "exec 2>&1; lockstep() { '\(CLI.binary)' \"$@\"; }; cd '\(dir)'; " + example.command
            let result = try CLI.run(["-c", script], environment: ["NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "100"],
                                     executable: "/bin/bash")
            var printed = (result.stdout + result.stderr).components(separatedBy: "\n").map(trimmed)
            if printed.last == "" { printed.removeLast() }
            var expected = example.expected.map(trimmed)
            while expected.last?.isEmpty == true { expected.removeLast() }
            #expect(printed == expected, """
                \(block.file):\(example.line): \(example.command) printed:
                \(printed.joined(separator: "\n"))
                """)
        }
    }
}
