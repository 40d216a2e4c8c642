import Foundation

/// An OSC time tag: NTP time, seconds since 1 January 1900 in the high 32 bits and the fraction
/// of a second in the low 32; the value 1 means "immediately".
public struct OSCTimeTag: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 64 bits as sent.
    public var rawValue: UInt64

    /// "Immediately" (the raw value 1).
    public static let immediately = OSCTimeTag(rawValue: 1)
    /// Seconds from 1900 (NTP's epoch) to 1970 (the Unix epoch).
    public static let secondsFrom1900To1970: UInt64 = 2_208_988_800

    /// A time tag of raw NTP bits.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The time tag of a wall-clock time, in seconds since 1970.
    public init(secondsSince1970 seconds: Double) {
        let whole = seconds.rounded(.down)
        let fraction = UInt64(((seconds - whole) * 4_294_967_296).rounded(.down))
        rawValue = (UInt64(whole) + Self.secondsFrom1900To1970) << 32 | min(fraction, 0xFFFF_FFFF)
    }

    /// The time tag of the wall clock now, plus `seconds`.
    public static func now(plus seconds: Double = 0) -> OSCTimeTag {
        OSCTimeTag(secondsSince1970: wallClock() + seconds)
    }

    /// Whether it means "immediately".
    public var isImmediate: Bool { rawValue == 1 }

    /// The wall-clock time it names, in seconds since 1970 (negative before 1970).
    public var secondsSince1970: Double {
        Double(rawValue >> 32) - Double(Self.secondsFrom1900To1970) + Double(rawValue & 0xFFFF_FFFF) / 4_294_967_296
    }

    /// Seconds from the wall clock `now` (seconds since 1970) to this time; negative when it has
    /// passed.
    public func seconds(after now: Double) -> Double { secondsSince1970 - now }

    /// The host time (µs, the device's clock) this time tag names, given one reading of both
    /// clocks: the wall clock `wallNow` (seconds since 1970) and the host clock `hostNow` (µs)
    /// taken together. (Host time is JACK's `jack_get_time`; the wall clock is what OSC senders
    /// stamp bundles with — both run at the same rate, so one pair of readings maps one onto the
    /// other.)
    public func hostTime(wallNow: Double, hostNow: UInt64) -> UInt64 {
        let ahead = seconds(after: wallNow) * 1_000_000
        return ahead >= 0 ? hostNow &+ UInt64(ahead.rounded()) : hostNow &- min(hostNow, UInt64((-ahead).rounded()))
    }

    /// The wall clock now (`CLOCK_REALTIME`), in seconds since 1970.
    public static func wallClock() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Orders by time (the raw value).
    public static func < (lhs: OSCTimeTag, rhs: OSCTimeTag) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `immediately`, or the time in ISO 8601 with milliseconds and the raw hex.
    public var description: String {
        if isImmediate { return "immediately" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return "\(formatter.string(from: Date(timeIntervalSince1970: secondsSince1970))) (\(String(rawValue >> 32, radix: 16)).\(String(rawValue & 0xFFFF_FFFF, radix: 16)))"
    }
}
