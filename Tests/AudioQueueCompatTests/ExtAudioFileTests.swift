import AudioQueueCompat
import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// Reads a whole file through ExtAudioFile in `client` (interleaved), `chunk` frames a call, in
/// the idiom of published code: set the client format, read until 0 frames.
func extReadAll(_ path: String, client: AudioStreamBasicDescription?, chunk: UInt32 = 4096) throws -> (OSStatus, [UInt8]) {
    var file: ExtAudioFileRef?
    try #require(ExtAudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, &file) == noErr)
    defer { ExtAudioFileDispose(file!) }
    var format = AudioStreamBasicDescription()
    var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
    if var client {
        let status = ExtAudioFileSetProperty(file!, kExtAudioFileProperty_ClientDataFormat, size, &client)
        guard status == noErr else { return (status, []) }
    }
    #expect(ExtAudioFileGetProperty(file!, kExtAudioFileProperty_ClientDataFormat, &size, &format) == noErr)
    let bytesPerFrame = Int(format.mBytesPerFrame)
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: Int(chunk) * bytesPerFrame, alignment: 16)
    defer { buffer.deallocate() }
    var output: [UInt8] = []
    while true {
        var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(
            mNumberChannels: format.mChannelsPerFrame, mDataByteSize: chunk * UInt32(bytesPerFrame), mData: buffer))
        var frames = chunk
        let status = ExtAudioFileRead(file!, &frames, &list)
        guard status == noErr else { return (status, output) }
        if frames == 0 { return (noErr, output) }
        #expect(list.mBuffers.mDataByteSize == frames * UInt32(bytesPerFrame))
        output += Array(UnsafeRawBufferPointer(start: buffer, count: Int(frames) * bytesPerFrame))
    }
}

/// Writes `channels` (one array of floats per channel) through a non-interleaved float client
/// format, `chunk` frames a call; leaves the file open when `dispose` is false.
func extWritePlanar(_ path: String, type: AudioFileTypeID, fileFormat: AudioStreamBasicDescription, rate: Double,
                    channels: [[Float]], chunk: Int = 1000, flags: UInt32 = AudioFileFlags.eraseFile.rawValue,
                    dispose: Bool = true) throws -> ExtAudioFileRef {
    var fileFormat = fileFormat
    var file: ExtAudioFileRef?
    try #require(ExtAudioFileCreateWithURL(URL(fileURLWithPath: path) as CFURL, type, &fileFormat, nil, flags, &file) == noErr)
    var client = planar(pcm(rate, channels: UInt32(channels.count), bits: 32, float: true))
    try #require(ExtAudioFileSetProperty(file!, kExtAudioFileProperty_ClientDataFormat, UInt32(MemoryLayout<AudioStreamBasicDescription>.size), &client) == noErr)
    let list = AudioBufferList.allocate(maximumBuffers: channels.count)
    defer { free(list.unsafeMutablePointer) }
    let memory = channels.map { samples -> UnsafeMutableBufferPointer<Float> in
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: samples.count)
        _ = buffer.initialize(from: samples)
        return buffer
    }
    defer { memory.forEach { $0.deallocate() } }
    var offset = 0
    while offset < channels[0].count {
        let n = min(chunk, channels[0].count - offset)
        for (index, buffer) in memory.enumerated() {
            list[index] = AudioBuffer(UnsafeMutableBufferPointer(rebasing: buffer[offset..<(offset + n)]), numberOfChannels: 1)
        }
        try #require(ExtAudioFileWrite(file!, UInt32(n), list.unsafePointer) == noErr)
        offset += n
    }
    if dispose { #expect(ExtAudioFileDispose(file!) == noErr) }
    return file!
}

/// Two semaphores an input proc uses to hold a converter's lock until the test lets go.
final class ConverterHold: @unchecked Sendable {
    let inside = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
}

