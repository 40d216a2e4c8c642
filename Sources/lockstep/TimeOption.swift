import ArgumentParser
import LockstepSession

/// How every CLI option that takes a time reads it (`--from`, `--duration`, `--offset`, and the
/// TIME of `--go CUE@TIME`): ``SessionTime``'s one syntax, the same as session files, typed `seek`
/// and OSC `/lockstep/seek` — `90`, `1.5s`, `250ms`, `1:30`, `1:30.5`, `1:02:03`, `4800 samples`.
/// Samples count at the rate the time applies to (the device's for `play`, `--rate` for `render`).
enum TimeOption {
    /// The value name shown in help: `<time>`.
    static let valueName = "time"

    /// The forms, for option help.
    static let forms = "90, 1.5s, 250ms, 1:30, 1:30.5 or \"4800 samples\""

    /// Parses an option's value; the error (shown by ArgumentParser after "The value 'X' is
    /// invalid for '--option <time>':") lists the forms a time takes.
    /// - Throws: ``TimeOptionError``.
    static func parse(_ text: String) throws -> SessionTime {
        guard let time = SessionTime.parse(text) else { throw TimeOptionError() }
        return time
    }

    /// Checks a `--duration`: more than zero.
    /// - Throws: `ValidationError` naming the option.
    static func checkDuration(_ time: SessionTime?, option: String = "--duration") throws {
        if let time, time.isZero {
            throw ValidationError("\(option) \(time) is no time at all; give a length above 0 (e.g. \(option) 90), or leave it out")
        }
    }
}

/// A value that is not a time: says so and lists the forms.
struct TimeOptionError: Error, CustomStringConvertible {
    /// `not a time; write seconds (90, 1.5 or 1.5s), …`.
    var description: String { "not a time; \(SessionTime.formsHint)" }
}
