// AQSimultaneous: "Playing Multiple Sounds Simultaneously" from Apple's Core Audio overview —
// "create one playback audio queue object for each sound. For each audio queue, schedule the first
// buffer of audio to start at the same time using the AudioQueueEnqueueBufferWithParameters
// function" — ported to Linux by changing one import.
//
//   swift run AQSimultaneous A.wav B.aiff C.caf [--server NAME]          # live, through JACK
//   swift run AQSimultaneous A.wav B.aiff C.caf --offline MIX.wav        # the mix, rendered offline
//   options: --at FRAMES — the queue time of every first buffer (default 0); --lead FRAMES — how
//   far ahead of the device's current time the queues start (default 4800, 100 ms at 48 kHz)
//
// Every queue starts at one device time (AudioQueueDeviceGetNearestStartTime) and every first
// buffer carries one queue time, so the sounds' first frames land on the same sample. Lines marked
// "Linux:" choose the device and, offline, drive its clock.
import AQExampleSupport   // Linux: command-line options and error messages of the examples.
import AudioQueueCompat
import Foundation
import Lockstep        // Linux: only for the offline device of --offline,
import LockstepFiles   // and its rate converter.

let kNumberBuffers = 3
struct Sound {
    var mAudioFile: AudioFileID?
    var mDataFormat = AudioStreamBasicDescription()
    var mQueue: AudioQueueRef?
    var mBuffers = [AudioQueueBufferRef?](repeating: nil, count: kNumberBuffers)
    var mCurrentPacket: Int64 = 0
    var mNumPacketsToRead: UInt32 = 0
    var mDone = false
    var mIsRunning = false
    var mHasStarted = false   // the listener has seen it run (it starts a moment after AudioQueueStart)
    var mFirstStartTime = AudioTimeStamp()   // when the first buffer plays, in queue time
}

/// Reads the next packets into `inBuffer` and enqueues it — the first buffer with its start time.
func FillAndEnqueue(_ sound: UnsafeMutablePointer<Sound>, _ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef) {
    if sound.pointee.mDone { return }
    var numBytes: UInt32 = 0
    var nPackets = sound.pointee.mNumPacketsToRead
    AudioFileReadPackets(sound.pointee.mAudioFile!, false, &numBytes, nil, sound.pointee.mCurrentPacket, &nPackets,
                         inBuffer.pointee.mAudioData)
    guard nPackets > 0 else {
        AudioQueueStop(inAQ, false)
        sound.pointee.mDone = true
        return
    }
    inBuffer.pointee.mAudioDataByteSize = numBytes
    if sound.pointee.mCurrentPacket == 0 {
        var actual = AudioTimeStamp()
        AudioQueueEnqueueBufferWithParameters(inAQ, inBuffer, 0, nil, 0, 0, 0, nil, &sound.pointee.mFirstStartTime, &actual)
    } else {
        AudioQueueEnqueueBuffer(inAQ, inBuffer, 0, nil)
    }
    sound.pointee.mCurrentPacket += Int64(nPackets)
}

func OutputCallback(_ inUserData: UnsafeMutableRawPointer?, _ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef) {
    FillAndEnqueue(inUserData!.assumingMemoryBound(to: Sound.self), inAQ, inBuffer)
}

func IsRunningChanged(_ inUserData: UnsafeMutableRawPointer?, _ inAQ: AudioQueueRef, _ inID: AudioQueuePropertyID) {
    var running: UInt32 = 0
    var size = UInt32(MemoryLayout<UInt32>.size)
    AudioQueueGetProperty(inAQ, kAudioQueueProperty_IsRunning, &running, &size)
    inUserData!.assumingMemoryBound(to: Sound.self).pointee.mIsRunning = running != 0
    if running != 0 { inUserData!.assumingMemoryBound(to: Sound.self).pointee.mHasStarted = true }
}

// Linux: command-line options and the device.
var arguments = ExampleArguments()
let offlinePath = arguments.option("--offline")
let firstBufferTime = Double(arguments.option("--at") ?? "0") ?? 0
let lead = Double(arguments.option("--lead") ?? "4800") ?? 4800
if let server = arguments.option("--server") { setenv("JACK_DEFAULT_SERVER", server, 1) }
guard !arguments.positional.isEmpty else {
    exitWithMessage("usage: AQSimultaneous FILE... [--offline MIX.wav] [--server NAME] [--at FRAMES]", code: 2)
}
let mixFormat = StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32)
var offlineDevice: OfflineDevice?
if offlinePath != nil {
    do {
        let device = try OfflineDevice(format: mixFormat, maximumFramesPerRender: 1024, name: "mix")
        AudioQueueSetDefaultDevice(.engine(try Engine(device: device, rateConverter: SoxrRateConverter.factory)))
        offlineDevice = device
    } catch {
        exitWithMessage("\(error)")
    }
}

