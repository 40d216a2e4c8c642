import Foundation
import Lockstep
import LockstepTestSupport
import LockstepTimecode
import Testing

@Suite("Timecode cues: 'at: tc' lands on the first sample of its frame, where the LTC of that frame starts")
struct TimecodeCueTests {
    let temp: TemporaryTestDirectory

    init() throws { temp = try TemporaryTestDirectory(prefix: "lockstep-tc-cue") }

    func session(_ text: String) throws -> String {
        let click = temp.file("click.wav")
        if !FileManager.default.fileExists(atPath: click) {
            try FileFixtures.writeWAV(path: click, samples: Signals.impulse(at: 0, frames: 16, value: 0.5),
                                      format: StreamFormat(sampleRate: 48000, channelCount: 1))
        }
        let path = temp.newFile("show.yaml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("a cue at tc 00:01:00:02 (29.97df from 00:00:59:00) starts on sample 48 048, the first of frame 30, where the rendered LTC labels that frame; the LTC takes the session's rate and start")
    func placement() throws {
        let show = try session("""
            rate: 48000
            channels: 1
            timecode: { fps: 29.97df, start: "00:00:59:00" }
            cues:
              - { name: hit, file: click.wav, at: tc 00:01:00:02 }
            """)
        let output = temp.file("tc.wav")
        let result = try CLI.run(["session", "render", show, "-o", output, "--duration", "2", "--ltc-channel", "2"])
        try #require(result.status == 0, "\(result.stderr)")
        let (samples, channels) = try readAudio(output)
        let mix = stride(from: 0, to: samples.count, by: channels).map { samples[$0] }
        #expect(mix.firstIndex { $0 != 0 } == 48_048 && mix[48_048] == 0.5)
        let frames = try LTCDecoder.frames(path: output, channel: 1, samplesPerFrame: 1602)
        let before = try #require(frames.firstIndex { $0.timecode == "00:00:59:29" })
        #expect(frames[before + 1].timecode == "00:01:00:02" && frames[before].edge == 48_048 && frames[before + 1].dropFrame,
                "\(frames[before...].prefix(2))")
    }

    @Test("'at: tc' without timecode:, with a label the rate has not, or in a group is refused with its line")
    func errors() throws {
        let cases: [(String, String)] = [
            ("cues:\n  - { name: hit, file: click.wav, at: tc 01:00:00:00 }\n",
             "cue 'hit': 'at: tc 01:00:00:00' counts from the session's timecode; add timecode:"),
            ("timecode: { fps: 29.97df }\ncues:\n  - { name: hit, file: click.wav, at: tc 00:02:00:00 }\n",
             "cue 'hit': at: tc '00:02:00:00' does not exist at 29.97df"),
            ("timecode: { fps: 25 }\ncues:\n  - { name: hit, file: click.wav, at: tc 1:00 }\n",
             "cue 'hit': 'at: tc' needs a timecode, HH:MM:SS:FF"),
            ("timecode: { fps: 31 }\ncues:\n  - { name: hit, file: click.wav }\n",
             "timecode fps: '31' is not a timecode rate"),
            ("timecode: { fps: 25 }\ncues:\n  - name: g\n    type: group\n    children:\n      - { name: hit, file: click.wav, at: tc 00:00:01:00 }\n",
             "'at: tc' places cues of the top level only"),
        ]
        for (text, message) in cases {
            let result = try CLI.run(["session", "check", try session(text)])
            #expect(result.status != 0 && result.stderr.contains(message), "\(text)\n\(result.stderr)")
        }
    }
}
