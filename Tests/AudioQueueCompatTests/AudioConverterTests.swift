import AudioQueueCompat
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

/// The audio an input proc hands to ``AudioConverterFillComplexBuffer(_:_:_:_:_:_:)``: interleaved
/// bytes, at most `chunkFrames` frames a call. Passed to the proc as `inInputDataProcUserData`.
final class ConverterSource: @unchecked Sendable {
    let data: UnsafeMutableRawBufferPointer
    let bytesPerFrame: Int
    let chunkFrames: Int
    var offset = 0
    var calls = 0
    /// After handing out this many frames, the proc returns `'wait'` once with no data (the
    /// "no data yet" idiom of streaming code).
    var pauseAt: Int?

    init(_ bytes: [UInt8], bytesPerFrame: Int, chunkFrames: Int) {
        data = .allocate(byteCount: max(1, bytes.count), alignment: 16)
        data.copyBytes(from: bytes)
        self.bytesPerFrame = bytesPerFrame
        self.chunkFrames = chunkFrames
    }

    deinit { data.deallocate() }

    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    var framesLeft: Int { (data.count - offset) / bytesPerFrame }
}

/// `'wait'`: what the test's input proc returns when it has no data yet.
let kNoDataYet = OSStatus(bitPattern: fourCharCode("wait"))

/// An input proc in the idiom of published converter code: point the buffer at the next chunk.
func supplyInput(_ converter: AudioConverterRef, _ ioNumberDataPackets: UnsafeMutablePointer<UInt32>,
                 _ ioData: UnsafeMutablePointer<AudioBufferList>,
                 _ outDataPacketDescription: UnsafeMutablePointer<UnsafeMutablePointer<AudioStreamPacketDescription>?>?,
                 _ inUserData: UnsafeMutableRawPointer?) -> OSStatus {
    let source = Unmanaged<ConverterSource>.fromOpaque(inUserData!).takeUnretainedValue()
    source.calls += 1
    if let pause = source.pauseAt, source.offset >= pause * source.bytesPerFrame {
        source.pauseAt = nil
        ioNumberDataPackets.pointee = 0
        return kNoDataYet
    }
    let frames = min(Int(ioNumberDataPackets.pointee), source.chunkFrames, source.framesLeft)
    ioData.pointee.mBuffers.mData = source.data.baseAddress! + source.offset
    ioData.pointee.mBuffers.mDataByteSize = UInt32(frames * source.bytesPerFrame)
    ioNumberDataPackets.pointee = UInt32(frames)
    source.offset += frames * source.bytesPerFrame
    return noErr
}

/// The bytes of `values` in memory.
func rawBytes<T>(_ values: [T]) -> [UInt8] { values.withUnsafeBytes { Array($0) } }

/// `bytes` read back as `T`s.
func values<T>(_ bytes: [UInt8], as type: T.Type) -> [T] {
    bytes.withUnsafeBytes { raw in (0..<(raw.count / MemoryLayout<T>.size)).map { raw.loadUnaligned(fromByteOffset: $0 * MemoryLayout<T>.size, as: T.self) } }
}

/// The largest difference between `samples` and a sine of `amplitude` at `frequency` Hz
/// sampled at `rate`, leaving out `margin` samples at each end (where a stream starts and stops).
func largestDeviation(_ samples: [Float], fromSineOf amplitude: Double, frequency: Double, rate: Double, margin: Int = 100) -> Double {
    var largest = 0.0
    for index in samples.indices.dropFirst(margin).dropLast(margin) {
        let ideal: Double = amplitude * sin(2 * Double.pi * frequency * Double(index) / rate)
        largest = max(largest, abs(Double(samples[index]) - ideal))
    }
    return largest
}

/// A non-interleaved variant of `format`: one buffer per channel.
func planar(_ format: AudioStreamBasicDescription) -> AudioStreamBasicDescription {
    var result = format
    result.mFormatFlags |= kAudioFormatFlagIsNonInterleaved
    result.mBytesPerFrame = format.mBitsPerChannel / 8
    result.mBytesPerPacket = result.mBytesPerFrame
    return result
}

