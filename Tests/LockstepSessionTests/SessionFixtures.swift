import Foundation
import Lockstep
import LockstepFiles
import LockstepSession
import LockstepTestSupport
import Testing

/// A folder with a session file and its audio, for one test.
struct SessionFixture {
    let temp: TemporaryTestDirectory

    init() throws { temp = try TemporaryTestDirectory(prefix: "lockstep-session") }

    /// Writes a float WAV (or other type by extension) with interleaved `samples`.
    @discardableResult
    func audio(_ name: String, _ samples: [Float], rate: Double = 48000, channels: Int = 1) throws -> String {
        let path = temp.file(name)
        let writer = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: rate, channelCount: channels))
        try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: samples.count / channels) }
        try writer.close()
        return path
    }

    /// Writes the session text and returns its path.
    func session(_ text: String, name: String = "session.yaml") throws -> String {
        let path = temp.file(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Parses `text` expecting failure; returns the diagnostics.
    func diagnostics(_ text: String) throws -> [SessionDiagnostic] {
        let path = try session(text)
        do {
            _ = try Session.load(path: path)
        } catch {
            return error.diagnostics
        }
        Issue.record("the session loaded, but errors were expected")
        return []
    }

    /// Renders the session offline and returns the interleaved output.
    func render(_ text: String, rate: Double? = nil, go: [(cue: String, at: SessionTime)] = [],
                duration: SessionTime? = nil) throws -> (samples: [Float], channels: Int, summary: SessionRenderer.Summary) {
        let path = try session(text)
        let session = try Session.load(path: path)
        let output = temp.file("out-\(UUID().uuidString.prefix(8)).wav")
        let summary = try SessionRenderer(session: session, outputPath: output, rate: rate, manualCues: go,
                                          duration: duration).run()
        let reader = try AudioFileReader(path: output)
        var samples = [Float](repeating: 0, count: Int(reader.frameCount) * reader.format.channelCount)
        _ = try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
        return (samples, reader.format.channelCount, summary)
    }
}

/// The ramp the tests use: frame i holds (i + 1) / 1024.
func ramp(_ frames: Int) -> [Float] { (0..<frames).map { Float($0 + 1) / 1024 } }

/// Channel `c` of interleaved samples.
func channel(_ c: Int, _ samples: [Float], _ channels: Int) -> [Float] {
    stride(from: c, to: samples.count, by: channels).map { samples[$0] }
}

/// dB to linear, as the session applies it.
func linear(_ db: Double) -> Float { Float(pow(10, db / 20)) }
