/// Timecode on the sample clock: which timecode frame each session sample belongs to, and the
/// exact sample each frame starts on.
///
/// Session sample 0 is the first sample of frame 0, labelled ``start``; frame n is labelled
/// ``start`` + n frames (wrapped at 24 hours) and starts on sample
/// `round(n × sampleRate × denominator / numerator)`, rounded half up — `n × 1920` at 48 kHz and
/// 25 fps, `round(n × 1601.6)` at 48 kHz and 29.97 fps, so frames of 1601 and 1602 samples
/// alternate in the pattern that keeps every frame within half a sample of the real rate.
/// A pure function of the sample: a seek or a second run gives the same frames on the same samples.
public struct TimecodeClock: Hashable, Sendable {
    /// The frame rate.
    public var rate: TimecodeRate
    /// The audio sample rate, in Hz.
    public var sampleRate: Int
    /// The label of frame 0 (session sample 0).
    public var start: Timecode

    /// Creates the clock.
    /// - Throws: ``TimecodeError`` for a `start` not valid at `rate` or a sample rate too low to
    ///   carry LTC (below 8000 Hz).
    public init(rate: TimecodeRate, sampleRate: Int, start: Timecode = Timecode(hours: 0, minutes: 0, seconds: 0, frames: 0)) throws(TimecodeError) {
        try start.validate(at: rate)
        guard sampleRate >= 8_000 else { throw TimecodeError("a sample rate of \(sampleRate) Hz is too low for timecode; give 8000 Hz or more") }
        self.rate = rate
        self.sampleRate = sampleRate
        self.start = start
    }

    /// The sample frame `frame` starts on (`frame` ≥ 0).
    public func startSample(ofFrame frame: Int64) -> Int64 {
        let num = rate.numerator
        return (2 * frame * Int64(sampleRate) * rate.denominator + num) / (2 * num)
    }

    /// The frame sample `sample` (≥ 0) belongs to.
    public func frame(containing sample: Int64) -> Int64 {
        var frame = sample * rate.numerator / (Int64(sampleRate) * rate.denominator)
        while startSample(ofFrame: frame + 1) <= sample { frame += 1 }
        while frame > 0 && startSample(ofFrame: frame) > sample { frame -= 1 }
        return frame
    }

    /// The number of samples of frame `frame`.
    public func length(ofFrame frame: Int64) -> Int {
        Int(startSample(ofFrame: frame + 1) - startSample(ofFrame: frame))
    }

    /// The longest frame, in samples.
    public var maximumFrameLength: Int {
        let num = rate.numerator, scaled = Int64(sampleRate) * rate.denominator
        return Int((scaled + num - 1) / num)
    }

    /// The label of frame `frame`.
    public func timecode(ofFrame frame: Int64) -> Timecode {
        Timecode(frameNumber: start.frameNumber(at: rate) + frame, rate: rate)
    }

    /// The label of the frame sample `sample` belongs to.
    public func timecode(atSample sample: Int64) -> Timecode { timecode(ofFrame: frame(containing: sample)) }
}
