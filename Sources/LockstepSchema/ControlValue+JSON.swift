/// One line of JSON written straight from a ``ControlValue``: the very text `JSONSchema.line`
/// (`JSONEncoder` with sorted keys, slashes unescaped) writes for it, without the encoder's
/// per-value boxing — the state of thousands of layers, pushed to every page five times a second,
/// took tens of milliseconds each through it.
extension ControlValue {
    /// Appends the value's JSON to `out`.
    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .integer(let value): out += String(value)
        case .number(let value): Self.write(value, to: &out)
        case .string(let value): Self.write(value, to: &out)
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                element.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                Self.write(key, to: &out)
                out += ":"
                members[key]!.write(to: &out)
            }
            out += "}"
        }
    }

    /// A number as `JSONEncoder` writes it: its shortest form, without a trailing `.0`;
    /// non-finite ones as the strings `"inf"`, `"-inf"` and `"nan"`.
    static func write(_ value: Double, to out: inout String) {
        guard value.isFinite else { return write(value.isNaN ? "nan" : value > 0 ? "inf" : "-inf", to: &out) }
        let text = value.description
        out += text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    /// A string with JSON's escapes (`"`, `\`, control characters; `/` as it is).
    static func write(_ value: String, to out: inout String) {
        out += "\""
        var plain = value.unicodeScalars.startIndex
        let scalars = value.unicodeScalars
        var index = scalars.startIndex
        while index != scalars.endIndex {
            let scalar = scalars[index]
            let escape: String? = switch scalar {
            case "\"": "\\\""
            case "\\": "\\\\"
            case "\n": "\\n"
            case "\r": "\\r"
            case "\t": "\\t"
            case "\u{8}": "\\b"
            case "\u{c}": "\\f"
            case "\u{0}"..."\u{1f}": "\\u00" + (scalar.value < 16 ? "0" : "") + String(scalar.value, radix: 16)
            default: nil
            }
            if let escape {
                out.unicodeScalars.append(contentsOf: scalars[plain..<index])
                out += escape
                plain = scalars.index(after: index)
            }
            index = scalars.index(after: index)
        }
        out.unicodeScalars.append(contentsOf: scalars[plain...])
        out += "\""
    }
}
