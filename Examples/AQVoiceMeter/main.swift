// AQVoiceMeter: the "Recording a voice audio in iPhone" tutorial (an AudioRecorder with peak and
// average power in dB, recording to an AIFF file) ported to Linux by changing one import.
//
//   swift run AQVoiceMeter OUT.aiff [--seconds 3] [--server NAME]      # live, JACK input in_1
//   swift run AQVoiceMeter OUT.aiff --sine 441 [--seconds 1]           # offline, a 0.5-amplitude sine
//
// Every 100 ms it prints `level peak=<dB> average=<dB>`. Lines marked "Linux:" are additions:
// choosing the device, and — offline — driving its clock.
import AQExampleSupport   // Linux: command-line options and error messages of the examples.
import AudioQueueCompat
import Foundation
import Lockstep   // Linux: only for the offline device of --sine.

// The recorder's state (the tutorial's AudioRecorder instance variables).
struct AudioRecorder {
    var dataFormat = AudioStreamBasicDescription()
    var queue: AudioQueueRef?
    var buffers = [AudioQueueBufferRef?](repeating: nil, count: 3)
    var audioFile: AudioFileID?
    var fileRecording = false
    var currentPacket: Int64 = 0
}

// Our new C callback
func AudioInputCallback(_ inUserData: UnsafeMutableRawPointer?, _ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef,
                        _ inStartTime: UnsafePointer<AudioTimeStamp>, _ inNumberPacketDescriptions: UInt32,
                        _ inPacketDescs: UnsafePointer<AudioStreamPacketDescription>?) {
    let recorder = inUserData!.assumingMemoryBound(to: AudioRecorder.self)
    var inNumberPacketDescriptions = inNumberPacketDescriptions
    if recorder.pointee.fileRecording {
        AudioFileWritePackets(recorder.pointee.audioFile!, false, inBuffer.pointee.mAudioDataByteSize, inPacketDescs,
                              recorder.pointee.currentPacket, &inNumberPacketDescriptions, inBuffer.pointee.mAudioData)
        recorder.pointee.currentPacket += Int64(inNumberPacketDescriptions)
    }
    AudioQueueEnqueueBuffer(recorder.pointee.queue!, inBuffer, 0, nil)
}

func getPeakPower(_ queue: AudioQueueRef) -> Float {
    var levelMeter = AudioQueueLevelMeterState()
    var levelMeterSize = UInt32(MemoryLayout<AudioQueueLevelMeterState>.size)
    AudioQueueGetProperty(queue, kAudioQueueProperty_CurrentLevelMeterDB, &levelMeter, &levelMeterSize)
    return levelMeter.mPeakPower
}

func getAveragePower(_ queue: AudioQueueRef) -> Float {
    var levelMeter = AudioQueueLevelMeterState()
    var levelMeterSize = UInt32(MemoryLayout<AudioQueueLevelMeterState>.size)
    AudioQueueGetProperty(queue, kAudioQueueProperty_CurrentLevelMeterDB, &levelMeter, &levelMeterSize)
    return levelMeter.mAveragePower
}

// Linux: command-line options and the device.
var arguments = ExampleArguments()
let sineFrequency = arguments.option("--sine").flatMap(Double.init)
let seconds = Double(arguments.option("--seconds") ?? (sineFrequency == nil ? "3" : "1")) ?? 1
if let server = arguments.option("--server") { setenv("JACK_DEFAULT_SERVER", server, 1) }
guard let filePath = arguments.positional.first else {
    exitWithMessage("usage: AQVoiceMeter OUT.aiff [--seconds S] [--server NAME | --sine HZ]", code: 2)
}
var offlineDevice: OfflineDevice?
if let frequency = sineFrequency {
    // Linux: an offline device whose input is the sine (frame n: 0.5·sin(2π·f·n/44100)); this
    // program drives its clock below instead of waiting for real time to pass.
    do {
        let device = try OfflineDevice(format: StreamFormat(sampleRate: 44100, channelCount: 1), maximumFramesPerRender: 441,
                                       name: "sine", inputChannelCount: 1) { start, frames, channels in
            for i in 0..<frames {
                channels[0][i] = Float(0.5 * sin(2 * Double.pi * frequency * Double(start + Int64(i)) / 44100))
            }
        }
        AudioQueueSetDefaultDevice(.engine(try Engine(device: device)))
        offlineDevice = device
    } catch {
        exitWithMessage("\(error)")
    }
}

