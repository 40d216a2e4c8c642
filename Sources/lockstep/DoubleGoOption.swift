import ArgumentParser
import LockstepSession

/// `--double-go SECONDS`, shared by `session run` and `session render` (so a render of the same
/// GOs ignores the same ones).
struct DoubleGoOption: ParsableArguments {
    @Option(name: .customLong("double-go"), help: ArgumentHelp(
        "Ignore a plain GO that lands within this many seconds of the previous one (QLab's double-GO protection; 0 turns it off). Named GOs are never ignored.",
        valueName: "seconds"))
    var seconds: Double = DoubleGoOption.defaultSeconds

    /// QLab-style protection against a GO button pressed twice.
    static let defaultSeconds = 0.3

    func validate() throws {
        guard seconds.isFinite, (0...10).contains(seconds) else {
            throw ValidationError("--double-go \(seconds) is out of range; give 0 (off) to 10 seconds")
        }
    }

    /// The window in samples at `rate`.
    func samples(at rate: Double) -> Int64 { Int64((seconds * rate).rounded()) }
}
