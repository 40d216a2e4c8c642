import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// Audio held in memory: a source whose every frame the test knows.
private final class MemorySource: AudioSource {
    let samples: [Float]
    let format: StreamFormat
    let isStream: Bool
    /// Frames the source really holds (fewer than ``frameCount`` for a truncated one).
    let available: Int64
    private var position: Int64 = 0
    var reads = 0

    init(_ samples: [Float], rate: Double, channels: Int = 1, isStream: Bool = false, available: Int64? = nil) {
        self.samples = samples
        format = StreamFormat(sampleRate: rate, channelCount: channels)
        self.isStream = isStream
        self.available = available ?? Int64(samples.count / channels)
    }

    var path: String { "memory.wav" }
    var frameCount: Int64 { Int64(samples.count / format.channelCount) }
    var truncationError: FileError? {
        available < frameCount ? FileError(.truncated, path: path, problem: "holds \(available) of \(frameCount) frames") : nil
    }
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(FileError) -> Int {
        reads += 1
        let n = Int(max(0, min(Int64(frames), available - position)))
        let c = format.channelCount
        samples.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + Int(position) * c, count: n * c) }
        position += Int64(n)
        return n
    }
    func seek(toFrame frame: Int64) throws(FileError) {
        if isStream { throw FileError(.invalidArgument, path: path, problem: "a stream cannot seek") }
        position = frame
    }
    func close() {}
}

@Suite("RegionStream: region, loops, rate conversion and channel matrix from any position")
struct RegionStreamTests {
    /// Reads `frames` frames in pieces of `piece` (the last may be short at the end).
    func readAll(_ stream: RegionStream, frames: Int, piece: Int = 700) -> [Float] {
        var out = [Float](repeating: .nan, count: frames * stream.outputChannels)
        var done = 0
        while done < frames {
            let got = out.withUnsafeMutableBufferPointer {
                stream.read(into: $0.baseAddress! + done * stream.outputChannels, frames: min(piece, frames - done))
            }
            done += got
            if got == 0 { break }
        }
        return Array(out[0..<(done * stream.outputChannels)])
    }

    @Test("same rate: a region looped three times, read in any piece size, is the region three times; a seek lands exactly, in any pass")
    func sameRateLoops() throws {
        let ramp = Signals.ramp(frames: 1000, start: 1)
        let region = Array(ramp[100..<700])
        let expected = region + region + region
        for piece in [1, 64, 599, 5000] {
            let stream = try RegionStream(source: MemorySource(ramp, rate: 48000), region: 100..<700, playCount: 3,
                                          readBlockFrames: piece == 64 ? 256 : 0)
            #expect(stream.totalFrames == 1800)
            #expect(readAll(stream, frames: 2000, piece: piece) == expected, "pieces of \(piece)")
            #expect(stream.isFinished && stream.error == nil)
        }
        let stream = try RegionStream(source: MemorySource(ramp, rate: 48000), region: 100..<700, playCount: 3)
        for k in [0, 1, 599, 600, 1234, 1799] {
            stream.seek(to: Int64(k))
            #expect(stream.position == Int64(k))
            #expect(readAll(stream, frames: 2000) == Array(expected[k...]), "from \(k)")
        }
        stream.seek(to: 1800)
        #expect(readAll(stream, frames: 10).isEmpty)
    }

    @Test("44.1 → 48 kHz: the whole play is round(N × ratio) frames; a seek anywhere, even across a loop, plays what the uninterrupted play plays there")
    func convertedSeeks() throws {
        let sine = Signals.sine(frequency: 997, sampleRate: 44100, frames: 44100)
        let stream = try RegionStream(source: MemorySource(sine, rate: 44100), playCount: 2, outputRate: 48000)
        #expect(stream.totalFrames == 96000)
        let whole = readAll(stream, frames: 100_000)
        #expect(abs(whole.count - 96000) <= 1)
        // Checked against the uninterrupted play (the loop's seam included), within rounding.
        for k in [0, 1, 480, 47_999, 48_000, 48_001, 77_777] {
            stream.seek(to: Int64(k))
            let part = readAll(stream, frames: 2000)
            let reference = Array(whole[k..<min(whole.count, k + 2000)])
            #expect(part.count == reference.count)
            let worst = zip(part, reference).map { abs($0 - $1) }.max() ?? 0
            #expect(worst < 1e-4, "from \(k): differs by \(worst)")
        }
    }