let recorder = UnsafeMutablePointer<AudioRecorder>.allocate(capacity: 1)
recorder.initialize(to: AudioRecorder())

// -(id) init
recorder.pointee.dataFormat.mSampleRate = 44100.0
recorder.pointee.dataFormat.mFormatID = kAudioFormatLinearPCM
recorder.pointee.dataFormat.mFramesPerPacket = 1
recorder.pointee.dataFormat.mChannelsPerFrame = 1
recorder.pointee.dataFormat.mBytesPerFrame = 2
recorder.pointee.dataFormat.mBytesPerPacket = 2
recorder.pointee.dataFormat.mBitsPerChannel = 16
recorder.pointee.dataFormat.mReserved = 0
recorder.pointee.dataFormat.mFormatFlags = kLinearPCMFormatFlagIsBigEndian | kLinearPCMFormatFlagIsSignedInteger
    | kLinearPCMFormatFlagIsPacked

check(AudioQueueNewInput(&recorder.pointee.dataFormat, AudioInputCallback, recorder, CFRunLoopGetCurrent(),
                         kCFRunLoopCommonModes, 0, &recorder.pointee.queue), "AudioQueueNewInput")
let queue = recorder.pointee.queue!
for i in 0..<3 {
    check(AudioQueueAllocateBuffer(queue, UInt32(recorder.pointee.dataFormat.mSampleRate / 10.0) * recorder.pointee.dataFormat.mBytesPerFrame,
                                   &recorder.pointee.buffers[i]), "AudioQueueAllocateBuffer")
    check(AudioQueueEnqueueBuffer(queue, recorder.pointee.buffers[i]!, 0, nil), "AudioQueueEnqueueBuffer")
}
var enabledLevelMeter: UInt32 = 1
check(AudioQueueSetProperty(queue, kAudioQueueProperty_EnableLevelMetering, &enabledLevelMeter, UInt32(MemoryLayout<UInt32>.size)),
      "AudioQueueSetProperty(EnableLevelMetering)")

// -(bool) record:(NSString*)file
let fileURL = CFURLCreateFromFileSystemRepresentation(nil, filePath, strlen(filePath), false)!
let result = AudioFileCreateWithURL(fileURL, kAudioFileAIFFType, &recorder.pointee.dataFormat, kAudioFileFlags_EraseFile,
                                    &recorder.pointee.audioFile)
recorder.pointee.fileRecording = result == noErr
check(result, "AudioFileCreateWithURL")

check(AudioQueueStart(queue, nil), "AudioQueueStart")
let steps = Int((seconds * 10).rounded())
for _ in 0..<steps {
    if let device = offlineDevice {
        // Linux: 100 ms of the offline device's time.
        for _ in 0..<10 { _ = try? device.renderFloat(frames: 441) }
    } else {
        // The callbacks run on this thread's run loop (the tutorial's main run loop).
        CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.1, false)
    }
    print(String(format: "level peak=%.2f average=%.2f", getPeakPower(queue), getAveragePower(queue)))
}
check(AudioQueueStop(queue, true), "AudioQueueStop")
// Linux: the stop's last buffers are posted to the run loop; run it once to write them.
CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0, false)
if let device = offlineDevice {
    // Linux: the offline device delivers the stop (and the last buffer) at its next render.
    var running: UInt32 = 1
    while running != 0 {
        _ = try? device.renderFloat(frames: 441)
        var size = UInt32(MemoryLayout<UInt32>.size)
        AudioQueueGetProperty(queue, kAudioQueueProperty_IsRunning, &running, &size)
    }
}
// -(void) stopRecording
recorder.pointee.fileRecording = false
check(AudioQueueDispose(queue, true), "AudioQueueDispose")
check(AudioFileClose(recorder.pointee.audioFile!), "AudioFileClose")
print("recorded \(recorder.pointee.currentPacket) packets to \(filePath)")
