import Lockstep

/// A linear PCM format as Audio Converter and Extended Audio File Services take it: any rate,
/// 1…64 channels, 8-bit (signed or unsigned), 16/24/32-bit signed integer or 32/64-bit float
/// samples, packed, either byte order, interleaved (one buffer) or not (one buffer per channel).
///
/// Audio queues take the narrower ``LinearPCMLayout`` (interleaved, no 8-bit); this type is for
/// the converters, which Apple lets handle more.
struct PCMFormat: Sendable, Hashable, CustomStringConvertible {
    /// How one sample is stored.
    enum Encoding: Sendable, Hashable {
        case unsigned8, signed8, signed16, signed24, signed32, float32, float64

        var bytes: Int {
            switch self {
            case .unsigned8, .signed8: 1
            case .signed16: 2
            case .signed24: 3
            case .signed32, .float32: 4
            case .float64: 8
            }
        }

        var isFloat: Bool { self == .float32 || self == .float64 }

        /// Full scale of an integer encoding: 2^(bits−1).
        var fullScale: Double { Double(1 << (bytes * 8 - 1)) }
    }

    var sampleRate: Double
    var channelCount: Int
    var encoding: Encoding
    var isBigEndian: Bool
    var isInterleaved: Bool

    /// Buffers in an `AudioBufferList` of this format.
    var bufferCount: Int { isInterleaved ? 1 : channelCount }
    /// Channels in each buffer.
    var channelsPerBuffer: Int { isInterleaved ? channelCount : 1 }
    /// Bytes per frame in each buffer (`mBytesPerFrame`).
    var bytesPerFrame: Int { channelsPerBuffer * encoding.bytes }

    var description: String {
        let sample = encoding.isFloat ? "\(encoding.bytes * 8)-bit float"
            : encoding == .unsigned8 ? "8-bit unsigned" : "\(encoding.bytes * 8)-bit integer"
        return "\(sampleRate) Hz, \(channelCount) ch, \(sample)\(isBigEndian && encoding.bytes > 1 ? " big-endian" : "")\(isInterleaved ? "" : " non-interleaved")"
    }

    /// The format of a linear PCM layout (interleaved).
    init(_ layout: LinearPCMLayout) {
        sampleRate = layout.format.sampleRate
        channelCount = layout.format.channelCount
        switch layout.format.sampleFormat {
        case .int16: encoding = .signed16
        case .int24: encoding = .signed24
        case .int32: encoding = .signed32
        case .float32: encoding = .float32
        case .float64: encoding = .float64
        }
        isBigEndian = layout.isBigEndian
        isInterleaved = true
    }

