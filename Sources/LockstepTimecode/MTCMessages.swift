/// MIDI time code on the sample clock: the quarter-frame messages of a ``TimecodeClock`` and the
/// sample each belongs on, and the full-frame message sent on a locate.
///
/// Quarter-frame q (q ≥ 0) is on sample `round(q × sampleRate × denominator / (4 × numerator))`,
/// half up — four to a frame, the first on the frame's own first sample (so on the sample LTC
/// starts that frame on, when the frame's length divides by four). The eight pieces of a timecode
/// span two frames: piece 0 goes out on the first quarter of every even frame (counted from
/// session sample 0) and the eight carry that even frame's label, as MTC has it (a receiver
/// adds the two frames the message took).
public struct MTCMessages: Sendable {
    /// The clock the messages follow.
    public let clock: TimecodeClock

    /// Creates the messages of `clock`.
    public init(clock: TimecodeClock) { self.clock = clock }

    /// The sample quarter-frame `quarter` belongs on.
    public func sample(ofQuarter quarter: Int64) -> Int64 {
        let num = 4 * clock.rate.numerator
        return (2 * quarter * Int64(clock.sampleRate) * clock.rate.denominator + num) / (2 * num)
    }

    /// The first quarter-frame on or after session sample `sample`.
    public func firstQuarter(atOrAfter sample: Int64) -> Int64 {
        var quarter = max(0, sample * 4 * clock.rate.numerator / (Int64(clock.sampleRate) * clock.rate.denominator) - 1)
        while self.sample(ofQuarter: quarter) < sample { quarter += 1 }
        return quarter
    }

    /// The two bytes of quarter-frame `quarter` (`F1 0pdddd`).
    public func quarterFrame(_ quarter: Int64) -> [UInt8] {
        let piece = Int(quarter % 8)
        let label = clock.timecode(ofFrame: quarter / 8 * 2)
        let value: Int
        switch piece {
        case 0: value = label.frames & 0xF
        case 1: value = label.frames >> 4
        case 2: value = label.seconds & 0xF
        case 3: value = label.seconds >> 4
        case 4: value = label.minutes & 0xF
        case 5: value = label.minutes >> 4
        case 6: value = label.hours & 0xF
        default: value = (label.hours >> 4) | (Self.rateCode(clock.rate) << 1)
        }
        return [0xF1, UInt8(piece << 4 | value)]
    }

    /// The full-frame message (`F0 7F 7F 01 01 hh mm ss ff F7`) of the frame sample `sample`
    /// belongs to: what a locate sends.
    public func fullFrame(atSample sample: Int64) -> [UInt8] {
        let label = clock.timecode(atSample: sample)
        return [0xF0, 0x7F, 0x7F, 0x01, 0x01, UInt8(Self.rateCode(clock.rate) << 5 | label.hours),
                UInt8(label.minutes), UInt8(label.seconds), UInt8(label.frames), 0xF7]
    }

    /// MTC's rate code: 0 for 24 fps, 1 for 25, 2 for 29.97 drop-frame, 3 for 30.
    public static func rateCode(_ rate: TimecodeRate) -> Int {
        switch rate {
        case .fps24: 0
        case .fps25: 1
        case .fps2997DropFrame: 2
        case .fps30: 3
        }
    }
}
