import Foundation
import LockstepSession
import Testing

@Suite("Session files: values, keys and every error with its line and column")
struct SessionParserTests {
    @Test("times: seconds, units, m:ss.fff, h:mm:ss.fff and samples; negative or malformed ones are refused")
    func timeForms() {
        #expect(SessionTime.parse("12") == .seconds(12))
        #expect(SessionTime.parse("1.5") == .seconds(1.5))
        #expect(SessionTime.parse("1.5s") == .seconds(1.5))
        #expect(SessionTime.parse("250ms") == .seconds(0.25))
        #expect(SessionTime.parse("1:05.250") == .seconds(65.25))
        #expect(SessionTime.parse("1:02:03.5") == .seconds(3723.5))
        #expect(SessionTime.parse("96000 samples") == .samples(96000))
        #expect(SessionTime.parse("1 sample") == .samples(1))
        for bad in ["-1", "abc", "1:75", "1:60:00", "", "1e3", "-5 samples", "1.5.2", "nan", "inf"] {
            #expect(SessionTime.parse(bad) == nil, "\(bad)")
        }
        #expect(SessionTime.parse("1.5")?.samples(at: 48000) == 72000)
        #expect(SessionTime.parse("100 samples")?.samples(at: 44100) == 100)
    }

    @Test("a time never takes a sign: -0:01, +0:01, -0 samples and +5 samples are refused, not read as 0:01, 0 or 5",
          arguments: ["-0:01", "+0:01", "-0:00.05", "-0:00:01", "+1:00:00", "-0 samples", "+5 samples", "- 5 samples", "+1.5", "-0"])
    func signedTimes(_ text: String) {
        #expect(SessionTime.parse(text) == nil, "\(text) parsed as \(SessionTime.parse(text).map(String.init(describing:)) ?? "")")
        let reason = SessionTime.reason(for: text) ?? ""
        #expect(reason.hasPrefix(text.hasPrefix("+") ? "has a sign" : "is negative"), "\(text): \(reason)")
        #expect(TimeSyntaxError(subject: "--offset", value: text).description == "--offset '\(text)' \(reason)")
    }

