import Foundation
import Lockstep

/// A point or a length in time, in the one syntax every place that takes a time accepts: session
/// files, the CLI's options (`--from`, `--duration`, `--offset`, `--go CUE@TIME`), typed `seek`
/// and OSC `/lockstep/seek`. Parsed in one place, ``parse(_:)``.
///
/// Forms: a number of seconds (`90`, `1.5`), seconds with a unit (`1.5s`, `250ms`),
/// `m:ss[.fff]` or `h:mm:ss[.fff]` (`1:30`, `1:30.5`, `1:02:03`), or a count of samples
/// (`4800 samples`, `4800 smp`).
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
        if let value = decimal(Substring(text)) { return .seconds(value) }     // the common case: 1.5
        let trimmed = trim(Substring(text))
        let lower = trimmed.lowercased()
        for suffix in [" samples", " sample", "samples", "sample", " smp", "smp"] where lower.hasSuffix(suffix) {
            let number = trim(lower.dropLast(suffix.count))
            guard isDigits(number), let value = Int64(number) else { return nil }
            return .samples(value)
        }
        if lower.hasSuffix("ms") {
            guard let value = Self.decimal(trim(lower.dropLast(2))) else { return nil }
            return .seconds(value / 1000)
        }
        if lower.hasSuffix("s") {
            guard let value = Self.decimal(trim(lower.dropLast(1))) else { return nil }
            return .seconds(value)
        }
        if lower.contains(":") {
            let parts = lower.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2 || parts.count == 3 else { return nil }
            guard let seconds = Self.decimal(parts.last!), seconds < 60 else { return nil }
            var total = seconds
            var scale = 60.0
            for (index, part) in parts.dropLast().reversed().enumerated() {
                guard isDigits(part), let value = Int(part) else { return nil }
                if index == 0 && parts.count == 3 && value >= 60 { return nil }  // minutes in h:mm:ss
                total += Double(value) * scale
                scale *= 60
            }
            return .seconds(total)
        }
        guard let value = Self.decimal(Substring(lower)) else { return nil }
        return .seconds(value)
    }

    /// `text` without leading and trailing spaces and tabs (what `.whitespaces` trims).
    private static func trim(_ text: Substring) -> Substring {
        func isSpace(_ c: Character) -> Bool {
            c == "\t" || c.unicodeScalars.allSatisfy { $0.properties.generalCategory == .spaceSeparator }
        }
        guard let first = text.firstIndex(where: { !isSpace($0) }) else { return text[text.endIndex...] }
        let last = text.lastIndex(where: { !isSpace($0) })!
        return text[first...last]
    }

    /// Whether `text` is one or more ASCII digits: no sign, space or other numeral (`Int("-0")`
    /// and `Int("+5")` parse, and a time has no sign).
    private static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// A plain non-negative decimal number (digits and at most one point; no sign or exponent).
    private static func decimal(_ text: Substring) -> Double? {
        var points = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") { points += 1 } else if byte < 0x30 || byte > 0x39 { return nil }
        }
        guard !text.isEmpty, points <= 1, text != "." else { return nil }
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

    /// The time as written back: `1.5 s`, `90 s` or `96000 samples`.
    public var description: String {
        switch self {
        case .seconds(let s): return s == s.rounded() && s.magnitude < 1e15 ? "\(Int64(s)) s" : "\(s) s"
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
        // (Integer formatting by hand: String(format:) costs microseconds, and a check of a
        // 100 000-cue session prints 200 000 of these.)
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        return h > 0 ? "\(h):\(padded(m, 2)):\(padded(s, 2)).\(padded(ms, 3))" : "\(m):\(padded(s, 2)).\(padded(ms, 3))"
    }

    /// The time in seconds at `rate` (samples are divided by it).
    public func seconds(at rate: Double) -> Double {
        switch self {
        case .seconds(let s): return s
        case .samples(let n): return Double(n) / rate
        }
    }

    /// Whether the time is zero (in either unit).
    public var isZero: Bool { self == .seconds(0) || self == .samples(0) }

    /// Parses `text`, or throws an error naming it (as `subject`, e.g. `--duration` or `seek`)
    /// and saying why it is not a time (``reason(for:)``).
    /// - Throws: ``TimeSyntaxError``.
    public static func parse(_ text: String, as subject: String) throws(TimeSyntaxError) -> SessionTime {
        guard let time = parse(text) else { throw TimeSyntaxError(subject: subject, value: text) }
        return time
    }

    /// Why `text` is not a time, for every error that refuses one (session keys, CLI options,
    /// typed commands, OSC and web arguments): it has a sign, it is longer than a week, or it is
    /// none of the forms. Nil when it is a time.
    public static func reason(for text: String) -> String? {
        guard parse(text) == nil else { return nil }
        switch trim(Substring(text)).first {
        case "-": return "is negative; a time counts from a start, so write 0 or more, without a sign"
        case "+": return "has a sign; write the time without '+'"
        default: break
        }
        if parseUnbounded(text) != nil { return tooLong }
        return "is not a time; \(formsHint)"
    }

    /// Parses a count of samples or a sample time written alone (`--start-at`, `--midi-latency`):
    /// decimal digits only. A sign is refused as in a time (``reason(for:)``): `-0` and `+5` would
    /// otherwise pass as 0 and 5.
    /// - Throws: ``TimeSyntaxError`` naming `subject` and saying why.
    public static func sampleCount(_ text: String, as subject: String) throws(TimeSyntaxError) -> Int64 {
        let trimmed = trim(Substring(text))
        let reason: String
        if trimmed.first == "-" || trimmed.first == "+" {
            reason = trimmed.first == "-" ? "is negative; a time counts from a start, so write 0 or more, without a sign"
                : "has a sign; write the number of samples without one"
        } else if !isDigits(trimmed) {
            reason = "is not a number of samples; write digits only, e.g. 512"
        } else if let value = Int64(trimmed) {
            return value
        } else {
            reason = "is too large; at most \(Int64.max) samples"
        }
        throw TimeSyntaxError(subject: subject, value: text, reason: reason)
    }

    /// The reason a time past the limit is refused.
    static let tooLong = "is past the limit: a time is at most a week (\(Int(maximumSeconds)) s, or \(maximumSamples) samples)"

    /// A time given as a number of seconds (an OSC or JSON argument), checked before anything
    /// converts it: finite, not negative, at most a week (``maximumSeconds``).
    /// - Throws: ``TimeSyntaxError`` naming `subject` and saying why.
    public static func seconds(_ value: Double, as subject: String) throws(TimeSyntaxError) -> SessionTime {
        let reason: String
        if value.isNaN || value.isInfinite { reason = "is not a finite number of seconds; send 0 to \(Int(maximumSeconds)) (a week)" }
        else if value < 0 { reason = "is negative; a time counts from a start, so send 0 or more" }
        else if value > maximumSeconds { reason = tooLong }
        else { return .seconds(value) }
        throw TimeSyntaxError(subject: subject, value: "\(value)", reason: reason)
    }

    /// Whether the time lies in the range ``parse(_:)`` takes (seconds finite, from 0 to
    /// ``maximumSeconds``; samples from 0 to ``maximumSamples``), so that ``samples(at:)`` at any
    /// rate up to 768 kHz cannot overflow. A ``SessionTime`` made in code rather than parsed may
    /// lie outside it.
    public var isInRange: Bool {
        switch self {
        case .seconds(let value): return TimeLimit.contains(value)
        case .samples(let value): return value >= 0 && value <= Self.maximumSamples
        }
    }

    /// The forms a time may take, for error messages.
    public static let formsHint = "write seconds (90, 1.5 or 1.5s), milliseconds (250ms), m:ss[.fff] (1:30, 1:30.5), h:mm:ss[.fff] or \"N samples\" (4800 samples), at most a week"
}

