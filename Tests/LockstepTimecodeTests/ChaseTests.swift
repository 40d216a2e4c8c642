import LockstepTimecode
import Testing

@Suite("Chase: LTC and MTC read back onto their samples; the lock, jumps, losses and stops")
struct ChaseTests {
    @Test("LTCReader puts every frame of Lockstep's LTC on the sample its clock starts it on, 0 off, fed in blocks of any size (the first frame, on the first sample fed, has no transition before it: libltc's estimate); the rate it suggests is the clock's", arguments: TimecodeRate.allCases)
    func ltcReader(rate: TimecodeRate) throws {
        let clock = try TimecodeClock(rate: rate, sampleRate: 48_000, start: Timecode(hours: 10, minutes: 0, seconds: 0, frames: 0))
        let signal = try LTCSignal(clock: clock)
        let count = 48_000 * 2
        let samples = UnsafeMutablePointer<Float>.allocate(capacity: count)
        defer { samples.deallocate() }
        signal.render(into: samples, from: 0, count: count)
        let reader = try LTCReader(sampleRate: 48_000)
        let origin: Int64 = 123_456            // device sample time of the signal's sample 0
        var frames: [LTCReader.Frame] = []
        var done = 0, block = 1
        while done < count {
            let size = min(count - done, block)
            frames += reader.write(samples + done, count: size, at: origin + Int64(done))
            done += size
            block = block * 3 % 1021 + 64
        }
        #expect(frames.count >= rate.nominalFramesPerSecond * 2 - 2)
        let wrong = frames.filter { $0.timecode != clock.start }.filter { frame in
            let n = frame.timecode.frameNumber(at: rate) - clock.start.frameNumber(at: rate)
            return !frame.isExact || frame.sampleTime != origin + clock.startSample(ofFrame: n) || frame.rate(sampleRate: 48_000) != rate
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(3))")
    }

    @Test("MTCReader: a full frame is a frame on its own sample; eight quarter-frames the frame piece 0 arrived on; pieces out of order are dropped")
    func mtcReader() throws {
        let messages = MTCMessages(clock: try TimecodeClock(rate: .fps25, sampleRate: 48_000, start: Timecode(hours: 1, minutes: 0, seconds: 0, frames: 0)))
        var reader = MTCReader()
        let full = reader.read(messages.fullFrame(atSample: 96_000), at: 500)
        #expect(full?.timecode == Timecode(hours: 1, minutes: 0, seconds: 2, frames: 0) && full?.rate == .fps25
                && full?.sampleTime == 500 && full?.isFullFrame == true)
        var read: [MTCReader.Frame] = []
        for quarter in Int64(200)..<Int64(232) {
            if let frame = reader.read(messages.quarterFrame(quarter), at: 1_000 + messages.sample(ofQuarter: quarter)) { read.append(frame) }
        }
        #expect(read.map(\.timecode) == [50, 52, 54, 56].map { messages.clock.timecode(ofFrame: $0) })
        #expect(read.map(\.sampleTime) == [50, 52, 54, 56].map { 1_000 + messages.clock.startSample(ofFrame: $0) })
        // Piece 3 missing: that block gives nothing, the next one is read again.
        var gappy = MTCReader()
        let pieces = (Int64(0)..<Int64(16)).filter { $0 != 3 }.compactMap { gappy.read(messages.quarterFrame($0), at: messages.sample(ofQuarter: $0)) }
        #expect(pieces.map(\.timecode) == [messages.clock.timecode(ofFrame: 2)])
    }

    static let settings = ChaseLock.Settings(offset: 100, jump: 1920, freewheel: 9600)

    /// A frame of 25 fps at 48 kHz: session timecode frame `frame` seen starting on `sampleTime`.
    static func frame(_ frame: Int64, at sampleTime: Int64) -> ChaseLock.Sighting {
        ChaseLock.Sighting(position: frame * 1920, sampleTime: sampleTime, length: 1920)
    }

    @Test("ChaseLock locks on the second of two agreeing frames and locates there with the offset; frames that agree change nothing")
    func lock() {
        var lock = ChaseLock(settings: Self.settings)
        #expect(lock.sighted(Self.frame(10, at: 50_000)).isEmpty)
        let locked: [ChaseLock.Action] = [.lock(position: 21_220, sampleTime: 51_920), .locate(position: 21_220, sampleTime: 51_920)]
        #expect(lock.sighted(Self.frame(11, at: 51_920)) == locked)
        #expect(lock.sighted(Self.frame(12, at: 53_840)).isEmpty && lock.heard(upTo: 55_000).isEmpty)
        // A frame read a few samples off (less than the jump) is left alone.
        #expect(lock.sighted(Self.frame(13, at: 55_762)).isEmpty)
    }

    @Test("ChaseLock: a jump is confirmed by the frame after it, then located; a lone misread frame is not")
    func jump() {
        var lock = ChaseLock(settings: Self.settings)
        _ = lock.sighted(Self.frame(10, at: 50_000))
        _ = lock.sighted(Self.frame(11, at: 51_920))
        #expect(lock.sighted(Self.frame(500, at: 53_840)).isEmpty)            // misread
        #expect(lock.sighted(Self.frame(13, at: 55_760)).isEmpty)
        #expect(lock.sighted(Self.frame(3, at: 57_680)).isEmpty)              // the jump back…
        let jumped: [ChaseLock.Action] = [.jump(from: 28_900, position: 7_780, sampleTime: 59_600), .locate(position: 7_780, sampleTime: 59_600)]
        #expect(lock.sighted(Self.frame(4, at: 59_600)) == jumped)
    }

    @Test("ChaseLock: two frames of silence are a loss (freewheeling), the freewheel time more a stop; timecode back within it locks again without a locate")
    func lossAndStop() {
        var lock = ChaseLock(settings: Self.settings)
        _ = lock.sighted(Self.frame(10, at: 50_000))
        _ = lock.sighted(Self.frame(11, at: 51_920))        // heard up to 53 840
        #expect(lock.heard(upTo: 57_000).isEmpty)
        let lost: [ChaseLock.Action] = [.loss(position: 23_140, sampleTime: 53_840)]
        #expect(lock.heard(upTo: 57_680) == lost)
        let back: [ChaseLock.Action] = [.lock(position: 26_980, sampleTime: 57_680)]
        #expect(lock.sighted(Self.frame(14, at: 57_680)) == back)
        #expect(lock.heard(upTo: 65_360).count == 1)                   // lost again after 59 600
        let stopped: [ChaseLock.Action] = [.stop(position: 38_500, sampleTime: 69_200)]
        #expect(lock.heard(upTo: 74_960) == stopped)
        #expect(!lock.isLocked)
    }

    @Test("TimecodeClock.position(of:): labels before the start are negative, across midnight too")
    func positions() throws {
        let clock = try TimecodeClock(rate: .fps25, sampleRate: 48_000, start: Timecode(hours: 0, minutes: 0, seconds: 1, frames: 0))
        #expect(clock.position(of: Timecode(hours: 0, minutes: 0, seconds: 2, frames: 1)) == 26 * 1920)
        #expect(clock.position(of: Timecode(hours: 0, minutes: 0, seconds: 0, frames: 24)) == -1920)
        #expect(clock.position(of: Timecode(hours: 23, minutes: 59, seconds: 59, frames: 24)) == -26 * 1920)
    }
}
