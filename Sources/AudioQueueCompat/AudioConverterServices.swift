import Foundation
import Lockstep
import LockstepFiles

// The linear PCM part of Audio Converter Services (AudioConverter.h): converters between any
// two linear PCM formats — sample encoding, byte order, interleaving, channel count and sample
// rate (libsoxr) — with Apple's names, Swift-imported signatures, properties and result codes.
// Compressed formats are not converted: AudioConverterNew returns kAudioConverterErr_FormatNotSupported.

/// An audio converter: an opaque reference. The corresponding Apple type is `AudioConverterRef`.
public typealias AudioConverterRef = OpaquePointer
/// Identifies an audio converter property. The corresponding Apple type is `AudioConverterPropertyID`.
public typealias AudioConverterPropertyID = UInt32

/// Supplies input to ``AudioConverterFillComplexBuffer(_:_:_:_:_:_:)``: set `ioData`'s buffers'
/// `mData` and `mDataByteSize` to your audio (valid until the next call) and
/// `ioNumberDataPackets` to the frames given; 0 frames with ``noErr`` ends the stream; any other
/// result stops the fill, which returns it. The corresponding Apple type is
/// `AudioConverterComplexInputDataProc`. Called on the thread that fills.
public typealias AudioConverterComplexInputDataProc = @convention(c) (
    _ inAudioConverter: AudioConverterRef, _ ioNumberDataPackets: UnsafeMutablePointer<UInt32>,
    _ ioData: UnsafeMutablePointer<AudioBufferList>,
    _ outDataPacketDescription: UnsafeMutablePointer<UnsafeMutablePointer<AudioStreamPacketDescription>?>?,
    _ inUserData: UnsafeMutableRawPointer?) -> OSStatus

extension AudioConverterPrimeInfo: @unchecked @retroactive Sendable {}

// MARK: - Properties

/// The smallest input buffer in bytes: one source packet (read-only `UInt32`). The corresponding Apple constant is `kAudioConverterPropertyMinimumInputBufferSize` (`'mibs'`).
public let kAudioConverterPropertyMinimumInputBufferSize = fourCharCode("mibs")
/// The smallest output buffer in bytes: one destination packet (read-only `UInt32`). The corresponding Apple constant is `kAudioConverterPropertyMinimumOutputBufferSize` (`'mobs'`).
public let kAudioConverterPropertyMinimumOutputBufferSize = fourCharCode("mobs")
/// The largest input packet in bytes (read-only `UInt32`). The corresponding Apple constant is `kAudioConverterPropertyMaximumInputPacketSize` (`'xips'`).
public let kAudioConverterPropertyMaximumInputPacketSize = fourCharCode("xips")
/// The largest output packet in bytes (read-only `UInt32`). The corresponding Apple constant is `kAudioConverterPropertyMaximumOutputPacketSize` (`'xops'`).
public let kAudioConverterPropertyMaximumOutputPacketSize = fourCharCode("xops")
/// Given an output size in bytes (passed in the value), the input bytes it needs (`UInt32`). The corresponding Apple constant is `kAudioConverterPropertyCalculateInputBufferSize` (`'cibs'`).
public let kAudioConverterPropertyCalculateInputBufferSize = fourCharCode("cibs")
/// Given an input size in bytes (passed in the value), the output bytes it makes (`UInt32`). The corresponding Apple constant is `kAudioConverterPropertyCalculateOutputBufferSize` (`'cobs'`).
public let kAudioConverterPropertyCalculateOutputBufferSize = fourCharCode("cobs")
/// The sample-rate converter's quality (`UInt32`, a `kAudioConverterQuality_…` value; default High). Max uses libsoxr's very-high-quality recipe, the others its high-quality one; a change restarts the stream. The corresponding Apple constant is `kAudioConverterSampleRateConverterQuality` (`'srcq'`).
public let kAudioConverterSampleRateConverterQuality = fourCharCode("srcq")
/// The sample-rate converter's complexity (`UInt32`: Linear, Normal or Mastering; stored — libsoxr's filter is the same for all). The corresponding Apple constant is `kAudioConverterSampleRateConverterComplexity` (`'srca'`).
public let kAudioConverterSampleRateConverterComplexity = fourCharCode("srca")
/// How the converter primes (`UInt32`). Output here is always latency-compensated and of exact length, as with `kConverterPrimeMethod_Normal`: that is the value, and the only one accepted. The corresponding Apple constant is `kAudioConverterPrimeMethod` (`'prmm'`).
public let kAudioConverterPrimeMethod = fourCharCode("prmm")
/// Frames the converter needs before and after the audio (read-only ``AudioConverterPrimeInfo``): 0 and 0, since it compensates its own latency. The corresponding Apple constant is `kAudioConverterPrimeInfo` (`'prim'`).
public let kAudioConverterPrimeInfo = fourCharCode("prim")
/// For each output channel, the input channel it takes (from 0) or −1 for silence (`[SInt32]`, one per output channel). Default: the first min(inputs, outputs) channels in order, as Apple's; `[0, 0]` plays mono on both sides of stereo. The corresponding Apple constant is `kAudioConverterChannelMap` (`'chmp'`).
public let kAudioConverterChannelMap = fourCharCode("chmp")
/// The input format (read-only ``AudioStreamBasicDescription``). The corresponding Apple constant is `kAudioConverterCurrentInputStreamDescription` (`'acid'`).
public let kAudioConverterCurrentInputStreamDescription = fourCharCode("acid")
/// The output format (read-only ``AudioStreamBasicDescription``). The corresponding Apple constant is `kAudioConverterCurrentOutputStreamDescription` (`'acod'`).
public let kAudioConverterCurrentOutputStreamDescription = fourCharCode("acod")