/// A value that is not a time: names it and says why (``SessionTime/reason(for:)``).
public struct TimeSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What the value was for: an option (`--duration`), a command (`seek`), a key.
    public var subject: String
    /// The value as given.
    public var value: String
    /// Why, without the subject and value: `is not a time; write seconds (90, …)…`, `is
    /// negative; …`, `is past the limit: …`.
    public var reason: String

    /// The error for text `value` that ``SessionTime/parse(_:)`` refuses.
    public init(subject: String, value: String) {
        self.init(subject: subject, value: value, reason: SessionTime.reason(for: value) ?? "is not a time; \(SessionTime.formsHint)")
    }

    /// An error with its own reason (a number of seconds out of range).
    public init(subject: String, value: String, reason: String) {
        self.subject = subject
        self.value = value
        self.reason = reason
    }

    /// `--duration 'soon' is not a time; write seconds (90, 1.5 or 1.5s), …`.
    public var description: String { "\(subject) '\(value)' \(reason)" }

    /// Whether the value has a time's form but lies outside the range (negative, past a week,
    /// too large), rather than being no time at all.
    public var isOutOfRange: Bool {
        reason.hasPrefix("is negative") || reason.hasPrefix("is past the limit") || reason.hasPrefix("is too large")
    }
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
    /// The candidate closest to `word`, if close enough to be a likely typo: at most
    /// max(2, a third of its length) edits away. Words longer than 64 characters get none.
    /// Linear in the candidates' total length: each comparison stops once it exceeds the limit.
    public static func closest(to word: String, in candidates: [String]) -> String? {
        let word = Array(word.lowercased())
        guard word.count <= 64 else { return nil }
        let limit = max(2, word.count / 3)
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            guard candidate.utf8.count <= 16 * (word.count + limit) else { continue }  // too long to be close
            let other = Array(candidate.lowercased())
            guard abs(other.count - word.count) <= min(limit, best.map { $0.distance - 1 } ?? limit),
                  let d = distance(word, other, limit: min(limit, best.map { $0.distance - 1 } ?? limit)) else { continue }
            best = (candidate, d)
            if d == 0 { break }
        }
        return best?.candidate
    }

    static func distance(_ a: String, _ b: String) -> Int {
        distance(Array(a), Array(b), limit: .max) ?? .max
    }

    /// The edit distance between `a` and `b`, or nil once it is certain to exceed `limit`.
    static func distance(_ a: [Character], _ b: [Character], limit: Int) -> Int? {
        if a.isEmpty { return b.count <= limit ? b.count : nil }
        if b.isEmpty { return a.count <= limit ? a.count : nil }
        var previous = Array(0...b.count)
        var current = Array(repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                rowMinimum = min(rowMinimum, current[j])
            }
            if rowMinimum > limit { return nil }
            swap(&previous, &current)
        }
        return previous[b.count] <= limit ? previous[b.count] : nil
    }

    /// `; did you mean 'x'?` or an empty string.
    public static func hint(for word: String, in candidates: [String]) -> String {
        closest(to: word, in: candidates).map { "; did you mean '\($0)'?" } ?? ""
    }
}

/// A number literal is a time in seconds, as a bare number is in the time syntax (`90` is 90 s):
/// `ramp: 0.5` is ``SessionTime/seconds(_:)`` 0.5.
extension SessionTime: ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral {
    /// `value` seconds.
    public init(floatLiteral value: Double) { self = .seconds(value) }

    /// `value` seconds.
    public init(integerLiteral value: Int) { self = .seconds(Double(value)) }
}
