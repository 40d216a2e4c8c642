import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// Output types, encodings, channel conversion and `info`'s codec report, through the built binary.
@Suite("lockstep CLI: formats and channels")
struct FormatCLITests {
    let temp: TemporaryTestDirectory
    var dir: String { temp.path }

    init() throws {
        temp = try TemporaryTestDirectory(prefix: "lockstep-formats")
    }

    /// A `channels`-channel f32 WAV of 0.1 s with 0.25 on every channel.
    func source(channels: Int = 2, name: String = "in.wav") throws -> String {
        let path = "\(dir)/\(name)"
        let writer = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: channels))
        let samples = [Float](repeating: 0.25, count: 4800 * channels)
        try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 4800) }
        try writer.close()
        return path
    }

    @Test("render writes every type by extension; the summary names the encoding", arguments: [
        ("wav", "WAV 32-bit float"), ("aiff", "AIFF 32-bit float"), ("flac", "FLAC 24-bit integer"), ("caf", "CAF 32-bit float"),
        ("w64", "W64 32-bit float"), ("rf64", "RF64 32-bit float"), ("au", "AU 32-bit float"), ("ogg", "Ogg Vorbis"),
        ("opus", "Opus"), ("mp3", "MP3"),
    ])
    func renderEveryType(ext: String, summary: String) throws {
        let input = try source()
        let r = try CLI.run(["render", input, "-o", "\(dir)/out.\(ext)"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("2 ch, \(summary), peak"), "\(r.stdout)")
        let reader = try AudioFileReader(path: "\(dir)/out.\(ext)")
        #expect(reader.fileType == AudioFileType(pathExtension: ext))
        #expect(reader.frameCount == 4800)
    }

    @Test("--format overrides the extension; --sample-format, --quality and --bitrate-mode reach the file")
    func formatOptions() throws {
        let input = try source()
        var r = try CLI.run(["render", input, "-o", "\(dir)/take.dat", "--format", "flac", "--sample-format", "s16", "--quality", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        var reader = try AudioFileReader(path: "\(dir)/take.dat")
        #expect(reader.fileType == .flac && reader.codecName == "FLAC s16")
        r = try CLI.run(["render", input, "-o", "\(dir)/phone.au", "--sample-format", "ulaw", "--rate", "8000", "--channels", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        reader = try AudioFileReader(path: "\(dir)/phone.au")
        #expect(reader.codecName == "µ-law" && reader.bitrate == 64000 && reader.bitrateIsExact)
        r = try CLI.run(["render", input, "-o", "\(dir)/cbr.mp3", "--bitrate-mode", "constant", "--quality", "0.5"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try AudioFileReader(path: "\(dir)/cbr.mp3").bitrateMode == .constant)
    }

    @Test("combinations a type cannot hold: one line, exit 64, listing what it can; nothing written", arguments: [
        (["render", "IN", "-o", "x.mp3", "--sample-format", "s16"], "render: x.mp3: MP3 holds no sample format choice (the codec chooses its own); leave --sample-format out"),
        (["render", "IN", "-o", "x.flac", "--sample-format", "f32"], "render: x.flac: FLAC cannot store f32 (32-bit float) samples; FLAC holds s8, s16, s24;"),
        (["render", "IN", "-o", "x.wav", "--quality", "0.5"], "render: x.wav: WAV has no quality setting"),
        (["render", "IN", "-o", "x.ogg", "--quality", "2"], "--quality 2.0 is out of range"),
        (["render", "IN", "-o", "x.opus", "--bitrate-mode", "constant"], "Opus takes no bitrate mode"),
        (["render", "IN", "-o", "x.opus", "--rate", "44100"], "render: x.opus: Opus holds only 8000, 12000, 16000, 24000, 48000 Hz, not 44100"),
        (["render", "IN", "-o", "x.mp3", "--channels", "6"], "render: x.mp3: MP3 holds at most 2 channels, not 6"),
        (["render", "IN", "-o", "x.wav", "--format", "m4a"], "unknown --format 'm4a'"),
        (["render", "IN", "-o", "x.wav", "--channel-map", "1:1,x:2"], "render: --channel-map '1:1,x:2': 'x:2': 'x' is not a file channel"),
        (["render", "IN", "-o", "x.wav", "--channel-map", "1:1,x:2"], "'x' is not a file channel"),
        (["render", "IN", "-o", "x.wav", "--channel-map", "1,2", "--channel-map", "1"], "2 --channel-map values for 1 files"),
        (["session", "render", "S.yaml", "-o", "x.mp3", "--sample-format", "s24"], "session render: x.mp3: MP3 holds no sample format choice"),
        (["record", "-o", "x.mp3", "--sample-format", "s16"], "record: x.mp3: MP3 holds no sample format choice"),
        (["record", "-o", "x.mp3", "--channels", "4"], "record: x.mp3: MP3 holds at most 2 channels, not 4"),
    ])
    func impossible(arguments: [String], message: String) throws {
        let input = try source()
        try "cues:\n  - { file: in.wav }\n".write(toFile: "\(dir)/S.yaml", atomically: true, encoding: .utf8)
        let r = try CLI.run(arguments.map { $0 == "IN" ? input : $0 }, in: dir)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["S.yaml", "in.wav"])
    }

    @Test("a map naming a channel the file lacks names the entry and the count")
    func mapBeyondFile() throws {
        let input = try source()
        let r = try CLI.run(["render", input, "-o", "\(dir)/x.wav", "--channel-map", "1:1,7:2"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("in.wav: channel map '7:2': the file has 2 channels, so there is no file channel 7"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/x.wav"))
    }

    @Test("5.1 to stereo downmixes by BS.775 and says the LFE is dropped; an explicit map's drops are named")
    func downmixWarnings() throws {
        let six = try source(channels: 6, name: "six.wav")
        var r = try CLI.run(["render", six, "-o", "\(dir)/down.wav"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("six.wav: channel 4 of 6 not heard (ITU-R BS.775 5.1 → stereo (LFE dropped))"), "\(r.stderr)")
        let reader = try AudioFileReader(path: "\(dir)/down.wav")
        var frame = [Float](repeating: 0, count: 2)
        _ = try frame.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: 1) }
        // L = 0.25 · (1 + 0.7071 + 0.7071)
        #expect(abs(frame[0] - 0.25 * (1 + 2 * 0.70710678)) < 1e-6)
        r = try CLI.run(["render", six, "-o", "\(dir)/front.wav", "--channel-map", "1,2"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("six.wav: channels 3, 4, 5, 6 of 6 not heard (channel map 1,2)"), "\(r.stderr)")
    }

    @Test("info shows the codec, the bitrate and whether the length is exact, in text and JSON")
    func infoCodec() throws {
        let input = try source()
        _ = try CLI.run(["render", input, "-o", "\(dir)/a.mp3"])
        _ = try CLI.run(["render", input, "-o", "\(dir)/a.wav", "--sample-format", "s16"])
        let text = try CLI.run(["info", "\(dir)/a.wav", "\(dir)/a.mp3"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("a.wav: WAV (Microsoft), PCM s16, 48000 Hz, 2 ch, 4800 frames, 0:00.100, 1536 kb/s, peak"), "\(text.stdout)")
        #expect(text.stdout.contains("a.mp3: MPEG-1/2 Audio, MP3, 48000 Hz, 2 ch, 4800 frames"), "\(text.stdout)")
        #expect(text.stdout.contains("kb/s average (variable bitrate)"), "\(text.stdout)")
        let json = try CLI.run(["info", "--json", "\(dir)/a.mp3"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["codec"] as? String == "MP3")
        #expect(object?["lossy"] as? Bool == true)
        #expect(object?["bitrateMode"] as? String == "variable")
        #expect(object?["bitrateExact"] as? Bool == false)
        #expect((object?["bitrate"] as? Int ?? 0) > 0)
        #expect(object?["lengthExact"] as? Bool == true)
    }

    @Test("session channel_map: routes a cue, and a bad entry is reported at its line and column")
    func sessionChannelMap() throws {
        _ = try source(channels: 2, name: "st.wav")
        try """
        channels: 2
        cues:
          - { file: st.wav, channel_map: "2:1@-6" }
        """.write(toFile: "\(dir)/ok.yaml", atomically: true, encoding: .utf8)
        var r = try CLI.run(["session", "render", "ok.yaml", "-o", "ok.wav"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("st.wav: channel 1 of 2 not heard (channel map 2:1@-6)"), "\(r.stderr)")
        try """
        channels: 2
        layers:
          main: { channel_map: "1:1,2:x" }
        cues:
          - { file: st.wav, layer: main }
          - { file: st.wav, channel_map: [1, 2, 3] }
        """.write(toFile: "\(dir)/bad.yaml", atomically: true, encoding: .utf8)
        r = try CLI.run(["session", "check", "bad.yaml"], in: dir)
        #expect(r.status != 0)
        #expect(r.stderr.contains("bad.yaml:3:24: error: layer 'main' channel_map '1:1,2:x': '2:x': 'x' is not an output channel"), "\(r.stderr)")
        #expect(r.stderr.contains("bad.yaml:6:34: error: cue 'st 2': channel_map for 'st.wav': '3': the file has 2 channels, so there is no file channel 3"), "\(r.stderr)")
    }
}