/// An input proc that says it is inside, waits to be released, then gives no data (`'wait'`).
func holdConverter(_ converter: AudioConverterRef, _ ioNumberDataPackets: UnsafeMutablePointer<UInt32>,
                   _ ioData: UnsafeMutablePointer<AudioBufferList>,
                   _ outDataPacketDescription: UnsafeMutablePointer<UnsafeMutablePointer<AudioStreamPacketDescription>?>?,
                   _ inUserData: UnsafeMutableRawPointer?) -> OSStatus {
    let hold = Unmanaged<ConverterHold>.fromOpaque(inUserData!).takeUnretainedValue()
    hold.inside.signal()
    hold.release.wait()
    ioNumberDataPackets.pointee = 0
    return kNoDataYet
}

extension AQCompatTests {
    /// Extended Audio File Services: files read and written in a client format of your own,
    /// converted exactly (or, across rates, to exact lengths), written atomically.
    @Suite("Extended Audio File Services", .serialized)
    struct ExtAudioFileTests {
        let temp: TemporaryTestDirectory
        init() throws { temp = try TemporaryTestDirectory(prefix: "aqcompat-extaudiofile") }

        @Test("result codes and property IDs have Apple's values (ExtendedAudioFile.h)")
        func constants() {
            #expect(kExtAudioFileError_InvalidProperty == -66561 && kExtAudioFileError_InvalidPropertySize == -66562)
            #expect(kExtAudioFileError_NonPCMClientFormat == -66563 && kExtAudioFileError_InvalidChannelMap == -66564)
            #expect(kExtAudioFileError_InvalidOperationOrder == -66565 && kExtAudioFileError_InvalidDataFormat == -66566)
            #expect(kExtAudioFileError_MaxPacketSizeUnknown == -66567 && kExtAudioFileError_InvalidSeek == -66568)
            #expect(kExtAudioFileError_AsyncWriteTooLarge == -66569 && kExtAudioFileError_AsyncWriteBufferOverflow == -66570)
            #expect(kExtAudioFileProperty_FileDataFormat == fourCharCode("ffmt") && kExtAudioFileProperty_ClientDataFormat == fourCharCode("cfmt"))
            #expect(kExtAudioFileProperty_FileLengthFrames == 0x2366_726D && kExtAudioFileProperty_AudioConverter == fourCharCode("acnv"))
        }

        @Test("16-bit WAV written from non-interleaved floats reads back as 16-bit integers, sample for sample")
        func roundTripInteger() throws {
            let path = temp.file("round.wav")
            let left = (0..<5000).map { (i: Int) -> Float in Float(Int16(truncatingIfNeeded: i * 131 - 30000)) / 32768 }
            let right = (0..<5000).map { (i: Int) -> Float in Float(Int16(truncatingIfNeeded: 7000 - i * 17)) / 32768 }
            _ = try extWritePlanar(path, type: kAudioFileWAVEType, fileFormat: pcm(44100, channels: 2, bits: 16), rate: 44100,
                                   channels: [left, right], chunk: 777)
            let (status, bytes) = try extReadAll(path, client: pcm(44100, channels: 2, bits: 16), chunk: 1001)
            #expect(status == noErr)
            let expected: [Int16] = zip(left, right).flatMap { (l: Float, r: Float) -> [Int16] in [Int16(l * 32768), Int16(r * 32768)] }
            #expect(values(bytes, as: Int16.self) == expected)
            // libsndfile agrees.
            let (format, samples) = try integerSamples(path)
            #expect(format.sampleFormat == .int16 && format.channelCount == 2)
            #expect(samples == expected.map { Int32($0) << 16 })
        }

