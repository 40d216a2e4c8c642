// AQOfflineRender: Apple's offline-render flow (the "AQOfflineRenderTest" sample's steps): a file
// plays through an audio queue in offline mode (AudioQueueSetOfflineRenderFormat, one buffer of
// about a second, the queue's callback reading packets with AudioFileReadPackets, with packet
// descriptions and the magic cookie for a compressed file), each rendered buffer is handed to
// ExtAudioFileWrite, and the ExtAudioFile converts it from the render format (its client format:
// 32-bit float) to the capture file's data format (16-bit integer by default). At the end of the
// file the callback flushes and stops the queue; the loop writes that render and stops: every
// frame is in it. Ported to Linux by changing one import.
//
//   swift run AQOfflineRender IN.wav OUT.caf                 # OUT: .caf, .wav, .aiff or .m4a
//   options: --file-format int16|int24|float32|alac|aac (the capture file's samples or codec; default
//                             int16; ALAC into .caf or .m4a, AAC into .m4a, as Apple's sample writes them)
//            --file-rate HZ   (the capture file's rate: ExtAudioFile converts the rate too)
//            --async          (write with ExtAudioFileWriteAsync, primed first, as Apple's samples do)
//            --hold-after N   (after writing N frames, say "holding" on stderr and wait until killed: the
//                              tests kill it there and find no half-written OUT)
import AQExampleSupport   // Linux: command-line options and error messages of the examples.
import AudioQueueCompat
import Foundation

let kNumberBuffers = 1

// The state the queue's callback uses.
struct AQTestInfo {
    var mAudioFile: AudioFileID?
    var mDataFormat = AudioStreamBasicDescription()
    var mQueue: AudioQueueRef?
    var mBuffers = [AudioQueueBufferRef?](repeating: nil, count: kNumberBuffers)
    var mCurrentPacket: Int64 = 0
    var mNumPacketsToRead: UInt32 = 0
    var mPacketDescs: UnsafeMutablePointer<AudioStreamPacketDescription>?
    var mDone = false
    var mFlushed = false
}

// The playback callback: read the next packets, enqueue them; at the end of the file, stop.
func AQTestBufferCallback(_ inUserData: UnsafeMutableRawPointer?, _ inAQ: AudioQueueRef, _ inCompleteAQBuffer: AudioQueueBufferRef) {
    let info = inUserData!.assumingMemoryBound(to: AQTestInfo.self)
    if info.pointee.mDone { return }
    var numBytes: UInt32 = 0
    var nPackets = info.pointee.mNumPacketsToRead
    check(AudioFileReadPackets(info.pointee.mAudioFile!, false, &numBytes, info.pointee.mPacketDescs, info.pointee.mCurrentPacket,
                               &nPackets, inCompleteAQBuffer.pointee.mAudioData), "AudioFileReadPackets")
    if nPackets > 0 {
        inCompleteAQBuffer.pointee.mAudioDataByteSize = numBytes
        check(AudioQueueEnqueueBuffer(inAQ, inCompleteAQBuffer, info.pointee.mPacketDescs != nil ? nPackets : 0,
                                      info.pointee.mPacketDescs), "AudioQueueEnqueueBuffer")
        info.pointee.mCurrentPacket += Int64(nPackets)
    } else {
        // This ensures that we flush the queue when done -- ensures you get all the data out.
        if !info.pointee.mFlushed {
            check(AudioQueueFlush(inAQ), "AudioQueueFlush")
            info.pointee.mFlushed = true
        }
        check(AudioQueueStop(inAQ, false), "AudioQueueStop")
        info.pointee.mDone = true
    }
}

/// A packed interleaved linear PCM description.
func linearPCM(rate: Double, channels: UInt32, bits: UInt32, float: Bool, bigEndian: Bool) -> AudioStreamBasicDescription {
    var flags = kAudioFormatFlagIsPacked | (float ? kAudioFormatFlagIsFloat : kAudioFormatFlagIsSignedInteger)
    if bigEndian { flags |= kAudioFormatFlagIsBigEndian }
    return AudioStreamBasicDescription(mSampleRate: rate, mFormatID: kAudioFormatLinearPCM, mFormatFlags: flags,
                                       mBytesPerPacket: channels * bits / 8, mFramesPerPacket: 1,
                                       mBytesPerFrame: channels * bits / 8, mChannelsPerFrame: channels,
                                       mBitsPerChannel: bits, mReserved: 0)
}

