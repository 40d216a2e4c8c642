import Foundation
import Lockstep

/// A point or a length in time as a session file writes it.
///
/// Forms: a number of seconds (`12`, `1.5`), seconds with a unit (`1.5s`, `250ms`),
/// `m:ss.fff` or `h:mm:ss.fff` (`1:05.250`, `1:02:03`), or a count of samples (`96000 samples`).
public enum SessionTime: Sendable, Hashable, CustomStringConvertible {
    /// Seconds.
    case seconds(Double)
    /// Samples, at the rate the value applies to (the session's for cue times, the file's for
    /// `from`/`to`).
    case samples(Int64)

    /// The longest time a session takes: ``Lockstep/TimeLimit/maximumSeconds`` (a week).
    public static let maximumSeconds = TimeLimit.maximumSeconds
    /// The largest sample count a session takes: a week at 768 kHz.
    public static let maximumSamples = TimeLimit.maximumSamples

    /// Parses a time; nil if `text` is not one of the forms, is negative or not finite, or is
    /// longer than a week (``maximumSeconds``, ``maximumSamples``).
    public static func parse(_ text: String) -> SessionTime? {
        guard let time = parseUnbounded(text) else { return nil }
        switch time {
        case .seconds(let value): return value <= maximumSeconds ? time : nil
        case .samples(let value): return value <= maximumSamples ? time : nil
        }
    }

    private static func parseUnbounded(_ text: String) -> SessionTime? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let lower = trimmed.lowercased()
        for suffix in [" samples", " sample", "samples", "sample", " smp", "smp"] where lower.hasSuffix(suffix) {
            let number = lower.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)
            guard let value = Int64(number), value >= 0 else { return nil }
            return .samples(value)
        }
        if lower.hasSuffix("ms") {
            let number = lower.dropLast(2).trimmingCharacters(in: .whitespaces)
            guard let value = Self.decimal(number) else { return nil }
            return .seconds(value / 1000)
        }
        if lower.hasSuffix("s") {
            let number = lower.dropLast(1).trimmingCharacters(in: .whitespaces)
            guard let value = Self.decimal(number) else { return nil }
            return .seconds(value)
        }
        if lower.contains(":") {
            let parts = lower.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 || parts.count == 3 else { return nil }
            guard let seconds = Self.decimal(parts.last!), seconds < 60 else { return nil }
            var total = seconds
            var scale = 60.0
            for (index, part) in parts.dropLast().reversed().enumerated() {
                guard !part.isEmpty, part.allSatisfy(\.isASCII), let value = Int(part), value >= 0 else { return nil }
                if index == 0 && parts.count == 3 && value >= 60 { return nil }  // minutes in h:mm:ss
                total += Double(value) * scale
                scale *= 60
            }
            return .seconds(total)
        }
        guard let value = Self.decimal(lower) else { return nil }
        return .seconds(value)
    }

    /// A plain non-negative decimal number (no exponent, no sign other than none).
    private static func decimal(_ text: String) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              text.filter({ $0 == "." }).count <= 1, text != "." else { return nil }
        guard let value = Double(text), value.isFinite, value >= 0 else { return nil }
        return value
    }

    /// The time in samples at `rate`, rounded to the nearest sample.
    public func samples(at rate: Double) -> Int64 {
        switch self {
        case .seconds(let s): return Int64((s * rate).rounded())
        case .samples(let n): return n
        }
    }

    /// The time as written back: `1.5 s` or `96000 samples`.
    public var description: String {
        switch self {
        case .seconds(let s): return "\(s) s"
        case .samples(let n): return "\(n) samples"
        }
    }

    /// Formats seconds as a clock, `m:ss.fff` (or `h:mm:ss.fff`), as Lockstep shows session times.
    public static func clock(_ seconds: Double) -> String {
        let totalMillis = Int((seconds * 1000).rounded())
        let ms = totalMillis % 1000
        let s = (totalMillis / 1000) % 60
        let m = (totalMillis / 60_000) % 60
        let h = totalMillis / 3_600_000
        return h > 0 ? String(format: "%d:%02d:%02d.%03d", h, m, s, ms) : String(format: "%d:%02d.%03d", m, s, ms)
    }

    /// The forms a time may take, for error messages.
    public static let formsHint = "write seconds (12 or 1.5), \"m:ss.fff\", \"h:mm:ss.fff\" or \"N samples\", at most a week"
}

/// Gains as sessions and commands write them: decibels, with or without `dB`, or `-inf`.
public enum SessionGain {
    /// The highest gain a layer, cue or automation point may have, in dB.
    public static let maximum = 12.0

    /// Parses `-3`, `-3dB`, `-3 dB`, `+2.5db`, `-inf`, `-infdB`; nil for anything else or above
    /// ``maximum``.
    public static func parse(_ text: String) -> Double? {
        var body = text.trimmingCharacters(in: .whitespaces).lowercased()
        if body.hasSuffix("db") { body = String(body.dropLast(2)).trimmingCharacters(in: .whitespaces) }
        if body == "-inf" || body == "-infinity" { return -.infinity }
        guard !body.isEmpty, body.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.".contains($0)) }),
              let value = Double(body), value.isFinite, value <= maximum else { return nil }
        return value
    }

    /// The linear factor of `decibels` (0 for −∞).
    public static func linear(_ decibels: Double) -> Double {
        decibels == -.infinity ? 0 : pow(10, decibels / 20)
    }

    /// `-3.0 dB`, or `-inf dB`.
    public static func format(_ decibels: Double) -> String {
        decibels == -.infinity ? "-inf dB" : String(format: "%.1f dB", decibels)
    }
}

/// "Did you mean" suggestions for misspelt keys, names and commands, by edit distance.
public enum Suggest {
    /// The candidate closest to `word`, if close enough to be a likely typo.
    public static func closest(to word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, distance(word.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(2, word.count / 3) ? best.0 : nil
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// `; did you mean 'x'?` or an empty string.
    public static func hint(for word: String, in candidates: [String]) -> String {
        closest(to: word, in: candidates).map { "; did you mean '\($0)'?" } ?? ""
    }
}