        @Test("24-bit big-endian AIFF through a 32-bit integer client: exact, and the file's format and length")
        func roundTripAIFF() throws {
            let path = temp.file("deep.aiff")
            let samples = (0..<3001).map { Int32(truncatingIfNeeded: ($0 * 2_654_435) % 16_777_216 - 8_388_608) << 8 }
            var fileFormat = pcm(48000, channels: 1, bits: 24, bigEndian: true)
            var file: ExtAudioFileRef?
            try #require(ExtAudioFileCreateWithURL(URL(fileURLWithPath: path) as CFURL, kAudioFileAIFFType, &fileFormat, nil, 0, &file) == noErr)
            var client = pcm(48000, channels: 1, bits: 32)
            #expect(ExtAudioFileSetProperty(file!, kExtAudioFileProperty_ClientDataFormat, 40, &client) == noErr)
            var copy = samples
            let written = copy.withUnsafeMutableBufferPointer { buffer -> OSStatus in
                var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(buffer, numberOfChannels: 1))
                return ExtAudioFileWrite(file!, UInt32(buffer.count), &list)
            }
            #expect(written == noErr)
            #expect(ExtAudioFileDispose(file!) == noErr)

            var reader: ExtAudioFileRef?
            try #require(ExtAudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, &reader) == noErr)
            var format = AudioStreamBasicDescription()
            var size = UInt32(40)
            #expect(ExtAudioFileGetProperty(reader!, kExtAudioFileProperty_FileDataFormat, &size, &format) == noErr)
            #expect(format.mBitsPerChannel == 24 && format.mFormatFlags & kAudioFormatFlagIsBigEndian != 0 && format.mSampleRate == 48000)
            var length: Int64 = 0
            size = 8
            #expect(ExtAudioFileGetProperty(reader!, kExtAudioFileProperty_FileLengthFrames, &size, &length) == noErr && length == 3001)
            #expect(ExtAudioFileDispose(reader!) == noErr)
            let (status, bytes) = try extReadAll(path, client: pcm(48000, channels: 1, bits: 32), chunk: 333)
            #expect(status == noErr && values(bytes, as: Int32.self) == samples)
        }

