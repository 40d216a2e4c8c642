import Lockstep
import LockstepFiles
import LockstepTestSupport

extension TemporaryTestDirectory {
    /// Writes interleaved float `samples` as a float WAV file `name` in the directory.
    /// - Returns: the file's path.
    @discardableResult
    func writeAudio(_ name: String, _ samples: [Float], rate: Double = 48000, channels: Int = 1) throws -> String {
        let path = file(name)
        let writer = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: rate, channelCount: channels))
        try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: samples.count / channels) }
        try writer.close()
        return path
    }
}

/// Reads a whole audio file as interleaved floats.
func readAudio(_ path: String) throws -> (samples: [Float], channels: Int) {
    let reader = try AudioFileReader(path: path)
    var samples = [Float](repeating: 0, count: Int(reader.frameCount) * reader.format.channelCount)
    _ = try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
    return (samples, reader.format.channelCount)
}
