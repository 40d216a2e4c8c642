// AQRecorder: the "Recording Audio" chapter of Apple's Audio Queue Services Programming Guide
// (Listings 2-1 … 2-15), ported to Linux by changing one import. The C listings are kept as close
// as Swift allows: `inBuffer->mAudioData` becomes `inBuffer.pointee.mAudioData`, `&x` stays `&x`.
//
//   swift run AQRecorder OUT.aiff [--seconds 2] [--server NAME] [--connect PORT]... [--bits 16|24] [--rate 44100]
//                                 [--buffer-seconds 0.5] [--format pcm|aac|alac]
//
// It records the default JACK device's inputs (`in_1`, `in_2`; or the ports given with --connect)
// into a big-endian AIFF file at 44.1 kHz, as the guide does (the queue converts from the JACK
// server's rate). With --format aac (an .m4a file) or alac (.caf, or .m4a) the queue encodes, as
// the guide's Listing 2-8 notes for compressed formats: the callback writes packets with their
// descriptions, the magic cookie goes to the file before and after recording, and the queue's
// priming and remainder (kAudioConverterPrimeInfo) become the file's packet table, so the file
// holds exactly the frames recorded. Lines marked "Linux:" are the only additions.
import AQExampleSupport   // Linux: command-line options and error messages of the examples.
import AudioQueueCompat
import Foundation
import LockstepJACK      // Linux: only to connect the JACK input ports given with --connect.

// Listing 2-1  A custom structure for a recording audio queue
let kNumberBuffers = 3
struct AQRecorderState {
    var mDataFormat = AudioStreamBasicDescription()
    var mQueue: AudioQueueRef?
    var mBuffers = [AudioQueueBufferRef?](repeating: nil, count: kNumberBuffers)
    var mAudioFile: AudioFileID?
    var bufferByteSize: UInt32 = 0
    var mCurrentPacket: Int64 = 0
    var mIsRunning = false
}

// Listing 2-5  A recording audio queue callback function
func HandleInputBuffer(_ aqData: UnsafeMutableRawPointer?, _ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef,
                       _ inStartTime: UnsafePointer<AudioTimeStamp>, _ inNumPackets: UInt32,
                       _ inPacketDesc: UnsafePointer<AudioStreamPacketDescription>?) {
    let pAqData = aqData!.assumingMemoryBound(to: AQRecorderState.self)                   // 1
    var inNumPackets = inNumPackets
    if inNumPackets == 0 && pAqData.pointee.mDataFormat.mBytesPerPacket != 0 {           // 2
        inNumPackets = inBuffer.pointee.mAudioDataByteSize / pAqData.pointee.mDataFormat.mBytesPerPacket
    }
    if AudioFileWritePackets(pAqData.pointee.mAudioFile!, false, inBuffer.pointee.mAudioDataByteSize,   // 3
                             inPacketDesc, pAqData.pointee.mCurrentPacket, &inNumPackets,
                             inBuffer.pointee.mAudioData) == noErr {
        pAqData.pointee.mCurrentPacket += Int64(inNumPackets)                              // 4
    }
    if !pAqData.pointee.mIsRunning { return }                                              // 5
    AudioQueueEnqueueBuffer(pAqData.pointee.mQueue!, inBuffer, 0, nil)                    // 6
}

// Listing 2-6  Deriving a recording audio queue buffer size
func DeriveBufferSize(_ audioQueue: AudioQueueRef, _ ASBDescription: inout AudioStreamBasicDescription,
                      _ seconds: Float64, _ outBufferSize: inout UInt32) {
    let maxBufferSize = 0x50000                                                            // 5
    var maxPacketSize = ASBDescription.mBytesPerPacket                                     // 6
    if maxPacketSize == 0 {                                                                // 7
        var maxVBRPacketSize = UInt32(MemoryLayout.size(ofValue: maxPacketSize))
        AudioQueueGetProperty(audioQueue, kAudioQueueProperty_MaximumOutputPacketSize, &maxPacketSize, &maxVBRPacketSize)
    }
    let numBytesForTime = ASBDescription.mSampleRate * Float64(maxPacketSize) * seconds   // 8
    outBufferSize = UInt32(numBytesForTime < Float64(maxBufferSize) ? numBytesForTime : Float64(maxBufferSize))  // 9
    outBufferSize -= outBufferSize % max(ASBDescription.mBytesPerPacket, 1)              // Linux: whole packets
}

// Listing 2-7  Setting a magic cookie for an audio file
func SetMagicCookieForFile(_ inQueue: AudioQueueRef, _ inFile: AudioFileID) -> OSStatus {
    var result = noErr                                                                     // 3
    var cookieSize: UInt32 = 0                                                             // 4
    if AudioQueueGetPropertySize(inQueue, kAudioQueueProperty_MagicCookie, &cookieSize) == noErr {   // 5
        let magicCookie = UnsafeMutableRawPointer.allocate(byteCount: Int(cookieSize), alignment: 1)  // 6
        if AudioQueueGetProperty(inQueue, kAudioQueueProperty_MagicCookie, magicCookie, &cookieSize) == noErr {  // 7
            result = AudioFileSetProperty(inFile, kAudioFilePropertyMagicCookieData, cookieSize, magicCookie)      // 8
        }
        magicCookie.deallocate()                                                           // 9
    }
    return result                                                                          // 10
}