        @Test("a 44.1 kHz file read as 48 kHz float: exactly round(n × 48000 / 44100) frames, on the sine; length and position in file frames",
              arguments: [44100, 10000])
        func readAcrossRates(frames: Int) throws {
            let path = temp.file("sine-\(frames).wav")
            let sine = (0..<frames).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 44100)) }
            try writeFile(path, sine, rate: 44100, channels: 1, format: .float32)
            var file: ExtAudioFileRef?
            try #require(ExtAudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, &file) == noErr)
            defer { ExtAudioFileDispose(file!) }
            var client = pcm(48000, channels: 1, bits: 32, float: true)
            #expect(ExtAudioFileSetProperty(file!, kExtAudioFileProperty_ClientDataFormat, 40, &client) == noErr)
            var length: Int64 = 0
            var size = UInt32(8)
            #expect(ExtAudioFileGetProperty(file!, kExtAudioFileProperty_FileLengthFrames, &size, &length) == noErr)
            #expect(length == Int64(frames))   // in the file's frames, as on Apple
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 512)
            defer { buffer.deallocate() }
            var converted: [Float] = []
            while true {
                var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(buffer, numberOfChannels: 1))
                var count: UInt32 = 512
                try #require(ExtAudioFileRead(file!, &count, &list) == noErr)
                if count == 0 { break }
                converted += buffer[0..<Int(count)]
            }
            #expect(converted.count == Int((Double(frames) * 48000 / 44100).rounded()))
            let error = largestDeviation(converted, fromSineOf: 0.5, frequency: 1000, rate: 48000)
            #expect(error < 1e-3, "largest deviation from the 48 kHz sine: \(error)")
            var position: Int64 = -1
            #expect(ExtAudioFileTell(file!, &position) == noErr && position == Int64(frames))
            // Seek is in the file's frames: from half-way, the rest converts to exactly its share.
            #expect(ExtAudioFileSeek(file!, Int64(frames / 2)) == noErr)
            var rest = 0
            while true {
                var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(buffer, numberOfChannels: 1))
                var count: UInt32 = 512
                try #require(ExtAudioFileRead(file!, &count, &list) == noErr)
                if count == 0 { break }
                rest += Int(count)
            }
            #expect(rest == Int((Double(frames - frames / 2) * 48000 / 44100).rounded()))
        }

        @Test("seek and tell at one rate land on the exact frame; a seek past the end is kExtAudioFileError_InvalidSeek")
        func seekAndTell() throws {
            let path = temp.file("seek.caf")
            let ramp = (0..<4000).map { Float($0) / 32768 }
            try writeFile(path, ramp, rate: 48000, channels: 1, format: .int16)
            var file: ExtAudioFileRef?
            try #require(ExtAudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, &file) == noErr)
            defer { ExtAudioFileDispose(file!) }
            var client = pcm(48000, channels: 1, bits: 16)
            #expect(ExtAudioFileSetProperty(file!, kExtAudioFileProperty_ClientDataFormat, 40, &client) == noErr)
            #expect(ExtAudioFileSeek(file!, 1234) == noErr)
            var samples = [Int16](repeating: 0, count: 10)
            let status = samples.withUnsafeMutableBufferPointer { buffer -> OSStatus in
                var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(buffer, numberOfChannels: 1))
                var count: UInt32 = 10
                return ExtAudioFileRead(file!, &count, &list)
            }
            #expect(status == noErr && samples == (1234..<1244).map { Int16($0) })
            var position: Int64 = 0
            #expect(ExtAudioFileTell(file!, &position) == noErr && position == 1244)
            #expect(ExtAudioFileSeek(file!, 4001) == kExtAudioFileError_InvalidSeek)
            #expect(ExtAudioFileSeek(file!, -1) == kExtAudioFileError_InvalidSeek)
        }

        @Test("a created file appears only when disposed of; an existing one is replaced only with kAudioFileFlags_EraseFile")
        func atomicAndNoClobber() throws {
            let path = temp.file("take.wav")
            let tone = (0..<2000).map { Float($0 % 100) / 200 }
            // Not there while it is being written.
            let open = try extWritePlanar(path, type: kAudioFileWAVEType, fileFormat: pcm(48000, channels: 1, bits: 16),
                                          rate: 48000, channels: [tone], flags: 0, dispose: false)
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(try temp.contents() == [])
            #expect(ExtAudioFileDispose(open) == noErr)
            #expect(try temp.contents() == ["take.wav"])
            let original = try Data(contentsOf: URL(fileURLWithPath: path))

            // Without the erase flag an existing file is refused and left alone.
            var format = pcm(48000, channels: 1, bits: 16)
            var file: ExtAudioFileRef?
            #expect(ExtAudioFileCreateWithURL(URL(fileURLWithPath: path) as CFURL, kAudioFileWAVEType, &format, nil, 0, &file) == kAudioFilePermissionsError)
            #expect(file == nil)
            // With it, the old file stays until the new one is finished.
            let replacing = try extWritePlanar(path, type: kAudioFileWAVEType, fileFormat: pcm(48000, channels: 1, bits: 16),
                                               rate: 48000, channels: [tone.map { -$0 }], dispose: false)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == original)
            #expect(ExtAudioFileDispose(replacing) == noErr)
            let (_, samples) = try integerSamples(path)
            #expect(samples == tone.map { Int32(Int16((-$0 * 32768).rounded())) << 16 })

            // A file that appears at the path meanwhile is not overwritten without the flag.
            let late = temp.file("late.wav")
            let pending = try extWritePlanar(late, type: kAudioFileWAVEType, fileFormat: pcm(48000, channels: 1, bits: 16),
                                             rate: 48000, channels: [tone], flags: 0, dispose: false)
            try Data("someone else's".utf8).write(to: URL(fileURLWithPath: late))
            #expect(ExtAudioFileDispose(pending) == kAudioFilePermissionsError)
            #expect(try String(contentsOfFile: late, encoding: .utf8) == "someone else's")
            #expect(try temp.contents() == ["late.wav", "take.wav"])
        }

        @Test("ExtAudioFileWriteAsync: primed with (0, nil), written from a callback-like loop, flushed on dispose, exactly")
        func asynchronousWrites() throws {
            let path = temp.file("async.caf")
            var fileFormat = pcm(48000, channels: 2, bits: 32, float: true)
            var file: ExtAudioFileRef?
            try #require(ExtAudioFileCreateWithURL(URL(fileURLWithPath: path) as CFURL, kAudioFileCAFType, &fileFormat, nil,
                                                   AudioFileFlags.eraseFile.rawValue, &file) == noErr)
            var client = pcm(48000, channels: 2, bits: 16)
            #expect(ExtAudioFileSetProperty(file!, kExtAudioFileProperty_ClientDataFormat, 40, &client) == noErr)
            #expect(ExtAudioFileWriteAsync(file!, 0, nil) == noErr)
            let samples = (0..<(2 * 441 * 200)).map { Int16(truncatingIfNeeded: $0 * 7 - 30000) }
            let buffer = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 2 * 441)
            defer { buffer.deallocate() }
            for block in 0..<200 {
                _ = buffer.initialize(from: samples[(block * 882)..<((block + 1) * 882)])
                var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(buffer, numberOfChannels: 2))
                let status = ExtAudioFileWriteAsync(file!, 441, &list)
                try #require(status == noErr, "block \(block): \(AudioQueueCompatLastErrorMessage() ?? "")")
            }
            let tooMany = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 2 * 65537)
            defer { tooMany.deallocate() }
            tooMany.initialize(repeating: 0)
            var big = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(tooMany, numberOfChannels: 2))
            #expect(ExtAudioFileWriteAsync(file!, 65537, &big) == kExtAudioFileError_AsyncWriteTooLarge)
            #expect(ExtAudioFileDispose(file!) == noErr)
            let (_, floats) = try floatSamples(path)
            #expect(floats == samples.map { Float($0) / 32768 })
        }

        @Test("ExtAudioFileWriteAsync: while the writer thread is held up, 65 536 frames are taken and the next is an overflow, not written")
        func asynchronousOverflow() throws {
            let path = temp.file("overflow.wav")
            var format = pcm(48000, channels: 1, bits: 16)
            var file: ExtAudioFileRef?
            try #require(ExtAudioFileCreateWithURL(URL(fileURLWithPath: path) as CFURL, kAudioFileWAVEType, &format, nil, 0, &file) == noErr)
            #expect(ExtAudioFileWriteAsync(file!, 0, nil) == noErr)
            // Hold the file's converter (its lock) from another thread: the writer thread cannot convert meanwhile.
            var converter: AudioConverterRef?
            var size = UInt32(MemoryLayout<AudioConverterRef?>.size)
            #expect(ExtAudioFileGetProperty(file!, kExtAudioFileProperty_AudioConverter, &size, &converter) == noErr)
            let hold = ConverterHold()
            let address = UInt(bitPattern: converter)   // an address crosses threads; the reference is Apple's pointer type
            let holder = Thread {
                let converter = AudioConverterRef(bitPattern: address)
                let scratch = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 16)
                defer { scratch.deallocate() }
                var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(scratch, numberOfChannels: 1))
                var packets: UInt32 = 16
                _ = AudioConverterFillComplexBuffer(converter, holdConverter, hold.pointer, &packets, &list, nil)
                hold.inside.signal()   // done
            }
            holder.start()
            hold.inside.wait()
            let samples = (0..<65537).map { Int16(truncatingIfNeeded: $0) }
            let buffer = UnsafeMutableBufferPointer<Int16>.allocate(capacity: samples.count)
            defer { buffer.deallocate() }
            _ = buffer.initialize(from: samples)
            var all = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(UnsafeMutableBufferPointer(rebasing: buffer[0..<65536]), numberOfChannels: 1))
            #expect(ExtAudioFileWriteAsync(file!, 65536, &all) == noErr)
            var one = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(UnsafeMutableBufferPointer(rebasing: buffer[65536...]), numberOfChannels: 1))
            #expect(ExtAudioFileWriteAsync(file!, 1, &one) == kExtAudioFileError_AsyncWriteBufferOverflow)
            hold.release.signal()
            hold.inside.wait()
            #expect(ExtAudioFileDispose(file!) == noErr)
            let (_, written) = try integerSamples(path)
            #expect(written == samples.prefix(65536).map { Int32($0) << 16 })
        }

        @Test("kExtAudioFileProperty_AudioConverter: a channel map plays a mono file on both sides of a stereo client")
        func converterProperty() throws {
            let path = temp.file("mono.wav")
            try writeFile(path, [0.25, -0.5, 0.125], rate: 48000, channels: 1, format: .int16)
            var file: ExtAudioFileRef?
            try #require(ExtAudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, &file) == noErr)
            defer { ExtAudioFileDispose(file!) }
            var client = pcm(48000, channels: 2, bits: 32, float: true)
            #expect(ExtAudioFileSetProperty(file!, kExtAudioFileProperty_ClientDataFormat, 40, &client) == noErr)
            var converter: AudioConverterRef?
            var size = UInt32(MemoryLayout<AudioConverterRef?>.size)
            #expect(ExtAudioFileGetProperty(file!, kExtAudioFileProperty_AudioConverter, &size, &converter) == noErr)
            var map: [Int32] = [0, 0]
            #expect(AudioConverterSetProperty(converter, kAudioConverterChannelMap, 8, &map) == noErr)
            var config: UnsafeRawPointer? = nil
            #expect(ExtAudioFileSetProperty(file!, kExtAudioFileProperty_ConverterConfig, UInt32(MemoryLayout<UnsafeRawPointer?>.size), &config) == noErr)
            #expect(AudioConverterDispose(converter) == kAudio_ParamError)   // the file's own
            var frames = [Float](repeating: 9, count: 6)
            let status = frames.withUnsafeMutableBufferPointer { buffer -> OSStatus in
                var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(buffer, numberOfChannels: 2))
                var count: UInt32 = 3
                return ExtAudioFileRead(file!, &count, &list)
            }
            #expect(status == noErr && frames == [0.25, 0.25, -0.5, -0.5, 0.125, 0.125])
        }

        @Test("bad calls return Apple's codes: nil and disposed files, sizes, formats, layouts, order of operations")
        func errors() throws {
            let path = temp.file("errors.wav")
            try writeFile(path, [0, 0.5, 0, -0.5], rate: 48000, channels: 2, format: .int16)
            var reader: ExtAudioFileRef?
            try #require(ExtAudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, &reader) == noErr)
            var format = AudioStreamBasicDescription()
            var size: UInt32 = 20
            #expect(ExtAudioFileGetProperty(reader!, kExtAudioFileProperty_ClientDataFormat, &size, &format) == kExtAudioFileError_InvalidPropertySize)
            var client = pcm(48000, channels: 2, bits: 16)
            #expect(ExtAudioFileSetProperty(reader!, kExtAudioFileProperty_ClientDataFormat, 39, &client) == kExtAudioFileError_InvalidPropertySize)
            var aac = client
            aac.mFormatID = kAudioFormatMPEG4AAC
            #expect(ExtAudioFileSetProperty(reader!, kExtAudioFileProperty_ClientDataFormat, 40, &aac) == kExtAudioFileError_NonPCMClientFormat)
            var odd = client
            odd.mBitsPerChannel = 20
            #expect(ExtAudioFileSetProperty(reader!, kExtAudioFileProperty_ClientDataFormat, 40, &odd) == kAudioConverterErr_FormatNotSupported)
            var value: UInt32 = 0
            size = 4
            #expect(ExtAudioFileGetProperty(reader!, fourCharCode("zzzz"), &size, &value) == kExtAudioFileError_InvalidProperty)
            size = 8
            #expect(ExtAudioFileGetProperty(reader!, kExtAudioFileProperty_PacketTable, &size, &value) == kExtAudioFileError_InvalidProperty)
            var length: Int64 = 9
            #expect(ExtAudioFileSetProperty(reader!, kExtAudioFileProperty_FileLengthFrames, 8, &length) == kExtAudioFileError_InvalidProperty)
            var mono = AudioChannelLayout()
            mono.mChannelLayoutTag = kAudioChannelLayoutTag_Mono
            #expect(ExtAudioFileSetProperty(reader!, kExtAudioFileProperty_ClientChannelLayout, 12, &mono) == kExtAudioFileError_InvalidChannelMap)
            let memory = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 8)
            memory.initialize(repeating: 0)
            let two = AudioBufferList.allocate(maximumBuffers: 2)
            defer { free(two.unsafeMutablePointer); memory.deallocate() }
            var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(memory, numberOfChannels: 2))
            #expect(ExtAudioFileWrite(reader!, 4, &list) == kExtAudioFileError_InvalidOperationOrder)
            // A list of two buffers for an interleaved client format.
            two[0] = AudioBuffer(memory, numberOfChannels: 2)
            two[1] = two[0]
            var frames: UInt32 = 2
            #expect(ExtAudioFileRead(reader!, &frames, two.unsafeMutablePointer) == kAudio_ParamError)
            #expect(ExtAudioFileDispose(reader!) == noErr)
            #expect(ExtAudioFileDispose(reader!) == kAudio_ParamError)
            #expect(ExtAudioFileTell(reader!, &length) == kAudio_ParamError)
            #expect(ExtAudioFileDispose(nil) == kAudio_ParamError)
            #expect(ExtAudioFileSeek(nil, 0) == kAudio_ParamError)

            var writer: ExtAudioFileRef?
            var fileFormat = pcm(48000, channels: 2, bits: 16)
            var compressed = fileFormat
            compressed.mFormatID = kAudioFormatMPEG4AAC
            #expect(ExtAudioFileCreateWithURL(URL(fileURLWithPath: temp.file("x.caf")) as CFURL, kAudioFileCAFType, &compressed, nil, 0, &writer) == kAudioFileUnsupportedDataFormatError)
            #expect(ExtAudioFileCreateWithURL(URL(fileURLWithPath: temp.file("x.caf")) as CFURL, kAudioFileCAFType, &fileFormat, &mono, 0, &writer) == kExtAudioFileError_InvalidChannelMap)
            try #require(ExtAudioFileCreateWithURL(URL(fileURLWithPath: temp.file("x.caf")) as CFURL, kAudioFileCAFType, &fileFormat, nil, 0, &writer) == noErr)
            frames = 2
            #expect(ExtAudioFileRead(writer!, &frames, &list) == kExtAudioFileError_InvalidOperationOrder)
            #expect(ExtAudioFileWrite(writer!, 4, &list) == noErr)
            var stereo = AudioChannelLayout()
            stereo.mChannelLayoutTag = kAudioChannelLayoutTag_Stereo
            #expect(ExtAudioFileSetProperty(writer!, kExtAudioFileProperty_FileChannelLayout, 12, &stereo) == kExtAudioFileError_InvalidOperationOrder)
            #expect(ExtAudioFileSeek(writer!, 0) == kExtAudioFileError_InvalidSeek)
            #expect(ExtAudioFileTell(writer!, &length) == noErr && length == 4)
            #expect(ExtAudioFileDispose(writer!) == noErr)
        }

        @Test("Apple's offline-render flow: a queue rendered offline in float, captured with ExtAudioFileWrite into 16-bit, sample-exact")
        func offlineRenderIntoExtAudioFile() throws {
            // The source: 16-bit stereo at 44.1 kHz, played by an offline queue whose render format is float.
            let frames = 30_000
            let source = (0..<(2 * frames)).map { Int16(truncatingIfNeeded: ($0 * 7919) % 40_000 - 20_000) }
            var format = pcm(44100, channels: 2, bits: 16)
            var renderFormat = pcm(44100, channels: 2, bits: 32, float: true)
            let (queue, _) = try offlineOutputQueue(format, render: renderFormat)
            defer { AudioQueueDispose(queue, true) }
            let half = 2 * frames / 2
            for part in [source[..<half], source[half...]] {
                let buffer = try filledBuffer(queue, rawBytes(Array(part)))
                #expect(AudioQueueEnqueueBuffer(queue, buffer, 0, nil) == noErr)
            }
            #expect(AudioQueueStart(queue, nil) == noErr)

            let path = temp.file("capture.wav")
            var captureFile: ExtAudioFileRef?
            try #require(ExtAudioFileCreateWithURL(URL(fileURLWithPath: path) as CFURL, kAudioFileWAVEType, &format, nil,
                                                   AudioFileFlags.eraseFile.rawValue, &captureFile) == noErr)
            #expect(ExtAudioFileSetProperty(captureFile!, kExtAudioFileProperty_ClientDataFormat,
                                            UInt32(MemoryLayout<AudioStreamBasicDescription>.size), &renderFormat) == noErr)
            let captureFrames: UInt32 = 2048
            var captureBuffer: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue, captureFrames * renderFormat.mBytesPerFrame, &captureBuffer) == noErr)
            var captureABL = AudioBufferList()
            captureABL.mNumberBuffers = 1
            captureABL.mBuffers.mNumberChannels = renderFormat.mChannelsPerFrame
            var ts = AudioTimeStamp()
            ts.mFlags = .sampleTimeValid
            #expect(AudioQueueOfflineRender(queue, &ts, captureBuffer!, 0) == noErr)
            var written = 0
            while written < frames {
                let request = UInt32(min(Int(captureFrames), frames - written))
                try #require(AudioQueueOfflineRender(queue, &ts, captureBuffer!, request) == noErr)
                captureABL.mBuffers.mData = captureBuffer!.pointee.mAudioData
                captureABL.mBuffers.mDataByteSize = captureBuffer!.pointee.mAudioDataByteSize
                let writeFrames = captureABL.mBuffers.mDataByteSize / renderFormat.mBytesPerFrame
                try #require(ExtAudioFileWrite(captureFile!, writeFrames, &captureABL) == noErr)
                written += Int(writeFrames)
                ts.mSampleTime += Double(writeFrames)
            }
            #expect(ExtAudioFileDispose(captureFile!) == noErr)
            let (fileFormat, captured) = try integerSamples(path)
            #expect(fileFormat.sampleFormat == .int16 && fileFormat.sampleRate == 44100)
            #expect(captured == source.map { Int32($0) << 16 })
        }

        @Test("the AQOfflineRender example (Apple's sample flow) captures its input exactly, synchronously and asynchronously, and at another file rate",
              arguments: [[], ["--async"], ["--file-format", "int24", "--file-rate", "48000"]])
        func offlineRenderExample(options: [String]) throws {
            let input = temp.file("source.wav")
            let samples = (0..<(2 * 22050)).map { Float(Int16(truncatingIfNeeded: $0 * 613 % 60000 - 30000)) / 32768 }
            try writeFile(input, samples, rate: 44100, format: .int16)
            let output = temp.file("capture-\(options.count).caf")
            let result = try runExample("AQOfflineRender", [input, output] + options)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("rendered 22050 frames"))
            if options.contains("--file-rate") {
                let reader = try AudioFileReader(path: output)
                #expect(reader.format.sampleRate == 48000 && reader.format.sampleFormat == .int24 && reader.frameCount == 24000)
            } else {
                let (_, captured) = try integerSamples(output)
                let (_, expected) = try integerSamples(input)
                #expect(captured == expected)
            }
        }

        @Test("killed mid-write, the example leaves no file at all: not the capture, not a temporary one")
        func killedWhileWriting() throws {
            let input = temp.file("source.wav")
            try writeFile(input, [Float](repeating: 0.25, count: 2 * 44100), rate: 44100, format: .int16)
            let output = temp.file("capture.wav")
            let process = try CLI.spawn([input, output, "--hold-after", "20000"], executable: CLI.executable(named: "AQOfflineRender"))
            let holding = process.waitForErrorOutput(containing: "holding after", timeout: 30)
            #expect(holding, "the example never reached the middle of its write: \(process.errorOutputSoFar)")
            process.send(SIGKILL)
            let result = process.wait(timeout: 10)
            #expect(result.uncaughtSignal == SIGKILL)
            #expect(!FileManager.default.fileExists(atPath: output))
            #expect(try temp.contents() == ["source.wav"])
        }
    }
}