    init(sampleRate: Double, channelCount: Int, encoding: Encoding, isBigEndian: Bool, isInterleaved: Bool) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.encoding = encoding
        self.isBigEndian = isBigEndian
        self.isInterleaved = isInterleaved
    }

    /// Checks `asbd` and maps it; the failure's code is `kAudioConverterErr_FormatNotSupported`
    /// (`'fmt?'`) with what to do.
    static func make(_ asbd: AudioStreamBasicDescription) -> Result<PCMFormat, AudioQueueError> {
        func unsupported(_ message: String) -> Result<PCMFormat, AudioQueueError> {
            .failure(AudioQueueError(kAudioConverterErr_FormatNotSupported, message))
        }
        guard asbd.mFormatID == kAudioFormatLinearPCM else {
            return unsupported("format '\(fourCharCodeString(asbd.mFormatID))' is not linear PCM; Lockstep converts linear PCM only (compressed formats are decoded by the file layer: AudioFileOpenURL, ExtAudioFileOpenURL)")
        }
        let flags = asbd.mFormatFlags
        guard flags & kLinearPCMFormatFlagsSampleFractionMask == 0 else {
            return unsupported("fixed-point samples (fraction bits in the flags) are not supported; use integer or float samples")
        }
        guard asbd.mFramesPerPacket == 1 else {
            return unsupported("linear PCM has 1 frame per packet, not \(asbd.mFramesPerPacket)")
        }
        let channels = Int(asbd.mChannelsPerFrame)
        guard (1...StreamFormat.maximumChannelCount).contains(channels) else {
            return unsupported("\(channels) channels per frame; use 1…\(StreamFormat.maximumChannelCount)")
        }
        let encoding: Encoding
        if flags & kAudioFormatFlagIsFloat != 0 {
            switch asbd.mBitsPerChannel {
            case 32: encoding = .float32
            case 64: encoding = .float64
            default: return unsupported("\(asbd.mBitsPerChannel)-bit float samples; use 32 or 64 bits")
            }
        } else if flags & kAudioFormatFlagIsSignedInteger != 0 {
            switch asbd.mBitsPerChannel {
            case 8: encoding = .signed8
            case 16: encoding = .signed16
            case 24: encoding = .signed24
            case 32: encoding = .signed32
            default: return unsupported("\(asbd.mBitsPerChannel)-bit integer samples; use 8, 16, 24 or 32 bits")
            }
        } else {
            guard asbd.mBitsPerChannel == 8 else {
                return unsupported("unsigned \(asbd.mBitsPerChannel)-bit samples; unsigned samples are 8-bit only — set kLinearPCMFormatFlagIsSignedInteger for 16, 24 or 32 bits")
            }
            encoding = .unsigned8
        }
        guard asbd.mSampleRate.isFinite, asbd.mSampleRate > 0 else {
            return unsupported("sample rate \(asbd.mSampleRate) is not a positive number")
        }
        let format = PCMFormat(sampleRate: asbd.mSampleRate, channelCount: channels, encoding: encoding,
                               isBigEndian: flags & kAudioFormatFlagIsBigEndian != 0,
                               isInterleaved: flags & kAudioFormatFlagIsNonInterleaved == 0)
        guard Int(asbd.mBytesPerFrame) == format.bytesPerFrame, asbd.mBytesPerPacket == asbd.mBytesPerFrame else {
            return unsupported("mBytesPerFrame \(asbd.mBytesPerFrame) and mBytesPerPacket \(asbd.mBytesPerPacket) must both be \(format.bytesPerFrame) (\(format.channelsPerBuffer) packed \(asbd.mBitsPerChannel)-bit samples per buffer\(format.isInterleaved ? "" : ", one buffer per channel"))")
        }
        return .success(format)
    }

    /// The description Apple's API reports for this format (packed, with the byte order flag).
    var streamDescription: AudioStreamBasicDescription {
        var flags = kAudioFormatFlagIsPacked
        if encoding.isFloat { flags |= kAudioFormatFlagIsFloat } else if encoding != .unsigned8 { flags |= kAudioFormatFlagIsSignedInteger }
        if isBigEndian && encoding.bytes > 1 { flags |= kAudioFormatFlagIsBigEndian }
        if !isInterleaved { flags |= kAudioFormatFlagIsNonInterleaved }
        return AudioStreamBasicDescription(
            mSampleRate: sampleRate, mFormatID: kAudioFormatLinearPCM, mFormatFlags: flags,
            mBytesPerPacket: UInt32(bytesPerFrame), mFramesPerPacket: 1, mBytesPerFrame: UInt32(bytesPerFrame),
            mChannelsPerFrame: UInt32(channelCount), mBitsPerChannel: UInt32(encoding.bytes * 8), mReserved: 0)
    }

    /// The same samples at another rate and channel count, for messages and intermediate formats.
    func with(sampleRate: Double? = nil, channelCount: Int? = nil) -> PCMFormat {
        PCMFormat(sampleRate: sampleRate ?? self.sampleRate, channelCount: channelCount ?? self.channelCount,
                  encoding: encoding, isBigEndian: isBigEndian, isInterleaved: isInterleaved)
    }
}

/// Exact conversion between stored samples and 64-bit floats: integers map to −1…1 by dividing
/// by 2^(bits−1) (8-bit unsigned: (v − 128) / 128), and back by multiplying, rounding to nearest
/// with ties away from zero (Apple's AudioToolbox rule: Docs/CAPI.md) and clipping — so integer ↔
/// float and integer ↔ integer of the same width are lossless, and wider ↔ narrower integers
/// shift. NaN becomes 0.
enum PCMSamples {
    /// Decodes `frames` frames of `format` from its buffers (`buffers[b]` is buffer `b`) into
    /// interleaved doubles at `destination` (`frames × channelCount`).
    static func decode(_ buffers: [UnsafeRawPointer], format: PCMFormat, frames: Int,
                       into destination: UnsafeMutablePointer<Double>) {
        decode(format: format, frames: frames, into: destination) { buffers[$0] }
    }

    /// Decodes `frames` frames of `format` into interleaved doubles at `destination`; `buffer(b)`
    /// is where buffer `b`'s first frame to decode is. Allocates nothing.
    static func decode(format: PCMFormat, frames: Int, into destination: UnsafeMutablePointer<Double>,
                       buffer: (Int) -> UnsafeRawPointer) {
        let channels = format.channelCount
        for channel in 0..<channels {
            let base = format.isInterleaved ? buffer(0) + channel * format.encoding.bytes : buffer(channel)
            decodeChannel(base, stride: format.isInterleaved ? format.bytesPerFrame : format.encoding.bytes,
                          encoding: format.encoding, bigEndian: format.isBigEndian,
                          frames: frames, into: destination + channel, step: channels)
        }
    }

    /// Encodes `frames` interleaved frames of doubles at `source` (`format.channelCount` per
    /// frame) into `format`'s buffers.
    static func encode(_ source: UnsafePointer<Double>, format: PCMFormat, frames: Int,
                       into buffers: [UnsafeMutableRawPointer]) {
        let channels = format.channelCount
        let readOnly = buffers.map { UnsafeRawPointer($0) }
        for channel in 0..<channels {
            let (base, stride) = location(readOnly, format, channel)
            encodeChannel(source + channel, step: channels, frames: frames, encoding: format.encoding,
                          bigEndian: format.isBigEndian, into: UnsafeMutableRawPointer(mutating: base), stride: stride)
        }
    }

