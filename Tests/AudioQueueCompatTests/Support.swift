import AudioQueueCompat
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

/// Every suite of this target, serialized: the compatibility layer's default device is
/// process-wide, and the JACK suites start their own servers.
@Suite("AudioQueueCompat", .serialized)
struct AQCompatTests {}

/// What the C callbacks of a test saw. Passed to them as `inUserData`.
final class CallbackLog: @unchecked Sendable {
    struct Input {
        var bytes: [UInt8]
        var sampleTime: Double
        var packets: UInt32
        var flags: AudioTimeStampFlags
    }

    private let lock = NSLock()
    private var _buffers: [AudioQueueBufferRef] = []
    private var _running: [UInt32] = []
    private var _inputs: [Input] = []
    private var _statuses: [OSStatus] = []
    /// Input buffers are enqueued again while this is true.
    var reenqueue = true

    /// Logs live as long as the test process: a queue may call back after a test lets go of it.
    nonisolated(unsafe) private static var all: [CallbackLog] = []
    private static let allLock = NSLock()
    init() {
        Self.allLock.lock()
        Self.all.append(self)
        Self.allLock.unlock()
    }

    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    static func from(_ pointer: UnsafeMutableRawPointer?) -> CallbackLog {
        Unmanaged<CallbackLog>.fromOpaque(pointer!).takeUnretainedValue()
    }

