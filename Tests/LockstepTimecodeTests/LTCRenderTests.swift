import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import LockstepTimecode
import Testing

/// The label after `label` by SMPTE's rules, written out here (not the library's count): 30 fps
/// labels for 29.97df, frames 00 and 01 dropped at each minute but every tenth.
func successor(_ label: Timecode, fps: Int, dropFrame: Bool) -> Timecode {
    var next = label
    next.frames += 1
    if next.frames == fps { next.frames = 0; next.seconds += 1 }
    if next.seconds == 60 { next.seconds = 0; next.minutes += 1 }
    if next.minutes == 60 { next.minutes = 0; next.hours += 1 }
    if next.hours == 24 { next.hours = 0 }
    if dropFrame && next.seconds == 0 && next.frames == 0 && next.minutes % 10 != 0 { next.frames = 2 }
    return next
}

@Suite("LTC out in session render: libltc's decoder reads every frame's label from its exact sample")
struct LTCRenderTests {
    let temp: TemporaryTestDirectory

    init() throws { temp = try TemporaryTestDirectory(prefix: "lockstep-ltc") }

    /// A stereo session: a 0.25 s tone at 0.5 s.
    func session(rate: Int) throws -> String {
        let tone = temp.file("tone-\(rate).wav")
        let samples = FileFixtures.sine(frames: rate / 4, channels: 1, sampleRate: Double(rate), frequency: 440, amplitude: 0.5)
        try FileFixtures.writeWAV(path: tone, samples: samples, format: StreamFormat(sampleRate: Double(rate), channelCount: 1))
        let path = temp.file("show-\(rate).yaml")
        try "rate: \(rate)\ncues:\n  - { name: tone, file: \(tone), at: 0.5 }\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("every frame decodes to its label, ending on the sample before the next frame's, across a minute (and a tenth minute for 29.97df)",
          arguments: [("24", "00:00:58:12", 48_000), ("25", "00:59:58:00", 48_000), ("29.97df", "00:00:58:20", 48_000),
                      ("29.97df", "00:09:58:20", 48_000), ("29.97df", "00:00:58:20", 44_100), ("30", "23:59:58:00", 48_000)])
    func decodes(fps: String, start: String, sampleRate: Int) throws {
        let rate = try TimecodeRate(parsing: fps)
        let clock = try TimecodeClock(rate: rate, sampleRate: sampleRate, start: Timecode(parsing: start, rate: rate))
        let output = temp.newFile("ltc.wav")
        let result = try CLI.run(["session", "render", try session(rate: sampleRate), "-o", output, "--duration", "3",
                                  "--ltc-channel", "3", "--ltc-fps", fps, "--ltc-start", start])
        try #require(result.status == 0, "\(result.stderr)")
        let frames = try LTCDecoder.frames(path: output, channel: 2, samplesPerFrame: clock.maximumFrameLength)
        let total = clock.frame(containing: Int64(3 * sampleRate) - 1)
        // Each frame is known by the transition that ends it, so the file's last frame is not.
        #expect(frames.count >= Int(total) - 1, "\(frames.count) of \(total) frames decoded")
        var previous: (label: Timecode, edge: Int64)?
        var problems: [String] = []
        for frame in frames {
            let label = try Timecode(parsing: frame.timecode, rate: rate)
            let number = (label.frameNumber(at: rate) - clock.start.frameNumber(at: rate) + rate.framesPerDay) % rate.framesPerDay
            // Where frame n starts, by the documented rule written out here: round(n × rate / fps), half up.
            func expectedStart(_ n: Int64) -> Int64 {
                Int64((Double(n) * Double(sampleRate) * Double(rate.denominator) / Double(rate.numerator) + 0.5).rounded(.down))
            }
            let first = expectedStart(number), next = expectedStart(number + 1)
            if let previous {
                if label != successor(previous.label, fps: rate.nominalFramesPerSecond, dropFrame: rate.isDropFrame) {
                    problems.append("\(frame) after \(previous.label)")
                }
                // The frame's first bit starts where the previous frame's last ended: on its own sample.
                if previous.edge != first { problems.append("\(frame) starts at \(previous.edge), not \(first)") }
            } else if number > 1 {
                problems.append("the first frame decoded is \(frame)")
            }
            if frame.edge != next { problems.append("\(frame) ends before \(frame.edge), not \(next)") }
            // libltc's own estimates, within the couple of samples its running average allows.
            if previous != nil && (abs(frame.start - first) > 3 || abs(frame.end + 1 - next) > 3) { problems.append("\(frame) estimates") }
            if frame.dropFrame != rate.isDropFrame || frame.reverse { problems.append("\(frame) flags") }
            previous = (label, frame.edge)
        }
        #expect(problems.isEmpty, "\(problems.prefix(8))")
    }

