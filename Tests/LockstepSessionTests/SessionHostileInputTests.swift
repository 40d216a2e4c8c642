import Foundation
import LockstepSession
import Testing

/// A "billion laughs" document: nine anchors, each a list of ten aliases of the one before
/// (10^9 scalars once expanded), then `tail`.
private func aliasBomb(_ tail: String) -> String {
    var lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in 1...9 {
        let items = Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
        lines.append("a\(level): &a\(level) [\(items)]")
    }
    return lines.joined(separator: "\n") + "\n" + tail
}

/// Where the bomb above crosses the alias limit: the 8th `*a3` on line 5 (the aliases of a1…a3 add
/// 12 300 nodes, each `*a3` 11 110 more).
private let bombLimitLocation = "5:45"

@Suite("Hostile session files: alias bombs, wrong types, huge values and huge sessions, each an error with its place, never a hang or a trap",
       .timeLimit(.minutes(2)))
struct SessionHostileInputTests {
    @Test("an alias bomb used as a mapping key is one aliasLimit error at the alias, at once")
    func aliasBombAsKey() throws {
        let fixture = try SessionFixture()
        let clock = ContinuousClock()
        let started = clock.now
        let problems = try fixture.diagnostics(aliasBomb("? *a9\n: x\ncues: []\n"))
        #expect(clock.now - started < .seconds(5))
        #expect(problems.count == 1)
        let problem = try #require(problems.first)
        #expect(problem.kind == .aliasLimit)
        #expect("\(problem.location.line):\(problem.location.column)" == bombLimitLocation)
        #expect(problem.message.contains("alias '*a3'") && problem.message.contains("\(SessionParser.maximumAliasExpansion)"))
        #expect(problem.description.hasPrefix(fixture.temp.file("session.yaml") + ":\(bombLimitLocation): error: "))
    }

    @Test("an alias bomb as the value of any session key is refused the same way",
          arguments: ["rate: *a9", "channels: *a9", "layers: *a9", "cues: *a9", "automation: *a9",
                      "cues: [ { file: *a9 } ]", "cues: [ { file: a.wav, at: *a9 } ]",
                      "layers: { drums: { ports: *a9 } }", "cues: [ *a9 ]"])
    func aliasBombAsValue(tail: String) throws {
        let fixture = try SessionFixture()
        let problems = try fixture.diagnostics(aliasBomb(tail + "\n"))
        #expect(problems.map { "\($0.kind.rawValue)@\($0.location.line):\($0.location.column)" } == ["aliasLimit@\(bombLimitLocation)"])
    }

    @Test("a bomb defined without a single alias past the limit is refused where it crosses it, even with nothing using it")
    func aliasBombUnused() throws {
        let fixture = try SessionFixture()
        let problems = try fixture.diagnostics(aliasBomb("cues: []\n"))
        #expect(problems.first?.kind == .aliasLimit)
    }

