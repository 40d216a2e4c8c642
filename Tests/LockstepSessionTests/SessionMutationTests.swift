import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import LockstepSession
import Testing

/// Seeded YAML mutations of the example sessions (Examples/Sessions): lines deleted, duplicated,
/// swapped, re-indented and cut; values replaced by numbers at and past their limits, by YAML's
/// other scalars and by collections; keys renamed; anchors and aliases added; characters flipped.
/// Every mutant must load and render, or fail with diagnostics that each name a place inside the
/// file and say something — never trap, hang or render a non-finite sample.
@Suite("Seeded YAML mutations of the example sessions", .timeLimit(.minutes(3)))
struct SessionMutationTests {
    static let examples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/Sessions").path

    /// A small, fast, seeded generator: the same seed gives the same mutants.
    typealias Generator = SeededRandom

    static let values = [
        "0", "-1", "0.5", "1e-300", "1e15", "1e308", "1e309", ".inf", "-.inf", ".nan", "nan",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "\"9223372036854775807 samples\"",
        "\"-1 samples\"", "99999999:00:00", "168:00:00", "168:00:01", "604800", "604801", "1:60", "0:59:60",
        "true", "false", "null", "~", "[]", "[1, 2]", "{}", "{a: 1}", "\"\"", "manual", "forever", "+12dB",
        "12.5dB", "-inf", "-inf dB", "loud", "0x10", "1_000", "1000000", "1000001", "&a 3", "*a", "*nope",
        "|\n  block", "'quoted'", "\"\\u0000\"", "Ω", "../Layers/drums.wav", "/dev/null", ".", "second", "opener",
    ]
    static let keys = ["name", "layer", "file", "at", "after", "with", "offset", "gain", "fade_in", "fade_out",
                       "from", "to", "loop", "crossfade", "rate", "channels", "layers", "cues", "automation",
                       "ramp", "ports", "gian", "<<"]
    static let characters: [Character] = [":", "-", "[", "]", "{", "}", ",", "&", "*", "!", "|", ">", "'", "\"",
                                          "#", "%", "@", "`", "\t", " ", "\n", "0", "9", "e", "."]

