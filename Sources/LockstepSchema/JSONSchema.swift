import Foundation

/// The JSON contract of Lockstep: the version every `--json` object, `--json-events` line, status
/// line and OSC update carries, and the one way they are written and read.
///
/// Every object is written on one line with its keys sorted, slashes unescaped, a level of −∞ dB as
/// `null`, levels in dB rounded to 0.01. Times are given twice where both matter: in samples
/// (`frames`, `sampleTime`, `position`) and in `seconds` (frames ÷ `sampleRate`, not rounded).
/// The fields and their meaning are listed in `Docs/JSON.md`.
public enum JSONSchema {
    /// The schema's version, the `schema` field of every top-level object. It changes when a field
    /// is renamed, removed or changes meaning; new fields do not change it.
    public static let version = 1

    /// `value` as one line of JSON (keys sorted, slashes unescaped; a non-finite number as the
    /// string `"inf"`, `"-inf"` or `"nan"`); `{}` if it cannot be encoded.
    public static func line(_ value: some Encodable) -> String {
        (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "{}"
    }

    /// Decodes one JSON object (a line of output) as `type`.
    /// - Throws: `DecodingError` when `text` is not `type`'s JSON.
    public static func decode<T: Decodable>(_ type: T.Type, from text: some StringProtocol) throws -> T {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try decoder.decode(type, from: Data(text.utf8))
    }

    /// A level in dB as the schema writes it: rounded to 0.01 dB; nil (`null`) for −∞ (silence) or
    /// NaN.
    public static func decibels(_ value: Double) -> Double? {
        value.isFinite ? (value * 100).rounded() / 100 : nil
    }

    /// A level in dB as the schema writes it (see ``decibels(_:)-(Double)``).
    public static func decibels(_ value: Float) -> Double? {
        decibels(Double(value))
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }
}

/// A level in dB as the schema writes it: always written, `null` for −∞ (silence), never left out
/// as other absent fields are. (The types round the value to 0.01 dB with
/// ``JSONSchema/decibels(_:)-(Double)`` when they set it.) A missing key decodes as −∞.
@propertyWrapper
public struct DecibelLevel: Sendable, Hashable, Codable {
    /// The level in dB; nil for −∞.
    public var wrappedValue: Double?

    /// Wraps `wrappedValue`.
    public init(wrappedValue: Double?) {
        self.wrappedValue = wrappedValue
    }

    /// Decodes a number, or `null` as −∞.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Double.self)
    }

    /// Encodes the number, or `null` for −∞.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension KeyedDecodingContainer {
    /// Decodes a ``DecibelLevel``; a missing key or `null` is −∞.
    public func decode(_ type: DecibelLevel.Type, forKey key: Key) throws -> DecibelLevel {
        try decodeIfPresent(type, forKey: key) ?? DecibelLevel(wrappedValue: nil)
    }
}
