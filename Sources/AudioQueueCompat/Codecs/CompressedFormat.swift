import CFFmpeg
import Lockstep

/// Opus (compressed; decoded at 48 kHz). The corresponding Apple constant is `kAudioFormatOpus` (`'opus'`).
public let kAudioFormatOpus = fourCharCode("opus")
/// AAC Low Complexity, the object type in the format flags of ``kAudioFormatMPEG4AAC``. The
/// corresponding Apple constant is `kMPEG4Object_AAC_LC` (2).
public let kMPEG4Object_AAC_LC: AudioFormatFlags = 2

/// A compressed audio format an ``AudioStreamBasicDescription`` names: the codec, its rate and
/// channels, and its packets (frames and bytes per packet; 0 where they vary).
///
/// Apple's descriptions: AAC 1024 frames a packet (LC; the object type in `mFormatFlags`, 0 meaning
/// LC), MP3 1152 (576 below 32 kHz), ALAC 4096 (its cookie says), IMA4 64 frames in 34 bytes per
/// channel, µ-law and a-law 1 frame of 1 byte per channel, FLAC and Opus (48 kHz here) variable.
struct CompressedFormat: Sendable, Hashable, CustomStringConvertible {
    enum Codec: Sendable, Hashable, CaseIterable {
        case aac, mp3, alac, ima4, ulaw, alaw, flac, opus

        var formatID: AudioFormatID {
            switch self {
            case .aac: kAudioFormatMPEG4AAC
            case .mp3: kAudioFormatMPEGLayer3
            case .alac: kAudioFormatAppleLossless
            case .ima4: kAudioFormatAppleIMA4
            case .ulaw: kAudioFormatULaw
            case .alaw: kAudioFormatALaw
            case .flac: kAudioFormatFLAC
            case .opus: kAudioFormatOpus
            }
        }

        var codecID: AVCodecID {
            switch self {
            case .aac: AV_CODEC_ID_AAC
            case .mp3: AV_CODEC_ID_MP3
            case .alac: AV_CODEC_ID_ALAC
            case .ima4: AV_CODEC_ID_ADPCM_IMA_QT
            case .ulaw: AV_CODEC_ID_PCM_MULAW
            case .alaw: AV_CODEC_ID_PCM_ALAW
            case .flac: AV_CODEC_ID_FLAC
            case .opus: AV_CODEC_ID_OPUS
            }
        }

        init?(formatID: AudioFormatID) {
            guard let codec = Self.allCases.first(where: { $0.formatID == formatID }) else { return nil }
            self = codec
        }

        init?(codecID: AVCodecID) {
            guard let codec = Self.allCases.first(where: { $0.codecID == codecID }) else { return nil }
            self = codec
        }

        /// Whether its packets vary in size, so buffers carry packet descriptions.
        var isVariableBitRate: Bool { ![.ima4, .ulaw, .alaw].contains(self) }
    }

    var codec: Codec
    var sampleRate: Double
    var channelCount: Int
    var formatFlags: AudioFormatFlags
    /// Frames in a packet; 0 where packets differ (FLAC without a block size).
    var framesPerPacket: Int

    /// Bytes in a packet; 0 for variable-size packets.
    var bytesPerPacket: Int {
        switch codec {
        case .ima4: 34 * channelCount
        case .ulaw, .alaw: channelCount
        default: 0
        }
    }

    var description: String { "\(fourCharCodeString(codec.formatID)), \(sampleRate) Hz, \(channelCount) ch" }