// Linux: command-line options.
var arguments = ExampleArguments()
let fileSamples = arguments.option("--file-format") ?? "int16"
let fileRate = arguments.option("--file-rate").flatMap { Double($0) }
let holdAfter = arguments.option("--hold-after").flatMap { Int64($0) }
let useAsync = arguments.positional.contains("--async")
let paths = arguments.positional.filter { $0 != "--async" }
guard paths.count == 2, ["int16", "int24", "float32", "alac", "aac"].contains(fileSamples) else {
    exitWithMessage("usage: AQOfflineRender IN OUT.caf|.wav|.aiff|.m4a [--file-format int16|int24|float32|alac|aac] [--file-rate HZ] [--async] [--hold-after FRAMES]", code: 2)
}

let info = UnsafeMutablePointer<AQTestInfo>.allocate(capacity: 1)
info.initialize(to: AQTestInfo())

// Open the source and learn its format.
check(AudioFileOpenURL(URL(fileURLWithPath: paths[0]), kAudioFileReadPermission, 0, &info.pointee.mAudioFile), "AudioFileOpenURL")
var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
check(AudioFileGetProperty(info.pointee.mAudioFile!, kAudioFilePropertyDataFormat, &size, &info.pointee.mDataFormat),
      "AudioFileGetProperty(DataFormat)")

/// Apple's CalculateBytesForTime: a buffer for `seconds` of packets of at most `maxPacketSize`
/// bytes, kept between 16 and 64 KiB, and how many packets it takes.
func calculateBytesForTime(_ desc: AudioStreamBasicDescription, _ maxPacketSize: UInt32, _ seconds: Double) -> (bytes: UInt32, packets: UInt32) {
    let maxBufferSize: UInt32 = 0x10000, minBufferSize: UInt32 = 0x4000
    var size: UInt32
    if desc.mFramesPerPacket != 0 {
        size = UInt32(desc.mSampleRate / Double(desc.mFramesPerPacket) * seconds) * maxPacketSize
    } else {
        size = max(maxBufferSize, maxPacketSize)
    }
    if size > maxBufferSize && size > maxPacketSize { size = maxBufferSize } else if size < minBufferSize { size = minBufferSize }
    return (size, size / maxPacketSize)
}

// The queue and its buffer (about a second of audio, at most 64 KiB), enqueued once the queue has started.
check(AudioQueueNewOutput(&info.pointee.mDataFormat, AQTestBufferCallback, info, CFRunLoopGetCurrent(),
                          CFRunLoopMode.commonModes.rawValue, 0, &info.pointee.mQueue), "AudioQueueNewOutput")
let queue = info.pointee.mQueue!
var maxPacketSize: UInt32 = 0
size = UInt32(MemoryLayout<UInt32>.size)
check(AudioFileGetProperty(info.pointee.mAudioFile!, kAudioFilePropertyPacketSizeUpperBound, &size, &maxPacketSize),
      "AudioFileGetProperty(PacketSizeUpperBound)")
let (bufferByteSize, packetsToRead) = calculateBytesForTime(info.pointee.mDataFormat, maxPacketSize, 1.0)
info.pointee.mNumPacketsToRead = packetsToRead
let isFormatVBR = info.pointee.mDataFormat.mBytesPerPacket == 0 || info.pointee.mDataFormat.mFramesPerPacket == 0
if isFormatVBR {
    info.pointee.mPacketDescs = .allocate(capacity: Int(packetsToRead))
}
// The file's magic cookie (a compressed format's decoder configuration), if any, on the queue.
if AudioFileGetPropertyInfo(info.pointee.mAudioFile!, kAudioFilePropertyMagicCookieData, &size, nil) == noErr, size > 0 {
    let cookie = UnsafeMutableRawPointer.allocate(byteCount: Int(size), alignment: 1)
    check(AudioFileGetProperty(info.pointee.mAudioFile!, kAudioFilePropertyMagicCookieData, &size, cookie), "get cookie from file")
    check(AudioQueueSetProperty(queue, kAudioQueueProperty_MagicCookie, cookie, size), "set cookie on queue")
    cookie.deallocate()
}
for i in 0..<kNumberBuffers {
    check(AudioQueueAllocateBuffer(queue, bufferByteSize, &info.pointee.mBuffers[i]), "AudioQueueAllocateBuffer")
}

// The render format: 32-bit float, interleaved, at the source's rate and channel count.
let channels = info.pointee.mDataFormat.mChannelsPerFrame
var captureFormat = linearPCM(rate: info.pointee.mDataFormat.mSampleRate, channels: channels, bits: 32, float: true, bigEndian: false)
check(AudioQueueSetOfflineRenderFormat(queue, &captureFormat, nil), "AudioQueueSetOfflineRenderFormat")