    func locked<R>(_ body: () -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
    var buffers: [AudioQueueBufferRef] { locked { _buffers } }
    var running: [UInt32] { locked { _running } }
    var inputs: [Input] { locked { _inputs } }
    func add(_ buffer: AudioQueueBufferRef) { locked { _buffers.append(buffer) } }
    func add(running: UInt32) { locked { _running.append(running) } }
    func add(_ input: Input) { locked { _inputs.append(input) } }
    var statuses: [OSStatus] { locked { _statuses } }
    func add(status: OSStatus) { locked { _statuses.append(status) } }
    /// Queue sample times noted by callbacks.
    var times: [Double] { locked { _times } }
    func add(time: Double) { locked { _times.append(time) } }
    private var _times: [Double] = []
    /// The threads callbacks ran on, by pthread and name (Linux keeps 15 characters of a name).
    var threads: [(thread: pthread_t, name: String)] { locked { _threads } }
    /// Notes the calling thread; returns how many calls have been noted.
    @discardableResult
    func addThread() -> Int {
        let name = Thread.current.name ?? ""
        return locked {
            _threads.append((pthread_self(), name))
            return _threads.count
        }
    }
    private var _threads: [(thread: pthread_t, name: String)] = []
}

func logOutput(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ buffer: AudioQueueBufferRef) {
    CallbackLog.from(userData).add(buffer)
}

func logInput(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ buffer: AudioQueueBufferRef,
              _ start: UnsafePointer<AudioTimeStamp>, _ packets: UInt32,
              _ descriptions: UnsafePointer<AudioStreamPacketDescription>?) {
    let log = CallbackLog.from(userData)
    let bytes = Array(UnsafeRawBufferPointer(start: buffer.pointee.mAudioData, count: Int(buffer.pointee.mAudioDataByteSize)))
    log.add(CallbackLog.Input(bytes: bytes, sampleTime: start.pointee.mSampleTime, packets: packets, flags: start.pointee.mFlags))
    if log.reenqueue { AudioQueueEnqueueBuffer(queue, buffer, 0, nil) }
}

/// Records the buffer and tries to enqueue it again at once, recording the result.
func reenqueueOutput(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ buffer: AudioQueueBufferRef) {
    let log = CallbackLog.from(userData)
    log.add(buffer)
    log.add(status: AudioQueueEnqueueBuffer(queue, buffer, 0, nil))
}

func logRunning(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ id: AudioQueuePropertyID) {
    var running: UInt32 = 99
    var size = UInt32(4)
    AudioQueueGetProperty(queue, id, &running, &size)
    CallbackLog.from(userData).add(running: running)
}

func otherListener(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ id: AudioQueuePropertyID) {}

/// A linear PCM description.
func pcm(_ rate: Double = 48000, channels: UInt32 = 2, bits: UInt32 = 16, float: Bool = false,
         bigEndian: Bool = false) -> AudioStreamBasicDescription {
    var flags = kAudioFormatFlagIsPacked | (float ? kAudioFormatFlagIsFloat : kAudioFormatFlagIsSignedInteger)
    if bigEndian { flags |= kAudioFormatFlagIsBigEndian }
    let bytes = channels * bits / 8
    return AudioStreamBasicDescription(mSampleRate: rate, mFormatID: kAudioFormatLinearPCM, mFormatFlags: flags,
                                       mBytesPerPacket: bytes, mFramesPerPacket: 1, mBytesPerFrame: bytes,
                                       mChannelsPerFrame: channels, mBitsPerChannel: bits, mReserved: 0)
}

/// Big-endian 16-bit bytes of `values`.
func bigEndian16(_ values: [Int16]) -> [UInt8] {
    values.flatMap { [UInt8(truncatingIfNeeded: $0 >> 8), UInt8(truncatingIfNeeded: $0)] }
}

/// An output queue in offline mode (render format = `format` unless given), with its log.
func offlineOutputQueue(_ format: AudioStreamBasicDescription, render: AudioStreamBasicDescription? = nil)
    throws -> (AudioQueueRef, CallbackLog)
{
    let log = CallbackLog()
    var format = format
    var queue: AudioQueueRef?
    try #require(AudioQueueNewOutput(&format, logOutput, log.pointer, nil, nil, 0, &queue) == noErr)
    var renderFormat = render ?? format
    try #require(AudioQueueSetOfflineRenderFormat(queue!, &renderFormat, nil) == noErr)
    return (queue!, log)
}

/// Allocates a buffer holding `bytes` and sets its byte size.
func filledBuffer(_ queue: AudioQueueRef, _ bytes: [UInt8], capacity: Int? = nil) throws -> AudioQueueBufferRef {
    var buffer: AudioQueueBufferRef?
    try #require(AudioQueueAllocateBuffer(queue, UInt32(capacity ?? bytes.count), &buffer) == noErr)
    bytes.withUnsafeBytes { buffer!.pointee.mAudioData.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
    buffer!.pointee.mAudioDataByteSize = UInt32(bytes.count)
    return buffer!
}

/// Renders `frames` frames of an offline queue and returns the bytes.
func render(_ queue: AudioQueueRef, _ capture: AudioQueueBufferRef, frames: UInt32, at sampleTime: inout Double) -> (OSStatus, [UInt8]) {
    var stamp = AudioTimeStamp()
    stamp.mSampleTime = sampleTime
    stamp.mFlags = .sampleTimeValid
    let status = AudioQueueOfflineRender(queue, &stamp, capture, frames)
    sampleTime += Double(frames)
    guard status == noErr else { return (status, []) }   // the buffer may be gone with its queue
    return (status, Array(UnsafeRawBufferPointer(start: capture.pointee.mAudioData, count: Int(capture.pointee.mAudioDataByteSize))))
}

/// An input queue recording an offline default device whose input `provider` writes (the device
/// renders `channels` inputs at `rate`), with three buffers of `bufferFrames` frames enqueued,
/// started. Reset the default device afterwards (`AudioQueueSetDefaultDevice(.standard)`).
func startedOfflineInputQueue(rate: Double, channels: Int, maximumFrames: Int, format: AudioStreamBasicDescription,
                              bufferFrames: Int, provider: @escaping OfflineDevice.InputProvider)
    throws -> (OfflineDevice, AudioQueueRef, CallbackLog)
{
    let device = try OfflineDevice(format: StreamFormat(sampleRate: rate, channelCount: channels),
                                   maximumFramesPerRender: maximumFrames, inputChannelCount: channels, inputProvider: provider)
    AudioQueueSetDefaultDevice(.engine(try Engine(device: device)))
    var format = format
    let log = CallbackLog()
    var queue: AudioQueueRef?
    try #require(AudioQueueNewInput(&format, logInput, log.pointer, nil, nil, 0, &queue) == noErr)
    for _ in 0..<3 {
        var buffer: AudioQueueBufferRef?
        try #require(AudioQueueAllocateBuffer(queue!, UInt32(bufferFrames) * format.mBytesPerFrame, &buffer) == noErr)
        try #require(AudioQueueEnqueueBuffer(queue!, buffer!, 0, nil) == noErr)
    }
    try #require(AudioQueueStart(queue!, nil) == noErr)
    return (device, queue!, log)
}