    /// Checks `asbd` and maps it; nil when it is linear PCM (not compressed), else the failure
    /// (`'fmt?'`) says what to do.
    static func make(_ asbd: AudioStreamBasicDescription) -> Result<CompressedFormat, AudioQueueError>? {
        guard asbd.mFormatID != kAudioFormatLinearPCM else { return nil }
        func unsupported(_ message: String) -> Result<CompressedFormat, AudioQueueError> {
            .failure(AudioQueueError(kAudioFormatUnsupportedDataFormatError, message))
        }
        guard let codec = Codec(formatID: asbd.mFormatID) else {
            return unsupported("format '\(fourCharCodeString(asbd.mFormatID))' is not supported; compressed formats here are AAC, MP3, ALAC, IMA4, µ-law, a-law, FLAC and Opus")
        }
        let channels = Int(asbd.mChannelsPerFrame)
        guard (1...StreamFormat.maximumChannelCount).contains(channels) else {
            return unsupported("\(channels) channels per frame; use 1…\(StreamFormat.maximumChannelCount)")
        }
        guard asbd.mSampleRate.isFinite, asbd.mSampleRate >= 1000, asbd.mSampleRate <= 768_000 else {
            return unsupported("sample rate \(asbd.mSampleRate) is out of range (1 kHz…768 kHz)")
        }
        var format = CompressedFormat(codec: codec, sampleRate: asbd.mSampleRate, channelCount: channels,
                                      formatFlags: asbd.mFormatFlags, framesPerPacket: Int(asbd.mFramesPerPacket))
        switch codec {
        case .aac:
            guard [0, 1, 2, 3, 4].contains(asbd.mFormatFlags) else {
                return unsupported("AAC object type \(asbd.mFormatFlags) (mFormatFlags) is not supported; use kMPEG4Object_AAC_LC (2)")
            }
            if format.formatFlags == 0 { format.formatFlags = kMPEG4Object_AAC_LC }
            format.framesPerPacket = 1024
        case .mp3: format.framesPerPacket = asbd.mSampleRate >= 32000 ? 1152 : 576
        case .ima4: format.framesPerPacket = 64
        case .ulaw, .alaw: format.framesPerPacket = 1
        case .alac:
            if format.framesPerPacket == 0 { format.framesPerPacket = 4096 }
            if format.formatFlags == 0 { format.formatFlags = kAppleLosslessFormatFlag_16BitSourceData }
            guard (1...4).contains(format.formatFlags) else {
                return unsupported("ALAC format flags \(asbd.mFormatFlags): use a kAppleLosslessFormatFlag_…BitSourceData value")
            }
        case .opus:
            guard asbd.mSampleRate == 48000 else {
                return unsupported("Opus is decoded at 48 kHz here; set mSampleRate to 48000")
            }
            if format.framesPerPacket == 0 { format.framesPerPacket = 960 }
        case .flac:
            break
        }
        if format.bytesPerPacket > 0, asbd.mBytesPerPacket != 0, Int(asbd.mBytesPerPacket) != format.bytesPerPacket {
            return unsupported("\(fourCharCodeString(codec.formatID)) packets of \(channels) channels are \(format.bytesPerPacket) bytes, not \(asbd.mBytesPerPacket)")
        }
        return .success(format)
    }

    /// The description Apple's API reports for this format.
    var streamDescription: AudioStreamBasicDescription {
        let cbrFrameBytes: UInt32 = codec == .ulaw || codec == .alaw ? UInt32(channelCount) : 0
        return AudioStreamBasicDescription(
            mSampleRate: sampleRate, mFormatID: codec.formatID, mFormatFlags: formatFlags,
            mBytesPerPacket: UInt32(bytesPerPacket), mFramesPerPacket: UInt32(framesPerPacket),
            mBytesPerFrame: cbrFrameBytes, mChannelsPerFrame: UInt32(channelCount),
            mBitsPerChannel: cbrFrameBytes > 0 ? 8 : 0, mReserved: 0)
    }

    /// The largest packet the format allows for `channelCount` channels (Apple's
    /// `PacketSizeUpperBound`): the codec's worst case, or for CBR formats the packet size.
    var packetSizeUpperBound: Int {
        switch codec {
        case .aac: 6144 / 8 * channelCount + 16               // 6144 bits per channel (ISO 14496-3)
        case .mp3: 2881                                       // 320 kb/s at 8 kHz (MPEG-2.5), padded
        case .alac, .flac: max(framesPerPacket, 4096) * channelCount * 4 + 64
        case .opus: 1275 * 3 + 7                              // RFC 6716: up to 3 frames of 1275 bytes
        case .ima4, .ulaw, .alaw: bytesPerPacket
        }
    }