    @Test("the channel matrix applies after conversion: a stereo file mapped to mono is the matrix of the converted stereo")
    func matrixAfterConversion() throws {
        let left = Signals.sine(frequency: 440, sampleRate: 44100, frames: 4410)
        let right = Signals.sine(frequency: 1000, sampleRate: 44100, frames: 4410, amplitude: 0.5)
        let stereo = zip(left, right).flatMap { [$0, $1] }
        let matrix = ChannelMatrix(inputCount: 2, outputCount: 1, coefficients: [0.5, 0.25], rule: "test")
        let mapped = try RegionStream(source: MemorySource(stereo, rate: 44100, channels: 2), outputRate: 48000, channelMatrix: matrix)
        let plain = try RegionStream(source: MemorySource(stereo, rate: 44100, channels: 2), outputRate: 48000)
        #expect(mapped.outputChannels == 1 && plain.outputChannels == 2)
        let mono = readAll(mapped, frames: 5000)
        let both = readAll(plain, frames: 5000)
        #expect(mono.count * 2 == both.count && mono.count >= 4799)
        var expected: [Float] = []
        for i in 0..<mono.count {
            let l: Float = both[2 * i] * 0.5
            let r: Float = both[2 * i + 1] * 0.25
            expected.append(l + r)
        }
        #expect(mono == expected)
        #expect(throws: FileError.self) {
            try RegionStream(source: MemorySource(left, rate: 44100), channelMatrix: matrix)
        }
    }

    @Test("a stream source plays once from its start and cannot loop, start later or move; a truncated file ends with its error")
    func streamsAndTruncation() throws {
        let ramp = Signals.ramp(frames: 500, start: 1)
        let stream = try RegionStream(source: MemorySource(ramp, rate: 48000, isStream: true))
        stream.seek(to: 100)
        #expect(readAll(stream, frames: 600) == ramp)
        #expect(stream.error == nil && stream.isFinished)
        #expect(throws: FileError.self) { try RegionStream(source: MemorySource(ramp, rate: 48000, isStream: true), playCount: nil) }
        #expect(throws: FileError.self) { try RegionStream(source: MemorySource(ramp, rate: 48000, isStream: true), region: 10..<500) }

        let cut = try RegionStream(source: MemorySource(ramp, rate: 48000, available: 300), playCount: 2)
        #expect(readAll(cut, frames: 1000) == Array(ramp[0..<300]))
        #expect(cut.error?.kind == .truncated)

        #expect(throws: FileError.self) { try RegionStream(source: MemorySource(ramp, rate: 48000), region: 400..<600) }
        #expect(throws: FileError.self) { try RegionStream(source: MemorySource(ramp, rate: 48000), playCount: 0) }
    }

    @Test("reads shorter and longer than the block, mixed: a long read after a short one starts with what the block holds; loops and seeks too")
    func mixedBlockReads() throws {
        let ramp = Signals.ramp(frames: 10000, start: 1)
        let region = Array(ramp[100..<9100])
        let expected = region + region
        // A live layer: the cue starts inside a buffer (a short read), then whole buffers of
        // the block's size, sometimes a short piece again.
        let pieces = [256, 2048, 2048, 100, 2048, 4096, 7, 2048, 3000, 2048]
        let stream = try RegionStream(source: MemorySource(ramp, rate: 48000), region: 100..<9100, playCount: 2,
                                      readBlockFrames: 2048)
        var out: [Float] = []
        var index = 0
        while out.count < expected.count {
            let piece = min(pieces[index % pieces.count], expected.count - out.count)
            out += readAll(stream, frames: piece, piece: piece)
            index += 1
        }
        #expect(out == expected)
        for k in [0, 300, 2047, 8999, 9100] {
            stream.seek(to: Int64(k))
            var got = readAll(stream, frames: 256, piece: 256)
            got += readAll(stream, frames: 2048, piece: 2048)
            #expect(got == Array(expected[k..<(k + 2304)]), "from \(k)")
        }
    }

    @Test("reading ahead in blocks: 1024-frame pieces of a long region read the source in 8192-frame blocks")
    func blockReads() throws {
        let source = MemorySource(Signals.ramp(frames: 65536), rate: 48000)
        let stream = try RegionStream(source: source, readBlockFrames: 8192)
        #expect(readAll(stream, frames: 65536, piece: 1024) == source.samples)
        #expect(source.reads <= 9)
    }
}
