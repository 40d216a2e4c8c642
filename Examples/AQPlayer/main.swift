// AQPlayer: the playback callback of Apple's Core Audio overview ("Creating an Audio Queue
// Object": myAQStruct, AQTestBufferCallback — read packets, enqueue, stop at the end) ported to
// Linux by changing one import, plus Apple's offline-render loop (AudioQueueSetOfflineRenderFormat,
// AudioQueueOfflineRender) to bounce the file without a sound card.
//
//   swift run AQPlayer IN.aiff                              # live, through JACK
//   swift run AQPlayer IN.aiff --offline OUT.wav           # offline render, as fast as the CPU allows
//   swift run AQPlayer IN.mp3|.m4a|.caf                    # compressed: packet descriptions, cookie, trims
//   options: --server NAME (JACK server), --volume 0…1, --packets N (packets per buffer, as players
//            that size buffers in packets do; default half a second), --connect PORT (also connect
//            output N to the N-th such JACK input port)
import AQExampleSupport   // Linux: command-line options and error messages of the examples.
import AudioQueueCompat
import Foundation
import LockstepJACK      // Linux: only to connect the outputs to the JACK ports given with --connect.

let kNumberBuffers = 3
// Create a data structure to manage information needed by the audio queue
struct myAQStruct {
    var mAudioFile: AudioFileID?
    var mDataFormat = AudioStreamBasicDescription()
    var mQueue: AudioQueueRef?
    var mBuffers = [AudioQueueBufferRef?](repeating: nil, count: kNumberBuffers)
    var mCurrentPacket: Int64 = 0
    var mNumPacketsToRead: UInt32 = 0
    var mPacketDescs: UnsafeMutablePointer<AudioStreamPacketDescription>?
    var mPacketTable = AudioFilePacketTableInfo()   // priming and remainder frames of compressed files
    var mFramesPerPacket: Int64 = 1
    var mDone = false
    var mIsRunning = false    // set by the is-running listener
    var mHasStarted = false   // the listener has seen it run (it starts a moment after AudioQueueStart)
}

// Define a playback audio queue callback function
func AQTestBufferCallback(_ inUserData: UnsafeMutableRawPointer?, _ inAQ: AudioQueueRef,
                          _ inCompleteAQBuffer: AudioQueueBufferRef) {
    let myInfo = inUserData!.assumingMemoryBound(to: myAQStruct.self)
    if myInfo.pointee.mDone { return }
    var numBytes: UInt32 = 0
    var nPackets = myInfo.pointee.mNumPacketsToRead
    AudioFileReadPackets(myInfo.pointee.mAudioFile!, false, &numBytes, myInfo.pointee.mPacketDescs,
                         myInfo.pointee.mCurrentPacket, &nPackets, inCompleteAQBuffer.pointee.mAudioData)
    if nPackets > 0 {
        inCompleteAQBuffer.pointee.mAudioDataByteSize = numBytes
        // Compressed files: trim the encoder's priming and remainder frames (the packet table).
        let table = myInfo.pointee.mPacketTable
        let firstFrame = myInfo.pointee.mCurrentPacket * myInfo.pointee.mFramesPerPacket
        let endFrame = firstFrame + Int64(nPackets) * myInfo.pointee.mFramesPerPacket
        let validEnd = Int64(table.mPrimingFrames) + table.mNumberValidFrames
        let trimStart = UInt32(max(0, min(Int64(table.mPrimingFrames), endFrame) - firstFrame))
        let trimEnd = table.mNumberValidFrames > 0 ? UInt32(max(0, endFrame - max(validEnd, firstFrame))) : 0
        AudioQueueEnqueueBufferWithParameters(inAQ, inCompleteAQBuffer, myInfo.pointee.mPacketDescs != nil ? nPackets : 0,
                                              myInfo.pointee.mPacketDescs, trimStart, trimEnd, 0, nil, nil, nil)
        myInfo.pointee.mCurrentPacket += Int64(nPackets)
    } else {
        AudioQueueStop(myInfo.pointee.mQueue!, false)
        myInfo.pointee.mDone = true
    }
}

// Tell the main loop when the queue has really stopped (kAudioQueueProperty_IsRunning).
func IsRunningChanged(_ inUserData: UnsafeMutableRawPointer?, _ inAQ: AudioQueueRef, _ inID: AudioQueuePropertyID) {
    let myInfo = inUserData!.assumingMemoryBound(to: myAQStruct.self)
    var running: UInt32 = 0
    var size = UInt32(MemoryLayout<UInt32>.size)
    AudioQueueGetProperty(inAQ, kAudioQueueProperty_IsRunning, &running, &size)
    myInfo.pointee.mIsRunning = running != 0
    if running != 0 { myInfo.pointee.mHasStarted = true }
}

/// Whether the queue has played everything: the callback stopped it and it has really stopped.
func finished(_ myInfo: UnsafeMutablePointer<myAQStruct>) -> Bool {
    myInfo.pointee.mDone && myInfo.pointee.mHasStarted && !myInfo.pointee.mIsRunning
}