// The packet table of a compressed recording: the priming frames before recording starts (an
// MPEG-4 file carries them from its first packet), priming and remainder once it has stopped.
func SetPacketTableForFile(_ inQueue: AudioQueueRef, _ inFile: AudioFileID, _ packets: Int64, _ framesPerPacket: UInt32) -> OSStatus {
    var primeInfo = AudioConverterPrimeInfo()
    var size = UInt32(MemoryLayout<AudioConverterPrimeInfo>.size)
    let result = AudioQueueGetProperty(inQueue, kAudioConverterPrimeInfo, &primeInfo, &size)
    if result != noErr { return result }
    let frames = packets * Int64(framesPerPacket) - Int64(primeInfo.leadingFrames) - Int64(primeInfo.trailingFrames)
    var table = AudioFilePacketTableInfo(mNumberValidFrames: max(0, frames), mPrimingFrames: Int32(primeInfo.leadingFrames),
                                         mRemainderFrames: Int32(primeInfo.trailingFrames))
    return AudioFileSetProperty(inFile, kAudioFilePropertyPacketTableInfo, UInt32(MemoryLayout<AudioFilePacketTableInfo>.size), &table)
}

// Linux: command-line options.
var arguments = ExampleArguments()
let seconds = Double(arguments.option("--seconds") ?? "2") ?? 2
let server = arguments.option("--server")
let bits = UInt32(arguments.option("--bits") ?? "16") ?? 16
let rate = Double(arguments.option("--rate") ?? "44100") ?? 44100
let bufferSeconds = Double(arguments.option("--buffer-seconds") ?? "0.5") ?? 0.5   // the listing's 0.5 s
let formatName = arguments.option("--format") ?? "pcm"
var connections: [String] = []
while let port = arguments.option("--connect") { connections.append(port) }
guard let filePath = arguments.positional.first, ["pcm", "aac", "alac"].contains(formatName) else {
    exitWithMessage("usage: AQRecorder OUT.aiff|.m4a|.caf [--seconds S] [--server NAME] [--connect PORT]... [--bits 16|24] [--rate HZ] [--buffer-seconds S] [--format pcm|aac|alac]", code: 2)
}
// Linux: the default device is a JACK client; name it and pick the server.
AudioQueueSetDefaultDevice(.jack(JACKDevice.Options(clientName: "AQRecorder", serverName: server, channelCount: 2,
                                                    inputChannelCount: 2, connectToPhysicalOutputs: connections.isEmpty)))

// Listing 2-8  Specifying an audio queue's audio data format
let aqData = UnsafeMutablePointer<AQRecorderState>.allocate(capacity: 1)                   // 1
aqData.initialize(to: AQRecorderState())   // Linux: on the heap, so its address is stable as in C
aqData.pointee.mDataFormat.mFormatID = kAudioFormatLinearPCM                                       // 2
aqData.pointee.mDataFormat.mSampleRate = rate  // 44100.0                                          // 3
aqData.pointee.mDataFormat.mChannelsPerFrame = 2                                                   // 4
aqData.pointee.mDataFormat.mBitsPerChannel = bits                                                  // 5
aqData.pointee.mDataFormat.mBytesPerPacket = aqData.pointee.mDataFormat.mChannelsPerFrame * bits / 8       // 6
aqData.pointee.mDataFormat.mBytesPerFrame = aqData.pointee.mDataFormat.mBytesPerPacket
aqData.pointee.mDataFormat.mFramesPerPacket = 1                                                    // 7
var fileType = kAudioFileAIFFType                                                          // 8
aqData.pointee.mDataFormat.mFormatFlags = kLinearPCMFormatFlagIsBigEndian                          // 9
    | kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked
if formatName != "pcm" {
    // A compressed format: its ID, rate and channels; the queue fills in the rest (Listing 2-10).
    aqData.pointee.mDataFormat = AudioStreamBasicDescription()
    aqData.pointee.mDataFormat.mFormatID = formatName == "aac" ? kAudioFormatMPEG4AAC : kAudioFormatAppleLossless
    aqData.pointee.mDataFormat.mSampleRate = rate
    aqData.pointee.mDataFormat.mChannelsPerFrame = 2
    if formatName == "alac" {
        aqData.pointee.mDataFormat.mFormatFlags = bits == 24 ? kAppleLosslessFormatFlag_24BitSourceData : kAppleLosslessFormatFlag_16BitSourceData
    }
    fileType = formatName == "aac" || filePath.hasSuffix(".m4a") ? kAudioFileM4AType : kAudioFileCAFType
}

// Linux: connect the JACK ports given with --connect to the device's inputs.
do {
    let engine = try AudioQueueCompatDefaultEngine()
    if let device = engine.device as? JACKDevice {
        for (index, port) in connections.enumerated() {
            try device.connect(port, to: device.inputPortNames[index % device.inputPortNames.count])
        }
    }
} catch {
    exitWithMessage("\(error)")
}