    @Test("small anchors and aliases work: a file, a time and layer settings reused; an alias's error names the alias")
    func legitimateAliases() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(480))
        let path = try fixture.session("""
            layers:
              drums: &loud { gain: -3dB, ports: [system:playback_1] }
              bass: *loud
            cues:
              - { name: one, layer: drums, file: &f a.wav, at: &t "96 samples" }
              - { name: two, layer: bass, file: *f, at: *t }
              - { name: three, layer: bass, file: *f }
            """)
        let session = try Session.load(path: path)
        #expect(session.document.layers.map(\.gainDB) == [-3, -3])
        #expect(session.document.layers[1].ports == ["system:playback_1"])
        let timeline = try session.timeline(rate: 48000)
        #expect(timeline.cues.map(\.start) == [96, 96, 576])
        #expect(session.document.cues[1].location(of: "file").column == 37)

        let problems = try fixture.diagnostics("""
            cues:
              - { name: one, file: a.wav, at: &when soon }
              - { name: two, file: a.wav, at: *when }
            """)
        #expect(problems.map { "\($0.kind.rawValue)@\($0.location.line):\($0.location.column)" }
                == ["invalidTime@2:35", "invalidTime@3:35"])
    }

    @Test("many aliases of one value are fine: 20 000 cues share one file and one time")
    func manyScalarAliases() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(48))
        var text = "cues:\n  - { name: c0, file: &f a.wav, at: &t 0 }\n"
        for index in 1..<20_000 { text += "  - { name: c\(index), file: *f, at: *t }\n" }
        let session = try Session.load(path: try fixture.session(text))
        #expect(session.document.cues.count == 20_000 && session.document.cues.allSatisfy { $0.file == "a.wav" })
    }

    @Test("undefined aliases, several documents, control characters and deep nesting are syntax errors with their place")
    func brokenYAML() throws {
        let fixture = try SessionFixture()
        let undefined = try fixture.diagnostics("cues:\n  - { file: *nowhere }\n")
        #expect(undefined.map { "\($0.kind.rawValue)@\($0.location.line):\($0.location.column)" } == ["syntax@2:13"])
        #expect(undefined.first?.message.contains("'*nowhere' names no anchor") == true)

        let twoDocuments = try fixture.diagnostics("cues: []\n---\ncues: []\n")
        #expect(twoDocuments.map { "\($0.kind.rawValue)@\($0.location.line)" } == ["syntax@2"])

        let control = try fixture.diagnostics("cues:\n  - { file: a\u{1}.wav }\n")
        #expect(control.map { "\($0.kind.rawValue)@\($0.location.line):\($0.location.column)" } == ["syntax@2:14"])

        let deep = try fixture.diagnostics("cues: " + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + "\n")
        #expect(deep.count == 1 && deep.first?.kind == .syntax && deep.first?.location.line == 1)
        #expect(deep.first?.message.contains("deep") == true)
    }

    @Test("loop: true is an error saying loop takes a count; so are floats, nulls and lists there")
    func loopTypes() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(480))
        let problems = try fixture.diagnostics("""
            cues:
              - { name: a, file: a.wav, loop: true }
              - { name: b, file: a.wav, loop: 2.5 }
              - { name: c, file: a.wav, loop: 2.0 }
              - { name: d, file: a.wav, loop: ~ }
              - { name: e, file: a.wav, loop: [2] }
              - { name: f, file: a.wav, loop: inf }
              - { name: g, file: a.wav, loop: +3 }
              - { name: h, file: a.wav, loop: 0x10 }
              - { name: i, file: a.wav, loop: "forever" }
            """)
        let found = problems.map { "\($0.kind.rawValue)@\($0.location.line):\($0.location.column)" }
        #expect(found == ["invalidValue@2:35", "invalidValue@3:35", "invalidValue@4:35", "invalidValue@5:35",
                          "invalidValue@6:35", "invalidValue@7:35", "invalidValue@8:35", "invalidValue@9:35"],
                "\(problems.map(\.description).joined(separator: "\n"))")
        let loopTrue = try #require(problems.first)
        #expect(loopTrue.message.contains("boolean") && loopTrue.message.contains("play count"))
        #expect(problems[3].message.contains("has no value"))
        #expect(problems[4].message.contains("not a list"))
    }

    @Test("booleans, nulls, floats, lists and mappings where a name, number, time or gain belongs are errors at the value")
    func valueTypes() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(480))
        let problems = try fixture.diagnostics("""
            rate: 48000.0
            channels: true
            layers:
              drums: { gain: ~, ports: [true, "sys:out"] }
              bass: { ports: nocolon }
            cues:
              - { name: ~, layer: drums, file: a.wav }
              - { name: true, layer: drums, file: a.wav }
              - { name: [x], layer: drums, file: a.wav }
              - { name: d, layer: { a: 1 }, file: a.wav }
              - { name: e, layer: drums, file: false }
              - { name: f, layer: drums, file: a.wav, at: true }
              - { name: g, layer: drums, file: a.wav, offset: [1] }
              - { name: h, layer: drums, file: a.wav, after: ~ }
              - { name: i, layer: drums, file: a.wav, gain: { db: 3 } }
              - { name: j, layer: drums, file: a.wav, at: 0, at: 1 }
            automation:
              - { layer: false, at: 0, gain: 0 }
            """)
        let found = problems.map { "\($0.kind.rawValue)@\($0.location.line):\($0.location.column)" }
        #expect(found == ["invalidValue@1:7", "invalidValue@2:11", "invalidValue@4:18", "invalidValue@4:29",
                          "invalidValue@5:18", "invalidValue@7:13", "invalidValue@8:13", "invalidValue@9:13",
                          "invalidValue@10:23", "invalidValue@11:36", "invalidValue@12:47", "invalidValue@13:51",
                          "invalidValue@14:50", "invalidValue@15:49", "conflict@16:50", "invalidValue@18:14"],
                "\(problems.map(\.description).joined(separator: "\n"))")
        #expect(problems.first { $0.location.line == 8 }?.message.contains("quote the word") == true)
        #expect(problems.first { $0.location.line == 16 }?.message.contains("given twice") == true)
    }

    @Test("a huge value is one short error, not a huge message")
    func hugeValues() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(480))
        let long = String(repeating: "x", count: 100_000)
        let problems = try fixture.diagnostics("""
            cues:
              - { name: \(long), file: a.wav }
              - { name: b, file: a.wav, after: \(String(repeating: "y", count: 4000)) }
            """)
        let found = problems.map { "\($0.kind.rawValue)@\($0.location.line):\($0.location.column)" }
        #expect(found == ["invalidValue@2:13", "unknownCue@3:36"], "\(problems.map(\.description).joined(separator: "\n"))")
        #expect(problems.allSatisfy { $0.message.count < 400 })
        #expect(problems.first?.message.contains("at most \(SessionParser.maximumValueLength)") == true)
        // A key longer than 1024 characters needs '?' (YAML); a long one is refused like a long value.
        let key = try fixture.diagnostics("cues:\n  - file: a.wav\n    ? \(long)\n    : 1\n")
        #expect(key.map { "\($0.kind.rawValue)@\($0.location.line):\($0.location.column)" } == ["invalidValue@3:7"])
        #expect(key.allSatisfy { $0.message.count < 400 })
        let implicitKey = try fixture.diagnostics("cues:\n  - { file: a.wav, \(long): 1 }\n")
        #expect(implicitKey.map(\.kind) == [.syntax])
    }

    @Test("a layer declared twice is a duplicate name; a key given twice is a conflict at the second")
    func duplicateKeys() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(480))
        let problems = try fixture.diagnostics("""
            layers:
              drums: {}
              drums: { gain: -3 }
            cues:
              - { layer: drums, file: a.wav }
            cues: []
            """)
        let found = problems.map { "\($0.kind.rawValue)@\($0.location.line):\($0.location.column)" }
        #expect(found == ["duplicateName@3:3", "conflict@6:1"], "\(problems.map(\.description).joined(separator: "\n"))")
    }

    @Test("100 000 cues, and an after chain 100 000 long, resolve to the exact samples")
    func hugeSessions() throws {
        let fixture = try SessionFixture()
        try fixture.audio("tiny.wav", ramp(480))
        let count = 100_000
        var chain = "cues:\n  - { name: c0, file: tiny.wav, at: 0 }\n"
        var spaced = "cues:\n"
        for index in 0..<count {
            if index > 0 { chain += "  - { name: c\(index), file: tiny.wav, after: c\(index - 1) }\n" }
            spaced += "  - { name: c\(index), file: tiny.wav, at: \"\(index * 1000) samples\" }\n"
        }
        let chained = try Session.load(path: try fixture.session(chain, name: "chain.yaml")).timeline(rate: 48000)
        #expect(chained.cues.count == count)
        #expect(chained.cues.enumerated().allSatisfy { $0.element.start == Int64($0.offset * 480) })
        #expect(chained.end == Int64(count * 480))

        let placed = try Session.load(path: try fixture.session(spaced, name: "spaced.yaml")).timeline(rate: 48000)
        #expect(placed.cues.enumerated().allSatisfy { $0.element.start == Int64($0.offset * 1000) && $0.element.length == 480 })
    }

    @Test("a cycle through 100 000 cues is one error with a shortened path; 100 000 unknown references stay fast")
    func hugeErrors() throws {
        let fixture = try SessionFixture()
        try fixture.audio("tiny.wav", ramp(48))
        let count = 100_000
        var cycle = "cues:\n  - { name: c0, file: tiny.wav, after: c\(count - 1) }\n"
        var unknown = "cues:\n"
        for index in 0..<count {
            if index > 0 { cycle += "  - { name: c\(index), file: tiny.wav, after: c\(index - 1) }\n" }
            unknown += "  - { name: c\(index), file: tiny.wav, with: d\(index) }\n"
        }
        let cycles = try fixture.diagnostics(cycle)
        #expect(cycles.count == 1 && cycles.first?.kind == .cycle && cycles.first?.location.line == 2)
        #expect(cycles.first?.message.contains("(\(count) cues in all)") == true)
        #expect((cycles.first?.message.count ?? .max) < 400)
        let unknowns = try fixture.diagnostics(unknown)
        #expect(unknowns.count == count && unknowns.allSatisfy { $0.kind == .unknownCue })
    }
}
