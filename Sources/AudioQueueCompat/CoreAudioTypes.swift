@_exported import CAudioQueueTypes
import Foundation

// Core Audio's base types (CoreAudioTypes.h, CoreAudioBaseTypes.h, MacTypes.h) with Apple's names,
// as Apple's SDK imports them into Swift, so ported code compiles unchanged.

/// A result code: 0 (``noErr``) for success, otherwise an Audio Queue or Audio File error code.
/// The corresponding Apple type is `OSStatus`.
public typealias OSStatus = Int32

/// The result code for success. The corresponding Apple constant is `noErr`.
public let noErr: OSStatus = 0

/// A four-character code such as `'aqrn'`, as a big-endian `UInt32`. The corresponding Apple type
/// is `FourCharCode`.
public typealias FourCharCode = UInt32

/// Makes a ``FourCharCode`` from four ASCII characters: `fourCharCode("aqrn")` is C's `'aqrn'`.
///
/// Linux addition (C's multi-character literals have no Swift spelling). Returns 0 unless
/// `code` is exactly four ASCII characters.
public func fourCharCode(_ code: StaticString) -> FourCharCode {
    fourCharCode(code.description)
}

/// Makes a ``FourCharCode`` from a four-character ASCII string; 0 for anything else. Linux addition.
public func fourCharCode(_ code: String) -> FourCharCode {
    let bytes = Array(code.utf8)
    guard bytes.count == 4, bytes.allSatisfy({ $0 < 128 }) else { return 0 }
    return bytes.reduce(0) { $0 << 8 | FourCharCode($1) }
}

/// Spells a ``FourCharCode`` as its four characters (`"aqrn"`), or as a decimal number when it is
/// not printable. Linux addition, for messages.
public func fourCharCodeString(_ code: FourCharCode) -> String {
    let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: code >> $0) }
    guard bytes.allSatisfy({ (32..<127).contains($0) }) else { return String(Int32(bitPattern: code)) }
    return String(decoding: bytes, as: UTF8.self)
}

/// A generic "bad argument" result (a nil pointer where one is needed, an unknown object).
/// The corresponding Apple constant is `kAudio_ParamError` (-50).
public let kAudio_ParamError: OSStatus = -50
/// Memory could not be allocated. The corresponding Apple constant is `kAudio_MemFullError` (-108).
public let kAudio_MemFullError: OSStatus = -108

/// C's `Boolean` as Apple's SDK imports it in pointers (`Boolean *`). The corresponding Apple
/// type is `DarwinBoolean`.
public struct DarwinBoolean: Sendable, Hashable, ExpressibleByBooleanLiteral, CustomStringConvertible {
    /// The C value: 0 is false, anything else true.
    public var rawValue: UInt8
    /// Creates a value from a Swift `Bool`.
    public init(_ value: Bool) { rawValue = value ? 1 : 0 }
    /// Creates a value from a Boolean literal.
    public init(booleanLiteral value: Bool) { self.init(value) }
    /// The value as a Swift `Bool`.
    public var boolValue: Bool { rawValue != 0 }
    /// `true` or `false`.
    public var description: String { boolValue.description }
}

// MARK: - AudioStreamBasicDescription

/// Identifies an audio data format. The corresponding Apple type is `AudioFormatID`.
public typealias AudioFormatID = UInt32
/// Flags that describe an audio data format. The corresponding Apple type is `AudioFormatFlags`.
public typealias AudioFormatFlags = UInt32
/// A 32-bit float. The corresponding Apple type is `Float32`.
public typealias Float32 = Float
/// A 64-bit float. The corresponding Apple type is `Float64`.
public typealias Float64 = Double
/// A signed 16-bit integer. The corresponding Apple type is `SInt16`.
public typealias SInt16 = Int16
/// A signed 32-bit integer. The corresponding Apple type is `SInt32`.
public typealias SInt32 = Int32
/// A signed 64-bit integer. The corresponding Apple type is `SInt64`.
public typealias SInt64 = Int64

