/// The encoding of one sample in a linear PCM stream.
///
/// Lockstep queues accept interleaved linear PCM in any of these encodings; integer samples are
/// little-endian and signed, 24-bit samples are packed into three bytes. Internally every queue is
/// converted to 32-bit float when a buffer is enqueued, so the render path mixes floats only.
public enum SampleFormat: String, Sendable, CaseIterable, Hashable, CustomStringConvertible {
    /// 16-bit signed integer.
    case int16 = "s16"
    /// 24-bit signed integer, packed in three little-endian bytes.
    case int24 = "s24"
    /// 32-bit signed integer.
    case int32 = "s32"
    /// 32-bit IEEE float, nominal range −1…1.
    case float32 = "f32"
    /// 64-bit IEEE float, nominal range −1…1.
    case float64 = "f64"

    /// The number of bytes one sample occupies.
    public var bytesPerSample: Int {
        switch self {
        case .int16: 2
        case .int24: 3
        case .int32: 4
        case .float32: 4
        case .float64: 8
        }
    }

    /// The number of significant bits in one sample.
    public var bitsPerSample: Int { bytesPerSample * 8 }

    /// Whether samples are IEEE floating point.
    public var isFloat: Bool { self == .float32 || self == .float64 }

    /// A short human-readable name, such as `16-bit integer` or `32-bit float`.
    public var description: String {
        isFloat ? "\(bitsPerSample)-bit float" : "\(bitsPerSample)-bit integer"
    }
}
