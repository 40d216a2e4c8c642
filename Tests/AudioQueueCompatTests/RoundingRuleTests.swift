import AudioQueueCompat
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension AQCompatTests {
    /// Float → 16-bit integer is Apple's AudioToolbox rule (Docs/CAPI.md): scale by 32768, round
    /// to nearest with ties away from zero, clip to −32768…32767 — on every path that writes
    /// integers: AudioConverter, ExtAudioFile writing a file, and an input queue recording.
    @Suite("Float to 16-bit rounding", .serialized)
    struct RoundingRuleTests {
        /// Samples in units of 2⁻¹⁵ (exact in a Float) and what the rule makes of them. Ties to
        /// even (lrintf: libsndfile, FFmpeg), truncation and ties toward +∞ each differ on some.
        static let cases: [(units: Float, expected: Int16)] = [
            (0.5, 1), (-0.5, -1), (1.5, 2), (-1.5, -2), (2.5, 3), (-2.5, -3), (0.4999, 0), (-0.4999, 0),
            (12345.5, 12346), (-12345.5, -12346), (32766.5, 32767), (-32767.5, -32768),
            (32767.5, 32767), (-32768.5, -32768), (32768, 32767), (-32768, -32768), (40000, 32767), (-40000, -32768),
        ]
        static var input: [Float] { cases.map { $0.units / 32768 } }
        static var expected: [Int16] { cases.map(\.expected) }

        @Test("AudioConverterConvertBuffer, Float32 to Int16")
        func converter() throws {
            var float32 = pcm(48000, channels: 1, bits: 32, float: true)
            var int16 = pcm(48000, channels: 1, bits: 16)
            var converter: AudioConverterRef?
            try #require(AudioConverterNew(&float32, &int16, &converter) == noErr)
            defer { AudioConverterDispose(converter) }
            let input = Self.input
            var output = [Int16](repeating: 99, count: input.count)
            var size = UInt32(output.count * 2)
            #expect(AudioConverterConvertBuffer(converter, UInt32(input.count * 4), input, &size, &output) == noErr)
            #expect(output == Self.expected)
        }

        @Test("ExtAudioFileWrite from a float client into a 16-bit WAV")
        func fileWriting() throws {
            let temp = try TemporaryTestDirectory(prefix: "aqcompat-rounding")
            let path = temp.file("rounded.wav")
            try extWritePlanar(path, type: kAudioFileWAVEType, fileFormat: pcm(48000, channels: 1, bits: 16), rate: 48000,
                               channels: [Self.input])
            let (format, samples) = try integerSamples(path)
            #expect(format.sampleFormat == .int16)
            #expect(samples.map { Int16(truncatingIfNeeded: $0 >> 16) } == Self.expected)
        }

        @Test("an input queue recording 16-bit from a float device")
        func recording() throws {
            let input = Self.input
            let frames = input.count
            let (device, queue, log) = try startedOfflineInputQueue(
                rate: 48000, channels: 1, maximumFrames: frames, format: pcm(48000, channels: 1, bits: 16),
                bufferFrames: frames) { _, count, channels in
                    for i in 0..<count { channels[0][i] = input[i % frames] }
                }
            defer {
                AudioQueueDispose(queue, true)
                AudioQueueSetDefaultDevice(.standard)
            }
            _ = try device.renderFloat(frames: frames)
            let recorded = try #require(log.inputs.first, "no buffer recorded")
            let samples = recorded.bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            #expect(samples == Self.expected)
        }
    }
}