// Linux: command-line options.
var arguments = ExampleArguments()
let offlinePath = arguments.option("--offline")
let server = arguments.option("--server")
let volume = Float32(arguments.option("--volume") ?? "1") ?? 1
let packetsPerBuffer = arguments.option("--packets").flatMap { UInt32($0) }
var connections: [String] = []
while let port = arguments.option("--connect") { connections.append(port) }
guard let inputPath = arguments.positional.first else {
    exitWithMessage("usage: AQPlayer IN [--offline OUT.wav|.aiff|.caf] [--server NAME] [--volume V] [--packets N] [--connect PORT]...", code: 2)
}
if let server { setenv("JACK_DEFAULT_SERVER", server, 1) }   // Linux: which JACK server is "the device"

let myInfo = UnsafeMutablePointer<myAQStruct>.allocate(capacity: 1)
myInfo.initialize(to: myAQStruct())

// Open the file and learn its format.
check(AudioFileOpenURL(URL(fileURLWithPath: inputPath), kAudioFileReadPermission, 0, &myInfo.pointee.mAudioFile), "AudioFileOpenURL")
var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
check(AudioFileGetProperty(myInfo.pointee.mAudioFile!, kAudioFilePropertyDataFormat, &size, &myInfo.pointee.mDataFormat),
      "AudioFileGetProperty(DataFormat)")
var packetCount: UInt64 = 0
size = UInt32(MemoryLayout<UInt64>.size)
check(AudioFileGetProperty(myInfo.pointee.mAudioFile!, kAudioFilePropertyAudioDataPacketCount, &size, &packetCount),
      "AudioFileGetProperty(AudioDataPacketCount)")
var maxPacketSize: UInt32 = 0
size = UInt32(MemoryLayout<UInt32>.size)
check(AudioFileGetProperty(myInfo.pointee.mAudioFile!, kAudioFilePropertyPacketSizeUpperBound, &size, &maxPacketSize),
      "AudioFileGetProperty(PacketSizeUpperBound)")

// Compressed files: packet descriptions for VBR data, the magic cookie, the packet table.
let isFormatVBR = myInfo.pointee.mDataFormat.mBytesPerPacket == 0 || myInfo.pointee.mDataFormat.mFramesPerPacket == 0
myInfo.pointee.mFramesPerPacket = Int64(max(1, myInfo.pointee.mDataFormat.mFramesPerPacket))
size = UInt32(MemoryLayout<AudioFilePacketTableInfo>.size)
if AudioFileGetProperty(myInfo.pointee.mAudioFile!, kAudioFilePropertyPacketTableInfo, &size, &myInfo.pointee.mPacketTable) != noErr {
    myInfo.pointee.mPacketTable = AudioFilePacketTableInfo()   // linear PCM has none
}

// Instantiate an audio queue object
check(AudioQueueNewOutput(&myInfo.pointee.mDataFormat, AQTestBufferCallback, myInfo, CFRunLoopGetCurrent(),
                          kCFRunLoopCommonModes, 0, &myInfo.pointee.mQueue), "AudioQueueNewOutput")
let queue = myInfo.pointee.mQueue!
check(AudioQueueAddPropertyListener(queue, kAudioQueueProperty_IsRunning, IsRunningChanged, myInfo),
      "AudioQueueAddPropertyListener")
// Copy the magic cookie from the file to the queue, as Apple's players do.
var cookieSize: UInt32 = 0
if AudioFileGetPropertyInfo(myInfo.pointee.mAudioFile!, kAudioFilePropertyMagicCookieData, &cookieSize, nil) == noErr, cookieSize > 0 {
    var cookie = [UInt8](repeating: 0, count: Int(cookieSize))
    check(AudioFileGetProperty(myInfo.pointee.mAudioFile!, kAudioFilePropertyMagicCookieData, &cookieSize, &cookie), "AudioFileGetProperty(MagicCookieData)")
    check(AudioQueueSetProperty(queue, kAudioQueueProperty_MagicCookie, &cookie, cookieSize), "AudioQueueSetProperty(MagicCookie)")
}

// Buffers of half a second (or --packets packets); prime them by calling the callback, as Apple's samples do.
let halfSecond = UInt32(max(1, myInfo.pointee.mDataFormat.mSampleRate / 2 / Double(myInfo.pointee.mFramesPerPacket)))
let bufferByteSize = (packetsPerBuffer ?? halfSecond) * maxPacketSize
myInfo.pointee.mNumPacketsToRead = bufferByteSize / maxPacketSize
if isFormatVBR {
    myInfo.pointee.mPacketDescs = .allocate(capacity: Int(myInfo.pointee.mNumPacketsToRead))
}
for i in 0..<kNumberBuffers {
    check(AudioQueueAllocateBuffer(queue, bufferByteSize, &myInfo.pointee.mBuffers[i]), "AudioQueueAllocateBuffer")
    AQTestBufferCallback(myInfo, queue, myInfo.pointee.mBuffers[i]!)
}
// Controlling Audio Queue playback level
check(AudioQueueSetParameter(queue, kAudioQueueParam_Volume, volume), "AudioQueueSetParameter")