/// Maximum sample-rate converter quality (libsoxr very high). The corresponding Apple constant is `kAudioConverterQuality_Max` (0x7F).
public let kAudioConverterQuality_Max: UInt32 = 0x7F
/// High quality, the default (libsoxr high). The corresponding Apple constant is `kAudioConverterQuality_High` (0x60).
public let kAudioConverterQuality_High: UInt32 = 0x60
/// Medium quality (libsoxr high here). The corresponding Apple constant is `kAudioConverterQuality_Medium` (0x40).
public let kAudioConverterQuality_Medium: UInt32 = 0x40
/// Low quality (libsoxr high here). The corresponding Apple constant is `kAudioConverterQuality_Low` (0x20).
public let kAudioConverterQuality_Low: UInt32 = 0x20
/// Minimum quality (libsoxr high here). The corresponding Apple constant is `kAudioConverterQuality_Min` (0).
public let kAudioConverterQuality_Min: UInt32 = 0
/// Linear-interpolation complexity. The corresponding Apple constant is `kAudioConverterSampleRateConverterComplexity_Linear` (`'line'`).
public let kAudioConverterSampleRateConverterComplexity_Linear = fourCharCode("line")
/// Normal complexity, the default. The corresponding Apple constant is `kAudioConverterSampleRateConverterComplexity_Normal` (`'norm'`).
public let kAudioConverterSampleRateConverterComplexity_Normal = fourCharCode("norm")
/// Mastering complexity. The corresponding Apple constant is `kAudioConverterSampleRateConverterComplexity_Mastering` (`'bats'`).
public let kAudioConverterSampleRateConverterComplexity_Mastering = fourCharCode("bats")
/// Prime with leading and trailing input. The corresponding Apple constant is `kConverterPrimeMethod_Pre` (0).
public let kConverterPrimeMethod_Pre: UInt32 = 0
/// Prime with trailing input only: the output lines up with the input (what happens here). The corresponding Apple constant is `kConverterPrimeMethod_Normal` (1).
public let kConverterPrimeMethod_Normal: UInt32 = 1
/// No priming. The corresponding Apple constant is `kConverterPrimeMethod_None` (2).
public let kConverterPrimeMethod_None: UInt32 = 2

// MARK: - Result codes

