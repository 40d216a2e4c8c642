import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// A seeded, time-bounded mutation suite for the file-open path: fixtures of every writable
/// container, cut at every header boundary and every one of their first 128 bytes, and damaged
/// by a few hundred seeded byte replacements each. Every case must open and decode to finite
/// samples or throw a ``FileError`` naming the file — no trap, no hang, no endless decoding —
/// and leave the file as it was.
@Suite("Hostile files: truncations and damaged bytes")
struct HostileFileTests {
    /// Seeded replacements per fixture.
    static let replacementsPerFixture = 300
    /// The seed of the first fixture's replacements (each fixture adds its index).
    static let seed: UInt64 = 0x4C6F_636B_7374_6570

    /// The fixtures: each writable container in 16-bit stereo and, where it can hold floats, in
    /// 32-bit float stereo (so damaged bytes can make NaN and infinity).
    static let fixtures: [(AudioFileType, SampleFormat)] = [
        (.wav, .int16), (.aiff, .int16), (.flac, .int16), (.caf, .int16), (.w64, .int16), (.rf64, .int16),
        (.wav, .float32), (.aiff, .float32), (.caf, .float32), (.w64, .float32), (.rf64, .float32),
    ]

    /// What one case did.
    enum Outcome: Hashable {
        case decoded
        case refused(FileError.Kind)
    }

    /// Reads and decodes `path` as a player would — open, read to the end in chunks, seek back
    /// and read again — with the decoding bounded by what the file's size could hold, and checks
    /// every sample is finite. Failures are recorded against `label`.
    static func exercise(path: String, byteCount: Int, label: String, warnings: FileWarnings,
                         buffer: inout [Float]) -> Outcome {
        do throws(FileError) {
            let reader = try AudioFileReader(path: path, truncation: .tolerate, warnings: warnings)
            defer { reader.close() }
            let channels = reader.format.channelCount
            #expect(channels >= 1 && reader.format.sampleRate >= 1 && reader.frameCount >= 0, "\(label)")
            let chunk = 1024
            if buffer.count < chunk * channels { buffer = [Float](repeating: 0, count: chunk * channels) }
            // No codec stores a frame in less than a bit: more frames than that is endless decoding.
            let limit = byteCount * 8 + chunk
            var total = 0
            var finite = true
            try buffer.withUnsafeMutableBufferPointer { (samples) throws(FileError) in
                while total <= limit {
                    let got = try reader.read(into: samples.baseAddress!, frames: chunk)
                    if got == 0 { break }
                    #expect(got > 0 && got <= chunk, "\(label): read returned \(got)")
                    total += got
                    for index in 0..<(got * channels) where !samples[index].isFinite { finite = false }
                }
                if reader.frameCount > 0 {
                    try reader.seek(toFrame: reader.frameCount / 2)
                    let got = try reader.read(into: samples.baseAddress!, frames: chunk)
                    for index in 0..<(max(0, got) * channels) where !samples[index].isFinite { finite = false }
                }
            }
            #expect(total <= limit, "\(label): decoding did not stop after \(total) frames of a \(byteCount)-byte file")
            #expect(finite, "\(label): a decoded sample is NaN or infinite")
            return .decoded
        } catch {
            #expect(error.path == path, "\(label): the error names \(error.path)")
            #expect(error.message.hasPrefix(path + ": "), "\(label): \(error.message)")
            return .refused(error.kind)
        }
    }

    @Test("every truncation and seeded damage of every container opens and decodes finite audio or throws a FileError naming the file; the file is untouched")
    func mutations() throws {
        let started = Date()
        let dir = try TemporaryTestDirectory()
        let watchdog = HangWatchdog(seconds: 30)
        defer { watchdog.finish() }
        var buffer = [Float](repeating: 0, count: 4096)
        var outcomes: [String: [Outcome: Int]] = [:]
        var cases = 0
        for (index, (type, sampleFormat)) in Self.fixtures.enumerated() {
            let source = dir.file("source-\(index).\(type.fileExtension)")
            let samples = FileFixtures.sine(frames: 1000, channels: 2, sampleRate: 48000, frequency: 997, amplitude: 0.7)
            try Helpers.write(samples, to: source, type: type,
                              format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: sampleFormat))
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
            let mutations = FileMutations.truncations(of: bytes)
                + FileMutations.replacements(of: bytes, count: Self.replacementsPerFixture, seed: Self.seed &+ UInt64(index))
            let path = dir.file("case.\(type.fileExtension)")
            let warnings = FileWarnings()
            let name = "\(type) \(sampleFormat)"
            for mutation in mutations {
                let label = "\(name) \(mutation)"
                watchdog.enter(label)
                let damaged = mutation.apply(to: bytes)
                try Data(damaged).write(to: URL(fileURLWithPath: path))
                let outcome = Self.exercise(path: path, byteCount: damaged.count, label: label, warnings: warnings, buffer: &buffer)
                outcomes[name, default: [:]][outcome, default: 0] += 1
                let after = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
                #expect(after == damaged, "\(label): the file changed")
                cases += 1
            }
        }
        // Both outcomes happen for every fixture: the suite exercises decoding as well as refusals.
        for (name, seen) in outcomes {
            #expect(seen[.decoded, default: 0] > 0, "\(name): no case decoded")
            #expect(seen.keys.contains { if case .refused = $0 { true } else { false } }, "\(name): no case was refused")
        }
        #expect(cases > 4000)
        let elapsed = Date().timeIntervalSince(started)
        print("HostileFileTests: \(cases) cases in \(String(format: "%.1f", elapsed)) s")
        #expect(elapsed < 60, "the suite took \(elapsed) s; it must stay well under a minute")
    }

    @Test("the generators are deterministic: the same seed gives the same cases")
    func deterministic() throws {
        let bytes = [UInt8](FileFixtures.wavData(samples: [Float](repeating: 0.5, count: 200),
                                                 format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .int16)))
        #expect(FileMutations.replacements(of: bytes, count: 50, seed: 7) == FileMutations.replacements(of: bytes, count: 50, seed: 7))
        #expect(FileMutations.replacements(of: bytes, count: 50, seed: 7) != FileMutations.replacements(of: bytes, count: 50, seed: 8))
        #expect(FileMutations.headerBoundaries(of: bytes) == [4, 8, 12, 16, 20, 36, 40, 44])
        let cuts = FileMutations.truncations(of: bytes)
        #expect(cuts.contains(.truncate(to: 0)) && cuts.contains(.truncate(to: 127)) && cuts.contains(.truncate(to: bytes.count - 1)))
    }
}
