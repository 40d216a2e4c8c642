import Foundation
import Lockstep
import Synchronization

/// How an ``AudioStreamBasicDescription`` of linear PCM maps onto a Lockstep ``StreamFormat``,
/// plus the byte order the engine (little-endian) does not handle itself.
struct LinearPCMLayout: Sendable, Hashable {
    var format: StreamFormat
    var isBigEndian: Bool

    var bytesPerFrame: Int { format.bytesPerFrame }
    var bytesPerSample: Int { format.sampleFormat.bytesPerSample }

    /// Checks `asbd` and maps it, or returns the error (`'fmt?'`) with what to do.
    static func make(_ asbd: AudioStreamBasicDescription) -> Result<LinearPCMLayout, AudioQueueError> {
        func unsupported(_ message: String) -> Result<LinearPCMLayout, AudioQueueError> {
            .failure(AudioQueueError(.unsupportedFormat, message))
        }
        guard asbd.mFormatID == kAudioFormatLinearPCM else {
            return unsupported("format '\(fourCharCodeString(asbd.mFormatID))' is compressed; queues on Linux play and record linear PCM only — decode the file with the file layer (AudioFileOpenURL/AudioFileReadPacketData present any file libsndfile reads as linear PCM) and enqueue that")
        }
        guard asbd.mFormatFlags & kAudioFormatFlagIsNonInterleaved == 0 else {
            return unsupported("non-interleaved linear PCM is not supported by audio queues (as on Apple); use interleaved frames")
        }
        let pcm: PCMFormat
        switch PCMFormat.make(asbd) {
        case .success(let made): pcm = made
        case .failure(let error): return unsupported(error.message)
        }
        let sampleFormat: SampleFormat
        switch pcm.encoding {
        case .signed16: sampleFormat = .int16
        case .signed24: sampleFormat = .int24
        case .signed32: sampleFormat = .int32
        case .float32: sampleFormat = .float32
        case .float64: sampleFormat = .float64
        case .unsigned8, .signed8:
            return unsupported("8-bit samples are not supported by audio queues here; use 16, 24 or 32 bits (AudioConverter and ExtAudioFile convert 8-bit audio)")
        }
        let format = StreamFormat(sampleRate: asbd.mSampleRate, channelCount: pcm.channelCount, sampleFormat: sampleFormat)
        do { try format.validate() } catch { return .failure(error) }
        return .success(LinearPCMLayout(format: format, isBigEndian: pcm.isBigEndian))
    }

    /// The description Apple's API reports for this layout (packed, with the byte order flag).
    var streamDescription: AudioStreamBasicDescription {
        var flags = kAudioFormatFlagIsPacked
        flags |= format.sampleFormat.isFloat ? kAudioFormatFlagIsFloat : kAudioFormatFlagIsSignedInteger
        if isBigEndian { flags |= kAudioFormatFlagIsBigEndian }
        return AudioStreamBasicDescription(
            mSampleRate: format.sampleRate, mFormatID: kAudioFormatLinearPCM, mFormatFlags: flags,
            mBytesPerPacket: UInt32(bytesPerFrame), mFramesPerPacket: 1, mBytesPerFrame: UInt32(bytesPerFrame),
            mChannelsPerFrame: UInt32(format.channelCount), mBitsPerChannel: UInt32(format.sampleFormat.bitsPerSample),
            mReserved: 0)
    }

    /// Copies `byteCount` bytes between this layout's byte order and the engine's little-endian
    /// one (the same operation both ways). Runs on the calling thread, never the realtime one.
    func convertByteOrder(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer, byteCount: Int) {
        guard byteCount > 0 else { return }
        guard isBigEndian, bytesPerSample > 1 else {
            if source != UnsafeRawPointer(destination) { destination.copyMemory(from: source, byteCount: byteCount) }
            return
        }
        Self.swapBytes(from: source, to: destination, byteCount: byteCount, width: bytesPerSample)
    }

    /// Reverses the bytes of every `width`-byte sample; `source` may equal `destination`.
    static func swapBytes(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer, byteCount: Int, width: Int) {
        let s = source.assumingMemoryBound(to: UInt8.self)
        let d = destination.assumingMemoryBound(to: UInt8.self)
        var i = 0
        while i + width <= byteCount {
            var a = 0, b = width - 1
            while a < b {
                let x = s[i + a], y = s[i + b]
                d[i + a] = y
                d[i + b] = x
                a += 1
                b -= 1
            }
            if width % 2 == 1 { d[i + width / 2] = s[i + width / 2] }
            i += width
        }
    }
}

/// The message of the most recent error an Audio Queue or Audio File function returned (on any
/// thread), with its result code.
private let lastError = Mutex<(OSStatus, String)?>(nil)

/// Records `message` as the explanation of `status` and returns `status`.
@discardableResult
package func fail(_ status: OSStatus, _ message: String) -> OSStatus {
    lastError.withLock { $0 = (status, message) }
    return status
}

/// Records an ``AudioQueueError`` and returns its `OSStatus`.
@discardableResult
func fail(_ error: AudioQueueError) -> OSStatus {
    fail(error.osStatus, error.message)
}

/// Says in words why the most recent failing Audio Queue or Audio File call (on any thread)
/// failed, with its result code, or nil if none has failed. Linux addition: Apple's functions
/// return only the code.
public func AudioQueueCompatLastErrorMessage() -> String? {
    guard let (status, message) = lastError.withLock({ $0 }) else { return nil }
    return "\(message) (\(fourCharCodeString(FourCharCode(bitPattern: status))))"
}