/// The format is not supported — not linear PCM, or a linear PCM variant not handled (`'fmt?'`). The corresponding Apple constant is `kAudioConverterErr_FormatNotSupported`.
public let kAudioConverterErr_FormatNotSupported = OSStatus(bitPattern: fourCharCode("fmt?"))
/// The operation is not supported — such as converting rates with ``AudioConverterConvertBuffer(_:_:_:_:_:)`` (`'op??'`). The corresponding Apple constant is `kAudioConverterErr_OperationNotSupported`.
public let kAudioConverterErr_OperationNotSupported = OSStatus(bitPattern: fourCharCode("op??"))
/// The property is not supported (`'prop'`). The corresponding Apple constant is `kAudioConverterErr_PropertyNotSupported`.
public let kAudioConverterErr_PropertyNotSupported = OSStatus(bitPattern: fourCharCode("prop"))
/// The input size is not a whole number of frames (`'insz'`). The corresponding Apple constant is `kAudioConverterErr_InvalidInputSize`.
public let kAudioConverterErr_InvalidInputSize = OSStatus(bitPattern: fourCharCode("insz"))
/// The output size is not a whole number of frames, or too small (`'otsz'`). The corresponding Apple constant is `kAudioConverterErr_InvalidOutputSize`.
public let kAudioConverterErr_InvalidOutputSize = OSStatus(bitPattern: fourCharCode("otsz"))
/// Something went wrong that no other code describes (`'what'`). The corresponding Apple constant is `kAudioConverterErr_UnspecifiedError`.
public let kAudioConverterErr_UnspecifiedError = OSStatus(bitPattern: fourCharCode("what"))
/// The property value has the wrong size (`'!siz'`). The corresponding Apple constant is `kAudioConverterErr_BadPropertySizeError`.
public let kAudioConverterErr_BadPropertySizeError = OSStatus(bitPattern: fourCharCode("!siz"))
/// Packet descriptions are needed (never for linear PCM) (`'!pkd'`). The corresponding Apple constant is `kAudioConverterErr_RequiresPacketDescriptionsError`.
public let kAudioConverterErr_RequiresPacketDescriptionsError = OSStatus(bitPattern: fourCharCode("!pkd"))
/// The input rate is not a positive number (`'!isr'`). The corresponding Apple constant is `kAudioConverterErr_InputSampleRateOutOfRange`.
public let kAudioConverterErr_InputSampleRateOutOfRange = OSStatus(bitPattern: fourCharCode("!isr"))
/// The output rate is not a positive number, or more than 256 times the input's (or less than 1/256) (`'!osr'`). The corresponding Apple constant is `kAudioConverterErr_OutputSampleRateOutOfRange`.
public let kAudioConverterErr_OutputSampleRateOutOfRange = OSStatus(bitPattern: fourCharCode("!osr"))

// MARK: - Functions

/// Creates a converter between two linear PCM formats. The corresponding Apple function is
/// `AudioConverterNew`.
///
/// Either format may be 8-bit (signed or unsigned), 16/24/32-bit signed integer or 32/64-bit
/// float, packed, either byte order, interleaved or not, 1…64 channels, any rate (a factor of
/// at most 256 between them). Integer ↔ float and same-width integer conversions are exact.
/// - Returns: ``kAudioConverterErr_FormatNotSupported`` (compressed or unhandled formats),
///   ``kAudioConverterErr_InputSampleRateOutOfRange``, ``kAudioConverterErr_OutputSampleRateOutOfRange``.
@discardableResult
public func AudioConverterNew(_ inSourceFormat: UnsafePointer<AudioStreamBasicDescription>,
                              _ inDestinationFormat: UnsafePointer<AudioStreamBasicDescription>,
                              _ outAudioConverter: UnsafeMutablePointer<AudioConverterRef?>) -> OSStatus {
    status { () throws(AudioQueueError) in
        let converter = try CompatAudioConverter(from: inSourceFormat.pointee, to: inDestinationFormat.pointee)
        ConverterRegistry.shared.add(converter)
        outAudioConverter.pointee = converter.ref
    }
}

/// Disposes of a converter; the reference is invalid afterwards. The corresponding Apple function
/// is `AudioConverterDispose`.
/// - Returns: ``kAudio_ParamError`` for nil, unknown or disposed-of converters, and for the
///   converter of an ExtAudioFile (``ExtAudioFileDispose(_:)`` disposes of it).
@discardableResult
public func AudioConverterDispose(_ inAudioConverter: AudioConverterRef?) -> OSStatus {
    withConverter(inAudioConverter) { converter throws(AudioQueueError) in
        guard !converter.isOwnedByFile else {
            throw AudioQueueError(kAudio_ParamError, "this converter belongs to an ExtAudioFile; ExtAudioFileDispose disposes of it")
        }
        ConverterRegistry.shared.remove(converter)
    }
}

/// Forgets the stream: audio held for conversion and the end of a stream, so the converter
/// starts afresh. The corresponding Apple function is `AudioConverterReset`.
@discardableResult
public func AudioConverterReset(_ inAudioConverter: AudioConverterRef?) -> OSStatus {
    withConverter(inAudioConverter) { converter throws(AudioQueueError) in converter.locked { converter.core.reset() } }
}