if let offlinePath {
    // Offline: render in the file's own format (byte order as the output type needs); a
    // compressed file renders as 32-bit float at its rate.
    var captureFormat = myInfo.pointee.mDataFormat
    if captureFormat.mFormatID != kAudioFormatLinearPCM {
        let channels = captureFormat.mChannelsPerFrame
        captureFormat = AudioStreamBasicDescription(mSampleRate: captureFormat.mSampleRate, mFormatID: kAudioFormatLinearPCM,
                                                    mFormatFlags: kAudioFormatFlagsNativeFloatPacked, mBytesPerPacket: 4 * channels,
                                                    mFramesPerPacket: 1, mBytesPerFrame: 4 * channels, mChannelsPerFrame: channels,
                                                    mBitsPerChannel: 32, mReserved: 0)
    }
    let outputType: AudioFileTypeID
    switch URL(fileURLWithPath: offlinePath).pathExtension.lowercased() {
    case "aif", "aiff":
        outputType = captureFormat.mFormatFlags & kAudioFormatFlagIsFloat != 0 ? kAudioFileAIFCType : kAudioFileAIFFType
        captureFormat.mFormatFlags |= kAudioFormatFlagIsBigEndian
    case "caf": outputType = kAudioFileCAFType
    default:
        outputType = kAudioFileWAVEType
        captureFormat.mFormatFlags &= ~kAudioFormatFlagIsBigEndian
    }
    check(AudioQueueSetOfflineRenderFormat(queue, &captureFormat, nil), "AudioQueueSetOfflineRenderFormat")
    var outputFile: AudioFileID?
    check(AudioFileCreateWithURL(URL(fileURLWithPath: offlinePath), outputType, &captureFormat, kAudioFileFlags_EraseFile,
                                 &outputFile), "AudioFileCreateWithURL")
    check(AudioQueueStart(queue, nil), "AudioQueueStart")
    let framesPerRender: UInt32 = 4096
    var captureBuffer: AudioQueueBufferRef?
    check(AudioQueueAllocateBuffer(queue, framesPerRender * captureFormat.mBytesPerFrame, &captureBuffer), "AudioQueueAllocateBuffer")
    var ts = AudioTimeStamp()
    ts.mFlags = .sampleTimeValid
    ts.mSampleTime = 0
    check(AudioQueueOfflineRender(queue, &ts, captureBuffer!, 0), "AudioQueueOfflineRender")   // once with 0 frames
    var written: Int64 = 0
    // The frames to keep: a linear PCM file's packets, a compressed file's valid frames.
    let totalFrames = myInfo.pointee.mPacketTable.mNumberValidFrames > 0 ? myInfo.pointee.mPacketTable.mNumberValidFrames : Int64(packetCount)
    // Render until the callback has stopped the queue and it has played out; keep exactly the
    // source's length (the last render ends in silence after it).
    while written < totalFrames {
        check(AudioQueueOfflineRender(queue, &ts, captureBuffer!, framesPerRender), "AudioQueueOfflineRender")
        var packets = UInt32(min(Int64(framesPerRender), totalFrames - written))
        check(AudioFileWritePackets(outputFile!, false, packets * captureFormat.mBytesPerFrame, nil, written, &packets,
                                    captureBuffer!.pointee.mAudioData), "AudioFileWritePackets")
        written += Int64(packets)
        ts.mSampleTime += Double(framesPerRender)
        if finished(myInfo) { break }
    }
    check(AudioFileClose(outputFile!), "AudioFileClose")
    print("rendered \(written) frames of \(inputPath) offline to \(offlinePath)")
} else {
    // Linux: connect the outputs to the JACK ports given with --connect.
    do {
        if !connections.isEmpty, let device = try AudioQueueCompatDefaultEngine().device as? JACKDevice {
            for (index, port) in connections.enumerated() {
                try device.connect(device.outputPortNames[index % device.outputPortNames.count], to: port)
            }
        }
    } catch {
        exitWithMessage("\(error)")
    }
    check(AudioQueueStart(queue, nil), "AudioQueueStart")
    repeat {
        CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.05, false)
    } while !finished(myInfo)
    print("played \(myInfo.pointee.mCurrentPacket) packets of \(inputPath)")
    if isFormatVBR || myInfo.pointee.mFramesPerPacket > 1 {
        print("played \(myInfo.pointee.mPacketTable.mNumberValidFrames) frames of \(inputPath)")
    }
}
check(AudioQueueDispose(queue, true), "AudioQueueDispose")
check(AudioFileClose(myInfo.pointee.mAudioFile!), "AudioFileClose")