extension AudioStreamBasicDescription: @unchecked @retroactive Sendable {}
extension AudioTimeStamp: @unchecked @retroactive Sendable {}

/// Linear PCM. The corresponding Apple constant is `kAudioFormatLinearPCM` (`'lpcm'`).
public let kAudioFormatLinearPCM = fourCharCode("lpcm")
/// AAC (compressed: read, written and played as packets; decoded by FFmpeg). The corresponding Apple constant is `kAudioFormatMPEG4AAC`.
public let kAudioFormatMPEG4AAC = fourCharCode("aac ")
/// Apple Lossless (compressed: read, written and played as packets). The corresponding Apple constant is `kAudioFormatAppleLossless`.
public let kAudioFormatAppleLossless = fourCharCode("alac")
/// IMA 4:1 ADPCM (compressed: read from CAF/AIFC, written to CAF, played). The corresponding Apple constant is `kAudioFormatAppleIMA4`.
public let kAudioFormatAppleIMA4 = fourCharCode("ima4")
/// MPEG-1 Layer 3 (compressed: read and played as packets; not written). The corresponding Apple constant is `kAudioFormatMPEGLayer3`.
public let kAudioFormatMPEGLayer3 = fourCharCode(".mp3")
/// FLAC (compressed: queues play its packets; FLAC files are read as linear PCM through libsndfile). The corresponding Apple constant is `kAudioFormatFLAC`.
public let kAudioFormatFLAC = fourCharCode("flac")
/// µ-law (queues play it; CAF files hold it). The corresponding Apple constant is `kAudioFormatULaw`.
public let kAudioFormatULaw = fourCharCode("ulaw")
/// A-law (queues play it; CAF files hold it). The corresponding Apple constant is `kAudioFormatALaw`.
public let kAudioFormatALaw = fourCharCode("alaw")

/// Samples are IEEE floats. The corresponding Apple constant is `kAudioFormatFlagIsFloat`.
public let kAudioFormatFlagIsFloat: AudioFormatFlags = 1 << 0
/// Samples are big-endian. The corresponding Apple constant is `kAudioFormatFlagIsBigEndian`.
public let kAudioFormatFlagIsBigEndian: AudioFormatFlags = 1 << 1
/// Integer samples are signed. The corresponding Apple constant is `kAudioFormatFlagIsSignedInteger`.
public let kAudioFormatFlagIsSignedInteger: AudioFormatFlags = 1 << 2
/// Samples fill their bytes completely. The corresponding Apple constant is `kAudioFormatFlagIsPacked`.
public let kAudioFormatFlagIsPacked: AudioFormatFlags = 1 << 3
/// Unpacked samples sit in the high bits. The corresponding Apple constant is `kAudioFormatFlagIsAlignedHigh`.
public let kAudioFormatFlagIsAlignedHigh: AudioFormatFlags = 1 << 4
/// Channels are in separate buffers (queues reject this, as Apple's do). The corresponding Apple
/// constant is `kAudioFormatFlagIsNonInterleaved`.
public let kAudioFormatFlagIsNonInterleaved: AudioFormatFlags = 1 << 5
/// The native byte order's flags: 0 on little-endian Linux. The corresponding Apple constant is
/// `kAudioFormatFlagsNativeEndian`.
public let kAudioFormatFlagsNativeEndian: AudioFormatFlags = 0
/// Native-endian packed float. The corresponding Apple constant is `kAudioFormatFlagsNativeFloatPacked`.
public let kAudioFormatFlagsNativeFloatPacked: AudioFormatFlags = kAudioFormatFlagIsFloat | kAudioFormatFlagsNativeEndian | kAudioFormatFlagIsPacked