    /// The PCM the decoder produces and the encoder takes: 32-bit float, interleaved.
    var pcmLayout: LinearPCMLayout {
        LinearPCMLayout(format: StreamFormat(sampleRate: sampleRate, channelCount: channelCount, sampleFormat: .float32),
                        isBigEndian: false)
    }
}

/// Magic cookies: Apple's bytes ↔ FFmpeg's codec extradata.
///
/// AAC: Apple's cookie is an MPEG-4 ES descriptor (`esds` contents, tag 0x03) carrying the
/// AudioSpecificConfig; a bare AudioSpecificConfig is accepted too. ALAC: the 24-byte
/// `ALACSpecificConfig`, optionally inside `frma`/`alac` atoms (FFmpeg wants the 36-byte `alac`
/// atom). FLAC (STREAMINFO) and Opus (`OpusHead`) pass through. Other formats have none.
enum MagicCookie {
    /// FFmpeg's extradata for a cookie of `codec` (empty when there is none).
    static func extradata(_ cookie: [UInt8], codec: CompressedFormat.Codec) throws(AudioQueueError) -> [UInt8] {
        guard !cookie.isEmpty else { return [] }
        switch codec {
        case .aac:
            return esdsConfig(cookie) ?? cookie
        case .alac:
            guard let config = alacConfig(cookie) else {
                throw AudioQueueError(kAudioFormatUnsupportedDataFormatError, "the ALAC magic cookie (\(cookie.count) bytes) holds no 24-byte ALACSpecificConfig")
            }
            return [0, 0, 0, 36] + Array("alac".utf8) + [0, 0, 0, 0] + config
        case .flac, .opus:
            return cookie
        case .mp3, .ima4, .ulaw, .alaw:
            return []
        }
    }

    /// Apple's cookie for FFmpeg's extradata of `codec`.
    static func cookie(extradata: [UInt8], codec: CompressedFormat.Codec, averageBitRate: Int = 0) -> [UInt8] {
        guard !extradata.isEmpty else { return [] }
        switch codec {
        case .aac: return esds(audioSpecificConfig: extradata, averageBitRate: averageBitRate)
        case .alac: return alacConfig(extradata) ?? extradata
        default: return extradata
        }
    }

    /// The 24-byte ALACSpecificConfig in a cookie or extradata (bare, or after `frma`/`alac` atoms).
    static func alacConfig(_ bytes: [UInt8]) -> [UInt8]? {
        var index = 0
        while bytes.count - index >= 12 {
            let tag = String(decoding: bytes[(index + 4)..<(index + 8)], as: UTF8.self)
            guard tag == "frma" || tag == "alac" else { break }
            index += 12
        }
        guard bytes.count - index >= 24 else { return nil }
        return Array(bytes[index..<(index + 24)])
    }

    /// The AudioSpecificConfig inside an ES descriptor (optionally after the `esds` box's 4 bytes
    /// of version and flags), or nil if `bytes` is not one.
    static func esdsConfig(_ bytes: [UInt8]) -> [UInt8]? {
        var index = bytes.first == 0x03 ? 0 : (bytes.count > 4 && bytes[0..<4] == [0, 0, 0, 0] && bytes[4] == 0x03 ? 4 : -1)
        guard index >= 0 else { return nil }
        // Descriptors: tag, length in 1…4 bytes of 7 bits; 0x03 and 0x04 hold the others.
        while index < bytes.count {
            let tag = bytes[index]
            index += 1
            var length = 0
            for _ in 0..<4 where index < bytes.count {
                let byte = bytes[index]
                index += 1
                length = length << 7 | Int(byte & 0x7F)
                if byte & 0x80 == 0 { break }
            }
            switch tag {
            case 0x03:
                guard index + 3 <= bytes.count else { return nil }
                let flags = bytes[index + 2]
                index += 3
                if flags & 0x80 != 0 { index += 2 }
                if flags & 0x40 != 0, index < bytes.count { index += 1 + Int(bytes[index]) }
                if flags & 0x20 != 0 { index += 2 }
            case 0x04:
                index += 13
            case 0x05:
                guard length > 0, index + length <= bytes.count else { return nil }
                return Array(bytes[index..<(index + length)])
            default:
                index += length
            }
        }
        return nil
    }