/// Fills until the converter's stream ends; returns every output byte (one interleaved buffer).
func fillAll(_ converter: AudioConverterRef, _ source: ConverterSource, outputBytesPerFrame: Int,
             framesPerFill: Int = 4096) -> (OSStatus, [UInt8]) {
    var output: [UInt8] = []
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: framesPerFill * outputBytesPerFrame, alignment: 16)
    defer { buffer.deallocate() }
    while true {
        var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 0, mDataByteSize: UInt32(framesPerFill * outputBytesPerFrame), mData: buffer))
        var packets = UInt32(framesPerFill)
        let status = AudioConverterFillComplexBuffer(converter, supplyInput, source.pointer, &packets, &list, nil)
        output += Array(UnsafeRawBufferPointer(start: buffer, count: Int(list.mBuffers.mDataByteSize)))
        if status != noErr && status != kNoDataYet { return (status, output) }
        if packets == 0 && status == noErr { return (noErr, output) }
    }
}

extension AQCompatTests {
    /// Audio Converter Services for linear PCM: exact sample conversions, rate conversion with
    /// exact lengths, the input proc's protocol, properties and Apple's result codes.
    @Suite("Audio Converter", .serialized)
    struct AudioConverterTests {
        @Test("result codes and property IDs have Apple's values (AudioConverter.h)")
        func constants() {
            #expect(kAudioConverterErr_FormatNotSupported == 1718449215 && kAudioConverterErr_OperationNotSupported == 1869627199)
            #expect(kAudioConverterErr_PropertyNotSupported == 1886547824 && kAudioConverterErr_InvalidInputSize == 1768846202)
            #expect(kAudioConverterErr_InvalidOutputSize == 1869902714 && kAudioConverterErr_UnspecifiedError == 2003329396)
            #expect(kAudioConverterErr_BadPropertySizeError == 561211770 && kAudioConverterErr_RequiresPacketDescriptionsError == 561015652)
            #expect(kAudioConverterErr_InputSampleRateOutOfRange == 560558962 && kAudioConverterErr_OutputSampleRateOutOfRange == 560952178)
            #expect(kAudioConverterPropertyMinimumInputBufferSize == 1835623027 && kAudioConverterPropertyCalculateOutputBufferSize == 1668244083)
            #expect(kAudioConverterChannelMap == 1667788144 && kAudioConverterSampleRateConverterQuality == 1936876401)
            #expect(kAudioConverterPrimeInfo == 1886546285 && kAudioConverterCurrentOutputStreamDescription == 1633906532)
            #expect(kAudioConverterQuality_Max == 127 && kAudioConverterQuality_High == 96 && kConverterPrimeMethod_Normal == 1)
            #expect(kAudioConverterSampleRateConverterComplexity_Mastering == 1650553971)
        }

        @Test("AudioConverterConvertBuffer: 16-bit integers to 32-bit floats and back, exactly")
        func integersToFloatsAndBack() throws {
            var int16 = pcm(44100, channels: 2, bits: 16)
            var float32 = pcm(44100, channels: 2, bits: 32, float: true)
            var toFloat: AudioConverterRef?, toInt: AudioConverterRef?
            try #require(AudioConverterNew(&int16, &float32, &toFloat) == noErr)
            try #require(AudioConverterNew(&float32, &int16, &toInt) == noErr)
            defer { AudioConverterDispose(toFloat); AudioConverterDispose(toInt) }
            let source: [Int16] = [-32768, -32767, -16384, -1, 0, 1, 12345, 32767]
            var floats = [Float](repeating: 9, count: source.count)
            var size = UInt32(floats.count * 4)
            #expect(AudioConverterConvertBuffer(toFloat, UInt32(source.count * 2), source, &size, &floats) == noErr)
            #expect(size == UInt32(source.count * 4))
            #expect(floats == source.map { Float($0) / 32768 })
            var back = [Int16](repeating: 7, count: source.count)
            size = UInt32(back.count * 2)
            #expect(AudioConverterConvertBuffer(toInt, UInt32(floats.count * 4), floats, &size, &back) == noErr)
            #expect(back == source)
        }

