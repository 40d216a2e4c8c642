import AudioQueueCompat
import Foundation
import Lockstep
import LockstepTestSupport
import Synchronization
import Testing

/// An offline device whose rate can change, as a JACK server's can: it reports the change to the
/// engine as `JACKDevice` does (``DeviceRenderer/reportSampleRateChange(sampleTime:rate:)``) and
/// delivers the events on the calling thread.
final class RateChangingDevice: AudioDevice, @unchecked Sendable {
    let name = "rate-changing"
    let channelCount = 2
    let inputChannelCount = 2
    let maximumFramesPerCycle = 1024
    var isOffline: Bool { true }
    var isRunning: Bool { renderer != nil }
    private let rate = Atomic<Int>(48000)
    private var renderer: DeviceRenderer?
    var sampleRate: Double { Double(rate.load(ordering: .acquiring)) }

    func attach(_ renderer: DeviceRenderer) throws(AudioQueueError) { self.renderer = renderer }
    func detach() { renderer = nil }
    func start() throws(AudioQueueError) {}
    func stop() {}
    func currentTime() -> DeviceTimeStamp { DeviceTimeStamp(sampleTime: 0, hostTime: 0) }
    func nearestStartTime(atOrAfter sampleTime: Int64) -> Int64 { max(0, sampleTime) }
    func hostTime(forSampleTime sampleTime: Int64) -> UInt64 { UInt64(max(0, sampleTime)) }
    func sampleTime(forHostTime hostTime: UInt64) -> Int64 { Int64(hostTime) }

    /// The server now runs at `newRate`.
    func changeRate(to newRate: Int) {
        rate.store(newRate, ordering: .releasing)
        renderer?.reportSampleRateChange(sampleTime: 0, rate: newRate)
        renderer?.deliverPendingEvents()
    }
}

/// The values a property listener read, in order (its user data is ``pointer``).
final class PropertyLog<Value: Sendable>: @unchecked Sendable {
    private let values = Mutex<[Value]>([])
    var seen: [Value] { values.withLock { $0 } }
    func add(_ value: Value) { values.withLock { $0.append(value) } }
    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
}

/// The device rates a `kAudioQueueDeviceProperty_SampleRate` listener read.
typealias RateLog = PropertyLog<Float64>

func logDeviceRate(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ id: AudioQueuePropertyID) {
    var rate: Float64 = 0
    var size = UInt32(MemoryLayout<Float64>.size)
    AudioQueueGetProperty(queue, kAudioQueueDeviceProperty_SampleRate, &rate, &size)
    Unmanaged<RateLog>.fromOpaque(userData!).takeUnretainedValue().add(rate)
}

/// Renders `frames` frames of an offline stereo float queue and returns them as floats.
func renderFloats(_ queue: AudioQueueRef, _ capture: AudioQueueBufferRef, frames: UInt32, at time: inout Double) -> [Float] {
    let (status, bytes) = render(queue, capture, frames: frames, at: &time)
    #expect(status == noErr)
    return values(bytes, as: Float.self)
}

