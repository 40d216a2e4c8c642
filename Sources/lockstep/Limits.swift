import ArgumentParser
import Lockstep

/// The ranges the CLI accepts for times and rates, checked where the options are parsed so a
/// number never overflows when it is turned into samples (1e30 seconds would trap).
enum Limits {
    /// Checks a `--duration` (more than 0) or an `--offset` (0 or more) in seconds.
    /// - Throws: `ValidationError` naming the option, the value and the range.
    static func checkSeconds(_ value: Double, option: String, allowsZero: Bool = false) throws {
        guard TimeLimit.contains(value, allowsZero: allowsZero) else {
            throw ValidationError("\(option) \(value) is out of range; use \(allowsZero ? "0" : "more than 0") to \(Int(TimeLimit.maximumSeconds)) seconds (a week)")
        }
    }

    /// The sample rates a session can be resolved or rendered at.
    static let sessionRates = 1000...TimeLimit.maximumSampleRate

    /// Checks a session `--rate`.
    /// - Throws: `ValidationError` naming the value and the range.
    static func checkSessionRate(_ rate: Int?) throws {
        if let rate, !sessionRates.contains(rate) {
            throw ValidationError("--rate \(rate) is out of range; use \(sessionRates.lowerBound)…\(sessionRates.upperBound) Hz")
        }
    }
}
