import Foundation
import Lockstep
import LockstepFiles
import LockstepSession
import LockstepTestSupport
import Testing

/// The seeds of the numbers fuzzer (Fuzz/corpus/numbers) through every parser it drives: a time
/// parses in range or has a reason, never both; a sample count is not negative; a gain is at most
/// +12 dB; a ramp is at most an hour; the first 8 bytes as a double pass ControlRange's checks or
/// are refused. As the fuzz target asserts; a trap fails the run.
@Suite("Fuzz corpus: every numbers seed parses in range or is refused with a reason")
struct NumbersFuzzCorpusTests {
    @Test("every seed of Fuzz/corpus/numbers")
    func replay() {
        let seeds = FuzzCorpus.seeds("numbers")
        #expect(seeds.count >= 20)
        for (name, bytes) in seeds {
            let text = String(decoding: bytes, as: UTF8.self)
            let time = SessionTime.parse(text), reason = SessionTime.reason(for: text)
            #expect((time == nil) != (reason == nil), "\(name): \(String(describing: time)) \(reason ?? "")")
            if let time {
                #expect(time.isInRange, "\(name)")
                _ = time.samples(at: 768_000)
            }
            if let count = try? SessionTime.sampleCount(text, as: "--start-at") { #expect(count >= 0, "\(name)") }
            if let gain = SessionGain.parse(text) { #expect(!gain.isNaN && gain <= SessionGain.maximum, "\(name)") }
            if let ramp = try? ControlRange.ramp(text: text, for: "gain") {
                #expect(ramp.isInRange, "\(name)")
                if case .seconds(let seconds) = ramp { #expect(seconds <= ControlRange.maximumRampSeconds, "\(name)") }
            }
            if let map = try? ChannelMap(parsing: text) {
                #expect(map.routes.allSatisfy { $0.input >= 1 && $0.output >= 1 && $0.gainDB <= 12 }, "\(name)")
                _ = try? map.matrix(inputs: 8, outputs: 2)
            }
            if bytes.count >= 8 {
                let double = Double(bitPattern: bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) })
                if let time = try? ControlRange.time(seconds: double, for: "seek") { _ = time.samples(at: 768_000) }
                if let ramp = try? ControlRange.ramp(seconds: double, for: "gain") { _ = ramp.samples(at: 768_000) }
                if let gain = try? ControlRange.gain(double, for: "level") { #expect(gain <= SessionGain.maximum, "\(name)") }
            }
        }
    }

    @Test("the hostile seeds: a sign, past a week, an exponent, an Int64 overflow are refused with their reason")
    func hostileSeeds() throws {
        let seeds = Dictionary(uniqueKeysWithValues: FuzzCorpus.seeds("numbers").map { ($0.name, String(decoding: $0.bytes, as: UTF8.self)) })
        for (name, start) in [("minus-clock.txt", "is negative"), ("plus-clock.txt", "has a sign"), ("minus-crossfade.txt", "is negative"),
                              ("plus-samples.txt", "has a sign"), ("past-week.txt", "is past the limit"), ("exponent.txt", "is not a time"),
                              ("int64-overflow-samples.txt", "is not a time")] {
            let text = try #require(seeds[name], "\(name)")
            #expect(SessionTime.reason(for: text)?.hasPrefix(start) == true, "\(name): \(SessionTime.reason(for: text) ?? "parsed")")
        }
    }
}