        @Test("float to 16-bit rounds to nearest and clips; NaN is 0; 8-bit unsigned is offset by 128")
        func roundingAndClipping() throws {
            var float32 = pcm(48000, channels: 1, bits: 32, float: true)
            var int16 = pcm(48000, channels: 1, bits: 16)
            var unsigned8 = pcm(48000, channels: 1, bits: 8)
            unsigned8.mFormatFlags = kAudioFormatFlagIsPacked
            var converter: AudioConverterRef?, toBytes: AudioConverterRef?
            try #require(AudioConverterNew(&float32, &int16, &converter) == noErr)
            try #require(AudioConverterNew(&int16, &unsigned8, &toBytes) == noErr)
            defer { AudioConverterDispose(converter); AudioConverterDispose(toBytes) }
            let input: [Float] = [1.0, -1.0, 0.5, 1.5, -2, 0.49 / 32768, 0.51 / 32768, .nan]
            var output = [Int16](repeating: 0, count: input.count)
            var size = UInt32(output.count * 2)
            #expect(AudioConverterConvertBuffer(converter, UInt32(input.count * 4), input, &size, &output) == noErr)
            #expect(output == [32767, -32768, 16384, 32767, -32768, 0, 1, 0])
            let words: [Int16] = [-32768, 0, 32512, 32767, -257]
            var bytes = [UInt8](repeating: 0, count: words.count)
            size = UInt32(bytes.count)
            #expect(AudioConverterConvertBuffer(toBytes, UInt32(words.count * 2), words, &size, &bytes) == noErr)
            #expect(bytes == [0, 128, 255, 255, 127])
        }

