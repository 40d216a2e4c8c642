import CSndfile
import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport

/// Helpers shared by the LockstepFiles tests.
enum Helpers {
    /// Reads a whole file as interleaved float with ``AudioFileReader``, in 1000-frame chunks.
    static func readAll(_ reader: AudioFileReader) throws -> [Float] {
        let channels = reader.format.channelCount
        var result: [Float] = []
        var chunk = [Float](repeating: 0, count: 1000 * channels)
        while true {
            let got = try chunk.withUnsafeMutableBufferPointer { buffer in
                try reader.read(into: buffer.baseAddress!, frames: 1000)
            }
            if got == 0 { break }
            result += chunk[0..<(got * channels)]
        }
        return result
    }

    /// Writes `samples` with ``AudioFileWriter`` in uneven chunks and closes it.
    static func write(_ samples: [Float], to path: String, type: AudioFileType, format: StreamFormat,
                      atomic: Bool = true) throws {
        let writer = try AudioFileWriter(path: path, type: type, format: format, atomic: atomic)
        let channels = format.channelCount
        let frames = samples.count / channels
        var offset = 0
        let chunks = [1, 333, 1024, 7]
        var index = 0
        try samples.withUnsafeBufferPointer { buffer in
            while offset < frames {
                let count = min(chunks[index % chunks.count], frames - offset)
                try writer.write(buffer.baseAddress! + offset * channels, frames: count)
                offset += count
                index += 1
            }
        }
        try writer.close()
    }

    /// Encodes `samples` with libsndfile directly in a format Lockstep does not write (Ogg Vorbis,
    /// Opus, MP3), so reading them can be tested.
    static func encodeWithLibsndfile(_ samples: [Float], path: String, format: Int32, channels: Int,
                                     sampleRate: Int) throws {
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = format
        // (Under Lockstep's open lock: libsndfile's open error is process-wide, and the reader's
        // tests open files on other threads meanwhile.)
        let opened = LibsndfileOpenLock.open { sf_open(path, Int32(SFM_WRITE), &info) }
        guard let handle = opened.handle else { throw FixtureError(text: "sf_open for writing failed: " + opened.message) }
        let frames = samples.count / channels
        let written = samples.withUnsafeBufferPointer { sf_writef_float(handle, $0.baseAddress!, Int64(frames)) }
        sf_close(handle)
        guard written == Int64(frames) else { throw FixtureError(text: "short write \(written)") }
    }

    /// The libsndfile format words for the read-only fixture types.
    static let oggVorbis = Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
    static let oggOpus = Int32(SF_FORMAT_OGG | SF_FORMAT_OPUS)
    static let mp3 = Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III)

    /// The largest absolute sample in `samples`.
    static func peak<C: Collection<Float>>(_ samples: C) -> Float {
        samples.reduce(0) { max($0, abs($1)) }
    }

    /// A deterministic stereo-or-more test signal within ±0.95 that includes exact values
    /// (0, ±0.5, −1 for integer formats' edge) and a full-range ramp.
    static func testSignal(frames: Int, channels: Int) -> [Float] {
        var samples = [Float](repeating: 0, count: frames * channels)
        for frame in 0..<frames {
            for channel in 0..<channels {
                let ramp = Float(frame) / Float(max(1, frames - 1)) * 1.9 - 0.95
                let sine = 0.9 * Float(sin(Double(frame) * 0.031 + Double(channel)))
                samples[frame * channels + channel] = channel % 2 == 0 ? ramp : sine
            }
        }
        samples[0] = 0
        samples[1] = 0.5
        samples[channels] = -0.5
        samples[channels + 1] = -1
        return samples
    }

    /// Whether the tests run as root (permission checks do not apply then).
    static var isRoot: Bool { getuid() == 0 }
}

/// A failure inside a test helper.
struct FixtureError: Error, CustomStringConvertible {
    var text: String
    var description: String { text }
}
