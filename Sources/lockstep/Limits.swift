import ArgumentParser
import Lockstep

/// The ranges the CLI accepts for rates, checked where the options are parsed. (Times are bounded
/// by their parser, ``TimeOption``: at most a week, so a time never overflows when it is turned
/// into samples.)
enum Limits {
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