/// The linear PCM spelling of ``kAudioFormatFlagIsFloat``. The corresponding Apple constant is `kLinearPCMFormatFlagIsFloat`.
public let kLinearPCMFormatFlagIsFloat = kAudioFormatFlagIsFloat
/// The linear PCM spelling of ``kAudioFormatFlagIsBigEndian``. The corresponding Apple constant is `kLinearPCMFormatFlagIsBigEndian`.
public let kLinearPCMFormatFlagIsBigEndian = kAudioFormatFlagIsBigEndian
/// The linear PCM spelling of ``kAudioFormatFlagIsSignedInteger``. The corresponding Apple constant is `kLinearPCMFormatFlagIsSignedInteger`.
public let kLinearPCMFormatFlagIsSignedInteger = kAudioFormatFlagIsSignedInteger
/// The linear PCM spelling of ``kAudioFormatFlagIsPacked``. The corresponding Apple constant is `kLinearPCMFormatFlagIsPacked`.
public let kLinearPCMFormatFlagIsPacked = kAudioFormatFlagIsPacked
/// The linear PCM spelling of ``kAudioFormatFlagIsAlignedHigh``. The corresponding Apple constant is `kLinearPCMFormatFlagIsAlignedHigh`.
public let kLinearPCMFormatFlagIsAlignedHigh = kAudioFormatFlagIsAlignedHigh
/// The linear PCM spelling of ``kAudioFormatFlagIsNonInterleaved``. The corresponding Apple constant is `kLinearPCMFormatFlagIsNonInterleaved`.
public let kLinearPCMFormatFlagIsNonInterleaved = kAudioFormatFlagIsNonInterleaved
/// The samples must not be mixed (carried through unchanged). The corresponding Apple constant is
/// `kAudioFormatFlagIsNonMixable`.
public let kAudioFormatFlagIsNonMixable: AudioFormatFlags = 1 << 6
/// Marks a format whose flags are all clear (an explicit "no flags"). The corresponding Apple
/// constant is `kAudioFormatFlagsAreAllClear`.
public let kAudioFormatFlagsAreAllClear: AudioFormatFlags = 0x8000_0000
/// The linear PCM spelling of ``kAudioFormatFlagIsNonMixable``. The corresponding Apple constant is `kLinearPCMFormatFlagIsNonMixable`.
public let kLinearPCMFormatFlagIsNonMixable = kAudioFormatFlagIsNonMixable
/// Where the fixed-point fraction bit count sits in linear PCM flags (bits 7…12): flags
/// `>> kLinearPCMFormatFlagsSampleFractionShift & 0x3F` is the number of fractional bits of
/// fixed-point samples. Integer samples here have none (0); a format with fraction bits is
/// refused (`'fmt?'`). The corresponding Apple constant is `kLinearPCMFormatFlagsSampleFractionShift` (7).
public let kLinearPCMFormatFlagsSampleFractionShift: AudioFormatFlags = 7
/// The bits of the fixed-point fraction bit count in linear PCM flags (`0x3F << 7`). The
/// corresponding Apple constant is `kLinearPCMFormatFlagsSampleFractionMask`.
public let kLinearPCMFormatFlagsSampleFractionMask: AudioFormatFlags = 0x3F << kLinearPCMFormatFlagsSampleFractionShift
/// The linear PCM spelling of ``kAudioFormatFlagsAreAllClear``. The corresponding Apple constant is `kLinearPCMFormatFlagsAreAllClear`.
public let kLinearPCMFormatFlagsAreAllClear = kAudioFormatFlagsAreAllClear

