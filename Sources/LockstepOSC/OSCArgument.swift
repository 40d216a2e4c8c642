import CLo

/// One argument of an ``OSCMessage``, by OSC type tag.
public enum OSCArgument: Sendable, Hashable, CustomStringConvertible {
    /// `i`: 32-bit integer.
    case int32(Int32)
    /// `h`: 64-bit integer.
    case int64(Int64)
    /// `f`: 32-bit float.
    case float(Float)
    /// `d`: 64-bit float.
    case double(Double)
    /// `s`: string.
    case string(String)
    /// `S`: symbol (a string some systems tell apart).
    case symbol(String)
    /// `c`: one character.
    case character(UInt8)
    /// `b`: blob (bytes).
    case blob([UInt8])
    /// `T` or `F`.
    case bool(Bool)
    /// `N`: nil.
    case null
    /// `I`: infinitum (impulse).
    case impulse
    /// `t`: OSC time tag (NTP format: seconds since 1900 in the high 32 bits).
    case timeTag(UInt64)
    /// `m`: a MIDI message (port, status, data 1, data 2).
    case midi(UInt8, UInt8, UInt8, UInt8)

    /// The OSC type tag.
    public var typeTag: Character {
        switch self {
        case .int32: return "i"
        case .int64: return "h"
        case .float: return "f"
        case .double: return "d"
        case .string: return "s"
        case .symbol: return "S"
        case .character: return "c"
        case .blob: return "b"
        case .bool(let value): return value ? "T" : "F"
        case .null: return "N"
        case .impulse: return "I"
        case .timeTag: return "t"
        case .midi: return "m"
        }
    }

    /// The value as a number: integers, floats, and `T`/`F` as 1/0; nil otherwise.
    public var number: Double? {
        switch self {
        case .int32(let value): return Double(value)
        case .int64(let value): return Double(value)
        case .float(let value): return Double(value)
        case .double(let value): return value
        case .bool(let value): return value ? 1 : 0
        default: return nil
        }
    }

    /// The text of a string or symbol; nil otherwise.
    public var text: String? {
        switch self {
        case .string(let value), .symbol(let value): return value
        default: return nil
        }
    }

    /// `i:3`, `s:"bell"`…
    public var description: String {
        switch self {
        case .string(let value), .symbol(let value): return "\(typeTag):\"\(value)\""
        case .blob(let bytes): return "b:\(bytes.count) bytes"
        default: return "\(typeTag):\(number.map { "\($0)" } ?? "")"
        }
    }

    /// Reads an argument liblo decoded (`value` is nil for the types that carry no data).
    ///
    /// `value` points into the message's data, where an argument has only its own size: each is
    /// read as that many bytes, never as a whole `lo_arg` (a union of 8 bytes or more; `pointee`
    /// read 4 bytes past the end of an `i` argument ending the message).
    init(type: UInt8, value: UnsafeMutablePointer<lo_arg>?) throws(OSCError) {
        func need() throws(OSCError) -> UnsafeRawPointer {
            guard let value else { throw OSCError(.malformed, "argument of type '\(Character(UnicodeScalar(type)))' has no value") }
            return UnsafeRawPointer(value)
        }
        func load<T: BitwiseCopyable>(_: T.Type) throws(OSCError) -> T { try need().loadUnaligned(as: T.self) }
        switch type {
        case UInt8(ascii: "i"): self = .int32(try load(Int32.self))
        case UInt8(ascii: "h"): self = .int64(try load(Int64.self))
        case UInt8(ascii: "f"): self = .float(try load(Float.self))
        case UInt8(ascii: "d"): self = .double(try load(Double.self))
        case UInt8(ascii: "s"), UInt8(ascii: "S"):
            let text = String(cString: try need().assumingMemoryBound(to: CChar.self))
            self = type == UInt8(ascii: "s") ? .string(text) : .symbol(text)
        case UInt8(ascii: "c"): self = .character(UInt8(truncatingIfNeeded: try load(Int32.self)))
        case UInt8(ascii: "b"):
            let blob = UnsafeMutableRawPointer(mutating: try need())
            self = .blob(Array(UnsafeRawBufferPointer(start: lo_blob_dataptr(blob), count: Int(lo_blob_datasize(blob)))))
        case UInt8(ascii: "T"): self = .bool(true)
        case UInt8(ascii: "F"): self = .bool(false)
        case UInt8(ascii: "N"): self = .null
        case UInt8(ascii: "I"): self = .impulse
        case UInt8(ascii: "t"):
            // lo_timetag: seconds, then the fraction, 32 bits each.
            let raw = try need()
            self = .timeTag(UInt64(raw.loadUnaligned(as: UInt32.self)) << 32 | UInt64(raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        case UInt8(ascii: "m"):
            let m = try load((UInt8, UInt8, UInt8, UInt8).self)
            self = .midi(m.0, m.1, m.2, m.3)
        default:
            throw OSCError(.malformed, "argument type '\(Character(UnicodeScalar(type)))' is not an OSC type")
        }
    }

    /// Appends the argument to a liblo message; 0 on success.
    func add(to message: lo_message) -> Int32 {
        switch self {
        case .int32(let value): return lo_message_add_int32(message, value)
        case .int64(let value): return lo_message_add_int64(message, value)
        case .float(let value): return lo_message_add_float(message, value)
        case .double(let value): return lo_message_add_double(message, value)
        case .string(let value): return lo_message_add_string(message, value)
        case .symbol(let value): return lo_message_add_symbol(message, value)
        case .character(let value): return lo_message_add_char(message, CChar(bitPattern: value))
        case .blob(let bytes):
            guard let blob = bytes.withUnsafeBytes({ lo_blob_new(Int32($0.count), $0.baseAddress) }) else { return -1 }
            defer { lo_blob_free(blob) }
            return lo_message_add_blob(message, blob)
        case .bool(let value): return value ? lo_message_add_true(message) : lo_message_add_false(message)
        case .null: return lo_message_add_nil(message)
        case .impulse: return lo_message_add_infinitum(message)
        case .timeTag(let value):
            return lo_message_add_timetag(message, lo_timetag(sec: UInt32(value >> 32), frac: UInt32(truncatingIfNeeded: value)))
        case .midi(let a, let b, let c, let d):
            var bytes = [a, b, c, d]
            return lo_message_add_midi(message, &bytes)
        }
    }
}