/// The size of a property's value and whether it can be set. The corresponding Apple function is
/// `AudioConverterGetPropertyInfo`.
/// - Returns: ``kAudioConverterErr_PropertyNotSupported`` for unknown properties.
@discardableResult
public func AudioConverterGetPropertyInfo(_ inAudioConverter: AudioConverterRef?, _ inPropertyID: AudioConverterPropertyID,
                                          _ outSize: UnsafeMutablePointer<UInt32>?,
                                          _ outWritable: UnsafeMutablePointer<DarwinBoolean>?) -> OSStatus {
    withConverter(inAudioConverter) { converter throws(AudioQueueError) in
        let (size, writable) = try converter.locked { () throws(AudioQueueError) in try converter.propertyInfo(inPropertyID) }
        outSize?.pointee = UInt32(size)
        outWritable?.pointee = DarwinBoolean(writable)
    }
}

/// Reads a property into `outPropertyData` (on return `ioPropertyDataSize` is the size
/// written). For the Calculate…BufferSize properties, put the size to convert in the value
/// first. The corresponding Apple function is `AudioConverterGetProperty`.
/// - Returns: ``kAudioConverterErr_PropertyNotSupported``, ``kAudioConverterErr_BadPropertySizeError``.
@discardableResult
public func AudioConverterGetProperty(_ inAudioConverter: AudioConverterRef?, _ inPropertyID: AudioConverterPropertyID,
                                      _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>,
                                      _ outPropertyData: UnsafeMutableRawPointer) -> OSStatus {
    withConverter(inAudioConverter) { converter throws(AudioQueueError) in
        try converter.locked { () throws(AudioQueueError) in
            try converter.property(inPropertyID, outPropertyData, &ioPropertyDataSize.pointee)
        }
    }
}

/// Sets a property: the channel map, the sample-rate converter's quality and complexity, the
/// prime method (Normal only). The corresponding Apple function is `AudioConverterSetProperty`.
/// - Returns: ``kAudioConverterErr_PropertyNotSupported`` (unknown or read-only),
///   ``kAudioConverterErr_BadPropertySizeError``, ``kAudio_ParamError`` (a channel map naming a
///   channel the input does not have, or an unknown quality).
@discardableResult
public func AudioConverterSetProperty(_ inAudioConverter: AudioConverterRef?, _ inPropertyID: AudioConverterPropertyID,
                                      _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer) -> OSStatus {
    withConverter(inAudioConverter) { converter throws(AudioQueueError) in
        try converter.locked { () throws(AudioQueueError) in
            try converter.setProperty(inPropertyID, inPropertyData, Int(inPropertyDataSize))
        }
    }
}

/// Converts interleaved linear PCM at one rate in a single call. The corresponding Apple
/// function is `AudioConverterConvertBuffer`.
///
/// `inInputDataSize` must be whole source frames and `ioOutputDataSize` must hold their
/// conversion; on return it is the bytes written.
/// - Returns: ``kAudioConverterErr_OperationNotSupported`` (the rates differ, or a format is not
///   interleaved: use ``AudioConverterFillComplexBuffer(_:_:_:_:_:_:)``),
///   ``kAudioConverterErr_InvalidInputSize``, ``kAudioConverterErr_InvalidOutputSize``.
@discardableResult
public func AudioConverterConvertBuffer(_ inAudioConverter: AudioConverterRef?, _ inInputDataSize: UInt32,
                                        _ inInputData: UnsafeRawPointer, _ ioOutputDataSize: UnsafeMutablePointer<UInt32>,
                                        _ outOutputData: UnsafeMutableRawPointer) -> OSStatus {
    withConverter(inAudioConverter) { converter throws(AudioQueueError) in
        try converter.locked { () throws(AudioQueueError) in
            let core = converter.core
            guard core.source.isInterleaved, core.destination.isInterleaved else {
                throw AudioQueueError(kAudioConverterErr_OperationNotSupported, "AudioConverterConvertBuffer takes interleaved formats (one buffer); use AudioConverterConvertComplexBuffer or AudioConverterFillComplexBuffer for non-interleaved audio")
            }
            let frames = try converter.sameRateFrames(bytes: Int(inInputDataSize), "AudioConverterConvertBuffer")
            let needed = frames * core.destination.bytesPerFrame
            guard Int(ioOutputDataSize.pointee) >= needed else {
                throw AudioQueueError(kAudioConverterErr_InvalidOutputSize, "\(frames) frames convert to \(needed) bytes but ioOutputDataSize is \(ioOutputDataSize.pointee)")
            }
            core.convertDirect([inInputData], frames: frames, into: [outOutputData])
            ioOutputDataSize.pointee = UInt32(needed)
        }
    }
}