    @Test("the LTC takes its channel only: the session's channels are those of a render without it; a session channel can carry it instead")
    func channels() throws {
        let show = try session(rate: 48_000)
        let plain = temp.file("plain.wav"), added = temp.file("added.wav"), replaced = temp.file("replaced.wav")
        for (path, extra) in [(plain, [String]()), (added, ["--ltc-channel", "3"]), (replaced, ["--ltc-channel", "2"])] {
            let result = try CLI.run(["session", "render", show, "-o", path, "--duration", "1"] + extra)
            try #require(result.status == 0, "\(result.stderr)")
        }
        let mix = try readAudio(plain), three = try readAudio(added), two = try readAudio(replaced)
        #expect(mix.channels == 2 && three.channels == 3 && two.channels == 2)
        /// Channel `c` of interleaved `samples` of `channels` channels.
        func channel(_ c: Int, of file: (samples: [Float], channels: Int)) -> [Float] {
            stride(from: c, to: file.samples.count, by: file.channels).map { file.samples[$0] }
        }
        #expect(channel(0, of: three) == channel(0, of: mix) && channel(1, of: three) == channel(1, of: mix))
        #expect(channel(0, of: two) == channel(0, of: mix) && channel(1, of: two) == channel(2, of: three))
        #expect(channel(0, of: mix).contains { $0 != 0 })
        // libltc's level, −3 dBFS: ±90/127.
        let peak: Float = channel(2, of: three).map(abs).max() ?? 0
        #expect(abs(peak - 90.0 / 127) < 1e-6)
        let decoded = try LTCDecoder.frames(path: replaced, channel: 1, samplesPerFrame: 1920)
        #expect(decoded.first?.timecode == "00:00:00:00" && decoded.first?.edge == 1920)
    }

    @Test("bad LTC options are refused with one clear error")
    func errors() throws {
        let show = try session(rate: 48_000)
        let cases: [([String], String)] = [
            (["--ltc-channel", "4"], "--ltc-channel 4 is not a channel of the file: the session has 2; give 1 to 3"),
            (["--ltc-channel", "1", "--ltc-fps", "29.97"], "--ltc-fps: '29.97' is not a timecode rate (29.97 fps is supported as drop-frame only: 29.97df)"),
            (["--ltc-channel", "1", "--ltc-fps", "29.97df", "--ltc-start", "01:01:00:00"], "--ltc-start '01:01:00:00' does not exist at 29.97df"),
            (["--ltc-channel", "1", "--ltc-start", "1:00:00"], "--ltc-start '1:00:00' is not a timecode; write HH:MM:SS:FF"),
        ]
        for (options, message) in cases {
            let result = try CLI.run(["session", "render", show, "-o", temp.file("bad.wav"), "--duration", "1"] + options)
            #expect(result.status == 64, "\(options): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(options): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: temp.file("bad.wav")))
        }
        // A rate or start with nothing to send it is refused before anything opens.
        let render = try CLI.run(["session", "render", show, "-o", temp.file("bad.wav"), "--ltc-fps", "30"])
        #expect(render.status == 64 && render.stderr.contains("--ltc-fps and --ltc-start set the LTC of --ltc-channel; give --ltc-channel too"), "\(render.stderr)")
        let run = try CLI.run(["session", "run", show, "--ltc-start", "01:00:00:00", "--start-server", "never"])
        #expect(run.status == 64 && run.stderr.contains("give --ltc-out, --mtc-out or --chase ltc:/mtc: too"), "\(run.stderr)")
        // --chase and --transport-master: one clear error each, before anything opens.
        for (options, message) in [(["--chase", "smpte:x"], "the source is ltc:PORT, mtc:PORT or transport, not 'smpte:'"),
                                   (["--chase", "ltc"], "give ltc:PORT, mtc:PORT or transport"),
                                   (["--chase-offset", "1"], "give --chase too"),
                                   (["--chase", "ltc:x", "--chase-offset", "soon"], "--chase-offset 'soon'"),
                                   (["--chase", "ltc:x", "--chase-jump", "0"], "--chase-jump 0: give 1 frame or more"),
                                   (["--chase", "mtc:x", "--midi"], "give one of them"),
                                   (["--chase", "transport", "--transport"], "--chase transport is --transport"),
                                   (["--transport-master", "--chase", "ltc:x"], "cannot also follow timecode or transport")] {
            let refused = try CLI.run(["session", "run", show, "--start-server", "never"] + options)
            #expect(refused.status == 64 && refused.stderr.contains(message), "\(options): \(refused.stderr)")
        }
    }
}