    /// An ES descriptor (Apple's AAC cookie) carrying `config`.
    static func esds(audioSpecificConfig config: [UInt8], averageBitRate: Int) -> [UInt8] {
        func descriptor(_ tag: UInt8, _ body: [UInt8]) -> [UInt8] {
            let n = body.count
            return [tag, 0x80 | UInt8((n >> 21) & 0x7F), 0x80 | UInt8((n >> 14) & 0x7F), 0x80 | UInt8((n >> 7) & 0x7F), UInt8(n & 0x7F)] + body
        }
        func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        let rate = max(0, min(averageBitRate, Int(Int32.max)))
        // objectTypeIndication 0x40 (MPEG-4 audio), streamType 5 (audio) << 2 | 1, buffer size 0.
        let decoderConfig = descriptor(0x04, [0x40, 0x15, 0, 0, 0] + be32(rate) + be32(rate) + descriptor(0x05, config))
        return descriptor(0x03, [0, 0, 0] + decoderConfig + descriptor(0x06, [0x02]))
    }
}

/// ADTS headers (the framing of AAC streams, ISO 13818-7): parsed into a frame length and the
/// AudioSpecificConfig a decoder needs.
struct ADTSHeader: Sendable, Equatable {
    static let sampleRates: [Double] = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    /// The whole frame, header included.
    var frameLength: Int
    /// 7, or 9 with a CRC.
    var headerLength: Int
    /// The MPEG-4 audio object type (profile + 1: 2 for LC).
    var objectType: Int
    var sampleRateIndex: Int
    var channelConfiguration: Int
    /// Raw data blocks in the frame (1024 frames each).
    var blocks: Int

    var sampleRate: Double { Self.sampleRates[sampleRateIndex] }

    /// Parses the 7 bytes at `bytes`; nil unless they are a valid ADTS header.
    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 7, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 else { return nil }
        headerLength = bytes[1] & 0x01 == 0 ? 9 : 7
        objectType = Int(bytes[2] >> 6) + 1
        sampleRateIndex = Int(bytes[2] >> 2 & 0x0F)
        channelConfiguration = Int(bytes[2] & 0x01) << 2 | Int(bytes[3] >> 6)
        frameLength = Int(bytes[3] & 0x03) << 11 | Int(bytes[4]) << 3 | Int(bytes[5] >> 5)
        blocks = Int(bytes[6] & 0x03) + 1
        guard sampleRateIndex < Self.sampleRates.count, channelConfiguration > 0, frameLength > headerLength else { return nil }
    }

    /// The two-byte AudioSpecificConfig of the stream.
    var audioSpecificConfig: [UInt8] {
        let value = objectType << 11 | sampleRateIndex << 7 | channelConfiguration << 3
        return [UInt8(value >> 8), UInt8(value & 0xFF)]
    }

    /// The stream's description as Apple reports it (AAC, object type in the flags).
    var streamDescription: AudioStreamBasicDescription {
        AudioStreamBasicDescription(mSampleRate: sampleRate, mFormatID: kAudioFormatMPEG4AAC, mFormatFlags: UInt32(objectType),
                                    mBytesPerPacket: 0, mFramesPerPacket: 1024, mBytesPerFrame: 0,
                                    mChannelsPerFrame: UInt32(channelConfiguration == 7 ? 8 : channelConfiguration),
                                    mBitsPerChannel: 0, mReserved: 0)
    }
}