// The capture file: its own data format; the render format is the ExtAudioFile's client format.
let outputURL = URL(fileURLWithPath: paths[1])
let isAIFF = ["aif", "aiff"].contains(outputURL.pathExtension.lowercased())
let outputType = outputURL.pathExtension.lowercased() == "caf" ? kAudioFileCAFType
    : outputURL.pathExtension.lowercased() == "m4a" ? kAudioFileM4AType
    : isAIFF ? (fileSamples == "float32" ? kAudioFileAIFCType : kAudioFileAIFFType) : kAudioFileWAVEType
let fileBits: UInt32 = fileSamples == "int16" ? 16 : fileSamples == "int24" ? 24 : 32
var dstFormat = linearPCM(rate: fileRate ?? captureFormat.mSampleRate, channels: channels, bits: fileBits,
                          float: fileSamples == "float32", bigEndian: isAIFF)
if fileSamples == "alac" || fileSamples == "aac" {
    // A compressed capture file: the codec's description (Apple's fills only these fields).
    dstFormat = AudioStreamBasicDescription()
    dstFormat.mSampleRate = fileRate ?? captureFormat.mSampleRate
    dstFormat.mFormatID = fileSamples == "alac" ? kAudioFormatAppleLossless : kAudioFormatMPEG4AAC
    dstFormat.mFormatFlags = fileSamples == "alac" ? kAppleLosslessFormatFlag_16BitSourceData : 0
    dstFormat.mChannelsPerFrame = channels
}
var captureFile: ExtAudioFileRef?
check(ExtAudioFileCreateWithURL(outputURL as CFURL, outputType, &dstFormat, nil, AudioFileFlags.eraseFile.rawValue, &captureFile),
      "ExtAudioFileCreateWithURL")
check(ExtAudioFileSetProperty(captureFile!, kExtAudioFileProperty_ClientDataFormat,
                              UInt32(MemoryLayout<AudioStreamBasicDescription>.size), &captureFormat),
      "ExtAudioFileSetProperty(ClientDataFormat)")
if useAsync { check(ExtAudioFileWriteAsync(captureFile!, 0, nil), "ExtAudioFileWriteAsync(prime)") }

// The capture buffer: half the size of the playback buffer (never pull faster than data is pushed).
let captureFrames = bufferByteSize / 2 / captureFormat.mBytesPerFrame
var captureBuffer: AudioQueueBufferRef?
check(AudioQueueAllocateBuffer(queue, captureFrames * captureFormat.mBytesPerFrame, &captureBuffer), "AudioQueueAllocateBuffer")
var captureABL = AudioBufferList()
captureABL.mNumberBuffers = 1
captureABL.mBuffers.mNumberChannels = captureFormat.mChannelsPerFrame
captureABL.mBuffers.mData = captureBuffer!.pointee.mAudioData

check(AudioQueueStart(queue, nil), "AudioQueueStart")
var ts = AudioTimeStamp()
ts.mFlags = .sampleTimeValid
ts.mSampleTime = 0
check(AudioQueueOfflineRender(queue, &ts, captureBuffer!, 0), "AudioQueueOfflineRender")   // once with 0 frames
// We need to enqueue a buffer after the queue has started.
AQTestBufferCallback(info, queue, info.pointee.mBuffers[0]!)

// Render until the callback has flushed the queue at the end of the file.
var written: Int64 = 0
while true {
    let request = captureFrames
    check(AudioQueueOfflineRender(queue, &ts, captureBuffer!, request), "AudioQueueOfflineRender")
    captureABL.mBuffers.mData = captureBuffer!.pointee.mAudioData
    captureABL.mBuffers.mDataByteSize = captureBuffer!.pointee.mAudioDataByteSize
    let writeFrames = captureABL.mBuffers.mDataByteSize / captureFormat.mBytesPerFrame
    if useAsync {
        check(ExtAudioFileWriteAsync(captureFile!, writeFrames, &captureABL), "ExtAudioFileWriteAsync")
    } else {
        check(ExtAudioFileWrite(captureFile!, writeFrames, &captureABL), "ExtAudioFileWrite")
    }
    written += Int64(writeFrames)
    ts.mSampleTime += Double(writeFrames)
    if let holdAfter, written >= holdAfter {
        // Linux: for the tests — stop here, mid-write, until killed.
        FileHandle.standardError.write(Data("holding after \(written) frames\n".utf8))
        while true { sleep(60) }
    }
    if info.pointee.mFlushed { break }
}

check(AudioQueueDispose(queue, true), "AudioQueueDispose")
check(AudioFileClose(info.pointee.mAudioFile!), "AudioFileClose")
check(ExtAudioFileDispose(captureFile!), "ExtAudioFileDispose")
print("rendered \(written) frames of \(paths[0]) offline and captured them in \(paths[1])")
