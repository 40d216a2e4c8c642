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
        guard let time = SessionTime.parse(text) else { throw TimeOptionError(reason: SessionTime.reason(for: text) ?? "is not a time") }
        return time
    }

    /// Parses a count of samples or a sample time (`--start-at`, `--midi-latency`): digits only
    /// (``SessionTime/sampleCount(_:as:)``).
    /// - Throws: ``TimeOptionError``.
    static func samples(_ text: String) throws -> Int64 {
        do { return try SessionTime.sampleCount(text, as: "") } catch { throw TimeOptionError(reason: error.reason) }
    }

    /// Checks a `--duration`: more than zero.
    /// - Throws: `ValidationError` naming the option.
    static func checkDuration(_ time: SessionTime?, option: String = "--duration") throws {
        if let time, time.isZero {
            throw ValidationError("\(option) \(time) is no time at all; give a length above 0 (e.g. \(option) 90), or leave it out")
        }
    }
}

/// A value that is not a time: says why (``SessionTime/reason(for:)``), as every place that
/// takes a time does.
struct TimeOptionError: Error, CustomStringConvertible {
    /// `is not a time; write seconds (90, 1.5 or 1.5s), …`, `is negative; …`.
    var reason: String
    /// The reason without its verb (`not a time; …`, `negative; …`): ArgumentParser puts "The
    /// value 'X' is invalid for '--option <time>':" before it.
    var description: String { reason.hasPrefix("is ") ? String(reason.dropFirst(3)) : reason }
}
