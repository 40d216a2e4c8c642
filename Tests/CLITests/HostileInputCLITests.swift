import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// Hostile audio input through the built binary: special files, NaN, cut and damaged files.
@Suite("lockstep CLI: hostile audio files")
struct HostileInputCLITests {
    let temp: TemporaryTestDirectory
    var dir: String { temp.path }

    init() throws {
        temp = try TemporaryTestDirectory(prefix: "lockstep-hostile")
    }

    func write(_ name: String, _ samples: [Float], channels: Int = 2, sampleFormat: SampleFormat = .float32) throws -> String {
        let path = "\(dir)/\(name)"
        let writer = try AudioFileWriter(path: path, type: AudioFileType(path: path) ?? .wav,
                                         format: StreamFormat(sampleRate: 48000, channelCount: channels, sampleFormat: sampleFormat))
        try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: samples.count / channels) }
        try writer.close()
        return path
    }

    /// A session of one cue per file, each on its own layer, all at 0.
    func session(_ name: String, files: [String]) throws -> String {
        var text = "rate: 48000\nchannels: 2\nlayers:\n"
        for index in files.indices { text += "  l\(index): {}\n" }
        text += "cues:\n"
        for (index, file) in files.enumerated() {
            text += "  - name: c\(index)\n    layer: l\(index)\n    file: \(file)\n    at: 0\n"
        }
        let path = "\(dir)/\(name)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Samples of every file `render` or `session render` wrote are finite.
    func finiteSamples(_ path: String) throws -> Bool {
        let reader = try AudioFileReader(path: path, warnings: FileWarnings())
        var samples = [Float](repeating: 0, count: Int(reader.frameCount) * reader.format.channelCount)
        _ = try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
        return samples.allSatisfy { $0.isFinite } && reader.nonFiniteSampleCount == 0
    }

    /// The lines of standard error that are warnings.
    func warnings(_ result: CLI.Result) -> [Substring] {
        result.stderr.split(separator: "\n").filter { $0.contains(": warning: ") }
    }

    @Test("a FIFO or a device given as an audio file is refused at once by info, render and session check/render, naming it")
    func specialFiles() throws {
        let fifo = "\(dir)/fifo.wav"
        #expect(mkfifo(fifo, 0o644) == 0)
        let show = try session("fifo.yaml", files: ["fifo.wav"])
        let runs: [([String], String)] = [
            (["info", fifo], "lockstep: info: \(fifo): is a FIFO (named pipe), not a regular file"),
            (["render", fifo, "-o", "\(dir)/x.wav"], "lockstep: render: \(fifo): is a FIFO (named pipe), not a regular file"),
            (["session", "check", show], "\(fifo): is a FIFO (named pipe), not a regular file"),
            (["session", "render", show, "-o", "\(dir)/x.wav"], "\(fifo): is a FIFO (named pipe), not a regular file"),
            (["info", "/dev/zero"], "lockstep: info: /dev/zero: is a character device, not a regular file"),
            (["render", "/dev/urandom", "-o", "\(dir)/x.wav"], "lockstep: render: /dev/urandom: is a character device"),
        ]
        for (arguments, message) in runs {
            let started = Date()
            let result = try CLI.run(arguments, timeout: 20)
            #expect(result.status == 1, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(Date().timeIntervalSince(started) < 15, "\(arguments) took too long")
            #expect(!FileManager.default.fileExists(atPath: "\(dir)/x.wav"))
        }
        // A file libsndfile does not recognise at once (an MP3 without a tag, or here, text) makes
        // it probe for a Mac resource fork: `._NAME` beside the file and, without a file name,
        // `._` in the current folder. FIFOs there must not block it.
        try FileManager.default.createDirectory(atPath: "\(dir)/work/.AppleDouble", withIntermediateDirectories: true)
        #expect(mkfifo("\(dir)/work/._", 0o644) == 0)
        #expect(mkfifo("\(dir)/work/._notes.wav", 0o644) == 0)
        #expect(mkfifo("\(dir)/work/.AppleDouble/notes.wav", 0o644) == 0)
        // Long enough for libsndfile to try every format (a few bytes are refused as too short).
        try String(repeating: "not audio at all\n", count: 200).write(toFile: "\(dir)/work/notes.wav", atomically: true, encoding: .utf8)
        let started = Date()
        let probed = try CLI.run(["info", "notes.wav"], in: "\(dir)/work", timeout: 20)
        #expect(probed.status == 1, "\(probed.status) \(probed.stderr)")
        #expect(probed.stderr == "lockstep: info: notes.wav: not an audio file libsndfile can read (format not recognised); convert it to WAV or FLAC\n")
        #expect(Date().timeIntervalSince(started) < 15)
    }

    @Test("a session file that is a FIFO, a device, a folder, binary or too big: one error at 1:1 saying what it is, at once, from every session command")
    func specialSessionFiles() throws {
        let fifo = "\(dir)/show.yaml"
        #expect(mkfifo(fifo, 0o644) == 0)
        try Data([0xC3, 0x28, 0x0A, 0xFF]).write(to: URL(fileURLWithPath: "\(dir)/binary.yaml"))
        #expect(FileManager.default.createFile(atPath: "\(dir)/huge.yaml", contents: nil))
        #expect(truncate("\(dir)/huge.yaml", 65 << 20) == 0)         // sparse: 65 MiB of nothing
        let cases: [(String, String)] = [
            (fifo, "\(fifo):1:1: error: this is a FIFO (named pipe), not a session file"),
            ("/dev/zero", "/dev/zero:1:1: error: this is a character device, not a session file"),
            (dir, "\(dir):1:1: error: this is a folder, not a session file"),
            ("\(dir)/binary.yaml", "binary.yaml:1:1: error: the session file is not UTF-8 text"),
            ("\(dir)/huge.yaml", "huge.yaml:1:1: error: the session file is 65 MiB, more than the 64 MiB"),
        ]
        for (path, message) in cases {
            for arguments in [["session", "check", path], ["session", "render", path, "-o", "\(dir)/x.wav"],
                              ["session", "run", path, "--server", "lockstep-none", "--start-server", "never"]] {
                let started = Date()
                let result = try CLI.run(arguments, timeout: 20)
                #expect(result.status == 1 && result.stderr.contains(message), "\(arguments): \(result.status) \(result.stderr)")
                #expect(Date().timeIntervalSince(started) < 15, "\(arguments) took too long")
                #expect(!FileManager.default.fileExists(atPath: "\(dir)/x.wav"))
            }
        }
    }

    @Test("NaN and infinity in a float file: read as silence everywhere, counted by info, warned about once per file by every command")
    func nonFinite() throws {
        var samples = FileFixtures.sine(frames: 4800, channels: 2, sampleRate: 48000, frequency: 440, amplitude: 0.5)
        samples[10] = .nan
        samples[11] = .infinity
        samples[4000] = -.infinity
        let poisoned = try write("poison.wav", samples)
        let all = try write("allnan.wav", [Float](repeating: .nan, count: 960))

        var result = try CLI.run(["info", poisoned, all])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\(poisoned): WAV (Microsoft), PCM f32, 48000 Hz, 2 ch, 4800 frames, 0:00.100, 3072 kb/s, peak -6.02 dBFS, 3 non-finite samples (read as silence)"), "\(result.stdout)")
        #expect(result.stdout.contains("\(all): WAV (Microsoft), PCM f32, 48000 Hz, 2 ch, 480 frames, 0:00.010, 3072 kb/s, peak -inf dBFS, 960 non-finite samples (read as silence)"), "\(result.stdout)")
        #expect(warnings(result) == [
            "lockstep: info: warning: \(poisoned): 3 non-finite samples (NaN or infinity) replaced by silence; re-export the file, or check the plug-in or converter that wrote it",
            "lockstep: info: warning: \(all): 960 non-finite samples (NaN or infinity) replaced by silence; re-export the file, or check the plug-in or converter that wrote it",
        ])
        result = try CLI.run(["info", "--json", all])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(object?["nonFiniteSamples"] as? Int == 960)
        #expect(object?["peak"] as? Double == 0)

        // render: the same file twice is one warning; the mix is finite.
        result = try CLI.run(["render", poisoned, poisoned, all, "-o", "\(dir)/mix.wav"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(warnings(result).count == 2, "\(result.stderr)")
        #expect(warnings(result).first?.hasPrefix("lockstep: render: warning: \(poisoned): 3 non-finite samples") == true)
        #expect(try finiteSamples("\(dir)/mix.wav"))

        let show = try session("poison.yaml", files: ["poison.wav"])
        result = try CLI.run(["session", "check", show])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(warnings(result) == ["lockstep: session check: warning: \(poisoned): 3 non-finite samples (NaN or infinity) replaced by silence; re-export the file, or check the plug-in or converter that wrote it"])
        result = try CLI.run(["session", "render", show, "-o", "\(dir)/show.wav"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(warnings(result).count == 1 && warnings(result)[0].hasPrefix("lockstep: session render: warning: \(poisoned): 3 non-finite"), "\(result.stderr)")
        #expect(try finiteSamples("\(dir)/show.wav"))
    }

    @Test("a file cut inside its last frame plays its whole frames with a warning, in every container and command",
          arguments: [AudioFileType.wav, .aiff, .caf, .w64, .rf64])
    func partialFrame(type: AudioFileType) throws {
        let full = try write("full.\(type.fileExtension)", FileFixtures.sine(frames: 1000, channels: 2, sampleRate: 48000, frequency: 440, amplitude: 0.5),
                             sampleFormat: .int16)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        let path = "\(dir)/cut.\(type.fileExtension)"
        // The audio data is the end of every one of these files (as libsndfile writes them).
        try bytes.prefix(bytes.count - 3).write(to: URL(fileURLWithPath: path))
        let expected = "\(path): ends inside a frame: 1 byte of a partial frame ignored, the 999 whole frames play; re-export or re-copy the file if it should be longer"
        var result = try CLI.run(["info", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("999 frames") && result.stdout.contains("ends inside a frame (1 byte ignored)"), "\(result.stdout)")
        #expect(warnings(result) == ["lockstep: info: warning: \(expected)"])
        result = try CLI.run(["render", path, "-o", "\(dir)/out.wav"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("999 frames"))
        #expect(warnings(result) == ["lockstep: render: warning: \(expected)"])
        let show = try session("cut.yaml", files: ["cut.\(type.fileExtension)"])
        result = try CLI.run(["session", "render", show, "-o", "\(dir)/show.wav"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(warnings(result) == ["lockstep: session render: warning: \(expected)"])
    }

    @Test("a file missing whole frames is refused the same way in every container, with the --accept-truncated hint; accepted, a warning names it",
          arguments: [AudioFileType.wav, .aiff, .caf, .w64, .rf64])
    func truncated(type: AudioFileType) throws {
        let full = try write("full.\(type.fileExtension)", FileFixtures.sine(frames: 1000, channels: 2, sampleRate: 48000, frequency: 440, amplitude: 0.5),
                             sampleFormat: .int16)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        let path = "\(dir)/short.\(type.fileExtension)"
        try bytes.prefix(bytes.count - 4 * 25).write(to: URL(fileURLWithPath: path))       // 25 frames short
        let out = "\(dir)/out.wav"
        var result = try CLI.run(["render", path, "-o", out])
        #expect(result.status == 1)
        let present = 975
        #expect(result.stderr == "lockstep: render: \(path): the file is truncated: its header declares 1000 frames but only \(present) are present; re-export or re-copy it from the original; or give --accept-truncated to mix what it holds\n")
        #expect(!FileManager.default.fileExists(atPath: out))
        result = try CLI.run(["info", path])
        #expect(result.status == 1)
        #expect(result.stderr == "lockstep: info: \(path): the file is truncated: its header declares 1000 frames but only \(present) are present; re-export or re-copy it from the original\n")
        result = try CLI.run(["render", path, "-o", out, "--accept-truncated"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\(present) frames"))
        #expect(warnings(result) == ["lockstep: render: warning: \(path): the file is truncated: its header declares 1000 frames but only \(present) are present; re-export or re-copy it from the original; using the \(present) frames it holds"])
    }

    @Test("render --accept-truncated mixes a cut FLAC up to where decoding stops")
    func truncatedFLAC() throws {
        let path = try write("long.flac", FileFixtures.sine(frames: 48000, channels: 2, sampleRate: 48000, frequency: 440, amplitude: 0.5),
                             sampleFormat: .int16)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count - 1).write(to: URL(fileURLWithPath: path))
        let out = "\(dir)/out.wav"
        var result = try CLI.run(["render", path, "-o", out])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(path): the audio stops at frame ") && result.stderr.contains("--accept-truncated"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        result = try CLI.run(["render", path, "-o", out, "--accept-truncated"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(warnings(result).count == 1 && warnings(result)[0].hasPrefix("lockstep: render: warning: \(path): the audio stops at frame "), "\(result.stderr)")
        let frames = try AudioFileReader(path: out, warnings: FileWarnings()).frameCount
        #expect(frames > 40000 && frames < 48000)
    }

    @Test("a handful of the mutation suite's damaged files, through info and render as real processes: no crash, an error naming the file, no output left on error")
    func mutationsThroughTheCLI() throws {
        let samples = FileFixtures.sine(frames: 1000, channels: 2, sampleRate: 48000, frequency: 997, amplitude: 0.7)
        var exits: Set<Int32> = []
        for (index, (type, format)) in [(AudioFileType.wav, SampleFormat.int16), (.aiff, .int16), (.flac, .int16),
                                        (.caf, .float32), (.w64, .float32), (.rf64, .int16)].enumerated() {
            let source = try write("source-\(index).\(type.fileExtension)", samples, sampleFormat: format)
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
            let marks = FileMutations.headerBoundaries(of: bytes)
            let cases = [FileMutation.truncate(to: marks.first ?? 4), .truncate(to: marks.last ?? 40), .truncate(to: bytes.count - 1)]
                + FileMutations.replacements(of: bytes, count: 3, seed: 0x4C6F_636B_7374_6570 &+ UInt64(index))
            for (number, mutation) in cases.enumerated() {
                let path = "\(dir)/case-\(index)-\(number).\(type.fileExtension)"
                let damaged = mutation.apply(to: bytes)
                try Data(damaged).write(to: URL(fileURLWithPath: path))
                let out = "\(dir)/out-\(index)-\(number).wav"
                for arguments in [["info", path], ["render", path, "-o", out]] {
                    let result = try CLI.run(arguments, timeout: 30)
                    let label = "\(type) \(mutation) \(arguments[0])"
                    exits.insert(result.status)
                    #expect(result.status < 128, "\(label): killed by a signal, \(result.stderr)")
                    #expect(!result.stderr.contains("Fatal error"), "\(label): \(result.stderr)")
                    if result.status != 0 {
                        #expect(result.stderr.contains("lockstep: \(arguments[0]): \(path): "), "\(label): \(result.stderr)")
                        #expect(!FileManager.default.fileExists(atPath: out), "\(label): an output was left")
                    } else if arguments[0] == "render" {
                        #expect(try finiteSamples(out), "\(label)")
                    }
                }
                #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) == damaged, "\(type) \(mutation): the input changed")
            }
        }
        // Nothing but inputs and finished outputs in the folder (no temporary files).
        let names = try temp.contents()
        #expect(names.allSatisfy { $0.hasPrefix("source-") || $0.hasPrefix("case-") || $0.hasPrefix("out-") }, "\(names)")
        #expect(exits.contains(0) && exits.contains(1))
    }
}