/// Apple Lossless from 16-bit source data (format flags of ``kAudioFormatAppleLossless``, which
/// is read, decoded and encoded through FFmpeg). The corresponding Apple constant is `kAppleLosslessFormatFlag_16BitSourceData` (1).
public let kAppleLosslessFormatFlag_16BitSourceData: AudioFormatFlags = 1
/// Apple Lossless from 20-bit source data. The corresponding Apple constant is `kAppleLosslessFormatFlag_20BitSourceData` (2).
public let kAppleLosslessFormatFlag_20BitSourceData: AudioFormatFlags = 2
/// Apple Lossless from 24-bit source data. The corresponding Apple constant is `kAppleLosslessFormatFlag_24BitSourceData` (3).
public let kAppleLosslessFormatFlag_24BitSourceData: AudioFormatFlags = 3
/// Apple Lossless from 32-bit source data. The corresponding Apple constant is `kAppleLosslessFormatFlag_32BitSourceData` (4).
public let kAppleLosslessFormatFlag_32BitSourceData: AudioFormatFlags = 4

/// The stream format is not supported (declared in AudioFormat.h): `'fmt?'`. The corresponding
/// Apple constant is `kAudioFormatUnsupportedDataFormatError`.
public let kAudioFormatUnsupportedDataFormatError: OSStatus = 1718449215

// MARK: - Time stamps

extension AudioTimeStampFlags: @unchecked @retroactive Sendable {}

// `AudioTimeStampFlags` is the C header's option set, imported into Swift as Apple's is:
// `stamp.mFlags = .sampleTimeValid`, `stamp.mFlags.contains(.hostTimeValid)`. The C names below
// are Linux additions for code ported from C (Apple's Swift SDK spells them only as members).

/// `mSampleTime` is valid: ``AudioTimeStampFlags/sampleTimeValid``. The corresponding Apple
/// constant is `kAudioTimeStampSampleTimeValid`.
public let kAudioTimeStampSampleTimeValid: AudioTimeStampFlags = .sampleTimeValid
/// `mHostTime` is valid: ``AudioTimeStampFlags/hostTimeValid``. The corresponding Apple constant
/// is `kAudioTimeStampHostTimeValid`.
public let kAudioTimeStampHostTimeValid: AudioTimeStampFlags = .hostTimeValid
/// `mRateScalar` is valid: ``AudioTimeStampFlags/rateScalarValid``. The corresponding Apple
/// constant is `kAudioTimeStampRateScalarValid`.
public let kAudioTimeStampRateScalarValid: AudioTimeStampFlags = .rateScalarValid
/// `mWordClockTime` is valid: ``AudioTimeStampFlags/wordClockTimeValid``. The corresponding Apple
/// constant is `kAudioTimeStampWordClockTimeValid`.
public let kAudioTimeStampWordClockTimeValid: AudioTimeStampFlags = .wordClockTimeValid
/// `mSMPTETime` is valid: ``AudioTimeStampFlags/smpteTimeValid``. The corresponding Apple
/// constant is `kAudioTimeStampSMPTETimeValid`.
public let kAudioTimeStampSMPTETimeValid: AudioTimeStampFlags = .smpteTimeValid
/// Sample and host time are valid: ``AudioTimeStampFlags/sampleHostTimeValid``. The
/// corresponding Apple constant is `kAudioTimeStampSampleHostTimeValid`.
public let kAudioTimeStampSampleHostTimeValid: AudioTimeStampFlags = .sampleHostTimeValid

// MARK: - Channel layouts

/// Identifies a channel layout. The corresponding Apple type is `AudioChannelLayoutTag`.
public typealias AudioChannelLayoutTag = UInt32
/// The layout is given by its channel descriptions. The corresponding Apple constant is `kAudioChannelLayoutTag_UseChannelDescriptions`.
public let kAudioChannelLayoutTag_UseChannelDescriptions: AudioChannelLayoutTag = 0
/// The layout is given by its bitmap. The corresponding Apple constant is `kAudioChannelLayoutTag_UseChannelBitmap`.
public let kAudioChannelLayoutTag_UseChannelBitmap: AudioChannelLayoutTag = 1 << 16
/// One channel. The corresponding Apple constant is `kAudioChannelLayoutTag_Mono`.
public let kAudioChannelLayoutTag_Mono: AudioChannelLayoutTag = (100 << 16) | 1
/// Left, right. The corresponding Apple constant is `kAudioChannelLayoutTag_Stereo`.
public let kAudioChannelLayoutTag_Stereo: AudioChannelLayoutTag = (101 << 16) | 2
/// N channels with no particular meaning, in order; or the low 16 bits with this tag. The
/// corresponding Apple constant is `kAudioChannelLayoutTag_DiscreteInOrder`.
public let kAudioChannelLayoutTag_DiscreteInOrder: AudioChannelLayoutTag = 147 << 16

