import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// The progress display in a real terminal: tmux runs the CLI in a pane of a given width, records
/// every byte the CLI writes to it (`pipe-pane`) and shows the screen it leaves (`capture-pane`).
@Suite("lockstep CLI: terminal display (tmux)", .serialized)
struct TerminalDisplayTests {
    let temp: TemporaryTestDirectory
    var dir: String { temp.path }

    init() throws {
        temp = try TemporaryTestDirectory(prefix: "lockstep-tmux")
    }

    /// What a run in a tmux pane left: the raw bytes written to the pane and the screen.
    struct PaneRun {
        var raw: String
        var screen: [String]
    }

    /// Runs a tmux client command through `system` (a shell and `waitpid`), its output through a
    /// file: the tmux server that the first command starts inherits what the client had, so a
    /// pipe would never reach its end.
    func tmux(_ socket: String, _ arguments: [String]) throws -> (status: Int32, stdout: String) {
        let outputPath = "\(dir)/tmux-output-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let words = ["/usr/bin/tmux", "-L", socket, "-f", "/dev/null"] + arguments
        let line = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let status = system(line + " < /dev/null > '\(outputPath)' 2>&1")
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return (status, text)
    }

    /// Runs `command` (a shell line) in a detached tmux pane of `columns` × 30 and waits for it to
    /// end; the pane stays (remain-on-exit) to be captured.
    func run(_ command: String, columns: Int, environment: String = "") throws -> PaneRun {
        let socket = "lockstep-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        let rawPath = "\(dir)/raw-\(socket)"
        defer { _ = try? tmux(socket, ["kill-server"]) }
        // The pane first waits on a FIFO-free `read`, so options and the recording are in place
        // before the command starts.
        var r = try tmux(socket, ["new-session", "-d", "-s", "t", "-x", "\(columns)", "-y", "30", "sh", "-c", "read go; \(environment) exec \(command)"])
        #expect(r.status == 0, "\(r.stdout)")
        r = try tmux(socket, ["set-option", "-t", "t", "remain-on-exit", "on"])
        r = try tmux(socket, ["pipe-pane", "-t", "t", "-o", "cat > '\(rawPath)'"])
        #expect(r.status == 0, "\(r.stdout)")
        r = try tmux(socket, ["send-keys", "-t", "t", "Enter"])
        // Waits for the pane's command to end (killed by tmux's kill-server after 60 s at worst).
        var ended = false
        for _ in 0..<1200 where !ended {
            ended = (try? tmux(socket, ["display-message", "-p", "-t", "t", "#{pane_dead}"]))?.stdout.hasPrefix("1") ?? false
            if !ended { usleep(50_000) }
        }
        #expect(ended, "the command did not end in its pane")
        let screen = try tmux(socket, ["capture-pane", "-p", "-t", "t"]).stdout
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        _ = try tmux(socket, ["pipe-pane", "-t", "t"])
        // "\r\n" is one Character in Swift: make the terminal's line ends plain newlines.
        let raw = ((try? String(contentsOfFile: rawPath, encoding: .utf8)) ?? "").replacingOccurrences(of: "\r\n", with: "\n")
        return PaneRun(raw: raw, screen: screen)
    }