    @Test("a signed time in a session is one error at its key, naming the key and the value: at, automation at, crossfade, fade_in")
    func signedTimesInSessions() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(4800))
        let problems = try fixture.diagnostics("""
            layers: { a: {} }
            cues:
              - { name: one, layer: a, file: a.wav, at: "-0:01" }
              - { name: two, layer: a, file: a.wav, after: one, crossfade: "-0:00.05" }
              - { name: three, layer: a, file: a.wav, at: 0, fade_in: "+0:00.05" }
            automation:
              - { layer: a, at: -0:01, gain: -3dB }
            """)
        let found = problems.map { "\($0.kind.rawValue)@\($0.location.line):\($0.location.column)" }
        #expect(found == ["invalidTime@3:45", "invalidTime@4:64", "invalidTime@5:59", "invalidTime@7:21"],
                "\(problems.map(\.description).joined(separator: "\n"))")
        #expect(problems.map(\.message) == [
            "cue 1 at '-0:01' is negative; a time counts from a start, so write 0 or more, without a sign",
            "cue 2 crossfade '-0:00.05' is negative; a time counts from a start, so write 0 or more, without a sign",
            "cue 3 fade_in '+0:00.05' has a sign; write the time without '+'",
            "automation 1 at '-0:01' is negative; a time counts from a start, so write 0 or more, without a sign",
        ])
    }

    @Test("an automation ramp takes the range and message of every control surface's ramp: 0 to 3600 seconds, in seconds or samples")
    func automationRampRange() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(4800))
        let problems = try fixture.diagnostics("""
            rate: 48000
            layers: { a: {} }
            cues:
              - { name: one, layer: a, file: a.wav, at: 0 }
            automation:
              - { layer: a, at: 0, gain: -3dB, ramp: "1:00:00" }
              - { layer: a, at: 4000, gain: -3dB, ramp: "1:00:00.5" }
              - { layer: a, at: 9000, gain: -3dB, ramp: "172800048 samples" }
            """)
        #expect(problems.map { "\($0.kind.rawValue)@\($0.location.line):\($0.location.column)" } == ["invalidTime@7:45", "invalidTime@8:45"],
                "\(problems.map(\.description).joined(separator: "\n"))")
        #expect(problems.map(\.message) == [ControlRange.rampProblem("3600.5 s", for: "automation 2").message,
                                            ControlRange.rampProblem("3600.001 s", for: "automation 3").message])
    }

    @Test("gains: dB with or without the unit, -inf; above +12 dB is refused")
    func gainForms() {
        #expect(SessionGain.parse("-3dB") == -3)
        #expect(SessionGain.parse("-3 dB") == -3)
        #expect(SessionGain.parse("+2.5db") == 2.5)
        #expect(SessionGain.parse("0") == 0)
        #expect(SessionGain.parse("-inf") == -.infinity)
        #expect(SessionGain.parse("13dB") == nil)
        #expect(SessionGain.parse("loud") == nil)
    }

    @Test("an unknown key names its line and column and suggests the right one")
    func unknownKey() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(100))
        let problems = try fixture.diagnostics("""
            cues:
              - file: a.wav
                gian: -3dB
            """)
        #expect(problems.count == 1)
        let problem = try #require(problems.first)
        #expect(problem.kind == .unknownKey)
        #expect(problem.location.line == 3 && problem.location.column == 5)
        #expect(problem.message.contains("did you mean 'gain'?"))
        #expect(problem.description.hasPrefix(fixture.temp.file("session.yaml") + ":3:5: error: "))
    }

    @Test("every problem is reported at once, each with its own line and column")
    func allErrors() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(4800))
        let problems = try fixture.diagnostics("""
            rate: 48000
            layers:
              drums: { gain: -3dB }
            cues:
              - name: one
                layer: drumz
                file: a.wav
                at: -2
              - name: two
                layer: drums
                file: missing.wav
                after: onw
              - name: three
                layer: drums
                file: a.wav
                at: soon
                gain: loud
            automation:
              - { layer: drums, at: 1, gain: -6dB, ramp: 1 }
              - { layer: bass, at: 2, gain: -6dB }
            """)
        let found = problems.map { "\($0.kind.rawValue)@\($0.location.line):\($0.location.column)" }
        #expect(found == ["unknownLayer@6:12", "invalidTime@8:9", "audioFile@11:11", "unknownCue@12:12",
                          "invalidTime@16:9", "invalidGain@17:11", "unknownLayer@20:14"],
                "\(problems.map(\.description).joined(separator: "\n"))")
        #expect(problems.first { $0.kind == .unknownLayer }?.message.contains("did you mean 'drums'?") == true)
        #expect(problems.first { $0.kind == .unknownCue }?.message.contains("did you mean 'one'?") == true)
        #expect(problems.first { $0.kind == .audioFile }?.message.contains("not found") == true)
        #expect(problems.first { $0.kind == .invalidTime }?.message.contains("negative") == true)
    }

    @Test("after/with cycles are found and named")
    func cycles() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(480))
        let problems = try fixture.diagnostics("""
            cues:
              - { name: a, file: a.wav, after: c }
              - { name: b, file: a.wav, with: a }
              - { name: c, file: a.wav, after: b }
            """)
        #expect(problems.count == 1)
        #expect(problems.first?.kind == .cycle)
        #expect(problems.first?.message.contains("'a' → 'c' → 'b' → 'a'") == true || problems.first?.message.contains("→") == true)
        #expect(problems.first?.location.line == 2)
    }

    @Test("YAML syntax errors give the line; the wrong shapes and missing keys are named")
    func syntaxAndShapes() throws {
        let fixture = try SessionFixture()
        let syntax = try fixture.diagnostics("cues:\n  - file: a.wav\n   at: [1, 2\n")
        #expect(syntax.first?.kind == .syntax)
        #expect((syntax.first?.location.line ?? 0) >= 2)
        let shape = try fixture.diagnostics("cues: nothing\n")
        #expect(shape.first?.kind == .invalidValue && shape.first?.location.line == 1 && shape.first?.location.column == 7)
        let missing = try fixture.diagnostics("cues:\n  - at: 0\nlayers: { a: { gain: 0 } }\n")
        #expect(missing.contains { $0.kind == .missingKey && $0.location.line == 2 })
        let noCues = try fixture.diagnostics("rate: 48000\n")
        #expect(noCues.first?.kind == .missingKey)
    }

    @Test("conflicts: two start keys, a crossfade without after, following a cue that loops forever, regions outside the file")
    func conflicts() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(4800))
        let problems = try fixture.diagnostics("""
            cues:
              - { name: a, file: a.wav, at: 0, with: b }
              - { name: b, file: a.wav, at: 0, crossfade: 0.01 }
              - { name: c, file: a.wav, loop: forever, at: 0 }
              - { name: d, file: a.wav, after: c }
              - { name: e, file: a.wav, at: 0, to: 5 }
              - { name: f, file: a.wav, at: 0, from: "4000 samples", to: "3000 samples" }
              - { name: g, file: a.wav, after: e, crossfade: 10 }
            """)
        let kinds = problems.map { "\($0.kind.rawValue)@\($0.location.line)" }
        #expect(kinds.contains("conflict@2"))
        #expect(kinds.contains("conflict@3"))
        #expect(kinds.contains("conflict@5"))
        #expect(kinds.contains("invalidTime@6"))
        #expect(kinds.contains("invalidTime@7"))
        #expect(problems.first { $0.location.line == 5 }?.message.contains("loops forever") == true)
    }

    @Test("times beyond a week and huge loop counts are errors with their line, never an overflow")
    func limits() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(480))
        let problems = try fixture.diagnostics("""
            cues:
              - { name: a, file: a.wav, at: "9223372036854775807 samples" }
              - { name: b, file: a.wav, at: "99999999:00:00" }
              - { name: c, file: a.wav, at: 1e300 }
              - { name: d, file: a.wav, at: 0, loop: 9223372036854775807 }
              - { name: e, file: a.wav, at: "168:00:00", loop: 1000000 }
            """)
        let found = problems.map { "\($0.kind.rawValue)@\($0.location.line)" }
        #expect(found == ["invalidTime@2", "invalidTime@3", "invalidTime@4", "invalidValue@5"],
                "\(problems.map(\.description).joined(separator: "\n"))")
        #expect(problems.first?.message.contains("at most a week") == true)
        #expect(SessionTime.parse("168:00:00") == .seconds(604_800) && SessionTime.parse("168:00:01") == nil)
        #expect(SessionTime.parse("\(SessionTime.maximumSamples) samples") != nil)
        #expect(SessionTime.parse("\(SessionTime.maximumSamples + 1) samples") == nil)
    }

    @Test("layers come from the cues when none are declared; names default to the file name")
    func implicitLayers() throws {
        let fixture = try SessionFixture()
        try fixture.audio("kick.wav", ramp(480))
        let path = try fixture.session("cues:\n  - { file: kick.wav }\n  - { file: kick.wav, layer: fx }\n")
        let session = try Session.load(path: path)
        #expect(session.document.layers.map(\.name) == ["main", "fx"])
        #expect(session.document.cues.map(\.name) == ["kick", "kick 2"])
    }

    @Test("duplicate names and bad values (rate, channels, loop, ports) name their line and column")
    func duplicatesAndValues() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(480))
        let problems = try fixture.diagnostics("""
            rate: fast
            channels: 0
            layers:
              a: { ports: [nocolon] }
            cues:
              - { name: x, layer: a, file: a.wav, loop: 0 }
              - { name: x, layer: a, file: a.wav }
            """)
        let found = problems.map { "\($0.kind.rawValue)@\($0.location.line):\($0.location.column)" }
        #expect(found == ["invalidValue@1:7", "invalidValue@2:11", "invalidValue@4:16", "invalidValue@6:45", "duplicateName@7:13"],
                "\(problems.map(\.description).joined(separator: "\n"))")
    }
}
