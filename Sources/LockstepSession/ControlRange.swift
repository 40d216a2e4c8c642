/// The ranges of the numbers a show-control command carries — a seek's time, a level's or gain's
/// decibels and ramp — checked in one place, before anything converts them to samples, by every
/// surface (typed lines, OSC, the web page) and again by the dispatcher and ``SessionPlayer``:
/// each refusal names the argument and its range, and reads the same wherever the value came from.
public enum ControlRange {
    /// The longest ramp of a level or gain change: an hour.
    public static let maximumRampSeconds = 3600.0

    /// The one message for a ramp out of range or not a time: `subject` (`gain`,
    /// `/lockstep/layer/bed/gain`) and the ramp as given (`1e+30 s`, `'later'`).
    public static func rampProblem(_ value: String, for subject: String) -> ControlRangeError {
        ControlRangeError("\(subject): ramp \(value) is not a ramp of 0 to \(Int(maximumRampSeconds)) seconds; "
                          + "give seconds, or a time such as 250ms, 0:02 or \"4800 samples\"")
    }

    /// A ramp given as a number of seconds (an OSC or JSON argument).
    /// - Throws: ``ControlRangeError`` unless it is finite and 0 to ``maximumRampSeconds``.
    public static func ramp(seconds: Double, for subject: String) throws(ControlRangeError) -> SessionTime {
        try checkRamp(seconds: seconds, for: subject)
        return .seconds(seconds)
    }

    /// A ramp written in the time syntax (`250ms`, `0:02`, `4800 samples`).
    /// - Throws: ``ControlRangeError`` when it is not a time, or is seconds past an hour.
    public static func ramp(text: String, for subject: String) throws(ControlRangeError) -> SessionTime {
        guard let time = SessionTime.parse(text), (try? ramp(time, for: subject)) != nil else { throw rampProblem("'\(text)'", for: subject) }
        return time
    }

    /// A ramp as a ``SessionTime``: seconds 0 to an hour; samples 0 to ``SessionTime/maximumSamples``
    /// (an hour of them at the session's rate is checked once the rate is known, by
    /// ``checkRamp(seconds:for:)``).
    /// - Throws: ``ControlRangeError`` when out of range.
    public static func ramp(_ time: SessionTime, for subject: String) throws(ControlRangeError) -> SessionTime {
        switch time {
        case .seconds(let seconds): try checkRamp(seconds: seconds, for: subject)
        case .samples(let count):
            guard time.isInRange else { throw rampProblem("\(count) samples", for: subject) }
        }
        return time
    }

    /// Checks a ramp in seconds.
    /// - Throws: ``ControlRangeError`` unless it is finite and 0 to ``maximumRampSeconds``.
    public static func checkRamp(seconds: Double, for subject: String) throws(ControlRangeError) {
        guard seconds.isFinite, seconds >= 0, seconds <= maximumRampSeconds else { throw rampProblem("\(seconds) s", for: subject) }
    }

    /// A level or gain in dB: −∞ to ``SessionGain/maximum`` (+12), not NaN.
    /// - Throws: ``ControlRangeError`` naming `subject` and the range.
    @discardableResult
    public static func gain(_ decibels: Double, for subject: String) throws(ControlRangeError) -> Double {
        guard !decibels.isNaN, decibels <= SessionGain.maximum else {
            throw ControlRangeError("\(subject): \(decibels) dB is out of range; a gain is -inf to +\(Int(SessionGain.maximum)) dB")
        }
        return decibels
    }

    /// A session time given as a number of seconds (an OSC or JSON argument): 0 to a week.
    /// - Throws: ``ControlRangeError`` naming `subject`, the value and the range.
    public static func time(seconds: Double, for subject: String) throws(ControlRangeError) -> SessionTime {
        do { return try SessionTime.seconds(seconds, as: subject) } catch { throw ControlRangeError("\(subject): \(error.value) \(error.reason)") }
    }

    /// A session time made in code, checked as ``SessionTime/parse(_:)`` would have: seconds 0 to
    /// a week, samples 0 to ``SessionTime/maximumSamples``.
    /// - Throws: ``ControlRangeError`` naming `subject`, the value and the range.
    public static func time(_ time: SessionTime, for subject: String) throws(ControlRangeError) -> SessionTime {
        guard !time.isInRange else { return time }
        switch time {
        case .seconds(let seconds): return try self.time(seconds: seconds, for: subject)
        case .samples(let count) where count < 0: throw ControlRangeError("\(subject): \(time) is negative; a time counts from a start, so send 0 or more")
        case .samples: throw ControlRangeError("\(subject): \(time) \(SessionTime.tooLong)")
        }
    }
}

/// A control command's number out of its range (``ControlRange``), with the message that names
/// the argument and the range.
public struct ControlRangeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is out of range, and the range.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