    /// The text of a raw line as the terminal shows it: escape sequences and carriage returns
    /// removed (what follows the last carriage return is what stays).
    static func visible(_ line: Substring) -> String {
        let afterReturn = line.split(separator: "\r", omittingEmptySubsequences: false).last ?? ""
        return String(afterReturn.replacing(/\x1B\[[0-9;?]*[A-Za-z]/, with: ""))
    }

    func makeInput() throws -> String {
        let path = "\(dir)/long name of a layer that is wider than the terminal.wav"
        let frames = 48000 * 20
        let writer = try AudioFileWriter(path: path, type: .wav, format: StreamFormat(sampleRate: 44100, channelCount: 2, sampleFormat: .int16))
        let block = [Float](repeating: 0.25, count: 4410 * 2)
        for _ in 0..<(frames / 4410) { try block.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 4410) } }
        try writer.close()
        return path
    }

    @Test("at 60 and 200 columns every progress row fits the width and none is left on the screen", arguments: [60, 200])
    func progressFits(columns: Int) throws {
        let input = try makeInput()
        let run = try run("'\(CLI.binary)' render '\(input)' -o '\(dir)/out.wav' --verbose", columns: columns)
        let rows = run.raw.split(separator: "\n", omittingEmptySubsequences: false).map(Self.visible)
        let progress = rows.filter { $0.contains("rendering") }
        #expect(!progress.isEmpty, "no progress was drawn: \(run.raw.debugDescription)")
        for row in progress {
            #expect(row.count < columns, "a progress row of \(row.count) cells at \(columns) columns: \(row)")
        }
        #expect(run.raw.contains("\u{1B}["), "a terminal that redraws gets cursor movement")
        #expect(progress.contains { $0.contains("100%") })
        // The last redraw erased the bar: no fragment of it stays between the messages.
        #expect(!run.screen.contains { $0.contains("rendering") || $0.contains("realtime") }, "\(run.screen)")
        #expect(run.screen.joined().contains("rendered 1 layer"), "\(run.screen)")
        for line in run.screen { #expect(line.count <= columns) }
    }

    @Test("TERM=dumb: plain progress lines, no escape sequence at all")
    func dumbTerminal() throws {
        let input = try makeInput()
        let run = try run("'\(CLI.binary)' render '\(input)' -o '\(dir)/out.wav'", columns: 80, environment: "TERM=dumb")
        #expect(!run.raw.contains("\u{1B}"), "\(run.raw.debugDescription)")
        let lines = run.raw.split(separator: "\n").map { $0.replacing("\r", with: "") }
        #expect(lines.contains { $0.hasPrefix("rendering: 100%") }, "\(lines)")
        #expect(lines.filter { $0.hasPrefix("rendering: ") }.count <= 10)
    }

    @Test("cursor movement comes from the terminal's terminfo entry: vt52's own strings, none for a terminal terminfo does not know")
    func terminfo() throws {
        let input = try makeInput()
        func command(_ name: String) -> String { "'\(CLI.binary)' render '\(input)' -o '\(dir)/\(name).wav'" }
        // vt52 (ncurses-base): cursor up is ESC A (cuu1, no cuu), erase below ESC J; no colours.
        var run = try run(command("vt52"), columns: 80, environment: "TERM=vt52")
        #expect(run.raw.contains("\u{1B}A") && run.raw.contains("\u{1B}J"), "\(run.raw.debugDescription)")
        #expect(!run.raw.contains("\u{1B}["), "ANSI sequences on a vt52: \(run.raw.debugDescription)")
        // xterm: its own cuu (CSI n A) and ed (CSI J).
        run = try self.run(command("xterm"), columns: 80, environment: "TERM=xterm")
        #expect(run.raw.firstMatch(of: /\x1B\[[0-9]+A\x1B\[J/) != nil, "\(run.raw.debugDescription)")
        // A terminal type with no terminfo entry: plain lines, as for dumb.
        run = try self.run(command("unknown"), columns: 80, environment: "TERM=no-such-terminal-lockstep")
        #expect(!run.raw.contains("\u{1B}"), "\(run.raw.debugDescription)")
        #expect(run.raw.contains("rendering: 100%"), "\(run.raw.debugDescription)")
    }

    @Test("NO_COLOR: cursor movement but no colour; without it a warning is coloured")
    func noColour() throws {
        let input = try makeInput()
        // Cut one byte: the file ends inside a frame, which is a warning.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: input))
        try handle.truncate(atOffset: try handle.seekToEnd() - 1)
        try handle.close()
        let command = "'\(CLI.binary)' render '\(input)' -o '\(dir)/out.wav'"
        var run = try run(command, columns: 120, environment: "NO_COLOR=1")
        #expect(run.raw.contains("warning: "), "\(run.raw.debugDescription)")
        #expect(run.raw.firstMatch(of: /\x1B\[[0-9;]*m/) == nil, "colour despite NO_COLOR: \(run.raw.debugDescription)")
        // NO_COLOR set but empty means colour (no-color.org), whatever the test's own environment holds.
        run = try self.run(command, columns: 120, environment: "NO_COLOR=")
        #expect(run.raw.firstMatch(of: /\x1B\[[0-9;]*m/) != nil, "no colour on a colour terminal")
    }

    @Test("--no-progress draws nothing live on a terminal")
    func noProgress() throws {
        let input = try makeInput()
        let run = try run("'\(CLI.binary)' render '\(input)' -o '\(dir)/out.wav' --no-progress", columns: 80)
        #expect(!run.raw.contains("rendering"))
        #expect(!run.raw.contains("\u{1B}"), "\(run.raw.debugDescription)")
    }

    @Test("standard error not a terminal: a plain progress line every interval with rate and ETA, and one at the end; none with --no-progress or --quiet, none for a render shorter than the interval")
    func progressLinesWithoutTerminal() throws {
        let input = try makeInput()
        let often = ["LOCKSTEP_PROGRESS_INTERVAL": "0.001", "TERM": "xterm"]
        let r = try CLI.run(["render", input, "-o", "\(dir)/out.wav"], environment: often)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stderr.contains("\u{1B}") && !r.stderr.contains("\r"), "no escape sequence or carriage return in a log: \(r.stderr.debugDescription)")
        let lines = r.stderr.split(separator: "\n").filter { $0.hasPrefix("rendering: ") }
        #expect(lines.count >= 2, "\(r.stderr)")
        for line in lines {
            // (The speed and time left once a tenth of a second has passed.)
            #expect(line.firstMatch(of: /^rendering: +\d+%, \d+:\d\d\.\d{3} of 0:21\.\d{3}(, [\d.]+× realtime, ETA \d+:\d\d)?$/) != nil, "\(line)")
        }
        #expect(lines.contains { $0.contains("× realtime, ETA ") }, "\(lines)")
        #expect(lines.last?.hasPrefix("rendering: 100%, ") == true, "the end has its line: \(lines)")
        #expect(lines.filter { $0.hasPrefix("rendering: 100%") }.count == 1, "\(lines)")
        #expect(r.stdout.contains("rendered 1 layer"), "the summary stays on standard output")
        // session render shows the same.
        let session = "\(dir)/show.yaml"
        try "cues:\n  - { name: one, file: '\(input)', at: 0 }\n".write(toFile: session, atomically: true, encoding: .utf8)
        let s = try CLI.run(["session", "render", session, "-o", "\(dir)/show.wav"], environment: often)
        #expect(s.status == 0, "\(s.stderr)")
        #expect(s.stderr.split(separator: "\n").last { $0.hasPrefix("rendering: ") }?.hasPrefix("rendering: 100%") == true, "\(s.stderr)")
        for flag in ["--no-progress", "--quiet"] {
            let quiet = try CLI.run(["render", input, "-o", "\(dir)/out.wav", flag], environment: often)
            #expect(quiet.status == 0 && !quiet.stderr.contains("rendering"), "\(flag): \(quiet.stderr)")
        }
        // The default interval is 5 s: a render of a fraction of that (20 s of audio) writes no progress.
        let short = try CLI.run(["render", input, "-o", "\(dir)/out.wav"], environment: ["TERM": "xterm"])
        #expect(short.status == 0 && !short.stderr.contains("rendering"), "\(short.stderr)")
    }
}
