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