/// Converts `inNumberPCMFrames` frames of linear PCM at one rate from one buffer list to another
/// (interleaved or not). The corresponding Apple function is `AudioConverterConvertComplexBuffer`.
///
/// Each output buffer's `mDataByteSize` must hold the frames; on return it is the bytes written.
/// - Returns: ``kAudioConverterErr_OperationNotSupported`` (the rates differ),
///   ``kAudioConverterErr_InvalidInputSize``, ``kAudioConverterErr_InvalidOutputSize``,
///   ``kAudio_ParamError`` (a list with another number of buffers than the format, or no data).
@discardableResult
public func AudioConverterConvertComplexBuffer(_ inAudioConverter: AudioConverterRef?, _ inNumberPCMFrames: UInt32,
                                               _ inInputData: UnsafePointer<AudioBufferList>,
                                               _ outOutputData: UnsafeMutablePointer<AudioBufferList>) -> OSStatus {
    withConverter(inAudioConverter) { converter throws(AudioQueueError) in
        try converter.locked { () throws(AudioQueueError) in
            let core = converter.core
            let frames = Int(inNumberPCMFrames)
            _ = try converter.sameRateFrames(bytes: frames * core.source.bytesPerFrame, "AudioConverterConvertComplexBuffer")
            let input = UnsafeMutableAudioBufferListPointer(UnsafeMutablePointer(mutating: inInputData))
            let inputs = try BufferListAccess.inputs(input, format: core.source, frames: frames, code: kAudioConverterErr_InvalidInputSize)
            let output = UnsafeMutableAudioBufferListPointer(outOutputData)
            let capacity = try BufferListAccess.capacity(output, format: core.destination)
            guard capacity >= frames else {
                throw AudioQueueError(kAudioConverterErr_InvalidOutputSize, "the output buffers hold \(capacity) frames; \(frames) are converted")
            }
            core.convertDirect(inputs, frames: frames, into: BufferListAccess.pointers(output))
            BufferListAccess.setByteSizes(output, format: core.destination, frames: frames)
        }
    }
}

/// Converts audio your callback supplies into `outOutputData`, any linear PCM to any other,
/// rates included. The corresponding Apple function is `AudioConverterFillComplexBuffer`.
///
/// `ioOutputDataPacketSize` is the frames wanted (at most what the output buffers'
/// `mDataByteSize` hold); on return, the frames written (each buffer's `mDataByteSize` too).
/// `inInputDataProc` is called on this thread as often as needed; when it returns 0 frames with
/// ``noErr`` the stream ends (the rate converter's tail is released and the whole stream is
/// exactly `round(input frames × output rate / input rate)` frames); when it returns an error
/// the fill stops with the frames converted so far and returns that error — the converter keeps
/// its state, so a later fill continues. After the end, fills return 0 frames until
/// ``AudioConverterReset(_:)``.
/// - Returns: the input proc's error, ``kAudio_ParamError`` (an output list with another number of
///   buffers than the format, or no data; input without data).
@discardableResult
public func AudioConverterFillComplexBuffer(_ inAudioConverter: AudioConverterRef?,
                                            _ inInputDataProc: AudioConverterComplexInputDataProc,
                                            _ inInputDataProcUserData: UnsafeMutableRawPointer?,
                                            _ ioOutputDataPacketSize: UnsafeMutablePointer<UInt32>,
                                            _ outOutputData: UnsafeMutablePointer<AudioBufferList>,
                                            _ outPacketDescription: UnsafeMutablePointer<AudioStreamPacketDescription>?) -> OSStatus {
    var result = noErr
    let outcome = withConverter(inAudioConverter) { converter throws(AudioQueueError) in
        try converter.locked { () throws(AudioQueueError) in
            let (frames, procStatus) = try converter.fill(frames: Int(ioOutputDataPacketSize.pointee),
                                                          into: UnsafeMutableAudioBufferListPointer(outOutputData),
                                                          proc: inInputDataProc, userData: inInputDataProcUserData)
            ioOutputDataPacketSize.pointee = UInt32(frames)
            result = procStatus
        }
    }
    return outcome != noErr ? outcome : result
}

private func withConverter(_ ref: AudioConverterRef?, _ body: (CompatAudioConverter) throws(AudioQueueError) -> Void) -> OSStatus {
    status { () throws(AudioQueueError) in
        guard let ref else { throw AudioQueueError(kAudio_ParamError, "the AudioConverterRef is NULL") }
        try body(try ConverterRegistry.shared.object(ref))
    }
}