    /// One mutant of `text`: one to three mutations drawn from `generator`.
    static func mutate(_ text: String, with generator: inout Generator) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            guard !lines.isEmpty else { break }
            let i = Int.random(in: 0..<lines.count, using: &generator)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0: lines.remove(at: i)
            case 1: lines.insert(lines[i], at: i)
            case 2: lines.swapAt(i, Int.random(in: 0..<lines.count, using: &generator))
            case 3, 4:                                    // a value replaced
                if let colon = lines[i].firstIndex(of: ":") {
                    lines[i] = String(lines[i][...colon]) + " " + values.randomElement(using: &generator)!
                }
            case 5:                                       // a key renamed
                if let colon = lines[i].firstIndex(of: ":") {
                    let indent = lines[i].prefix { $0 == " " || $0 == "-" }
                    lines[i] = indent + keys.randomElement(using: &generator)! + lines[i][colon...]
                }
            case 6:                                       // re-indented
                lines[i] = Bool.random(using: &generator) ? "  " + lines[i] : String(lines[i].drop { $0 == " " })
            case 7:                                       // a character replaced or inserted
                var chars = Array(lines[i])
                let c = characters.randomElement(using: &generator)!
                if chars.isEmpty || Bool.random(using: &generator) {
                    chars.insert(c, at: Int.random(in: 0...chars.count, using: &generator))
                } else {
                    chars[Int.random(in: 0..<chars.count, using: &generator)] = c
                }
                lines[i] = String(chars)
            case 8:                                       // cut in the middle of a line
                lines = Array(lines[..<i]) + [String(lines[i].prefix(Int.random(in: 0...lines[i].count, using: &generator)))]
            default:                                      // an anchor on one value, an alias in another
                if let a = lines[i].firstIndex(of: ":"), let j = lines.indices.randomElement(using: &generator),
                   let b = lines[j].firstIndex(of: ":"), i != j {
                    lines[i] = String(lines[i][...a]) + " &x" + lines[i][lines[i].index(after: a)...]
                    lines[j] = String(lines[j][...b]) + " *x"
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Checks one mutant as the session at `path`; true if it loaded.
    static func check(_ text: String, path: String, output: String, label: String) -> Bool {
        let lineCount = text.split(separator: "\n", omittingEmptySubsequences: false).count
        func expectPlaces(_ error: SessionError) {
            #expect(!error.diagnostics.isEmpty, "\(label): an error without diagnostics")
            for d in error.diagnostics {
                #expect(d.location.line >= 1 && d.location.line <= lineCount + 1 && d.location.column >= 1
                        && d.message.count > 10 && d.location.path == path, "\(label): \(d)\n\(text)")
            }
        }
        let session: Session
        do throws(SessionError) {
            session = try Session.parse(text: text, path: path)
        } catch {
            expectPlaces(error)
            return false
        }
        for rate in [44100.0, 96000] {
            do throws(SessionError) { _ = try session.timeline(rate: rate) } catch { expectPlaces(error) }
        }
        // What loads renders (a second of it, every manual cue at 0.25 s) to finite samples.
        do {
            let manual = (try? session.timeline(rate: 48000))?.cues.filter(\.isManual).map { (cue: $0.name, at: SessionTime.seconds(0.25)) } ?? []
            let summary = try SessionRenderer(session: session, outputPath: output, manualCues: manual,
                                              duration: .seconds(0.1)).run()
            let reader = try AudioFileReader(path: output)
            var samples = [Float](repeating: 0, count: Int(reader.frameCount) * reader.format.channelCount)
            _ = try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
            #expect(samples.allSatisfy(\.isFinite) && summary.peak.isFinite, "\(label): non-finite samples\n\(text)")
            try? FileManager.default.removeItem(atPath: output)
        } catch let error as SessionError {
            expectPlaces(error)
            #expect(!FileManager.default.fileExists(atPath: output), "\(label): an output left after \(error)")
        } catch {
            #expect("\(error)".count > 10, "\(label): \(error)")
            #expect(!FileManager.default.fileExists(atPath: output), "\(label): an output left after \(error)")
        }
        return true
    }

    @Test("1500 mutants of each example session load and render, or fail with every error in its place",
          arguments: ["playlist.yaml", "stems.yaml"])
    func mutants(example: String) throws {
        // The mutant is checked as if it stood next to the example (it is never written there), so
        // its files are the real stems in Examples/Layers; the output goes to a folder of its own.
        let fixture = try SessionFixture()
        let path = "\(Self.examples)/mutant-of-\(example)"
        let original = try String(contentsOfFile: "\(Self.examples)/\(example)", encoding: .utf8)
        let output = fixture.temp.file("mutant.wav")
        var generator = Generator(state: example == "stems.yaml" ? 17 : 4711)
        var loaded = 0
        for index in 0..<1500 {
            let mutant = Self.mutate(original, with: &generator)
            if Self.check(mutant, path: path, output: output, label: "\(example) mutant \(index)") { loaded += 1 }
        }
        // The mutants reach past the parser: a good share still loads and renders.
        #expect(loaded > 100, "only \(loaded) of 1500 mutants loaded")
        // Nothing is left in the folder but the fixtures.
        #expect(try fixture.temp.contents().isEmpty)
    }

    @Test("the mutants are seeded: the same seed gives the same mutants")
    func deterministic() throws {
        let original = try String(contentsOfFile: "\(Self.examples)/playlist.yaml", encoding: .utf8)
        var a = Generator(state: 1), b = Generator(state: 1)
        for _ in 0..<50 { #expect(Self.mutate(original, with: &a) == Self.mutate(original, with: &b)) }
    }
}
