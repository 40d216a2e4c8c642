import Foundation
import LockstepControl
import LockstepSession
import LockstepTestSupport
import Testing

/// The seeds of the typed-line and web-command fuzzers (Fuzz/corpus/control, Fuzz/corpus/web)
/// through their entry points, `ControlLine.parse` and `WebCommand.parse`: each an error that
/// says something, or a command in range (as the fuzz targets assert). A trap fails the run.
@Suite("Fuzz corpus: every control-line and web-command seed is an error or a command in range")
struct ControlFuzzCorpusTests {
    /// What the targets assert of a command.
    static func check(_ command: ControlCommand, _ seed: String) {
        #expect(throws: Never.self, "\(seed): \(command)") { _ = try command.checked(address: "cmd") }
        switch command {
        case .seek(let time): _ = time.samples(at: 768_000)
        case .setCueLevel(_, _, let ramp), .setLayerGain(_, _, let ramp): _ = ramp.samples(at: 768_000)
        default: break
        }
    }

    @Test("every seed of Fuzz/corpus/control, line by line")
    func controlLines() {
        let seeds = FuzzCorpus.seeds("control")
        #expect(seeds.count >= 10)
        var commands = 0
        for (name, bytes) in seeds {
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
                do throws(ControlError) {
                    Self.check(try ControlLine.parse(String(line)), name)
                    commands += 1
                } catch {
                    #expect(!error.message.isEmpty, "\(name)")
                }
            }
        }
        #expect(commands >= 10)
    }

    @Test("every seed of Fuzz/corpus/web")
    func webCommands() {
        let seeds = FuzzCorpus.seeds("web")
        #expect(seeds.count >= 10)
        var commands = 0
        for (name, bytes) in seeds {
            do throws(ControlError) {
                let (command, address) = try WebCommand.parse(String(decoding: bytes, as: UTF8.self))
                #expect(ControlLine.verbs.contains(address), "\(name)")
                Self.check(command, name)
                commands += 1
            } catch {
                #expect(!error.message.isEmpty, "\(name)")
            }
        }
        #expect(commands >= 5)
    }
}
