import Foundation
import LockstepControl
import LockstepOSC
import LockstepSession
import LockstepTestSupport
import Testing

/// The seeds of the OSC fuzzer (Fuzz/corpus/osc) through its entry point,
/// `OSCAddressSpace.requests(in:)`: every message an error that says something, or a request
/// whose command is in range (as the fuzz target asserts). A trap fails the run.
@Suite("Fuzz corpus: every OSC seed is an error or a command in range, never a trap")
struct OSCFuzzCorpusTests {
    @Test("every seed of Fuzz/corpus/osc")
    func replay() throws {
        let seeds = FuzzCorpus.seeds("osc")
        #expect(seeds.count >= 20, "\(FuzzCorpus.root)/osc holds \(seeds.count) seeds")
        var commands = 0, errors = 0
        for (name, bytes) in seeds {
            for result in bytes.withUnsafeBytes({ OSCAddressSpace.requests(in: $0) }) {
                switch result {
                case .failure(let error):
                    errors += 1
                    #expect(!error.message.isEmpty, "\(name)")
                case .success(.command(let command)):
                    commands += 1
                    #expect(throws: Never.self, "\(name)") { _ = try command.checked(address: "osc") }
                    if case .seek(let time) = command { _ = time.samples(at: 768_000) }
                case .success:
                    break
                }
            }
        }
        #expect(commands >= 5 && errors >= 5, "\(commands) commands, \(errors) errors")
    }

    @Test("the hostile seeds are refused with their range: a seek of 1e30 or 2^62, a ramp of 1e30")
    func hostileSeeds() throws {
        let seeds = Dictionary(uniqueKeysWithValues: FuzzCorpus.seeds("osc").map { ($0.name, $0.bytes) })
        for (name, range) in [("seek-float-1e30.osc", "at most a week"), ("seek-double-1e30.osc", "at most a week"),
                              ("seek-int64-2p62.osc", "at most a week"), ("seek-604801.osc", "at most a week"),
                              ("gain-ramp-1e30.osc", "0 to 3600 seconds")] {
            let bytes = try #require(seeds[name], "\(name)")
            let results = bytes.withUnsafeBytes { OSCAddressSpace.requests(in: $0) }
            guard case .failure(let error)? = results.first else { Issue.record("\(name): \(results)"); continue }
            #expect(error.message.contains(range), "\(name): \(error.message)")
        }
    }
}