// MARK: - Implementation

/// The object behind an ``AudioConverterRef``: a ``PCMConverter`` plus Apple's settings and the
/// buffer list handed to the input proc.
///
/// A recursive lock serializes its use, so an input proc may call the converter's property
/// functions from inside a fill (on the same thread).
final class CompatAudioConverter: @unchecked Sendable {
    private(set) var core: PCMConverter
    private let lock = NSRecursiveLock()
    private var quality = kAudioConverterQuality_High
    private var complexity = kAudioConverterSampleRateConverterComplexity_Normal
    /// The list handed to the input proc, with room for one buffer per source channel.
    private let inputList: UnsafeMutableAudioBufferListPointer
    /// Set for the converter of an ExtAudioFile, which disposes of it.
    var isOwnedByFile = false

    var ref: AudioConverterRef { ConverterRegistry.handle(self) }

    convenience init(from source: AudioStreamBasicDescription, to destination: AudioStreamBasicDescription) throws(AudioQueueError) {
        guard source.mFormatID != kAudioFormatLinearPCM || (source.mSampleRate.isFinite && source.mSampleRate > 0) else {
            throw AudioQueueError(kAudioConverterErr_InputSampleRateOutOfRange, "the input rate \(source.mSampleRate) is not a positive number")
        }
        guard destination.mFormatID != kAudioFormatLinearPCM || (destination.mSampleRate.isFinite && destination.mSampleRate > 0) else {
            throw AudioQueueError(kAudioConverterErr_OutputSampleRateOutOfRange, "the output rate \(destination.mSampleRate) is not a positive number")
        }
        let from = try PCMFormat.make(source).get()
        let to = try PCMFormat.make(destination).get()
        try self.init(core: PCMConverter(from: from, to: to))
    }

    init(core: PCMConverter) {
        self.core = core
        inputList = AudioBufferList.allocate(maximumBuffers: core.source.bufferCount)
    }

    deinit { free(inputList.unsafeMutablePointer) }