    /// Where channel `channel`'s first sample is and how many bytes lie between its frames.
    private static func location(_ buffers: [UnsafeRawPointer], _ format: PCMFormat, _ channel: Int) -> (UnsafeRawPointer, Int) {
        format.isInterleaved
            ? (buffers[0] + channel * format.encoding.bytes, format.bytesPerFrame)
            : (buffers[channel], format.encoding.bytes)
    }

    /// Loads a `T` at `offset`, in the given byte order.
    @inline(__always)
    private static func load<T: FixedWidthInteger>(_ base: UnsafeRawPointer, _ offset: Int, _ bigEndian: Bool, _: T.Type) -> T {
        let raw = base.loadUnaligned(fromByteOffset: offset, as: T.self)
        return bigEndian ? raw.byteSwapped : raw
    }

    /// Stores `value` at `offset`, in the given byte order.
    @inline(__always)
    private static func store<T: FixedWidthInteger>(_ value: T, _ base: UnsafeMutableRawPointer, _ offset: Int, _ bigEndian: Bool) {
        base.storeBytes(of: bigEndian ? value.byteSwapped : value, toByteOffset: offset, as: T.self)
    }

    private static func decodeChannel(_ base: UnsafeRawPointer, stride: Int, encoding: PCMFormat.Encoding, bigEndian: Bool,
                                      frames: Int, into out: UnsafeMutablePointer<Double>, step: Int) {
        func each(_ sample: (Int) -> Double) { for i in 0..<frames { out[i * step] = sample(i * stride) } }
        switch encoding {
        case .unsigned8: each { (Double(base.load(fromByteOffset: $0, as: UInt8.self)) - 128) / 128 }
        case .signed8: each { Double(base.load(fromByteOffset: $0, as: Int8.self)) / 128 }
        case .signed16: each { Double(Int16(bitPattern: load(base, $0, bigEndian, UInt16.self))) / 32768 }
        case .signed24:
            each { offset in
                let p = base + offset
                let b0 = UInt32(p.load(as: UInt8.self)), b1 = UInt32(p.load(fromByteOffset: 1, as: UInt8.self))
                let b2 = UInt32(p.load(fromByteOffset: 2, as: UInt8.self))
                let value = bigEndian ? (b0 << 24 | b1 << 16 | b2 << 8) : (b2 << 24 | b1 << 16 | b0 << 8)
                return Double(Int32(bitPattern: value) >> 8) / 8_388_608
            }
        case .signed32: each { Double(Int32(bitPattern: load(base, $0, bigEndian, UInt32.self))) / 2_147_483_648 }
        case .float32: each { Double(Float(bitPattern: load(base, $0, bigEndian, UInt32.self))) }
        case .float64: each { Double(bitPattern: load(base, $0, bigEndian, UInt64.self)) }
        }
    }

    /// `value × fullScale`, rounded to nearest (ties away from zero) and clipped to the integer range;
    /// 0 for NaN.
    @inline(__always)
    private static func integer(_ value: Double, fullScale: Double) -> Int64 {
        guard !value.isNaN else { return 0 }
        return Int64(min(max((value * fullScale).rounded(), -fullScale), fullScale - 1))
    }

    private static func encodeChannel(_ source: UnsafePointer<Double>, step: Int, frames: Int, encoding: PCMFormat.Encoding,
                                      bigEndian: Bool, into base: UnsafeMutableRawPointer, stride: Int) {
        let scale = encoding.fullScale
        func each(_ body: (Double, Int) -> Void) { for i in 0..<frames { body(source[i * step], i * stride) } }
        switch encoding {
        case .unsigned8: each { base.storeBytes(of: UInt8(integer($0, fullScale: scale) + 128), toByteOffset: $1, as: UInt8.self) }
        case .signed8: each { base.storeBytes(of: Int8(integer($0, fullScale: scale)), toByteOffset: $1, as: Int8.self) }
        case .signed16: each { store(UInt16(bitPattern: Int16(integer($0, fullScale: scale))), base, $1, bigEndian) }
        case .signed24:
            each { value, offset in
                let bits = UInt32(bitPattern: Int32(integer(value, fullScale: scale)))
                let low = UInt8(truncatingIfNeeded: bits), high = UInt8(truncatingIfNeeded: bits >> 16)
                base.storeBytes(of: bigEndian ? high : low, toByteOffset: offset, as: UInt8.self)
                base.storeBytes(of: UInt8(truncatingIfNeeded: bits >> 8), toByteOffset: offset + 1, as: UInt8.self)
                base.storeBytes(of: bigEndian ? low : high, toByteOffset: offset + 2, as: UInt8.self)
            }
        case .signed32: each { store(UInt32(bitPattern: Int32(integer($0, fullScale: scale))), base, $1, bigEndian) }
        case .float32: each { store(Float($0).bitPattern, base, $1, bigEndian) }
        case .float64: each { store($0.bitPattern, base, $1, bigEndian) }
        }
    }
}