// MARK: - Core Foundation placeholders

/// A placeholder for Core Foundation's immutable string (run loop modes, device UIDs). The
/// corresponding Apple type is `CFString`.
public final class CFString: Sendable, ExpressibleByStringLiteral, CustomStringConvertible, Hashable {
    /// The characters.
    public let string: String
    /// Wraps a Swift string.
    public init(_ string: String) { self.string = string }
    /// Creates a string from a literal.
    public required convenience init(stringLiteral value: String) { self.init(value) }
    /// The characters.
    public var description: String { string }
    /// Whether two strings hold the same characters.
    public static func == (a: CFString, b: CFString) -> Bool { a.string == b.string }
    /// Hashes the characters.
    public func hash(into hasher: inout Hasher) { hasher.combine(string) }
}

/// A run loop mode, as Apple's Swift SDK imports Core Foundation's (`CFRunLoopMode.commonModes`,
/// `.defaultMode`); its ``rawValue`` is the ``CFString`` that functions such as
/// ``AudioQueueNewOutput(_:_:_:_:_:_:_:)`` take (see ``CFRunLoop``).
/// The corresponding Apple type is `CFRunLoopMode`.
public struct CFRunLoopMode: RawRepresentable, Hashable, Sendable {
    /// The mode's name.
    public var rawValue: CFString
    /// Creates a mode from its name.
    public init(rawValue: CFString) { self.rawValue = rawValue }
    /// Creates a mode from its name.
    public init(_ rawValue: CFString) { self.rawValue = rawValue }
    /// The common modes. The corresponding Apple constant is `CFRunLoopMode.commonModes`.
    public static let commonModes = CFRunLoopMode(kCFRunLoopCommonModes)
    /// The default mode. The corresponding Apple constant is `CFRunLoopMode.defaultMode`.
    public static let defaultMode = CFRunLoopMode(kCFRunLoopDefaultMode)
}

/// The common run loop modes: work posted in them runs in every mode this layer knows (the
/// default mode). The corresponding Apple constant is `kCFRunLoopCommonModes`.
public let kCFRunLoopCommonModes: CFString = "kCFRunLoopCommonModes"
/// The default run loop mode. The corresponding Apple constant is `kCFRunLoopDefaultMode`.
public let kCFRunLoopDefaultMode: CFString = "kCFRunLoopDefaultMode"

/// A file URL: Foundation's `URL` stands in for Core Foundation's. The corresponding Apple type is `CFURL`.
public typealias CFURL = URL

/// A placeholder for Core Foundation's allocator. The corresponding Apple type is `CFAllocator`.
public final class CFAllocator: Sendable {
    private init() {}
}

/// The default allocator: nil. The corresponding Apple constant is `kCFAllocatorDefault`.
public let kCFAllocatorDefault: CFAllocator? = nil

/// Makes a file URL from a path in bytes. The corresponding Apple function is
/// `CFURLCreateFromFileSystemRepresentation`.
public func CFURLCreateFromFileSystemRepresentation(_ allocator: CFAllocator?, _ buffer: UnsafePointer<UInt8>?,
                                                    _ bufLen: Int, _ isDirectory: Bool) -> CFURL? {
    guard let buffer, bufLen >= 0 else { return nil }
    let path = String(decoding: UnsafeBufferPointer(start: buffer, count: bufLen), as: UTF8.self)
    return URL(fileURLWithPath: path, isDirectory: isDirectory)
}
