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

    /// A string with JSON's escapes (`"`, `\`, control characters; `/` as it is). Every character
    /// escaped is ASCII, so the text between escapes is appended as slices of the string's UTF-8.
    /// (Appending through `out.unicodeScalars` copied all of `out` each time: writing the state of
    /// 4096 layers, 0.5 MB, took half a second.)
    static func write(_ value: String, to out: inout String) {
        out += "\""
        let utf8 = value.utf8
        var plain = utf8.startIndex
        var index = plain
        while index != utf8.endIndex {
            let byte = utf8[index]
            let escape: String? = switch byte {
            case 0x22: "\\\""
            case 0x5C: "\\\\"
            case 0x0A: "\\n"
            case 0x0D: "\\r"
            case 0x09: "\\t"
            case 0x08: "\\b"
            case 0x0C: "\\f"
            case 0..<0x20: "\\u00" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            default: nil
            }
            if let escape {
                out += value[plain..<index]
                out += escape
                plain = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        out += value[plain...]
        out += "\""
    }
}
