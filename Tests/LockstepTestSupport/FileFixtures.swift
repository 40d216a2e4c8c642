import Foundation
import Lockstep
import LockstepFiles

/// A uniquely named directory under the system's temporary directory, deleted with its
/// contents when the object is deinitialized.
public final class TemporaryTestDirectory: @unchecked Sendable {
    /// The directory's absolute path (no trailing slash).
    public let path: String

    /// Creates `<tmp>/<prefix>-<UUID>`.
    public init(prefix: String = "lockstep-test") throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    deinit {
        // Restore permissions a test may have removed, so the tree can be deleted.
        if let items = FileManager.default.enumerator(atPath: path) {
            for case let item as String in items {
                try? FileManager.default.setAttributes([.posixPermissions: 0o755],
                                                       ofItemAtPath: path + "/" + item)
            }
        }
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The path of `name` inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// The path of `name` inside the directory if nothing is there yet, else of `name` with `-2`,
    /// `-3`… before its extension: an output of its own for each run of a rerun scenario (the
    /// CLI never replaces a file).
    public func newFile(_ name: String) -> String {
        let url = URL(fileURLWithPath: name)
        let stem = url.deletingPathExtension().lastPathComponent
        let suffix = url.pathExtension.isEmpty ? "" : "." + url.pathExtension
        var candidate = file(name), serial = 1
        while FileManager.default.fileExists(atPath: candidate) {
            serial += 1
            candidate = file("\(stem)-\(serial)\(suffix)")
        }
        return candidate
    }

    /// The names of the entries in the directory, hidden ones included, sorted.
    public func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }
}

/// Generators for audio and non-audio fixture files that do not depend on libsndfile.
public enum FileFixtures {
    /// The bytes of a canonical little-endian RIFF/WAVE file holding `samples` (interleaved,
    /// nominal range −1…1) in `format`.
    ///
    /// Integer samples are scaled by 2^(bits−1), rounded and clipped; `float32`/`float64` are
    /// stored as is (WAVE_FORMAT_IEEE_FLOAT).
    public static func wavData(samples: [Float], format: StreamFormat) -> Data {
        let bytesPerSample = format.sampleFormat.bytesPerSample
        let dataBytes = samples.count * bytesPerSample
        var data = Data()
        data.reserveCapacity(44 + dataBytes)
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(36 + dataBytes))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16))
        append(UInt16(format.sampleFormat.isFloat ? 3 : 1))
        append(UInt16(format.channelCount))
        append(UInt32(format.sampleRate))
        append(UInt32(Int(format.sampleRate) * format.bytesPerFrame))
        append(UInt16(format.bytesPerFrame))
        append(UInt16(format.sampleFormat.bitsPerSample))
        data.append(contentsOf: Array("data".utf8))
        append(UInt32(dataBytes))
        for sample in samples {
            switch format.sampleFormat {
            case .int16:
                append(Int16(clamping: Int64((Double(sample) * 32768).rounded())))
            case .int24:
                let value = Int32(clamping: Int64((Double(sample) * 8_388_608).rounded()))
                let clipped = min(max(value, -8_388_608), 8_388_607)
                withUnsafeBytes(of: clipped.littleEndian) { data.append(contentsOf: $0.prefix(3)) }
            case .int32:
                append(Int32(clamping: Int64((Double(sample) * 2_147_483_648).rounded())))
            case .float32:
                append(sample.bitPattern)
            case .float64:
                append(Double(sample).bitPattern)
            }
        }
        return data
    }

    /// Writes a WAV file made by ``wavData(samples:format:)``.
    public static func writeWAV(path: String, samples: [Float], format: StreamFormat) throws {
        try wavData(samples: samples, format: format).write(to: URL(fileURLWithPath: path))
    }

    /// Writes `text` as UTF-8 to `path` (for "not an audio file" fixtures).
    public static func writeText(path: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// Cuts the file at `path` down to its first `byteCount` bytes.
    public static func truncate(path: String, toByteCount byteCount: Int) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(byteCount))
    }

    /// The size of the file at `path` in bytes.
    public static func byteCount(path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }

    /// `frames` frames of a `frequency` Hz sine with `amplitude` on every channel, interleaved;
    /// channel `c` is phase-shifted by `c` radians so channels differ.
    public static func sine(frames: Int, channels: Int, sampleRate: Double, frequency: Double,
                            amplitude: Float) -> [Float] {
        var samples = [Float](repeating: 0, count: frames * channels)
        for frame in 0..<frames {
            let phase = 2 * Double.pi * frequency * Double(frame) / sampleRate
            for channel in 0..<channels {
                samples[frame * channels + channel] = amplitude * Float(sin(phase + Double(channel)))
            }
        }
        return samples
    }
}

/// Reads a whole audio file as interleaved floats.
public func readAudio(_ path: String) throws -> (samples: [Float], channels: Int) {
    let reader = try AudioFileReader(path: path)
    var samples = [Float](repeating: 0, count: Int(reader.frameCount) * reader.format.channelCount)
    _ = try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
    return (samples, reader.format.channelCount)
}
