/// The longest time Lockstep takes anywhere a time is given (a duration, an offset, a session
/// time): a week. Far beyond any show, and at 768 kHz still far inside `Int64` samples, so a
/// time checked against it can never overflow when it becomes samples.
public enum TimeLimit {
    /// A week, in seconds (604800).
    public static let maximumSeconds = 7.0 * 24 * 3600
    /// The highest sample rate Lockstep renders at.
    public static let maximumSampleRate = 768_000
    /// A week at the highest sample rate, in samples.
    public static let maximumSamples = Int64(maximumSeconds) * Int64(maximumSampleRate)

    /// Whether `seconds` is a usable time: finite, not negative (or above 0 when `allowsZero`
    /// is false) and at most ``maximumSeconds``.
    public static func contains(_ seconds: Double, allowsZero: Bool = true) -> Bool {
        seconds.isFinite && (allowsZero ? seconds >= 0 : seconds > 0) && seconds <= maximumSeconds
    }
}
