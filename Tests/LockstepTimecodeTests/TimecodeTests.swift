import CLtc
import LockstepTimecode
import Testing

@Suite("Timecode: labels, drop-frame counting, frames on the sample clock")
struct TimecodeTests {
    /// libltc's own successor of a label (ltc_frame_increment): an independent count.
    static func libltcNext(_ label: Timecode, rate: TimecodeRate) -> Timecode {
        var frame = LTCFrame()
        ltc_frame_reset(&frame)
        frame.dfbit = rate.isDropFrame ? 1 : 0
        var time = SMPTETimecode()
        time.hours = UInt8(label.hours)
        time.mins = UInt8(label.minutes)
        time.secs = UInt8(label.seconds)
        time.frame = UInt8(label.frames)
        let standard = rate == .fps25 ? LTC_TV_625_50 : rate == .fps24 ? LTC_TV_FILM_24 : LTC_TV_525_60
        ltc_time_to_frame(&frame, &time, standard, 0)
        ltc_frame_increment(&frame, Int32(rate.nominalFramesPerSecond), standard, 0)
        ltc_frame_to_time(&time, &frame, 0)
        return Timecode(hours: Int(time.hours), minutes: Int(time.mins), seconds: Int(time.secs), frames: Int(time.frame))
    }

    @Test("frame numbers and labels convert both ways, each label followed by libltc's successor, through midnight", arguments: TimecodeRate.allCases)
    func labels(rate: TimecodeRate) {
        // The first 20 minutes and the last minute of the day, every frame.
        let day = rate.framesPerDay
        let numbers = Array(0..<Int64(20 * 60 * 30)) + Array((day - 2000)..<day)
        var mismatches: [String] = []
        for number in numbers {
            let label = Timecode(frameNumber: number, rate: rate)
            if label.frameNumber(at: rate) != number { mismatches.append("\(number) → \(label) → \(label.frameNumber(at: rate))") }
            let next = Timecode(frameNumber: number + 1, rate: rate)
            if next != Self.libltcNext(label, rate: rate) { mismatches.append("after \(label): \(next), libltc \(Self.libltcNext(label, rate: rate))") }
            if mismatches.count > 5 { break }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        #expect(Timecode(frameNumber: day, rate: rate) == Timecode(hours: 0, minutes: 0, seconds: 0, frames: 0))
    }

    @Test("29.97df skips exactly frames 00 and 01 of each minute but every tenth: 17 982 frames in ten minutes")
    func dropFrame() throws {
        let rate = TimecodeRate.fps2997DropFrame
        var skipped: [String] = []
        for number in Int64(0)..<Int64(17_982 * 2) {
            let label = Timecode(frameNumber: number, rate: rate), next = Timecode(frameNumber: number + 1, rate: rate)
            if next.frames != (label.frames + 1) % 30 { skipped.append("\(label)→\(next)") }
        }
        // 9 minutes of each ten drop two labels; every label of a minute's first second exists on tenths.
        #expect(skipped.count == 18)
        #expect(skipped.first == "00:00:59:29→00:01:00:02")
        #expect(!skipped.contains { $0.hasSuffix(":10:00:02") || $0.hasSuffix(":00:00:02") })
        #expect(Timecode(hours: 0, minutes: 10, seconds: 0, frames: 0).frameNumber(at: rate) == 17_982)
        #expect(throws: TimecodeError.self) { try Timecode(parsing: "00:01:00:01", rate: rate) }
        #expect(try Timecode(parsing: "00:10:00;00", rate: rate).frameNumber(at: rate) == 17_982)
    }

    @Test("frames start on round(n × rate × den / num), half up: 1920 samples at 48 kHz / 25, 1601.6 on average at 29.97")
    func boundaries() throws {
        let pal = try TimecodeClock(rate: .fps25, sampleRate: 48_000)
        #expect((0..<100).allSatisfy { pal.startSample(ofFrame: Int64($0)) == Int64($0) * 1920 })
        let ntsc = try TimecodeClock(rate: .fps2997DropFrame, sampleRate: 48_000)
        #expect((0..<5).map { ntsc.startSample(ofFrame: Int64($0)) } == [0, 1602, 3203, 4805, 6406])
        let cd = try TimecodeClock(rate: .fps2997DropFrame, sampleRate: 44_100)
        #expect(cd.startSample(ofFrame: 50) == 73_574)       // 73 573.5 rounds up
        for clock in [pal, ntsc, cd, try TimecodeClock(rate: .fps24, sampleRate: 44_100)] {
            for frame in Int64(0)..<3000 {
                let exact = Double(frame) * Double(clock.sampleRate) * Double(clock.rate.denominator) / Double(clock.rate.numerator)
                #expect(clock.startSample(ofFrame: frame) == Int64((exact + 0.5).rounded(.down)))
                let first = clock.startSample(ofFrame: frame), next = clock.startSample(ofFrame: frame + 1)
                #expect(clock.frame(containing: first) == frame && clock.frame(containing: next - 1) == frame)
            }
        }
    }

    @Test("bad labels and rates are refused with what to give")
    func errors() {
        func message(_ text: String, _ rate: TimecodeRate = .fps25) -> String? {
            do { _ = try Timecode(parsing: text, rate: rate); return nil } catch { return error.message }
        }
        #expect(message("24:00:00:00") == "'24:00:00:00': hours must be 00 to 23")
        #expect(message("00:00:00:25") == "'00:00:00:25': frames must be 00 to 24 at 25 fps")
        #expect(message("1:00:00") == "'1:00:00' is not a timecode; write HH:MM:SS:FF, e.g. 01:00:00:00")
        #expect(message("00:02:00:00", .fps2997DropFrame)?.contains("does not exist at 29.97df") == true)
        #expect(throws: TimecodeError.self) { try TimecodeRate(parsing: "29.97") }
        #expect(throws: TimecodeError.self) { try TimecodeClock(rate: .fps25, sampleRate: 4_000) }
    }
}