    func locked<T>(_ body: () throws(AudioQueueError) -> T) throws(AudioQueueError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// The frames in `bytes` bytes of source audio, for the one-call conversions (same rate).
    func sameRateFrames(bytes: Int, _ function: String) throws(AudioQueueError) -> Int {
        guard !core.convertsRate else {
            throw AudioQueueError(kAudioConverterErr_OperationNotSupported, "\(function) cannot convert \(core.source.sampleRate) Hz to \(core.destination.sampleRate) Hz; use AudioConverterFillComplexBuffer")
        }
        let frameBytes = core.source.bytesPerFrame
        guard bytes % frameBytes == 0 else {
            throw AudioQueueError(kAudioConverterErr_InvalidInputSize, "\(bytes) bytes is not a whole number of \(frameBytes)-byte input frames")
        }
        return bytes / frameBytes
    }

    /// Fills the output list with up to `frames` frames, calling `proc` for input.
    func fill(frames requested: Int, into output: UnsafeMutableAudioBufferListPointer,
              proc: AudioConverterComplexInputDataProc, userData: UnsafeMutableRawPointer?) throws(AudioQueueError) -> (Int, OSStatus) {
        let capacity = try BufferListAccess.capacity(output, format: core.destination)
        let frames = min(requested, capacity)
        var procStatus = noErr
        while core.available < frames && !core.ended {
            inputList.count = core.source.bufferCount
            for index in 0..<inputList.count {
                inputList[index] = AudioBuffer(mNumberChannels: UInt32(core.source.channelsPerBuffer), mDataByteSize: 0, mData: nil)
            }
            var packets = UInt32(clamping: core.inputFrames(forOutput: frames - core.available))
            procStatus = proc(ref, &packets, inputList.unsafeMutablePointer, nil, userData)
            let given = Int(packets)
            if given > 0 {
                let inputs = try BufferListAccess.inputs(inputList, format: core.source, frames: given, code: kAudio_ParamError)
                core.push(inputs, frames: given)
            }
            if procStatus != noErr { break }
            if given == 0 { core.end() }
        }
        let produced = core.pull(into: BufferListAccess.pointers(output), frames: frames)
        BufferListAccess.setByteSizes(output, format: core.destination, frames: produced)
        return (produced, procStatus)
    }

    // MARK: Properties

    func propertyInfo(_ id: AudioConverterPropertyID) throws(AudioQueueError) -> (Int, Bool) {
        switch id {
        case kAudioConverterPropertyMinimumInputBufferSize, kAudioConverterPropertyMinimumOutputBufferSize,
             kAudioConverterPropertyMaximumInputPacketSize, kAudioConverterPropertyMaximumOutputPacketSize:
            return (4, false)
        case kAudioConverterPropertyCalculateInputBufferSize, kAudioConverterPropertyCalculateOutputBufferSize:
            return (4, false)
        case kAudioConverterSampleRateConverterQuality, kAudioConverterSampleRateConverterComplexity, kAudioConverterPrimeMethod:
            return (4, true)
        case kAudioConverterPrimeInfo: return (MemoryLayout<AudioConverterPrimeInfo>.size, false)
        case kAudioConverterChannelMap: return (4 * core.destination.channelCount, true)
        case kAudioConverterCurrentInputStreamDescription, kAudioConverterCurrentOutputStreamDescription:
            return (MemoryLayout<AudioStreamBasicDescription>.size, false)
        default:
            throw AudioQueueError(kAudioConverterErr_PropertyNotSupported, "audio converter property '\(fourCharCodeString(id))' is not supported")
        }
    }

    func property(_ id: AudioConverterPropertyID, _ data: UnsafeMutableRawPointer, _ size: inout UInt32) throws(AudioQueueError) {
        let (needed, _) = try propertyInfo(id)
        guard Int(size) >= needed else {
            throw AudioQueueError(kAudioConverterErr_BadPropertySizeError, "property '\(fourCharCodeString(id))' needs \(needed) bytes, not \(size)")
        }
        func put<T>(_ value: T) { data.storeBytes(of: value, as: T.self) }
        switch id {
        case kAudioConverterPropertyMinimumInputBufferSize, kAudioConverterPropertyMaximumInputPacketSize:
            put(UInt32(core.source.bytesPerFrame))
        case kAudioConverterPropertyMinimumOutputBufferSize, kAudioConverterPropertyMaximumOutputPacketSize:
            put(UInt32(core.destination.bytesPerFrame))
        case kAudioConverterPropertyCalculateInputBufferSize:
            let outputFrames = Int(data.loadUnaligned(as: UInt32.self)) / core.destination.bytesPerFrame
            let frames = Int((Double(outputFrames) * core.source.sampleRate / core.destination.sampleRate).rounded(.up))
            put(UInt32(clamping: frames * core.source.bytesPerFrame))
        case kAudioConverterPropertyCalculateOutputBufferSize:
            let inputFrames = Int(data.loadUnaligned(as: UInt32.self)) / core.source.bytesPerFrame
            let frames = Int((Double(inputFrames) * core.destination.sampleRate / core.source.sampleRate).rounded(.up))
            put(UInt32(clamping: frames * core.destination.bytesPerFrame))
        case kAudioConverterSampleRateConverterQuality: put(quality)
        case kAudioConverterSampleRateConverterComplexity: put(complexity)
        case kAudioConverterPrimeMethod: put(kConverterPrimeMethod_Normal)
        case kAudioConverterPrimeInfo: put(AudioConverterPrimeInfo(leadingFrames: 0, trailingFrames: 0))
        case kAudioConverterChannelMap:
            for (index, channel) in core.channelMap.enumerated() {
                data.storeBytes(of: Int32(channel), toByteOffset: 4 * index, as: Int32.self)
            }
        case kAudioConverterCurrentInputStreamDescription: put(core.source.streamDescription)
        case kAudioConverterCurrentOutputStreamDescription: put(core.destination.streamDescription)
        default: break
        }
        size = UInt32(needed)
    }

    func setProperty(_ id: AudioConverterPropertyID, _ data: UnsafeRawPointer, _ size: Int) throws(AudioQueueError) {
        let (needed, writable) = try propertyInfo(id)
        guard writable else {
            throw AudioQueueError(kAudioConverterErr_PropertyNotSupported, "audio converter property '\(fourCharCodeString(id))' is read-only")
        }
        guard size == needed else {
            throw AudioQueueError(kAudioConverterErr_BadPropertySizeError, "property '\(fourCharCodeString(id))' takes \(needed) bytes, not \(size)")
        }
        let value = data.loadUnaligned(as: UInt32.self)
        switch id {
        case kAudioConverterSampleRateConverterQuality:
            guard [kAudioConverterQuality_Max, kAudioConverterQuality_High, kAudioConverterQuality_Medium,
                   kAudioConverterQuality_Low, kAudioConverterQuality_Min].contains(value) else {
                throw AudioQueueError(kAudio_ParamError, "quality \(value) is not a kAudioConverterQuality_… value")
            }
            try core.setQuality(value == kAudioConverterQuality_Max ? .veryHigh : .high)
            quality = value
        case kAudioConverterSampleRateConverterComplexity:
            guard [kAudioConverterSampleRateConverterComplexity_Linear, kAudioConverterSampleRateConverterComplexity_Normal,
                   kAudioConverterSampleRateConverterComplexity_Mastering].contains(value) else {
                throw AudioQueueError(kAudio_ParamError, "complexity '\(fourCharCodeString(value))' is not a kAudioConverterSampleRateConverterComplexity_… value")
            }
            complexity = value
        case kAudioConverterPrimeMethod:
            guard value == kConverterPrimeMethod_Normal else {
                throw AudioQueueError(kAudioConverterErr_PropertyNotSupported, "prime method \(value): this converter always compensates its own latency (kConverterPrimeMethod_Normal, 1); other methods are not provided")
            }
        case kAudioConverterChannelMap:
            let inputs = core.source.channelCount
            var map: [Int] = []
            for index in 0..<core.destination.channelCount {
                let channel = Int(data.loadUnaligned(fromByteOffset: 4 * index, as: Int32.self))
                guard channel == -1 || (0..<inputs).contains(channel) else {
                    throw AudioQueueError(kAudio_ParamError, "channel map entry \(index) is \(channel); use -1 (silence) or an input channel 0…\(inputs - 1)")
                }
                map.append(channel)
            }
            core.channelMap = map
        default:
            break
        }
    }
}

/// Reading and writing the buffers of an `AudioBufferList` in a ``PCMFormat``.
enum BufferListAccess {
    /// The data pointers of a list's buffers.
    static func pointers(_ list: UnsafeMutableAudioBufferListPointer) -> [UnsafeMutableRawPointer] {
        list.map { $0.mData ?? UnsafeMutableRawPointer(bitPattern: 1)! }
    }

