import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

@Suite("lockstep CLI (the built binary)")
struct CLITests {
    let temp: TemporaryTestDirectory
    var dir: String { temp.path }

    init() throws {
        temp = try TemporaryTestDirectory(prefix: "lockstep-cli")
        #expect(FileManager.default.isExecutableFile(atPath: CLI.binary), "build the lockstep product first: \(CLI.binary)")
    }

    func write(_ name: String, _ samples: [Float], rate: Double, channels: Int = 1, sampleFormat: SampleFormat = .float32) throws -> String {
        let path = "\(dir)/\(name)"
        let type = AudioFileType(path: path) ?? .wav
        let writer = try AudioFileWriter(path: path, type: type,
                                         format: StreamFormat(sampleRate: rate, channelCount: channels, sampleFormat: sampleFormat))
        try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: samples.count / channels) }
        try writer.close()
        return path
    }

    func read(_ path: String) throws -> (StreamFormat, [Float]) {
        let reader = try AudioFileReader(path: path)
        var out = [Float](repeating: 0, count: Int(reader.frameCount) * reader.format.channelCount)
        let got = try out.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
        #expect(got == Int(reader.frameCount))
        return (reader.format, out)
    }

    @Test("render mixes layers on sample 0 plus offsets, with gains in file order")
    func render() throws {
        let a = try write("a.wav", Signals.impulse(at: 0, frames: 4800, value: 0.5), rate: 48000)
        let b = try write("b.flac", Signals.impulse(at: 0, frames: 4410, value: 0.5), rate: 44100, sampleFormat: .int16)
        let c = try write("c.wav", Signals.constant(0.125, frames: 100, channels: 2), rate: 48000, channels: 2)
        let r = try CLI.run(["render", a, b, c, "-o", "\(dir)/mix.wav", "--gain", "-6", "--gain", "0dB",
                             "--offset", "0", "--offset", "0.05", "--offset", "0.2"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("rendered 3 layers"))
        #expect(r.stdout.contains("frames"))
        #expect(r.stdout.contains("peak"))
        let (format, mix) = try read("\(dir)/mix.wav")
        #expect(format.sampleRate == 48000 && format.channelCount == 2 && format.sampleFormat == .float32)
        #expect(mix.count / 2 == 9600 + 100)       // c ends last: 0.2 s + 100 frames
        let left = Signals.channel(0, of: mix, channels: 2)
        #expect(abs(left[0] - 0.5 * Float(Decibels.toLinear(-6))) < 1e-6)
        #expect(Signals.peakIndex(Array(left[1000..<9000])) + 1000 == 2400)   // b's impulse at 0.05 s
        #expect(left[9600] == 0.125 && left[9699] == 0.125)
    }

    @Test("render honours --rate, --channels and --sample-format, and the output extension")
    func renderFormats() throws {
        let a = try write("a.wav", Signals.constant(0.5, frames: 4800), rate: 48000)
        var r = try CLI.run(["render", a, "-o", "\(dir)/out.flac", "--rate", "96000", "--channels", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        let reader = try AudioFileReader(path: "\(dir)/out.flac")
        #expect(reader.format.sampleRate == 96000 && reader.format.channelCount == 1 && reader.format.sampleFormat == .int24)
        #expect(reader.frameCount == 9600)
        r = try CLI.run(["render", a, "-o", "\(dir)/out.aiff", "--sample-format", "s16"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try AudioFileReader(path: "\(dir)/out.aiff").format.sampleFormat == .int16)
    }

    @Test("info prints format, rate, channels, frames, duration and peak; --json one object per file")
    func info() throws {
        let a = try write("tone.wav", Signals.constant(0.5, frames: 24000, channels: 2), rate: 48000, channels: 2, sampleFormat: .int16)
        var r = try CLI.run(["info", a])
        #expect(r.status == 0)
        #expect(r.stdout.contains("48000 Hz") && r.stdout.contains("2 ch") && r.stdout.contains("24000 frames"))
        #expect(r.stdout.contains("0:00.500") && r.stdout.contains("-6.02 dBFS"))
        r = try CLI.run(["info", "--json", a, a])
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        let object = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(object?["frames"] as? Int == 24000)
        #expect(object?["sampleRate"] as? Int == 48000)
        #expect(object?["channels"] as? Int == 2)
        #expect(object?["seconds"] as? Double == 0.5)
        #expect(abs((object?["peak"] as? Double ?? 0) - 0.5) < 1e-4)
    }

    @Test("bad input exits non-zero with one line naming the file or option", arguments: [
        (["render", "-o", "x.wav"], "no input files"),
        (["render", "MISSING.wav", "-o", "x.wav"], "MISSING.wav"),
        (["render", "EMPTY.wav", "-o", "x.wav"], "EMPTY.wav"),
        (["render", "TEXT.wav", "-o", "x.wav"], "TEXT.wav"),
        (["render", "TRUNC.wav", "-o", "x.wav"], "TRUNC.wav"),
        (["render", "GOOD.wav", "-o", "/nonexistent-dir/x.wav"], "nonexistent-dir"),
        (["render", "GOOD.wav", "-o", "x.mp4"], "x.mp4"),
        (["render", "GOOD.wav", "-o", "x.wav", "--rate", "abc"], "--rate"),
        (["render", "GOOD.wav", "-o", "x.wav", "--rate", "0"], "--rate"),
        (["render", "GOOD.wav", "-o", "x.wav", "--channels", "0"], "--channels"),
        (["render", "GOOD.wav", "-o", "x.wav", "--gain", "loud"], "--gain"),
        (["render", "GOOD.wav", "-o", "x.wav", "--gain", "13"], "--gain"),
        (["render", "GOOD.wav", "-o", "x.wav", "--gain", "0", "--gain", "0"], "--gain"),
        (["render", "GOOD.wav", "-o", "x.wav", "--offset", "-1"], "--offset"),
        // A sign is refused by every time and sample-count option (it was read as 0:01, 5…).
        (["render", "GOOD.wav", "-o", "x.wav", "--channel-map", ":"], "--channel-map ':': ':': '' is not a file channel"),   // trapped
        (["render", "GOOD.wav", "-o", "x.wav", "--offset=-0:01"], "the value '-0:01' is invalid for '--offset <time>': negative; a time counts from a start"),
        (["render", "GOOD.wav", "-o", "x.wav", "--offset=+0:01"], "the value '+0:01' is invalid for '--offset <time>': has a sign"),
        (["session", "render", "GOOD.yaml", "-o", "x.wav", "--duration=-0:01"], "the value '-0:01' is invalid for '--duration <time>': negative"),
        (["session", "render", "GOOD.yaml", "-o", "x.wav", "--midi-latency=+5"], "the value '+5' is invalid for '--midi-latency <samples>': has a sign"),
        (["session", "run", "GOOD.yaml", "--midi-latency=-0"], "the value '-0' is invalid for '--midi-latency <samples|next>': negative"),
        (["record", "-o", "x.wav", "--port", "a:b", "--start-at=-0"], "the value '-0' is invalid for '--start-at <start-at>': negative"),
        // Numbers that would overflow when turned into samples are refused where they are parsed:
        // not a time (no exponents; at most a week), with the forms a time takes.
        (["render", "GOOD.wav", "-o", "x.wav", "--offset", "1e15"], "the value '1e15' is invalid for '--offset <time>': not a time; write seconds (90, 1.5 or 1.5s)"),
        (["render", "GOOD.wav", "-o", "x.wav", "--offset", "nan"], "--offset"),
        (["play", "GOOD.wav", "--duration", "1e30"], "the value '1e30' is invalid for '--duration <time>': not a time"),
        (["play", "GOOD.wav", "--duration", "700000"], "at most a week"),
        (["play", "GOOD.wav", "--duration", "0:00"], "--duration 0 s is no time at all"),
        (["play", "GOOD.wav", "--offset", "1e300"], "--offset"),
        (["record", "-o", "x.wav", "--duration", "1e30"], "the value '1e30' is invalid for '--duration <time>': not a time"),
        (["session", "run", "GOOD.yaml", "--from", "soon"], "the value 'soon' is invalid for '--from <time>': not a time; write seconds (90, 1.5 or 1.5s), milliseconds (250ms), m:ss[.fff] (1:30, 1:30.5), h:mm:ss[.fff] or \"N samples\" (4800 samples)"),
        (["session", "render", "GOOD.yaml", "-o", "x.wav", "--go", "one@1:75"], "--go one@1:75: time '1:75' is not a time"),
        (["session", "check", "GOOD.yaml", "--rate", "0"], "--rate 0 is out of range"),
        (["session", "run", "GOOD.yaml", "--duration", "inf"], "--duration"),
        (["render", "GOOD.wav", "-o", "x.flac", "--sample-format", "f32"], "x.flac"),
        (["render", "GOOD.wav", "-o", "x.wav", "--sample-format", "u7"], "--sample-format"),
        (["render", "GOOD.wav", "-o", "x.wav", "--sample-format", "s8"], "x.wav: WAV cannot store s8 (8-bit integer) samples; WAV holds u8, s16, s24, s32, f32, f64, ulaw, alaw"),
        (["render", "GOOD.wav"], "--output"),
        // An output that is one of the inputs, by any path, is refused before anything is written.
        (["render", "GOOD.wav", "FULL.wav", "-o", "GOOD.wav"], "GOOD.wav: the output is the same file as the input"),
        (["render", "FULL.wav", "GOOD.wav", "-o", "./GOOD.wav"], "the same file as the input (GOOD.wav)"),
        (["render", "GOOD.wav", "-o", "LINK.wav"], "LINK.wav: the output is the same file as the input (GOOD.wav)"),
        (["session", "render", "GOOD.yaml", "-o", "GOOD.wav"], "GOOD.wav: the output is the same file as the input"),
        // Outputs longer than the container holds or the disk has room for are refused up front.
        (["render", "GOOD.wav", "-o", "x.wav", "--offset", "100000"], "more than WAV holds"),
        (["render", "GOOD.wav", "-o", "x.caf", "--rate", "768000", "--channels", "64", "--offset", "604000"], "free; free some space"),
        (["session", "render", "GOOD.yaml", "-o", "x.wav", "--duration", "0"], "--duration 0 s is shorter than one sample"),
        (["session", "run", "GOOD.yaml", "--control", "."], "--control . is a directory"),
        (["session", "run", "GOOD.yaml", "--control", "NOWHERE"], "--control NOWHERE"),
        (["info"], "no input files"),
        (["info", "MISSING.wav"], "MISSING.wav"),
        (["info", "TRUNC.wav"], "TRUNC.wav"),
    ])
    func badInput(arguments: [String], mention: String) throws {
        _ = try write("GOOD.wav", Signals.constant(0.1, frames: 480), rate: 48000)
        _ = FileManager.default.createFile(atPath: "\(dir)/EMPTY.wav", contents: Data())
        _ = FileManager.default.createFile(atPath: "\(dir)/TEXT.wav", contents: Data("hello, this is not audio\n".utf8))
        let full = try write("FULL.wav", Signals.constant(0.1, frames: 48000), rate: 48000, sampleFormat: .int16)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: "\(dir)/TRUNC.wav"))
        try? FileManager.default.createSymbolicLink(atPath: "\(dir)/LINK.wav", withDestinationPath: "GOOD.wav")
        try "cues:\n  - { name: one, layer: a, file: GOOD.wav, at: 0 }\n".write(toFile: "\(dir)/GOOD.yaml", atomically: true, encoding: .utf8)
        let inputs = try ["GOOD.wav", "FULL.wav", "GOOD.yaml"].map { try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\($0)")) }
        let r = try CLI.run(arguments, in: dir)
        // Inputs are byte-identical after any failure.
        #expect(try ["GOOD.wav", "FULL.wav", "GOOD.yaml"].map { try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\($0)")) } == inputs)
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/x.caf"))
        #expect(r.status != 0)
        // One error line naming what is wrong; after a usage error, ArgumentParser's hint
        // (the option's help, the usage, where the full help is) and nothing else.
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.first?.hasPrefix("lockstep: ") == true && lines.first?.contains(mention) == true, "\(r.stderr)")
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("Help:  ") || $0.hasPrefix("Usage: lockstep ") || $0.hasPrefix("  See 'lockstep ") },
                "\(r.stderr)")
        #expect(lines.count == 1 || lines.last?.hasSuffix("--help' for more information.") == true, "\(r.stderr)")
        #expect(!r.stderr.contains("Fatal error"))
        // Nothing that looks like a finished output is left behind.
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/x.wav"))
    }

    @Test("a usage or validation error: one line naming the command and the option, lists folded onto it, then ArgumentParser's hint for that command",
          arguments: [
        (["render", "GOOD.wav", "-o", "x.wav", "--sample-format", "s99"],
         "lockstep: render: the value 's99' is invalid for '--sample-format <u8|s8|s16|s24|s32|f32|f64|ulaw|alaw|ima-adpcm|ms-adpcm|gsm610|g721|g723-24|g723-40|nms-adpcm-16|nms-adpcm-24|nms-adpcm-32|vox-adpcm|dwvw-12|dwvw-16|dwvw-24|dpcm-8|dpcm-16|alac-16|alac-20|alac-24|alac-32>'; give one of: u8, s8, s16, s24, s32, f32, f64, ulaw, alaw, ima-adpcm, ms-adpcm, gsm610, g721, g723-24, g723-40, nms-adpcm-16, nms-adpcm-24, nms-adpcm-32, vox-adpcm, dwvw-12, dwvw-16, dwvw-24, dpcm-8, dpcm-16, alac-16, alac-20, alac-24, alac-32",
         "render"),
        (["render", "GOOD.wav", "-o", "x.wav", "--rate", "abc"], "lockstep: render: the value 'abc' is invalid for '--rate <rate>'", "render"),
        (["render", "GOOD.wav", "-o", "x.wav", "--bogus"], "lockstep: render: unknown option '--bogus'", "render"),
        (["session", "render"], "lockstep: session render: missing expected argument '<file>'", "session render"),
        (["play", "GOOD.wav", "--duration", "0"],
         "lockstep: play: --duration 0 s is no time at all; give a length above 0 (e.g. --duration 90), or leave it out", "play"),
        (["frobnicate"], "lockstep: unexpected argument 'frobnicate'", ""),
    ])
    func usageErrors(arguments: [String], line: String, command: String) throws {
        _ = try write("GOOD.wav", Signals.constant(0.1, frames: 480), rate: 48000)
        let r = try CLI.run(arguments, in: dir)
        #expect(r.status == 64, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == line, "\(r.stderr)")
        #expect(lines.first?.contains("; -") == false && !r.stderr.contains("Error:") && !lines.contains { $0.hasPrefix("  - ") }, "\(r.stderr)")
        let name = command.isEmpty ? "lockstep" : "lockstep \(command)"
        #expect(lines.contains { $0.hasPrefix("Usage: \(name) ") }, "\(r.stderr)")
        #expect(lines.last == "  See '\(name) --help' for more information.", "\(r.stderr)")
        // An option's value error shows that option's help.
        if line.contains("invalid for '--rate") { #expect(lines.contains { $0.hasPrefix("Help:  --rate <rate>  ") }) }
        // A failure that is not about usage stays one line, without the hint.
        let missing = try CLI.run(["render", "MISSING.wav", "-o", "x.wav"], in: dir)
        #expect(missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
    }

    @Test("the example sessions check clean and render to their resolved length")
    func exampleSessions() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let stems = root + "/Examples/Sessions/stems.yaml"
        let playlist = root + "/Examples/Sessions/playlist.yaml"
        for session in [stems, playlist] {
            let checked = try CLI.run(["session", "check", session])
            #expect(checked.status == 0, "\(checked.stderr)")
        }
        let table = try CLI.run(["session", "check", playlist]).stdout
        #expect(table.contains("manual") && table.contains("second") && table.contains("120000"))
        // The timeline picture as SVG and PNG files; a PNG that cannot be written is one error.
        let pictured = try CLI.run(["session", "check", playlist, "--svg", "\(dir)/t.svg", "--png", "\(dir)/t.png"])
        #expect(pictured.status == 0 && pictured.stdout == table, "\(pictured.stderr)")
        #expect(try String(contentsOfFile: "\(dir)/t.svg", encoding: .utf8).contains(#"data-cue="opener""#))
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/t.png")).prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
        let unwritable = try CLI.run(["session", "check", playlist, "--png", "\(dir)/no/such/t.png"])
        #expect(unwritable.status != 0 && unwritable.stderr.contains("cannot write --png \(dir)/no/such/t.png"), "\(unwritable.stderr)")
        let stemsOut = "\(dir)/stems.wav"
        let r1 = try CLI.run(["session", "render", stems, "-o", stemsOut])
        #expect(r1.status == 0, "\(r1.stderr)")
        #expect(try AudioFileReader(path: stemsOut).frameCount == 288000)
        let playlistOut = "\(dir)/playlist.flac"
        let r2 = try CLI.run(["session", "render", playlist, "-o", playlistOut, "--go", "bell@4.5", "--json"])
        #expect(r2.status == 0, "\(r2.stderr)")
        #expect(try AudioFileReader(path: playlistOut).frameCount == 456000)
        #expect(r2.stdout.contains("\"start\":216000"))             // the bell, placed at 4.5 s
        // The example MIDI file: a note 60 at 4.5 s fires the bell 512 samples (the MIDI latency) later,
        // as --go would place it there.
        let midiOut = "\(dir)/playlist-midi.wav", goOut = "\(dir)/playlist-go.wav"
        let r3 = try CLI.run(["session", "render", playlist, "-o", midiOut, "--midi-file", root + "/Examples/Sessions/bell.mid", "--json"])
        #expect(r3.status == 0, "\(r3.stderr)")
        #expect(r3.stdout.contains("\"start\":216512"))
        #expect(try CLI.run(["session", "render", playlist, "-o", goOut, "--go", "bell@216512 samples"]).status == 0)
        #expect(try FileFixtures.readFloat(path: midiOut) == FileFixtures.readFloat(path: goOut))
        let unknown = try CLI.run(["session", "render", playlist, "-o", playlistOut, "--go", "belll@1"])
        #expect(unknown.status == 1 && unknown.stderr.contains("did you mean 'bell'?"))
    }

    @Test("session check of several files checks every one, reports each failure by its file, and fails if any does")
    func checkSeveral() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let stems = root + "/Examples/Sessions/stems.yaml", playlist = root + "/Examples/Sessions/playlist.yaml"
        let bad = "\(dir)/bad.yaml"
        try "cues:\n  - { name: a, layer: x, file: NONE.wav, at: 0 }\n".write(toFile: bad, atomically: false, encoding: .utf8)
        let alone = try CLI.run(["session", "check", playlist]).stdout
        let r = try CLI.run(["session", "check", stems, bad, playlist])
        #expect(r.status == 1)
        // Both valid sessions' tables, each under its file's name; the broken one named once with its line.
        #expect(r.stdout.contains("\(playlist):\n" + alone), "\(r.stdout)")
        #expect(r.stdout.hasPrefix("\(stems):\n") && r.stdout.contains("\(bad):\n"))
        #expect(r.stderr.contains("\(bad):2:") && r.stderr.contains("1 of 3 sessions have problems"), "\(r.stderr)")
        #expect(!r.stderr.contains(stems) && !r.stderr.contains(playlist))
        let json = try CLI.run(["session", "check", stems, playlist, "--json"])
        #expect(json.status == 0 && json.stdout.split(separator: "\n").count == 2, "\(json.stderr)")
        let drawn = try CLI.run(["session", "check", stems, playlist, "--svg", "\(dir)/t.svg"])
        #expect(drawn.status == 64 && drawn.stderr.contains("--svg and --png draw one session"), "\(drawn.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/t.svg"))
    }
}