extension AQCompatTests {
    /// Parameters (Volume ramps, Pan, PlayRate and Pitch at their neutral values), the time-pitch
    /// and codec properties, the level meter's floor and the device rate listeners.
    @Suite("Parameters and properties", .serialized)
    struct ParameterTests {
        /// A mono float queue at 48 kHz rendering offline in stereo float, with `frames` frames of
        /// `level` enqueued (with `events`), and a capture buffer of 2048 frames.
        func monoQueue(level: Float = 0.5, frames: Int = 9600, channels: UInt32 = 1,
                       setUp: (AudioQueueRef) -> Void = { _ in }) throws -> (AudioQueueRef, AudioQueueBufferRef) {
            let (queue, _) = try offlineOutputQueue(pcm(48000, channels: channels, bits: 32, float: true),
                                                    render: pcm(48000, channels: 2, bits: 32, float: true))
            setUp(queue)
            let samples = [Float](repeating: level, count: frames * Int(channels))
            let buffer = try filledBuffer(queue, rawBytes(samples))
            #expect(AudioQueueEnqueueBuffer(queue, buffer, 0, nil) == noErr)
            #expect(AudioQueueStart(queue, nil) == noErr)
            var capture: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue, 2048 * 8, &capture) == noErr)
            return (queue, capture!)
        }

        @Test("kAudioQueueParam_VolumeRampTime: a volume change ramps linearly over exactly that time")
        func volumeRampTime() throws {
            let (queue, capture) = try monoQueue { queue in
                #expect(AudioQueueSetParameter(queue, kAudioQueueParam_VolumeRampTime, 0.01) == noErr)   // 480 frames
            }
            defer { AudioQueueDispose(queue, true) }
            var rampTime: Float = 0
            #expect(AudioQueueGetParameter(queue, kAudioQueueParam_VolumeRampTime, &rampTime) == noErr && rampTime == 0.01)
            var time = 0.0
            let before = renderFloats(queue, capture, frames: 1000, at: &time)
            #expect(before.allSatisfy { $0 == 0.5 })
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Volume, 0) == noErr)
            let ramp = renderFloats(queue, capture, frames: 1000, at: &time)
            for frame in 0..<1000 {
                let gain: Float = frame < 479 ? 1 - Float(frame + 1) / 480 : 0
                #expect(abs(ramp[2 * frame] - 0.5 * gain) < 1e-5 && ramp[2 * frame] == ramp[2 * frame + 1], "frame \(frame)")
            }
            #expect(ramp[2 * 478] > 0 && ramp[2 * 479] == 0)
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_VolumeRampTime, -1) == kAudioQueueErr_InvalidParameter)
        }

        @Test("a ramp time carried by a buffer applies from that buffer on; the default ramp is the engine's 5 ms")
        func rampTimeAsParameterEvent() throws {
            let (queue, capture) = try monoQueue(frames: 2000)
            defer { AudioQueueDispose(queue, true) }
            var time = 0.0
            _ = renderFloats(queue, capture, frames: 1000, at: &time)
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Volume, 0) == noErr)   // default ramp: 240 frames at 48 kHz
            let fall = renderFloats(queue, capture, frames: 1000, at: &time)
            #expect(fall[2 * 238] > 0 && fall[2 * 239] == 0)
            // The next buffer sets a 100-frame ramp and full volume when it starts.
            let buffer = try filledBuffer(queue, rawBytes([Float](repeating: 0.5, count: 1000)))
            var events = [AudioQueueParameterEvent(mID: kAudioQueueParam_VolumeRampTime, mValue: Float(100) / 48000),
                          AudioQueueParameterEvent(mID: kAudioQueueParam_Volume, mValue: 1)]
            #expect(AudioQueueEnqueueBufferWithParameters(queue, buffer, 0, nil, 0, 0, 2, &events, nil, nil) == noErr)
            let rise = renderFloats(queue, capture, frames: 1000, at: &time)
            for frame in 0..<1000 {
                let gain: Float = frame < 99 ? Float(frame + 1) / 100 : 1
                #expect(abs(rise[2 * frame] - 0.5 * gain) < 1e-5, "frame \(frame)")
            }
        }

        @Test("kAudioQueueParam_Pan: equal power with unity at the centre; set before start it applies at once, later it ramps")
        func panMono() throws {
            let (queue, capture) = try monoQueue { queue in
                #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Pan, -1) == noErr)
            }
            defer { AudioQueueDispose(queue, true) }
            var pan: Float = 0
            #expect(AudioQueueGetParameter(queue, kAudioQueueParam_Pan, &pan) == noErr && pan == -1)
            var time = 0.0
            let left = renderFloats(queue, capture, frames: 1000, at: &time)
            #expect(abs(left[0] - 0.5 * Float(2.0.squareRoot())) < 1e-6 && left[1] == 0)
            #expect(left.enumerated().allSatisfy { $0.offset % 2 == 1 ? $0.element == 0 : $0.element == left[0] })
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Pan, 0.5) == noErr)
            let moved = renderFloats(queue, capture, frames: 1000, at: &time)
            let (gainLeft, gainRight) = (Float(2.0.squareRoot() * cos(3 * Double.pi / 8)), Float(2.0.squareRoot() * sin(3 * Double.pi / 8)))
            #expect(abs(moved[2 * 999] - 0.5 * gainLeft) < 1e-5 && abs(moved[2 * 999 + 1] - 0.5 * gainRight) < 1e-5)
            #expect(abs(gainLeft * gainLeft + gainRight * gainRight - 2) < 1e-5)
            // No jump: the pan moves a little each frame (a 240-frame ramp).
            #expect(abs(moved[0] - left[2 * 999]) < 0.01 && abs(moved[1] - left[2 * 999 + 1]) < 0.01)
            #expect(abs(moved[2 * 240] - 0.5 * gainLeft) < 1e-5)
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Pan, 1.5) == kAudioQueueErr_InvalidParameter)
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Pan, 0) == noErr)
            let centre = renderFloats(queue, capture, frames: 1000, at: &time)
            #expect(centre[2 * 999] == 0.5 && centre[2 * 999 + 1] == 0.5)
        }

        @Test("Pan on a stereo queue is balance: hard right silences the left channel and raises the right by √2")
        func panStereo() throws {
            let (queue, capture) = try monoQueue(level: 0.25, channels: 2) { queue in
                #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Pan, 1) == noErr)
            }
            defer { AudioQueueDispose(queue, true) }
            var time = 0.0
            let frames = renderFloats(queue, capture, frames: 512, at: &time)
            #expect(abs(frames[0]) < 1e-7 && abs(frames[1] - 0.25 * Float(2.0.squareRoot())) < 1e-6)
        }

        @Test("PlayRate and Pitch stay at 1 and 0: those values are accepted, others are kAudioQueueErr_InvalidParameter")
        func playRateAndPitch() throws {
            let (queue, _) = try offlineOutputQueue(pcm(48000, channels: 2, bits: 16))
            defer { AudioQueueDispose(queue, true) }
            var value: Float = 0
            #expect(AudioQueueGetParameter(queue, kAudioQueueParam_PlayRate, &value) == noErr && value == 1)
            #expect(AudioQueueGetParameter(queue, kAudioQueueParam_Pitch, &value) == noErr && value == 0)
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_PlayRate, 1) == noErr)
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Pitch, 0) == noErr)
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_PlayRate, 1.5) == kAudioQueueErr_InvalidParameter)
            #expect(AudioQueueCompatLastErrorMessage()?.contains("time-pitch") == true)
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Pitch, 100) == kAudioQueueErr_InvalidParameter)
            #expect(AudioQueueSetParameter(queue, 99, 0) == kAudioQueueErr_InvalidParameter)
            let buffer = try filledBuffer(queue, [UInt8](repeating: 0, count: 16))
            var event = AudioQueueParameterEvent(mID: kAudioQueueParam_PlayRate, mValue: 2)
            #expect(AudioQueueEnqueueBufferWithParameters(queue, buffer, 0, nil, 0, 0, 1, &event, nil, nil) == kAudioQueueErr_InvalidParameter)
        }

        @Test("time-pitch, codec policy, converter error and channel assignment properties")
        func timePitchAndCodecProperties() throws {
            let (queue, _) = try offlineOutputQueue(pcm(48000, channels: 2, bits: 16))
            defer { AudioQueueDispose(queue, true) }
            var value: UInt32 = 9
            var size: UInt32 = 4
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_EnableTimePitch, &value, &size) == noErr && value == 0)
            value = 1
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_EnableTimePitch, &value, 4) == kAudioQueueErr_InvalidPropertyValue)
            value = 0
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_EnableTimePitch, &value, 4) == noErr)
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_TimePitchAlgorithm, &value, &size) == noErr && value == kAudioQueueTimePitchAlgorithm_Spectral)
            value = kAudioQueueTimePitchAlgorithm_Varispeed
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_TimePitchAlgorithm, &value, 4) == noErr)
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_TimePitchAlgorithm, &value, &size) == noErr && value == kAudioQueueTimePitchAlgorithm_Varispeed)
            value = fourCharCode("abcd")
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_TimePitchAlgorithm, &value, 4) == kAudioQueueErr_InvalidPropertyValue)
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_TimePitchAlgorithm, &value, 2) == kAudioQueueErr_InvalidPropertySize)
            value = 1
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_TimePitchBypass, &value, 4) == noErr)
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_TimePitchBypass, &value, &size) == noErr && value == 1)
            value = kAudioQueueHardwareCodecPolicy_UseHardwareOnly
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_HardwareCodecPolicy, &value, 4) == kAudioQueueErr_InvalidPropertyValue)
            value = 7
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_HardwareCodecPolicy, &value, 4) == kAudioQueueErr_InvalidPropertyValue)
            value = kAudioQueueHardwareCodecPolicy_PreferHardware
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_HardwareCodecPolicy, &value, 4) == noErr)
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_HardwareCodecPolicy, &value, &size) == noErr && value == kAudioQueueHardwareCodecPolicy_PreferHardware)
            value = 9
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_ConverterError, &value, &size) == noErr && value == 0)
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_ConverterError, &value, 4) == kAudioQueueErr_InvalidProperty)

            // Channel assignments: queue channel n on channel n of the queue's device.
            var assignmentsSize: UInt32 = 0
            #expect(AudioQueueGetPropertySize(queue, kAudioQueueProperty_ChannelAssignments, &assignmentsSize) == noErr && assignmentsSize == 32)
            let assignments = UnsafeMutablePointer<AudioQueueChannelAssignment>.allocate(capacity: 2)
            defer { assignments.deallocate() }
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_ChannelAssignments, assignments, &assignmentsSize) == noErr)
            #expect(assignments[0].mDeviceUID.takeUnretainedValue().string == "offline" && assignments[0].mChannelNumber == 1)
            #expect(assignments[1].mChannelNumber == 2)
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_ChannelAssignments, assignments, 32) == noErr)
            assignments[0].mChannelNumber = 2
            assignments[1].mChannelNumber = 1
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_ChannelAssignments, assignments, 32) == kAudioQueueErr_InvalidPropertyValue)
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_ChannelAssignments, assignments, 16) == kAudioQueueErr_InvalidPropertySize)

            // Time-pitch belongs to playback queues.
            var input: AudioQueueRef?
            var format = pcm(48000, channels: 2, bits: 16)
            try #require(AudioQueueNewInput(&format, logInput, nil, nil, nil, 0, &input) == noErr)
            defer { AudioQueueDispose(input!, true) }
            #expect(AudioQueueGetProperty(input!, kAudioQueueProperty_EnableTimePitch, &value, &size) == kAudioQueueErr_InvalidProperty)
        }

        @Test("kAudioQueueProperty_CurrentLevelMeterDB reads −120 dB for silence, not −∞; a half-scale signal −6.02 dB")
        func meterFloor() throws {
            let (queue, _) = try offlineOutputQueue(pcm(48000, channels: 2, bits: 32, float: true))
            defer { AudioQueueDispose(queue, true) }
            var on: UInt32 = 1
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_EnableLevelMetering, &on, 4) == noErr)
            let silence = try filledBuffer(queue, rawBytes([Float](repeating: 0, count: 2 * 4800)))
            let tone = try filledBuffer(queue, rawBytes([Float](repeating: 0.5, count: 2 * 48000)))
            #expect(AudioQueueEnqueueBuffer(queue, silence, 0, nil) == noErr)
            #expect(AudioQueueEnqueueBuffer(queue, tone, 0, nil) == noErr)
            #expect(AudioQueueStart(queue, nil) == noErr)
            var capture: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue, 4800 * 8, &capture) == noErr)
            var levels = [AudioQueueLevelMeterState](repeating: AudioQueueLevelMeterState(mAveragePower: 1, mPeakPower: 1), count: 2)
            var size = UInt32(2 * MemoryLayout<AudioQueueLevelMeterState>.size)
            var time = 0.0
            _ = render(queue, capture!, frames: 4800, at: &time)
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_CurrentLevelMeterDB, &levels, &size) == noErr)
            #expect(levels.allSatisfy { $0.mAveragePower == -120 && $0.mPeakPower == -120 })
            for _ in 0..<10 { _ = render(queue, capture!, frames: 4800, at: &time) }   // a second of the tone: the average settles
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_CurrentLevelMeterDB, &levels, &size) == noErr)
            #expect(levels.allSatisfy { abs($0.mPeakPower - -6.0206) < 0.01 && abs($0.mAveragePower - -6.0206) < 0.01 }, "\(levels)")
        }

        @Test("kAudioQueueDeviceProperty_SampleRate listeners fire when the device's rate changes, and read the new rate")
        func sampleRateListener() throws {
            let device = RateChangingDevice()
            AudioQueueSetDefaultDevice(.engine(try Engine(device: device)))
            defer { AudioQueueSetDefaultDevice(.standard) }
            var format = pcm(48000, channels: 2, bits: 16)
            var output: AudioQueueRef?, input: AudioQueueRef?
            try #require(AudioQueueNewOutput(&format, logOutput, nil, nil, nil, 0, &output) == noErr)
            try #require(AudioQueueNewInput(&format, logInput, nil, nil, nil, 0, &input) == noErr)
            defer { AudioQueueDispose(output!, true); AudioQueueDispose(input!, true) }
            let outputLog = RateLog(), inputLog = RateLog()
            #expect(AudioQueueAddPropertyListener(output!, kAudioQueueDeviceProperty_SampleRate, logDeviceRate, outputLog.pointer) == noErr)
            #expect(AudioQueueAddPropertyListener(input!, kAudioQueueDeviceProperty_SampleRate, logDeviceRate, inputLog.pointer) == noErr)
            #expect(AudioQueueStart(output!, nil) == noErr)
            #expect(AudioQueueStart(input!, nil) == noErr)
            #expect(outputLog.seen.isEmpty && inputLog.seen.isEmpty)
            device.changeRate(to: 96000)
            #expect(outputLog.seen == [96000])
            #expect(inputLog.seen == [96000])
            #expect(AudioQueueRemovePropertyListener(output!, kAudioQueueDeviceProperty_SampleRate, logDeviceRate, outputLog.pointer) == noErr)
            device.changeRate(to: 44100)
            #expect(outputLog.seen == [96000] && inputLog.seen == [96000, 44100])
        }
    }
}
