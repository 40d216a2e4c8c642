import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// The common containers × queue sample formats, written by ``AudioFileWriter`` (three channels,
/// 4099 frames) and read back through ``AudioFileReader``. (Every container × every sample format
/// libsndfile writes, within each one's channel and rate limits: `AllFormatsRoundTripTests`.)
@Suite("Write and read back")
struct RoundTripTests {
    static let combinations: [(AudioFileType, SampleFormat)] = FormatTests.commonTypes.flatMap { type in
        type.writableSampleFormats.map { (type, $0) }
    }

    /// The largest error allowed when reading back `format`: exact for floats, one
    /// least-significant bit for 16/24-bit integers, and float32's resolution near ±1 for
    /// 32-bit integers (whose LSB is finer than a float can express).
    static func tolerance(_ format: SampleFormat) -> Float {
        switch format {
        case .float32, .float64: 0
        case .int16: 1.0 / 32768
        case .int24: 1.0 / 8_388_608
        case .int32: 1.0 / 8_388_608
        }
    }

    @Test("samples, frame count, rate and channels survive", arguments: combinations)
    func roundTrip(type: AudioFileType, sampleFormat: SampleFormat) throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("out.\(type.fileExtension)")
        let channels = 3
        let frames = 4099
        let format = StreamFormat(sampleRate: 44100, channelCount: channels, sampleFormat: sampleFormat)
        let samples = Helpers.testSignal(frames: frames, channels: channels)
        try Helpers.write(samples, to: path, type: type, format: format)

        let reader = try AudioFileReader(path: path)
        #expect(reader.frameCount == Int64(frames))
        #expect(reader.format == format)
        #expect(reader.fileType == type)
        #expect(!reader.isTruncated)
        let back = try Helpers.readAll(reader)
        try #require(back.count == samples.count)
        let tolerance = Self.tolerance(sampleFormat)
        var worst: Float = 0
        for (a, b) in zip(samples, back) { worst = max(worst, abs(a - b)) }
        #expect(worst <= tolerance, "largest error \(worst) exceeds \(tolerance)")
        #expect(try dir.contents() == ["out.\(type.fileExtension)"])
    }

    @Test("integer encodings clip out-of-range samples; float encodings keep them", arguments: combinations)
    func clipping(type: AudioFileType, sampleFormat: SampleFormat) throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("clip.\(type.fileExtension)")
        let format = StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: sampleFormat)
        let samples: [Float] = [1.5, -1.5, 3, -3, 0.25]
        try Helpers.write(samples, to: path, type: type, format: format)
        let back = try Helpers.readAll(AudioFileReader(path: path))
        try #require(back.count == samples.count)
        if sampleFormat.isFloat {
            #expect(back == samples)
        } else {
            let lsb = Self.tolerance(sampleFormat)
            #expect(back[0] >= 1 - 2 * lsb && back[0] <= 1)
            #expect(back[1] == -1)
            #expect(back[2] >= 1 - 2 * lsb && back[2] <= 1)
            #expect(back[3] == -1)
            #expect(abs(back[4] - 0.25) <= lsb)
        }
    }

    @Test("the reader reports the file's encoding")
    func encodingNames() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("e.flac")
        try Helpers.write([0, 0.1, 0.2, 0.3], to: path, type: .flac,
                          format: StreamFormat(sampleRate: 96000, channelCount: 2, sampleFormat: .int16))
        let reader = try AudioFileReader(path: path)
        #expect(reader.containerName.hasPrefix("FLAC"))
        #expect(reader.encodingName == "Signed 16 bit PCM")
        #expect(reader.formatDescription == reader.containerName + ", Signed 16 bit PCM")
        #expect(reader.format.sampleRate == 96000)
        #expect(reader.frameCount == 2)
        #expect(reader.duration == 2.0 / 96000)
    }

    @Test("direct (non-atomic) writes produce the same file contents")
    func directWrite() throws {
        let dir = try TemporaryTestDirectory()
        let path = dir.file("direct.wav")
        let samples = Helpers.testSignal(frames: 300, channels: 2)
        try Helpers.write(samples, to: path, type: .wav,
                          format: StreamFormat(sampleRate: 22050, channelCount: 2), atomic: false)
        #expect(try Helpers.readAll(AudioFileReader(path: path)) == samples)
    }
}
