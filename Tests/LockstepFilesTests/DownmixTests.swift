import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// Channel conversion through the real render path (``LayerMixdown`` → ``FilePlayer`` → engine):
/// one impulse on each input channel, each output channel's value checked against the documented
/// coefficient exactly.
@Suite("Downmix matrices")
struct DownmixTests {
    static let h: Float = 0.70710678

    /// Writes a `channels`-channel f32 WAV with an impulse of 0.5 on channel k at frame 100·(k+1).
    static func impulses(channels: Int, in dir: TemporaryTestDirectory) throws -> String {
        let path = dir.file("in\(channels).wav")
        let frames = 100 * (channels + 1)
        var samples = [Float](repeating: 0, count: frames * channels)
        for k in 0..<channels { samples[100 * (k + 1) * channels + k] = 0.5 }
        try Helpers.write(samples, to: path, type: .wav,
                          format: StreamFormat(sampleRate: 48000, channelCount: channels, sampleFormat: .float32))
        return path
    }

    /// Renders the impulse file into `outputs` channels and returns, per input channel k, the
    /// output frame at 100·(k+1) divided by the impulse's 0.5.
    static func measure(inputs: Int, outputs: Int, map: String? = nil) throws -> [[Float]] {
        let dir = try TemporaryTestDirectory()
        let input = try impulses(channels: inputs, in: dir)
        let out = dir.file("out.wav")
        let layer = MixdownLayer(path: input, channelMap: try map.map { try ChannelMap(parsing: $0) })
        _ = try LayerMixdown(layers: [layer], outputPath: out, sampleRate: 48000, channelCount: outputs).run()
        let back = try Helpers.readAll(AudioFileReader(path: out))
        return (0..<inputs).map { k in (0..<outputs).map { o in back[100 * (k + 1) * outputs + o] / 0.5 } }
    }

    @Test("5.1 → stereo is ITU-R BS.775: C and surrounds at −3 dB, LFE dropped")
    func fivePointOne() throws {
        let got = try Self.measure(inputs: 6, outputs: 2)
        // Rows: inputs L R C LFE Ls Rs; columns: outputs L R.
        #expect(got == [[1, 0], [0, 1], [Self.h, Self.h], [0, 0], [Self.h, 0], [0, Self.h]])
    }

    @Test("7.1 → stereo: C, back and side channels at −3 dB to their side, LFE dropped")
    func sevenPointOne() throws {
        let got = try Self.measure(inputs: 8, outputs: 2)
        #expect(got == [[1, 0], [0, 1], [Self.h, Self.h], [0, 0], [Self.h, 0], [0, Self.h], [Self.h, 0], [0, Self.h]])
    }

    @Test("5.1 → mono is BS.775's mono: 0.7071 L + 0.7071 R + C + 0.5 Ls + 0.5 Rs")
    func fivePointOneMono() throws {
        let got = try Self.measure(inputs: 6, outputs: 1)
        let expected: [Float] = [Self.h, Self.h, Self.h * (2 * Self.h), 0, Self.h * Self.h, Self.h * Self.h]
        for (row, value) in zip(got, expected) { #expect(abs(row[0] - value) <= 1e-6, "\(got)") }
    }

    @Test("other counts are equal-power: N → 1 at 1/√N; N → M: first M straight, the rest spread at 1/√M")
    func equalPower() throws {
        let mono = try Self.measure(inputs: 4, outputs: 1)
        #expect(mono == [[0.5], [0.5], [0.5], [0.5]])
        let stereoToMono = try Self.measure(inputs: 2, outputs: 1)
        #expect(stereoToMono == [[Self.h], [Self.h]])
        let three = try Self.measure(inputs: 3, outputs: 2)
        #expect(three == [[1, 0], [0, 1], [Self.h, Self.h]])
        let four = try Self.measure(inputs: 5, outputs: 4)
        #expect(four == [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0.5, 0.5, 0.5, 0.5]])
    }

    @Test("mono plays on both channels; fewer channels go channel to channel")
    func upmix() throws {
        #expect(try Self.measure(inputs: 1, outputs: 2) == [[1, 1]])
        #expect(try Self.measure(inputs: 2, outputs: 4) == [[1, 0, 0, 0], [0, 1, 0, 0]])
    }

    @Test("an explicit map routes and scales exactly, and its dropped channels are warned about")
    func explicitMap() throws {
        let got = try Self.measure(inputs: 3, outputs: 2, map: "1:2, 2:1, 3:1@-6.0206, 3:2@-6.0206")
        #expect(got[0] == [0, 1] && got[1] == [1, 0])
        #expect(abs(got[2][0] - 0.5) < 1e-6 && abs(got[2][1] - 0.5) < 1e-6)
        let swapped = try Self.measure(inputs: 6, outputs: 2, map: "2,1")
        #expect(swapped == [[0, 1], [1, 0], [0, 0], [0, 0], [0, 0], [0, 0]])
        #expect(FileWarnings.shared.all.contains { $0.kind == .droppedChannels && $0.path.hasSuffix("in6.wav") && $0.message.contains("channels 3, 4, 5, 6 of 6 not heard") })
    }

    @Test("channel map errors name the entry at fault", arguments: [
        ("", "the channel map is empty"),
        ("1,,2", "entry 2 is empty; remove the extra comma"),
        ("1:1,2", "'2' is not a route IN:OUT"),
        ("0:1", "'0:1': '0' is not a file channel; channels count from 1"),
        ("1:x", "'1:x': 'x' is not an output channel"),
        ("1:1@loud", "'1:1@loud': gain 'loud' is not a gain"),
        ("a,1", "'a' (for output 1) is not a file channel"),
        // A route with nothing on one side or both (it trapped on ':', found by the numbers fuzzer).
        (":", "':': '' is not a file channel"),
        (":1", "':1': '' is not a file channel"),
        ("1:", "'1:': '' is not an output channel"),
        ("1:1,:", "':': '' is not a file channel"),
    ])
    func mapErrors(text: String, message: String) {
        let error = #expect(throws: ChannelMapError.self) { try ChannelMap(parsing: text) }
        #expect(error?.problem.contains(message) == true, "\(error?.problem ?? "no error")")
    }

    @Test("a map naming channels the file or the output lacks is refused with the counts")
    func mapOutOfRange() throws {
        let map = try ChannelMap(parsing: "1:1,7:2")
        let error = #expect(throws: ChannelMapError.self) { try map.matrix(inputs: 6, outputs: 2) }
        #expect(error?.problem == "'7:2': the file has 6 channels, so there is no file channel 7")
        let wide = try ChannelMap(parsing: "1,2,3")
        let outputs = #expect(throws: ChannelMapError.self) { try wide.matrix(inputs: 6, outputs: 2) }
        #expect(outputs?.problem == "'3': the output has 2 channels, so there is no output channel 3")
    }
}
