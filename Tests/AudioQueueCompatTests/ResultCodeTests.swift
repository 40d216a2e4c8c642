import AudioQueueCompat
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension AQCompatTests {
    /// Every documented precondition of every function returns its documented result code (and
    /// never crashes).
    @Suite("Result codes", .serialized)
    struct ResultCodeTests {
        @Test("result codes have Apple's values")
        func values() {
            #expect(kAudioQueueErr_InvalidBuffer == -66687 && kAudioQueueErr_BufferEmpty == -66686)
            #expect(kAudioQueueErr_DisposalPending == -66685 && kAudioQueueErr_InvalidProperty == -66684)
            #expect(kAudioQueueErr_InvalidPropertySize == -66683 && kAudioQueueErr_InvalidParameter == -66682)
            #expect(kAudioQueueErr_CannotStart == -66681 && kAudioQueueErr_InvalidDevice == -66680)
            #expect(kAudioQueueErr_BufferInQueue == -66679 && kAudioQueueErr_InvalidRunState == -66678)
            #expect(kAudioQueueErr_InvalidQueueType == -66677 && kAudioQueueErr_InvalidPropertyValue == -66675)
            #expect(kAudioQueueErr_BufferEnqueuedTwice == -66666 && kAudioQueueErr_InvalidOfflineMode == -66626)
            #expect(kAudioQueueErr_EnqueueDuringReset == -66632)
            #expect(kAudioFormatUnsupportedDataFormatError == 1718449215)
            #expect(kAudioQueueProperty_IsRunning == 0x6171_726E)                 // 'aqrn'
            #expect(kAudioFileUnsupportedFileTypeError == 1954115647)             // 'typ?'
            #expect(kAudioFileUnspecifiedError == 2003334207)                     // 'wht?'
            #expect(kAudioFileNotOpenError == -38 && kAudioFileEndOfFileError == -39)
            #expect(MemoryLayout<AudioStreamBasicDescription>.size == 40 && MemoryLayout<AudioTimeStamp>.size == 64)
            #expect(MemoryLayout<AudioQueueBuffer>.size == 56)        // as Apple's on 64-bit
        }

        @Test("creating queues: compressed, non-interleaved, unsigned or malformed formats and flags")
        func creation() {
            var queue: AudioQueueRef?
            var aac = pcm()
            aac.mFormatID = kAudioFormatMPEG4AAC
            // PCM's flags on an AAC description name object type 12: refused, saying which to use.
            #expect(AudioQueueNewOutput(&aac, logOutput, nil, nil, nil, 0, &queue) == kAudioFormatUnsupportedDataFormatError)
            #expect(AudioQueueCompatLastErrorMessage()?.contains("kMPEG4Object_AAC_LC") == true)
            // AAC-LC plays and records; MP3 only plays (Apple has no MP3 encoder either).
            aac.mFormatFlags = kMPEG4Object_AAC_LC
            #expect(AudioQueueNewOutput(&aac, logOutput, nil, nil, nil, 0, &queue) == noErr)
            #expect(AudioQueueDispose(queue!, true) == noErr)
            queue = nil
            #expect(AudioQueueNewInput(&aac, logInput, nil, nil, nil, 0, &queue) == noErr)
            #expect(AudioQueueDispose(queue!, true) == noErr)
            queue = nil
            var mp3 = aac
            mp3.mFormatID = kAudioFormatMPEGLayer3
            mp3.mFormatFlags = 0
            #expect(AudioQueueNewInput(&mp3, logInput, nil, nil, nil, 0, &queue) == kAudioFormatUnsupportedDataFormatError)
            #expect(AudioQueueCompatLastErrorMessage()?.contains("ExtAudioFile") == true)
            var opus = aac
            opus.mFormatID = kAudioFormatOpus
            opus.mSampleRate = 44100     // decoded at 48 kHz only
            #expect(AudioQueueNewOutput(&opus, logOutput, nil, nil, nil, 0, &queue) == kAudioFormatUnsupportedDataFormatError)
            var planar = pcm()
            planar.mFormatFlags |= kAudioFormatFlagIsNonInterleaved
            #expect(AudioQueueNewInput(&planar, logInput, nil, nil, nil, 0, &queue) == kAudioFormatUnsupportedDataFormatError)
            var unsigned = pcm(bits: 8)
            unsigned.mFormatFlags = kAudioFormatFlagIsPacked
            #expect(AudioQueueNewOutput(&unsigned, logOutput, nil, nil, nil, 0, &queue) == kAudioFormatUnsupportedDataFormatError)
            var wrongSize = pcm()
            wrongSize.mBytesPerFrame = 3
            #expect(AudioQueueNewOutput(&wrongSize, logOutput, nil, nil, nil, 0, &queue) == kAudioFormatUnsupportedDataFormatError)
            var good = pcm()
            #expect(AudioQueueNewOutput(&good, logOutput, nil, nil, nil, 1, &queue) == kAudio_ParamError)
            #expect(queue == nil)
        }

        @Test("buffers: foreign, empty, twice, too large, freed while enqueued")
        func buffers() throws {
            let (queue, _) = try offlineOutputQueue(pcm(48000, channels: 2, bits: 16))
            let (other, _) = try offlineOutputQueue(pcm(48000, channels: 2, bits: 16))
            defer { AudioQueueDispose(queue, true); AudioQueueDispose(other, true) }
            var huge: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue, (1 << 30) + 1, &huge) == kAudioQueueErr_InvalidParameter)
            let foreign = try filledBuffer(other, [UInt8](repeating: 1, count: 16))
            #expect(AudioQueueEnqueueBuffer(queue, foreign, 0, nil) == kAudioQueueErr_InvalidBuffer)
            #expect(AudioQueueFreeBuffer(queue, foreign) == kAudioQueueErr_InvalidBuffer)
            let buffer = try filledBuffer(queue, [UInt8](repeating: 1, count: 16), capacity: 64)
            buffer.pointee.mAudioDataByteSize = 0
            #expect(AudioQueueEnqueueBuffer(queue, buffer, 0, nil) == kAudioQueueErr_BufferEmpty)
            buffer.pointee.mAudioDataByteSize = 6                      // not whole 4-byte frames
            #expect(AudioQueueEnqueueBuffer(queue, buffer, 0, nil) == kAudioQueueErr_InvalidParameter)
            buffer.pointee.mAudioDataByteSize = 68                     // above the capacity
            #expect(AudioQueueEnqueueBuffer(queue, buffer, 0, nil) == kAudioQueueErr_InvalidParameter)
            buffer.pointee.mAudioDataByteSize = 16
            #expect(AudioQueueEnqueueBuffer(queue, buffer, 0, nil) == noErr)
            #expect(AudioQueueEnqueueBuffer(queue, buffer, 0, nil) == kAudioQueueErr_BufferEnqueuedTwice)
            #expect(AudioQueueFreeBuffer(queue, buffer) == kAudioQueueErr_BufferInQueue)
            #expect(AudioQueueReset(queue) == noErr)                   // hands it back
            #expect(AudioQueueFreeBuffer(queue, buffer) == noErr)
            #expect(AudioQueueFreeBuffer(queue, buffer) == kAudioQueueErr_InvalidBuffer)
        }

        @Test("enqueueing while a reset hands buffers back: kAudioQueueErr_EnqueueDuringReset")
        func enqueueDuringReset() throws {
            var format = pcm(48000, channels: 1, bits: 16)
            let log = CallbackLog()
            var queue: AudioQueueRef?
            #expect(AudioQueueNewOutput(&format, reenqueueOutput, log.pointer, nil, nil, 0, &queue) == noErr)
            defer { AudioQueueDispose(queue!, true) }
            #expect(AudioQueueSetOfflineRenderFormat(queue!, &format, nil) == noErr)
            // No decode-ahead: the buffers stay in the queue until played or reset (with it, the
            // callback would get them back, and re-enqueue them, before the reset).
            var noDecodeAhead: UInt32 = 0
            #expect(AudioQueueSetProperty(queue!, kAudioQueueProperty_DecodeBufferSizeFrames, &noDecodeAhead, 4) == noErr)
            let a = try filledBuffer(queue!, [UInt8](repeating: 1, count: 2000))
            let b = try filledBuffer(queue!, [UInt8](repeating: 1, count: 2000))
            #expect(AudioQueueEnqueueBuffer(queue!, a, 0, nil) == noErr)
            #expect(AudioQueueEnqueueBuffer(queue!, b, 0, nil) == noErr)
            #expect(AudioQueueStart(queue!, nil) == noErr)
            var capture: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue!, 512, &capture) == noErr)
            var time = 0.0
            _ = render(queue!, capture!, frames: 100, at: &time)
            #expect(AudioQueueReset(queue!) == noErr)
            _ = render(queue!, capture!, frames: 100, at: &time)      // the reset hands a and b back
            #expect(log.buffers == [a, b])
            #expect(log.statuses == [kAudioQueueErr_EnqueueDuringReset, kAudioQueueErr_EnqueueDuringReset])
            #expect(AudioQueueEnqueueBuffer(queue!, a, 0, nil) == noErr)
        }

        @Test("enqueue with parameters: trims, descending start times, parameters, input queues")
        func enqueueWithParameters() throws {
            let (queue, _) = try offlineOutputQueue(pcm(48000, channels: 1, bits: 16))
            defer { AudioQueueDispose(queue, true) }
            let a = try filledBuffer(queue, [UInt8](repeating: 1, count: 20))    // 10 frames
            let b = try filledBuffer(queue, [UInt8](repeating: 1, count: 20))
            #expect(AudioQueueEnqueueBufferWithParameters(queue, a, 0, nil, 6, 4, 0, nil, nil, nil) == kAudioQueueErr_InvalidParameter)
            var start = AudioTimeStamp()
            start.mSampleTime = 100
            start.mFlags = .sampleTimeValid
            #expect(AudioQueueEnqueueBufferWithParameters(queue, a, 0, nil, 0, 0, 0, nil, &start, nil) == noErr)
            start.mSampleTime = 105                                   // before a's end (110)
            #expect(AudioQueueEnqueueBufferWithParameters(queue, b, 0, nil, 0, 0, 0, nil, &start, nil) == kAudioQueueErr_InvalidParameter)
            var loud = AudioQueueParameterEvent(mID: kAudioQueueParam_Volume, mValue: 2)
            #expect(AudioQueueEnqueueBufferWithParameters(queue, b, 0, nil, 0, 0, 1, &loud, nil, nil) == kAudioQueueErr_InvalidParameter)
            var pan = AudioQueueParameterEvent(mID: kAudioQueueParam_Pan, mValue: -2)     // pan is -1…1
            #expect(AudioQueueEnqueueBufferWithParameters(queue, b, 0, nil, 0, 0, 1, &pan, nil, nil) == kAudioQueueErr_InvalidParameter)
            var rate = AudioQueueParameterEvent(mID: kAudioQueueParam_PlayRate, mValue: 2)  // no time-pitch processing
            #expect(AudioQueueEnqueueBufferWithParameters(queue, b, 0, nil, 0, 0, 1, &rate, nil, nil) == kAudioQueueErr_InvalidParameter)
            #expect(AudioQueueEnqueueBufferWithParameters(queue, b, 0, nil, 0, 0, 1, nil, nil, nil) == kAudio_ParamError)
            var half = AudioQueueParameterEvent(mID: kAudioQueueParam_Volume, mValue: 0.5)
            var actual = AudioTimeStamp()
            #expect(AudioQueueEnqueueBufferWithParameters(queue, b, 0, nil, 0, 0, 1, &half, nil, &actual) == noErr)
            #expect(actual.mSampleTime == 110)

            var format = pcm()
            var input: AudioQueueRef?
            #expect(AudioQueueNewInput(&format, logInput, nil, nil, nil, 0, &input) == noErr)
            defer { AudioQueueDispose(input!, true) }
            var buffer: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(input!, 64, &buffer) == noErr)
            #expect(AudioQueueEnqueueBufferWithParameters(input!, buffer!, 0, nil, 0, 0, 0, nil, nil, nil) == kAudioQueueErr_InvalidQueueType)
            #expect(AudioQueuePrime(input!, 0, nil) == kAudioQueueErr_InvalidQueueType)
            #expect(AudioQueueSetParameter(input!, kAudioQueueParam_Volume, 1) == kAudioQueueErr_InvalidQueueType)
            var timeline: AudioQueueTimelineRef?
            #expect(AudioQueueCreateTimeline(input!, &timeline) == kAudioQueueErr_InvalidQueueType)
            #expect(AudioQueueSetOfflineRenderFormat(input!, &format, nil) == kAudioQueueErr_InvalidQueueType)
            #expect(AudioQueueOfflineRender(input!, &start, buffer!, 0) == kAudioQueueErr_InvalidQueueType)
        }

        @Test("parameters and properties: unknown IDs, sizes, read-only, values, listeners")
        func propertiesAndParameters() throws {
            let (queue, _) = try offlineOutputQueue(pcm(48000, channels: 2, bits: 16))
            defer { AudioQueueDispose(queue, true) }
            var value: Float32 = 0
            #expect(AudioQueueGetParameter(queue, 99, &value) == kAudioQueueErr_InvalidParameter)
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Volume, 1.5) == kAudioQueueErr_InvalidParameter)
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Volume, .nan) == kAudioQueueErr_InvalidParameter)
            var word: UInt32 = 0
            var size: UInt32 = 4
            let bogus = fourCharCode("zzzz")
            #expect(AudioQueueGetProperty(queue, bogus, &word, &size) == kAudioQueueErr_InvalidProperty)
            #expect(AudioQueueGetPropertySize(queue, bogus, &size) == kAudioQueueErr_InvalidProperty)
            #expect(AudioQueueSetProperty(queue, bogus, &word, 4) == kAudioQueueErr_InvalidProperty)
            var format = AudioStreamBasicDescription()
            size = 20
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_StreamDescription, &format, &size) == kAudioQueueErr_InvalidPropertySize)
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_StreamDescription, &format, 40) == kAudioQueueErr_InvalidProperty)
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_IsRunning, &word, 4) == kAudioQueueErr_InvalidProperty)
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_EnableLevelMetering, &word, 2) == kAudioQueueErr_InvalidPropertySize)
            var meter = AudioQueueLevelMeterState()
            size = 8
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_CurrentLevelMeter, &meter, &size) == kAudioQueueErr_InvalidProperty)
            word = 1
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_EnableLevelMetering, &word, 4) == noErr)
            size = 6
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_CurrentLevelMeter, &meter, &size) == kAudioQueueErr_InvalidPropertySize)
            var mono = AudioChannelLayout()
            mono.mChannelLayoutTag = kAudioChannelLayoutTag_Mono
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_ChannelLayout, &mono, 12) == kAudioQueueErr_InvalidPropertyValue)
            #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_ChannelLayout, &mono, 8) == kAudioQueueErr_InvalidPropertySize)
            var elsewhere: CFString? = "some-other-device"
            let set = withUnsafePointer(to: &elsewhere) {
                AudioQueueSetProperty(queue, kAudioQueueProperty_CurrentDevice, $0, UInt32(MemoryLayout<CFString?>.size))
            }
            #expect(set == kAudioQueueErr_InvalidDevice)
            #expect(AudioQueueAddPropertyListener(queue, kAudioQueueProperty_CurrentLevelMeterDB, otherListener, nil) == kAudioQueueErr_InvalidProperty)
            #expect(AudioQueueAddPropertyListener(queue, bogus, otherListener, nil) == kAudioQueueErr_InvalidProperty)
            #expect(AudioQueueRemovePropertyListener(queue, kAudioQueueProperty_IsRunning, otherListener, nil) == kAudio_ParamError)
        }

        @Test("timing, offline mode and run state preconditions")
        func timingAndOffline() throws {
            var format = pcm(48000, channels: 1, bits: 16)
            var queue: AudioQueueRef?
            // A log: the queue hands `audio` back once it is decoded ahead, before it has played.
            #expect(AudioQueueNewOutput(&format, logOutput, CallbackLog().pointer, nil, nil, 0, &queue) == noErr)
            defer { AudioQueueDispose(queue!, true) }
            var buffer: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue!, 64, &buffer) == noErr)
            var stamp = AudioTimeStamp()
            #expect(AudioQueueOfflineRender(queue!, &stamp, buffer!, 4) == kAudioQueueErr_InvalidOfflineMode)
            var aac = format
            aac.mFormatID = kAudioFormatAppleLossless
            #expect(AudioQueueSetOfflineRenderFormat(queue!, &aac, nil) == kAudioFormatUnsupportedDataFormatError)
            #expect(AudioQueueSetOfflineRenderFormat(queue!, &format, nil) == noErr)
            let (other, _) = try offlineOutputQueue(format)
            defer { AudioQueueDispose(other, true) }
            let foreign = try filledBuffer(other, [0, 0])
            #expect(AudioQueueOfflineRender(queue!, &stamp, foreign, 1) == kAudioQueueErr_InvalidBuffer)
            #expect(AudioQueueOfflineRender(queue!, &stamp, buffer!, 33) == kAudioQueueErr_InvalidParameter)   // 66 bytes > 64
            let audio = try filledBuffer(queue!, [UInt8](repeating: 0, count: 4800 * 2))
            #expect(AudioQueueEnqueueBuffer(queue!, audio, 0, nil) == noErr)
            #expect(AudioQueueStart(queue!, nil) == noErr)
            #expect(AudioQueueOfflineRender(queue!, &stamp, buffer!, 32) == noErr)
            #expect(AudioQueueSetOfflineRenderFormat(queue!, nil, nil) == kAudioQueueErr_InvalidRunState)
            var none = AudioTimeStamp()
            var out = AudioTimeStamp()
            #expect(AudioQueueDeviceTranslateTime(queue!, &none, &out) == kAudio_ParamError)
            var timeline: AudioQueueTimelineRef?
            #expect(AudioQueueCreateTimeline(other, &timeline) == noErr)
            #expect(AudioQueueDisposeTimeline(queue!, timeline!) == kAudio_ParamError)
            var discontinuity: DarwinBoolean = false
            #expect(AudioQueueGetCurrentTime(queue!, timeline, &out, &discontinuity) == kAudio_ParamError)
        }

        @Test("packet-description buffers, pause and flush: results and preconditions")
        func packetDescriptionsPauseFlush() throws {
            let (queue, _) = try offlineOutputQueue(pcm(48000, channels: 1, bits: 16))
            defer { AudioQueueDispose(queue, true) }
            var buffer: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBufferWithPacketDescriptions(queue, 64, 4, &buffer) == noErr)
            let allocated = try #require(buffer)
            #expect(allocated.pointee.mAudioDataBytesCapacity == 64)
            #expect(allocated.pointee.mPacketDescriptionCapacity == 4 && allocated.pointee.mPacketDescriptions != nil)
            var huge: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBufferWithPacketDescriptions(queue, (1 << 30) + 1, 4, &huge) == kAudioQueueErr_InvalidParameter)
            #expect(AudioQueueFlush(queue) == noErr)
            #expect(AudioQueuePause(queue) == noErr)
            #expect(AudioQueueFreeBuffer(queue, allocated) == noErr)
            let bogus = AudioQueueRef(bitPattern: 0x2345)!
            var stale: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBufferWithPacketDescriptions(bogus, 64, 4, &stale) == kAudio_ParamError)
            #expect(AudioQueuePause(bogus) == kAudio_ParamError)
            #expect(AudioQueueFlush(bogus) == kAudio_ParamError)
            #expect(AudioQueueStop(bogus, true) == kAudio_ParamError)
            #expect(AudioQueueReset(bogus) == kAudio_ParamError)
            var prepared: UInt32 = 0
            #expect(AudioQueuePrime(bogus, 0, &prepared) == kAudio_ParamError)
        }

        @Test("unknown queues")
        func unknownQueueAndDevice() {
            let bogus = AudioQueueRef(bitPattern: 0x1234)!
            #expect(AudioQueueStart(bogus, nil) == kAudio_ParamError)
            #expect(AudioQueueDispose(bogus, true) == kAudio_ParamError)
            var size: UInt32 = 0
            #expect(AudioQueueGetPropertySize(bogus, kAudioQueueProperty_IsRunning, &size) == kAudio_ParamError)
            // Opening the default JACK device without a server is checked in a separate process
            // (ExampleTests.noServer): this suite opens no JACK client in the test process.
        }
    }
}