        @Test("big-endian 24-bit to little-endian 32-bit integers, and interleaved to non-interleaved, exactly")
        func byteOrderAndInterleaving() throws {
            var big24 = pcm(96000, channels: 2, bits: 24, bigEndian: true)
            var planar32 = planar(pcm(96000, channels: 2, bits: 32))
            var converter: AudioConverterRef?
            try #require(AudioConverterNew(&big24, &planar32, &converter) == noErr)
            defer { AudioConverterDispose(converter) }
            let samples: [Int32] = [-8_388_608, 8_388_607, 1, -1, 0x123456, -0x234567]   // 3 stereo frames
            let input = samples.flatMap { v -> [UInt8] in [UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
            var left = [Int32](repeating: 0, count: 3), right = [Int32](repeating: 0, count: 3)
            let output = AudioBufferList.allocate(maximumBuffers: 2)
            defer { free(output.unsafeMutablePointer) }
            let status = input.withUnsafeBytes { (inBytes: UnsafeRawBufferPointer) -> OSStatus in
                left.withUnsafeMutableBufferPointer { (l: inout UnsafeMutableBufferPointer<Int32>) -> OSStatus in
                    right.withUnsafeMutableBufferPointer { (r: inout UnsafeMutableBufferPointer<Int32>) -> OSStatus in
                        output[0] = AudioBuffer(l, numberOfChannels: 1)
                        output[1] = AudioBuffer(r, numberOfChannels: 1)
                        var inList = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(
                            mNumberChannels: 2, mDataByteSize: UInt32(inBytes.count), mData: UnsafeMutableRawPointer(mutating: inBytes.baseAddress)))
                        return AudioConverterConvertComplexBuffer(converter, 3, &inList, output.unsafeMutablePointer)
                    }
                }
            }
            #expect(status == noErr)
            let expectedLeft: [Int32] = [-8_388_608 * 256, 1 * 256, 0x123456 * 256]
            let expectedRight: [Int32] = [8_388_607 * 256, -1 * 256, -0x234567 * 256]
            #expect(left == expectedLeft)
            #expect(right == expectedRight)
            #expect(output.map(\.mDataByteSize) == [12, 12])
        }

        @Test("FillComplexBuffer: a 44.1 kHz sine becomes exactly round(n × 48000 / 44100) frames at 48 kHz, on the sine",
              arguments: [44100, 10000, 441])
        func rateConversion(frames: Int) throws {
            var input = pcm(44100, channels: 1, bits: 32, float: true)
            var output = pcm(48000, channels: 1, bits: 32, float: true)
            var converter: AudioConverterRef?
            try #require(AudioConverterNew(&input, &output, &converter) == noErr)
            defer { AudioConverterDispose(converter) }
            let sine = (0..<frames).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 44100)) }
            let source = ConverterSource(rawBytes(sine), bytesPerFrame: 4, chunkFrames: 1000)
            let (status, bytes) = fillAll(converter!, source, outputBytesPerFrame: 4, framesPerFill: 1024)
            #expect(status == noErr)
            let converted = values(bytes, as: Float.self)
            #expect(converted.count == Int((Double(frames) * 48000 / 44100).rounded()))
            // Away from the ends (where the stream starts and stops), the converted audio is the sine at 48 kHz.
            let error = largestDeviation(converted, fromSineOf: 0.5, frequency: 1000, rate: 48000)
            #expect(error < 1e-3, "largest deviation from the 48 kHz sine: \(error)")
            // Once the stream has ended, fills give nothing until AudioConverterReset.
            var packets: UInt32 = 16
            let scratch = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
            defer { scratch.deallocate() }
            var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 1, mDataByteSize: 64, mData: scratch))
            let calls = source.calls
            #expect(AudioConverterFillComplexBuffer(converter, supplyInput, source.pointer, &packets, &list, nil) == noErr)
            #expect(packets == 0 && source.calls == calls)
        }

        @Test("an input proc's error stops the fill with what was converted; the next fill goes on where it stopped")
        func procErrorPausesTheStream() throws {
            var input = pcm(48000, channels: 2, bits: 16)
            var output = pcm(48000, channels: 2, bits: 32, float: true)
            var converter: AudioConverterRef?
            try #require(AudioConverterNew(&input, &output, &converter) == noErr)
            defer { AudioConverterDispose(converter) }
            let samples = (0..<6000).map { Int16(truncatingIfNeeded: $0 * 37 - 20000) }
            let source = ConverterSource(rawBytes(samples), bytesPerFrame: 4, chunkFrames: 700)
            source.pauseAt = 1400
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * 2000)
            defer { buffer.deallocate() }
            var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(buffer, numberOfChannels: 2))
            var packets: UInt32 = 2000
            #expect(AudioConverterFillComplexBuffer(converter, supplyInput, source.pointer, &packets, &list, nil) == kNoDataYet)
            #expect(packets == 1400 && list.mBuffers.mDataByteSize == 1400 * 8)
            var converted = Array(buffer[0..<2800])
            let (status, rest) = fillAll(converter!, source, outputBytesPerFrame: 8, framesPerFill: 2000)
            #expect(status == noErr)
            converted += values(rest, as: Float.self)
            #expect(converted == samples.map { Float($0) / 32768 })
        }

        @Test("channel maps: by default 2 → 1 keeps the left channel and 1 → 2 leaves the right silent; [0, 0] plays mono on both")
        func channelMaps() throws {
            var stereo = pcm(48000, channels: 2, bits: 16)
            var mono = pcm(48000, channels: 1, bits: 16)
            var down: AudioConverterRef?, up: AudioConverterRef?
            try #require(AudioConverterNew(&stereo, &mono, &down) == noErr)
            try #require(AudioConverterNew(&mono, &stereo, &up) == noErr)
            defer { AudioConverterDispose(down); AudioConverterDispose(up) }
            let frames: [Int16] = [100, -100, 200, -200]
            var left = [Int16](repeating: 0, count: 2)
            var size: UInt32 = 4
            #expect(AudioConverterConvertBuffer(down, 8, frames, &size, &left) == noErr)
            #expect(left == [100, 200])
            var map = [Int32](repeating: 9, count: 2)
            var mapSize: UInt32 = 8
            #expect(AudioConverterGetProperty(up, kAudioConverterChannelMap, &mapSize, &map) == noErr)
            #expect(map == [0, -1])
            var both = [Int16](repeating: 1, count: 4)
            size = 8
            #expect(AudioConverterConvertBuffer(up, 4, left, &size, &both) == noErr)
            #expect(both == [100, 0, 200, 0])
            map = [0, 0]
            #expect(AudioConverterSetProperty(up, kAudioConverterChannelMap, 8, &map) == noErr)
            #expect(AudioConverterConvertBuffer(up, 4, left, &size, &both) == noErr)
            #expect(both == [100, 100, 200, 200])
            map = [0, 1]
            #expect(AudioConverterSetProperty(up, kAudioConverterChannelMap, 8, &map) == kAudio_ParamError)
            #expect(AudioConverterSetProperty(up, kAudioConverterChannelMap, 4, &map) == kAudioConverterErr_BadPropertySizeError)
        }

        @Test("properties: buffer sizes, calculated sizes, formats, prime info, quality")
        func properties() throws {
            var input = pcm(44100, channels: 2, bits: 16)
            var output = planar(pcm(48000, channels: 2, bits: 32, float: true))
            var converter: AudioConverterRef?
            try #require(AudioConverterNew(&input, &output, &converter) == noErr)
            defer { AudioConverterDispose(converter) }
            var value: UInt32 = 0
            var size: UInt32 = 4
            #expect(AudioConverterGetProperty(converter, kAudioConverterPropertyMinimumInputBufferSize, &size, &value) == noErr && value == 4)
            #expect(AudioConverterGetProperty(converter, kAudioConverterPropertyMaximumOutputPacketSize, &size, &value) == noErr && value == 4)
            value = 44100 * 4
            #expect(AudioConverterGetProperty(converter, kAudioConverterPropertyCalculateOutputBufferSize, &size, &value) == noErr)
            #expect(value == 48000 * 4)
            var format = AudioStreamBasicDescription()
            size = 40
            #expect(AudioConverterGetProperty(converter, kAudioConverterCurrentOutputStreamDescription, &size, &format) == noErr)
            #expect(format.mSampleRate == 48000 && format.mFormatFlags & kAudioFormatFlagIsNonInterleaved != 0 && format.mBytesPerFrame == 4)
            var prime = AudioConverterPrimeInfo(leadingFrames: 9, trailingFrames: 9)
            size = 8
            #expect(AudioConverterGetProperty(converter, kAudioConverterPrimeInfo, &size, &prime) == noErr)
            #expect(prime.leadingFrames == 0 && prime.trailingFrames == 0)
            var infoSize: UInt32 = 0
            var writable: DarwinBoolean = false
            #expect(AudioConverterGetPropertyInfo(converter, kAudioConverterChannelMap, &infoSize, &writable) == noErr)
            #expect(infoSize == 8 && writable.boolValue)
            size = 4
            #expect(AudioConverterGetProperty(converter, kAudioConverterSampleRateConverterQuality, &size, &value) == noErr && value == kAudioConverterQuality_High)
            value = kAudioConverterQuality_Max
            #expect(AudioConverterSetProperty(converter, kAudioConverterSampleRateConverterQuality, 4, &value) == noErr)
            value = 5
            #expect(AudioConverterSetProperty(converter, kAudioConverterSampleRateConverterQuality, 4, &value) == kAudio_ParamError)
            value = kConverterPrimeMethod_None
            #expect(AudioConverterSetProperty(converter, kAudioConverterPrimeMethod, 4, &value) == kAudioConverterErr_PropertyNotSupported)
        }

        @Test("bad calls return Apple's codes: formats, rates, sizes, properties, nil and disposed converters")
        func errors() throws {
            var converter: AudioConverterRef?
            var aac = pcm()
            aac.mFormatID = kAudioFormatMPEG4AAC
            var good = pcm(44100, channels: 2, bits: 16)
            #expect(AudioConverterNew(&aac, &good, &converter) == kAudioConverterErr_FormatNotSupported)
            var unsigned16 = pcm(44100, channels: 2, bits: 16)
            unsigned16.mFormatFlags = kAudioFormatFlagIsPacked
            #expect(AudioConverterNew(&unsigned16, &good, &converter) == kAudioConverterErr_FormatNotSupported)
            var fixed = pcm(44100, channels: 2, bits: 32)
            fixed.mFormatFlags |= 24 << kLinearPCMFormatFlagsSampleFractionShift
            #expect(AudioConverterNew(&fixed, &good, &converter) == kAudioConverterErr_FormatNotSupported)
            var noRate = pcm(0, channels: 2, bits: 16)
            #expect(AudioConverterNew(&noRate, &good, &converter) == kAudioConverterErr_InputSampleRateOutOfRange)
            #expect(AudioConverterNew(&good, &noRate, &converter) == kAudioConverterErr_OutputSampleRateOutOfRange)
            var tooFast = pcm(44100 * 1000, channels: 2, bits: 16)
            #expect(AudioConverterNew(&good, &tooFast, &converter) == kAudioConverterErr_OutputSampleRateOutOfRange)
            #expect(converter == nil)

            var other = pcm(48000, channels: 2, bits: 32, float: true)
            try #require(AudioConverterNew(&good, &other, &converter) == noErr)
            var out = [UInt8](repeating: 0, count: 64)
            var size = UInt32(out.count)
            let input = [UInt8](repeating: 0, count: 8)
            #expect(AudioConverterConvertBuffer(converter, 8, input, &size, &out) == kAudioConverterErr_OperationNotSupported)
            var same = pcm(44100, channels: 2, bits: 32, float: true)
            var sameRate: AudioConverterRef?
            try #require(AudioConverterNew(&good, &same, &sameRate) == noErr)
            #expect(AudioConverterConvertBuffer(sameRate, 3, input, &size, &out) == kAudioConverterErr_InvalidInputSize)
            size = 8
            #expect(AudioConverterConvertBuffer(sameRate, 8, input, &size, &out) == kAudioConverterErr_InvalidOutputSize)
            var value: UInt32 = 0
            size = 2
            #expect(AudioConverterGetProperty(converter, kAudioConverterPropertyMinimumInputBufferSize, &size, &value) == kAudioConverterErr_BadPropertySizeError)
            size = 4
            #expect(AudioConverterGetProperty(converter, fourCharCode("zzzz"), &size, &value) == kAudioConverterErr_PropertyNotSupported)
            var format = AudioStreamBasicDescription()
            #expect(AudioConverterSetProperty(converter, kAudioConverterCurrentInputStreamDescription, 40, &format) == kAudioConverterErr_PropertyNotSupported)
            // A list with the wrong number of buffers.
            let two = AudioBufferList.allocate(maximumBuffers: 2)
            defer { free(two.unsafeMutablePointer) }
            let memory = UnsafeMutableBufferPointer<Float>.allocate(capacity: 16)
            defer { memory.deallocate() }
            two[0] = AudioBuffer(memory, numberOfChannels: 2)
            two[1] = two[0]
            var packets: UInt32 = 4
            let source = ConverterSource(input, bytesPerFrame: 4, chunkFrames: 2)
            #expect(AudioConverterFillComplexBuffer(converter, supplyInput, source.pointer, &packets, two.unsafeMutablePointer, nil) == kAudio_ParamError)

            #expect(AudioConverterDispose(sameRate) == noErr)
            #expect(AudioConverterDispose(converter) == noErr)
            #expect(AudioConverterReset(converter) == kAudio_ParamError)
            #expect(AudioConverterDispose(converter) == kAudio_ParamError)
            #expect(AudioConverterReset(nil) == kAudio_ParamError)
            #expect(AudioConverterGetProperty(nil, kAudioConverterPrimeInfo, &size, &value) == kAudio_ParamError)
        }
    }
}