// One playback audio queue object for each sound.
var sounds: [UnsafeMutablePointer<Sound>] = []
for path in arguments.positional {
    let sound = UnsafeMutablePointer<Sound>.allocate(capacity: 1)
    sound.initialize(to: Sound())
    check(AudioFileOpenURL(URL(fileURLWithPath: path), kAudioFileReadPermission, 0, &sound.pointee.mAudioFile), "AudioFileOpenURL(\(path))")
    var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
    check(AudioFileGetProperty(sound.pointee.mAudioFile!, kAudioFilePropertyDataFormat, &size, &sound.pointee.mDataFormat),
          "AudioFileGetProperty(DataFormat)")
    check(AudioQueueNewOutput(&sound.pointee.mDataFormat, OutputCallback, sound, nil, nil, 0, &sound.pointee.mQueue), "AudioQueueNewOutput")
    check(AudioQueueAddPropertyListener(sound.pointee.mQueue!, kAudioQueueProperty_IsRunning, IsRunningChanged, sound),
          "AudioQueueAddPropertyListener")
    sound.pointee.mFirstStartTime.mSampleTime = firstBufferTime
    sound.pointee.mFirstStartTime.mFlags = .sampleTimeValid
    let bytesPerPacket = sound.pointee.mDataFormat.mBytesPerPacket
    sound.pointee.mNumPacketsToRead = UInt32(sound.pointee.mDataFormat.mSampleRate / 4)
    for i in 0..<kNumberBuffers {
        check(AudioQueueAllocateBuffer(sound.pointee.mQueue!, sound.pointee.mNumPacketsToRead * bytesPerPacket, &sound.pointee.mBuffers[i]),
              "AudioQueueAllocateBuffer")
        FillAndEnqueue(sound, sound.pointee.mQueue!, sound.pointee.mBuffers[i]!)
    }
    sounds.append(sound)
}

// One device start time for all: now plus the lead, on a frame the device can honour exactly.
var now = AudioTimeStamp()
check(AudioQueueDeviceGetCurrentTime(sounds[0].pointee.mQueue!, &now), "AudioQueueDeviceGetCurrentTime")
var startTime = AudioTimeStamp()
startTime.mSampleTime = now.mSampleTime + (offlineDevice == nil ? lead : 0)
startTime.mFlags = .sampleTimeValid
check(AudioQueueDeviceGetNearestStartTime(sounds[0].pointee.mQueue!, &startTime, 0), "AudioQueueDeviceGetNearestStartTime")
for sound in sounds { check(AudioQueueStart(sound.pointee.mQueue!, &startTime), "AudioQueueStart") }
print("started \(sounds.count) queues at device sample \(Int64(startTime.mSampleTime)); first buffers at queue sample \(Int64(firstBufferTime))")

func finished(_ sounds: [UnsafeMutablePointer<Sound>]) -> Bool {
    sounds.allSatisfy { $0.pointee.mDone && $0.pointee.mHasStarted && !$0.pointee.mIsRunning }
}
if let device = offlineDevice, let offlinePath {
    // Linux: render the shared offline device until every queue has played out, into a file.
    var mixDescription = AudioStreamBasicDescription(
        mSampleRate: 48000, mFormatID: kAudioFormatLinearPCM, mFormatFlags: kAudioFormatFlagsNativeFloatPacked,
        mBytesPerPacket: 8, mFramesPerPacket: 1, mBytesPerFrame: 8, mChannelsPerFrame: 2, mBitsPerChannel: 32, mReserved: 0)
    var mixFile: AudioFileID?
    check(AudioFileCreateWithURL(URL(fileURLWithPath: offlinePath), kAudioFileWAVEType, &mixDescription, kAudioFileFlags_EraseFile, &mixFile),
          "AudioFileCreateWithURL")
    var block = [Float](repeating: 0, count: 1024 * 2)
    var written: Int64 = 0
    repeat {
        block.withUnsafeMutableBytes { _ = try? device.render(frames: 1024, into: $0) }
        var packets: UInt32 = 1024
        block.withUnsafeBytes { check(AudioFileWritePackets(mixFile!, false, 1024 * 8, nil, written, &packets, $0.baseAddress!), "AudioFileWritePackets") }
        written += 1024
    } while !finished(sounds)
    check(AudioFileClose(mixFile!), "AudioFileClose")
    print("rendered \(written) frames of the mix to \(offlinePath)")
} else {
    while !finished(sounds) { CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.05, false) }
    print("played \(sounds.count) sounds")
}
for sound in sounds {
    check(AudioQueueDispose(sound.pointee.mQueue!, true), "AudioQueueDispose")
    check(AudioFileClose(sound.pointee.mAudioFile!), "AudioFileClose")
}
