/// Converts interleaved linear PCM between its stored encodings and 32-bit float.
///
/// Integer samples map to −1…1 by dividing by 2^(bits−1) (so −32768 → −1.0, 32767 → 0.99997);
/// encoding rounds to nearest and clips to the integer range. Float samples pass through (64-bit
/// floats are narrowed). All functions are pure and safe on any thread, including the render thread.
public enum PCMCodec {
    /// Decodes `sampleCount` samples of `format` from `source` into `destination` as floats.
    public static func decode(_ source: UnsafeRawPointer, format: SampleFormat, sampleCount: Int,
                              into destination: UnsafeMutablePointer<Float>) {
        switch format {
        case .int16:
            let scale: Float = 1.0 / 32768.0
            for i in 0..<sampleCount {
                destination[i] = Float(Int16(littleEndian: source.loadUnaligned(fromByteOffset: i * 2, as: Int16.self))) * scale
            }
        case .int24:
            let scale: Float = 1.0 / 8_388_608.0
            let bytes = source.assumingMemoryBound(to: UInt8.self)
            for i in 0..<sampleCount {
                let b = bytes + i * 3
                let raw = Int32(b[0]) | (Int32(b[1]) << 8) | (Int32(b[2]) << 16)
                let value = (raw << 8) >> 8  // sign-extend
                destination[i] = Float(value) * scale
            }
        case .int32:
            let scale: Double = 1.0 / 2_147_483_648.0
            for i in 0..<sampleCount {
                destination[i] = Float(Double(Int32(littleEndian: source.loadUnaligned(fromByteOffset: i * 4, as: Int32.self))) * scale)
            }
        case .float32:
            UnsafeMutableRawPointer(destination).copyMemory(from: source, byteCount: sampleCount * 4)
        case .float64:
            for i in 0..<sampleCount {
                destination[i] = Float(source.loadUnaligned(fromByteOffset: i * 8, as: Double.self))
            }
        }
    }

    /// Encodes `sampleCount` float samples into `destination` in `format`, clipping integers.
    public static func encode(_ source: UnsafePointer<Float>, sampleCount: Int, format: SampleFormat,
                              into destination: UnsafeMutableRawPointer) {
        switch format {
        case .int16:
            for i in 0..<sampleCount {
                let v = Int16(clamping: roundedInt(source[i] * 32768.0))
                destination.storeBytes(of: v.littleEndian, toByteOffset: i * 2, as: Int16.self)
            }
        case .int24:
            let bytes = destination.assumingMemoryBound(to: UInt8.self)
            for i in 0..<sampleCount {
                let v = min(max(roundedInt(source[i] * 8_388_608.0), -8_388_608), 8_388_607)
                let b = bytes + i * 3
                b[0] = UInt8(truncatingIfNeeded: v)
                b[1] = UInt8(truncatingIfNeeded: v >> 8)
                b[2] = UInt8(truncatingIfNeeded: v >> 16)
            }
        case .int32:
            for i in 0..<sampleCount {
                let scaled = (Double(source[i]) * 2_147_483_648.0).rounded()
                let v = Int32(clamping: scaled.isNaN ? 0 : Int64(max(min(scaled, 2_147_483_647), -2_147_483_648)))
                destination.storeBytes(of: v.littleEndian, toByteOffset: i * 4, as: Int32.self)
            }
        case .float32:
            destination.copyMemory(from: source, byteCount: sampleCount * 4)
        case .float64:
            for i in 0..<sampleCount {
                destination.storeBytes(of: Double(source[i]), toByteOffset: i * 8, as: Double.self)
            }
        }
    }

    @inline(__always)
    private static func roundedInt(_ value: Float) -> Int {
        guard value.isFinite else { return value.isNaN ? 0 : (value > 0 ? Int(Int32.max) : Int(Int32.min)) }
        let clamped = max(min(value, 4_294_967_296), -4_294_967_296)
        return Int(clamped.rounded())
    }
}