    /// Checks a list for `format` (buffer count, data) and returns the frames its buffers hold.
    static func capacity(_ list: UnsafeMutableAudioBufferListPointer, format: PCMFormat) throws(AudioQueueError) -> Int {
        guard list.count == format.bufferCount else {
            throw AudioQueueError(kAudio_ParamError, "the buffer list has \(list.count) buffers but \(format) takes \(format.bufferCount)")
        }
        var frames = Int.max
        for buffer in list {
            guard buffer.mData != nil else { throw AudioQueueError(kAudio_ParamError, "a buffer of the list has no data (mData is NULL)") }
            frames = min(frames, Int(buffer.mDataByteSize) / format.bytesPerFrame)
        }
        return frames
    }

    /// Checks an input list holding `frames` frames of `format` and returns its data pointers.
    static func inputs(_ list: UnsafeMutableAudioBufferListPointer, format: PCMFormat, frames: Int,
                       code: OSStatus) throws(AudioQueueError) -> [UnsafeRawPointer] {
        guard list.count == format.bufferCount else {
            throw AudioQueueError(code, "the input buffer list has \(list.count) buffers but \(format) takes \(format.bufferCount)")
        }
        var pointers: [UnsafeRawPointer] = []
        for buffer in list {
            guard let data = buffer.mData else { throw AudioQueueError(code, "an input buffer has no data (mData is NULL)") }
            guard Int(buffer.mDataByteSize) >= frames * format.bytesPerFrame else {
                throw AudioQueueError(code, "an input buffer holds \(buffer.mDataByteSize) bytes, fewer than \(frames) frames of \(format.bytesPerFrame) bytes")
            }
            pointers.append(UnsafeRawPointer(data))
        }
        return pointers
    }

    /// Sets every buffer's `mDataByteSize` to `frames` frames of `format`.
    static func setByteSizes(_ list: UnsafeMutableAudioBufferListPointer, format: PCMFormat, frames: Int) {
        for index in 0..<list.count { list[index].mDataByteSize = UInt32(frames * format.bytesPerFrame) }
    }
}

/// Every live ``CompatAudioConverter`` by its reference.
typealias ConverterRegistry = HandleRegistry<CompatAudioConverter>

extension HandleRegistry where Object == CompatAudioConverter {
    static let shared = HandleRegistry(unknown: AudioQueueError(kAudio_ParamError, "not an audio converter (never created, or disposed of)"))
}