// Linux: prints the JACK frame time at which the stop is asked for (tests compare the take's end with it).
func printStopRequest(_ queue: AudioQueueRef) {
    var now = AudioTimeStamp()
    guard AudioQueueDeviceGetCurrentTime(queue, &now) == noErr, now.mFlags.contains(.sampleTimeValid),
          let device = (try? AudioQueueCompatDefaultEngine())?.device as? JACKDevice else { return }
    print("stop requested at JACK frame \(device.jackFrameTime(forSampleTime: Int64(now.mSampleTime)))")
}

// Listing 2-9  Creating a recording audio queue
check(AudioQueueNewInput(&aqData.pointee.mDataFormat, HandleInputBuffer, aqData, nil, kCFRunLoopCommonModes, 0, &aqData.pointee.mQueue),
      "AudioQueueNewInput")

// Listing 2-10  Getting the audio format from an audio queue
var dataFormatSize = UInt32(MemoryLayout.size(ofValue: aqData.pointee.mDataFormat))                // 1
check(AudioQueueGetProperty(aqData.pointee.mQueue!, kAudioQueueProperty_StreamDescription, &aqData.pointee.mDataFormat, &dataFormatSize),
      "AudioQueueGetProperty(StreamDescription)")

// Listing 2-11  Creating an audio file for recording
let audioFileURL = CFURLCreateFromFileSystemRepresentation(nil, filePath, strlen(filePath), false)!   // 1
check(AudioFileCreateWithURL(audioFileURL, fileType, &aqData.pointee.mDataFormat, kAudioFileFlags_EraseFile, &aqData.pointee.mAudioFile),
      "AudioFileCreateWithURL")                                                                        // 6

// Listing 2-12  Setting an audio queue buffer size
DeriveBufferSize(aqData.pointee.mQueue!, &aqData.pointee.mDataFormat, bufferSeconds, &aqData.pointee.bufferByteSize)

// Listing 2-13  Preparing a set of audio queue buffers
for i in 0..<kNumberBuffers {                                                              // 1
    check(AudioQueueAllocateBuffer(aqData.pointee.mQueue!, aqData.pointee.bufferByteSize, &aqData.pointee.mBuffers[i]), "AudioQueueAllocateBuffer")
    check(AudioQueueEnqueueBuffer(aqData.pointee.mQueue!, aqData.pointee.mBuffers[i]!, 0, nil), "AudioQueueEnqueueBuffer")
}
check(SetMagicCookieForFile(aqData.pointee.mQueue!, aqData.pointee.mAudioFile!), "SetMagicCookieForFile")
let isCompressed = aqData.pointee.mDataFormat.mFormatID != kAudioFormatLinearPCM
if isCompressed {
    check(SetPacketTableForFile(aqData.pointee.mQueue!, aqData.pointee.mAudioFile!, 0, aqData.pointee.mDataFormat.mFramesPerPacket),
          "SetPacketTableForFile")
}

// Listing 2-14  Recording audio
aqData.pointee.mCurrentPacket = 0                                                                  // 1
aqData.pointee.mIsRunning = true                                                                   // 2
check(AudioQueueStart(aqData.pointee.mQueue!, nil), "AudioQueueStart")                             // 3
Thread.sleep(forTimeInterval: seconds)   // Wait, on user interface thread, until user stops the recording
printStopRequest(aqData.pointee.mQueue!)  // Linux: says when the stop was asked for, on JACK's clock
check(AudioQueueStop(aqData.pointee.mQueue!, true), "AudioQueueStop")                              // 6
aqData.pointee.mIsRunning = false                                                                  // 9

// Listing 2-15  Cleaning up after recording
check(SetMagicCookieForFile(aqData.pointee.mQueue!, aqData.pointee.mAudioFile!), "SetMagicCookieForFile")
if isCompressed {
    check(SetPacketTableForFile(aqData.pointee.mQueue!, aqData.pointee.mAudioFile!, aqData.pointee.mCurrentPacket,
                                aqData.pointee.mDataFormat.mFramesPerPacket), "SetPacketTableForFile")
}
check(AudioQueueDispose(aqData.pointee.mQueue!, true), "AudioQueueDispose")                        // 1
check(AudioFileClose(aqData.pointee.mAudioFile!), "AudioFileClose")                                // 4
if isCompressed {
    print("recorded \(aqData.pointee.mCurrentPacket) packets (\(formatName), \(aqData.pointee.mDataFormat.mChannelsPerFrame) ch, \(Int(aqData.pointee.mDataFormat.mSampleRate)) Hz) to \(filePath)")
} else {
    print("recorded \(aqData.pointee.mCurrentPacket) packets (\(aqData.pointee.mDataFormat.mChannelsPerFrame) ch, \(aqData.pointee.mDataFormat.mBitsPerChannel)-bit big-endian, \(Int(aqData.pointee.mDataFormat.mSampleRate)) Hz) to \(filePath)")
}
