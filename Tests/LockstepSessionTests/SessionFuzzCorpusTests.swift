import Foundation
import Lockstep
import LockstepFiles
import LockstepSession
import Testing

/// The seeds of the session fuzzer (Fuzz/corpus/session, see Scripts/fuzz.sh), replayed on every
/// test run: every input the fuzzer found a problem with is added there, so each stays a
/// regression test. Each must load or fail with diagnostics that name a place and say something;
/// a trap or a hang fails the run.
@Suite("Fuzz corpus: every session seed checks without a trap or a hang, every error with its place",
       .timeLimit(.minutes(2)))
struct SessionFuzzCorpusTests {
    /// Fuzz/corpus/session in the source tree.
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/corpus/session").path

    static var seeds: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: corpus)) ?? []).filter { $0.hasSuffix(".yaml") }.sorted()
    }

    /// The audio files the fuzz target provides (Fuzz/Sources/SessionFuzz), so the seeds reach the
    /// timeline: `Sessions/` for the session, `Layers/` for the stems of Examples/Sessions.
    static func fixture() throws -> (SessionFixture, sessionPath: String) {
        let fixture = try SessionFixture()
        let sessions = fixture.temp.file("Sessions"), layers = fixture.temp.file("Layers")
        for folder in [sessions, layers] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        func write(_ path: String, frames: Int, rate: Double, channels: Int, format: SampleFormat = .float32) throws {
            let samples = (0..<frames * channels).map { Float($0 % 97) / 128 - 0.375 }
            let writer = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: rate, channelCount: channels, sampleFormat: format))
            try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: frames) }
            try writer.close()
        }
        for name in ["a", "b", "c", "one", "tiny", "ramp", "click", "kick", "bell", "intro", "vox", "pad", "track1", "track2", "track3", "bed"] {
            try write("\(sessions)/\(name).wav", frames: 480, rate: 48000, channels: 1)
        }
        try write("\(sessions)/slow.wav", frames: 441, rate: 44100, channels: 1)
        try write("\(sessions)/wide.wav", frames: 480, rate: 48000, channels: 2)
        try write("\(sessions)/many.wav", frames: 48, rate: 48000, channels: 8)
        try write("\(sessions)/empty.wav", frames: 0, rate: 48000, channels: 1)
        try write("\(sessions)/low.wav", frames: 100, rate: 100, channels: 1)
        try write("\(layers)/drums.wav", frames: 441, rate: 44100, channels: 2)
        try write("\(layers)/bass.flac", frames: 480, rate: 48000, channels: 1, format: .int24)
        try write("\(layers)/pad.aiff", frames: 220, rate: 22050, channels: 2, format: .int16)
        return (fixture, sessions + "/fuzz.yaml")
    }

    @Test("the corpus is there: the examples, the test sessions and the hostile seeds")
    func corpusPresent() {
        #expect(Self.seeds.count >= 30, "\(Self.corpus) holds \(Self.seeds.count) seeds")
        #expect(Self.seeds.contains("stems.yaml") && Self.seeds.contains("alias-bomb-key.yaml"))
    }

    @Test("every seed loads, or fails with diagnostics that each name a line, a column and a problem")
    func replay() throws {
        let (fixture, path) = try Self.fixture()
        let loaded = withExtendedLifetime(fixture) { Self.seeds.filter { Self.check(seed: $0, path: path) }.count }
        #expect(loaded >= 10, "only \(loaded) seeds loaded: the audio fixtures no longer match the seeds")
    }

    /// Checks one seed as the session at `path`; true if it loaded.
    static func check(seed: String, path: String) -> Bool {
        // (Session.load refuses a file that is not UTF-8: so does this.)
        guard let data = FileManager.default.contents(atPath: "\(corpus)/\(seed)"),
              let text = String(data: data, encoding: .utf8) else { return false }
        do throws(SessionError) {
            let session = try Session.parse(text: text, path: path)
            let rates: [Double] = [44100, 96000]
            for rate in rates { _ = try? session.timeline(rate: rate) }
            return true
        } catch {
            #expect(!error.diagnostics.isEmpty, "\(seed): an error without diagnostics")
            for diagnostic in error.diagnostics {
                #expect(diagnostic.location.line >= 1 && diagnostic.location.column >= 1 && diagnostic.message.count > 10,
                        "\(seed): \(diagnostic)")
                #expect(diagnostic.location.path == path, "\(seed): \(diagnostic)")
            }
            if seed == "alias-bomb-key.yaml" { #expect(error.diagnostics.map(\.kind) == [.aliasLimit]) }
            return false
        }
    }
}
