import Foundation
import LockstepTestSupport
import Testing

/// Docs/lockstep.1 is what swift-argument-parser's generate-manual tool makes of the built
/// `lockstep` now (with the page's own date): a changed option or help text without
/// `Scripts/man.sh` fails here. The tool is swift-argument-parser's `generate-manual` product,
/// built beside the lockstep binary by `Scripts/test.sh` and `Scripts/man.sh`.
@Suite("the man page is generated from the current definitions")
struct ManPageTests {
    @Test("Docs/lockstep.1 equals generate-manual's page of the built lockstep")
    func current() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let tool = CLI.executable(named: "generate-manual")
        try #require(FileManager.default.isExecutableFile(atPath: tool),
                     "\(tool) is missing: build it with `swift build --product generate-manual` (Scripts/test.sh does)")
        let committed = try String(contentsOfFile: root + "/Docs/lockstep.1", encoding: .utf8)
        // The page's date, ".Dd November 24, 2026", as the tool takes it: 2026-11-24.
        let dated = try #require(committed.split(separator: "\n").first { $0.hasPrefix(".Dd ") }).dropFirst(4)
        let reader = DateFormatter()
        reader.locale = Locale(identifier: "en_US_POSIX")
        reader.timeZone = TimeZone(identifier: "UTC")
        reader.dateFormat = "MMMM d, yyyy"
        let date = try #require(reader.date(from: String(dated)))
        reader.dateFormat = "yyyy-MM-dd"
        let temp = try TemporaryTestDirectory(prefix: "lockstep-man")
        let result = try CLI.run([CLI.binary, "--date", reader.string(from: date), "--output-directory", temp.path],
                                 executable: tool)
        #expect(result.status == 0, "\(result.stderr)")
        let generated = try String(contentsOfFile: temp.path + "/lockstep.1", encoding: .utf8)
        #expect(generated == committed, "Docs/lockstep.1 is out of date: run Scripts/man.sh and commit it")
        #expect(committed.contains(".Sh NAME") && committed.contains("session") && committed.contains("--json-events"))
    }
}
