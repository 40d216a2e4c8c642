import LockstepTimecode
import Testing

@Suite("MTC: quarter-frames on their samples, pieces and full-frame messages")
struct MTCTests {
    /// The label eight quarter-frames carry, put together as a receiver does.
    static func assemble(_ pieces: [[UInt8]]) -> (label: Timecode, rateCode: Int)? {
        guard pieces.count == 8, pieces.enumerated().allSatisfy({ $0.element.count == 2 && $0.element[0] == 0xF1 && Int($0.element[1] >> 4) == $0.offset }) else { return nil }
        let n = pieces.map { Int($0[1] & 0xF) }
        return (Timecode(hours: n[6] | (n[7] & 1) << 4, minutes: n[4] | n[5] << 4, seconds: n[2] | n[3] << 4, frames: n[0] | n[1] << 4), n[7] >> 1)
    }

    @Test("four quarter-frames a frame, the first on the frame's first sample: 480 samples at 48 kHz / 25 fps, round(q × 400.4) at 29.97")
    func samples() throws {
        let pal = MTCMessages(clock: try TimecodeClock(rate: .fps25, sampleRate: 48_000))
        #expect((0..<400).allSatisfy { pal.sample(ofQuarter: Int64($0)) == Int64($0) * 480 })
        let ntsc = MTCMessages(clock: try TimecodeClock(rate: .fps2997DropFrame, sampleRate: 48_000))
        #expect((0..<5).map { ntsc.sample(ofQuarter: Int64($0)) } == [0, 400, 801, 1201, 1602])
        #expect((0..<1000).allSatisfy { ntsc.sample(ofQuarter: Int64($0) * 4) == ntsc.clock.startSample(ofFrame: Int64($0)) })
        #expect(pal.firstQuarter(atOrAfter: 480_000) == 1000 && pal.firstQuarter(atOrAfter: 480_001) == 1001)
        #expect(ntsc.firstQuarter(atOrAfter: 401) == 2 && ntsc.firstQuarter(atOrAfter: 0) == 0)
    }

    @Test("eight pieces carry the label of the even frame they start on, with the rate code; the full frame names the frame of its sample", arguments: TimecodeRate.allCases)
    func pieces(rate: TimecodeRate) throws {
        let start = rate.isDropFrame ? Timecode(hours: 23, minutes: 59, seconds: 58, frames: 2) : Timecode(hours: 23, minutes: 59, seconds: 58, frames: 0)
        let messages = MTCMessages(clock: try TimecodeClock(rate: rate, sampleRate: 48_000, start: start))
        for block in Int64(0)..<Int64(rate.nominalFramesPerSecond * 3) {
            let assembled = try #require(Self.assemble((0..<8).map { messages.quarterFrame(block * 8 + Int64($0)) }))
            #expect(assembled.label == messages.clock.timecode(ofFrame: block * 2))
            #expect(assembled.rateCode == MTCMessages.rateCode(rate))
        }
        let sample = messages.clock.startSample(ofFrame: 3) + 5
        let label = messages.clock.timecode(ofFrame: 3)
        #expect(messages.fullFrame(atSample: sample) == [0xF0, 0x7F, 0x7F, 0x01, 0x01, UInt8(MTCMessages.rateCode(rate) << 5 | label.hours),
                                                          UInt8(label.minutes), UInt8(label.seconds), UInt8(label.frames), 0xF7])
    }
}
