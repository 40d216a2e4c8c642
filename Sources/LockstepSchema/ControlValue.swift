import Foundation

/// A JSON value: the `data` of a ``ControlReply``. Integers stay exact (sample times are 64-bit);
/// a non-finite number is written as the string `"inf"`, `"-inf"` or `"nan"` (a level of −∞ dB).
public enum ControlValue: Sendable, Hashable, Codable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number.
    case integer(Int64)
    /// A number with a fraction.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([ControlValue])
    /// An object.
    case object([String: ControlValue])

    /// The value that `value` encodes to as JSON.
    /// - Throws: `EncodingError` if `value` cannot be encoded.
    public init(encoding value: some Encodable) throws {
        self = try ControlValueEncoder.encode(value)
    }

    /// Decodes any JSON value.
    ///
    /// Each kind is tried in turn, the most common first: a kind that does not match costs a
    /// thrown error (tens of microseconds), and a command's values are mostly strings.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode([String: ControlValue].self) {
            self = .object(value)
        } else {
            self = .array(try container.decode([ControlValue].self))
        }
    }

    /// Encodes the value as JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value):
            if value.isFinite { try container.encode(value) } else { try container.encode(value.isNaN ? "nan" : value > 0 ? "inf" : "-inf") }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The member `key` of an object (nil for anything else or a missing key).
    public subscript(key: String) -> ControlValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The whole number, if this is one.
    public var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The value as one line of JSON, keys sorted.
    public var json: String {
        var out = ""
        write(to: &out)
        return out
    }
}

/// One-line JSON with sorted keys, as replies, updates and status lines are written
/// (``JSONSchema/line(_:)``).
public enum ControlJSON {
    /// `value` as one line of JSON (keys sorted, slashes unescaped); `{}` if it cannot be encoded.
    public static func line(_ value: some Encodable) -> String { JSONSchema.line(value) }
}
