import Foundation
import Lockstep
import LockstepControl
import LockstepFiles
import LockstepSession
import LockstepTestSupport
import Testing

@Suite("MIDI messages and MIDI Show Control")
struct MIDIMessageTests {
    @Test("channel messages read with 1-based channels; a note on at velocity 0 is a note off")
    func channelMessages() throws {
        #expect(try MIDIMessage(bytes: [0x90, 60, 100]) == .noteOn(channel: 1, note: 60, velocity: 100))
        #expect(try MIDIMessage(bytes: [0x9F, 60, 0]) == .noteOff(channel: 16, note: 60, velocity: 0))
        #expect(try MIDIMessage(bytes: [0x81, 60, 64]) == .noteOff(channel: 2, note: 60, velocity: 64))
        #expect(try MIDIMessage(bytes: [0xB2, 20, 127]) == .controlChange(channel: 3, controller: 20, value: 127))
        #expect(try MIDIMessage(bytes: [0xC0, 5]) == .programChange(channel: 1, program: 5))
        #expect(try MIDIMessage(bytes: [0xE0, 0, 64]) == .other(status: 0xE0))
        #expect(try MIDIMessage(bytes: [0xF8]) == .other(status: 0xF8))
    }

    @Test("MIDI Show Control: device, format, command, cue number, list and path; bytes round-trip")
    func showControl() throws {
        let bytes: [UInt8] = [0xF0, 0x7F, 0x05, 0x02, 0x10, 0x01] + Array("12.5".utf8) + [0x00] + Array("3".utf8) + [0xF7]
        guard case .showControl(let msc) = try MIDIMessage(bytes: bytes) else { Issue.record("not MSC"); return }
        #expect(msc.device == 5 && msc.format == 0x10 && msc.command == 0x01)
        #expect(msc.cueNumber == "12.5" && msc.cueList == "3" && msc.cuePath == nil)
        #expect(msc.bytes == bytes)
        #expect(msc.description == "msc go 12.5 device 5")
        guard case .showControl(let bare) = try MIDIMessage(bytes: [0xF0, 0x7F, 0x7F, 0x02, 0x7F, 0x02, 0xF7]) else { Issue.record("not MSC"); return }
        #expect(bare.cueNumber == nil && bare.device == ShowControlMessage.allCall && bare.commandName == "stop")
        // Other universal SysEx (an identity request) is just another message.
        #expect(try MIDIMessage(bytes: [0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7]) == .other(status: 0xF0))
    }

    @Test("broken messages are refused with what is wrong", arguments: [
        ([UInt8](), "empty"),
        ([0x3C, 0x40], "status byte"),
        ([0x90, 60], "data byte"),
        ([0x90, 60, 100, 1], "data bytes"),
        ([0x90, 0x80, 100], "data byte 80"),
        ([0xC0], "takes 1"),
        ([0xF0, 0x7F, 0x01, 0x02, 0x10, 0x01, 0x31], "F7"),
        ([0xF0, 0x7F, 0x01, 0x90, 0xF7], "status byte 90 inside"),
        ([0xF0, 0x7F, 0x01, 0x02, 0x10, 0x01, 0x41, 0xF7], "ASCII digits"),
        ([0xF0, 0x7F, 0x01, 0x02, 0xF7], "F0 7F <device> 02"),
        ([0xF7], "no SysEx"),
    ] as [([UInt8], String)])
    func broken(bytes: [UInt8], expected: String) {
        #expect { _ = try MIDIMessage(bytes: bytes) } throws: { error in
            (error as? MIDIMessageError)?.message.contains(expected) ?? false
        }
    }
}

@Suite("Standard MIDI Files")
struct StandardMIDIFileTests {
    @Test("times through the tempo map: one tick one sample at 48 kHz, then a tempo change halves them")
    func tempoMap() throws {
        // 480 ticks a quarter; 10 000 µs a quarter (1 tick = 1 sample at 48 kHz) until tick 4800,
        // then 20 000 µs a quarter (1 tick = 2 samples).
        let events: [(tick: Int, bytes: [UInt8])] = [(0, [0x90, 60, 1]), (1000, [0x90, 61, 1]), (4800, [0xFF, 0x51, 0x03, 0x00, 0x4E, 0x20]),
                                                    (5800, [0x90, 62, 1])]
        var body: [UInt8] = []
        var last = 0
        for event in events {
            body += MIDIFileFixtures.variableLength(event.tick - last)
            last = event.tick
            body += event.bytes
        }
        body += [0x00, 0xFF, 0x2F, 0x00]
        let track = Array("MTrk".utf8) + MIDIFileFixtures.be32(body.count + 7) + [0x00, 0xFF, 0x51, 0x03, 0x00, 0x27, 0x10] + body
        let file = try StandardMIDIFile(bytes: MIDIFileFixtures.file(tracks: [track]))
        #expect(file.events(sampleRate: 48000).map(\.sampleTime) == [0, 1000, 4800 + 2000])
    }

    @Test("running status, SysEx, format 1 tracks merged in time order, SMPTE timing")
    func shapes() throws {
        // Running status: 90 3C 40, then 3D 40 with no status byte.
        let first: [UInt8] = MIDIFileFixtures.track([(0, [0x90, 0x3C, 0x40])])
        var running: [UInt8] = Array(first[0..<(first.count - 4)]) + [0x0A, 0x3D, 0x40, 0x00, 0xFF, 0x2F, 0x00]
        let length = running.count - 8
        running.replaceSubrange(4..<8, with: MIDIFileFixtures.be32(length))
        let msc = ShowControlMessage(device: 1, command: 0x01, cueNumber: "7").bytes
        let two = MIDIFileFixtures.track([(5, msc)])
        let file = try StandardMIDIFile(bytes: MIDIFileFixtures.file(format: 1, division: 480, tracks: [running, two]))
        #expect(file.format == 1 && file.trackCount == 2)
        let messages: [[UInt8]] = file.events.map { $0.bytes }
        #expect(messages == [[0x90, 0x3C, 0x40], msc, [0x90, 0x3D, 0x40]])
        // SMPTE: 25 frames × 40 ticks = 1000 ticks a second.
        let smpte = try StandardMIDIFile(bytes: MIDIFileFixtures.file(division: 0xE728, tracks: [MIDIFileFixtures.track([(250, [0xC0, 1])])]))
        #expect(smpte.events(sampleRate: 48000).map(\.sampleTime) == [12000])
    }

    @Test("damaged files are refused with the byte offset and what is wrong", arguments: [
        ([UInt8](Array("RIFF".utf8) + [UInt8](repeating: 0, count: 20)), "MThd"),
        (MIDIFileFixtures.file(format: 2, tracks: [MIDIFileFixtures.track([])]), "format 2"),
        (MIDIFileFixtures.file(division: 0, tracks: [MIDIFileFixtures.track([])]), "0 ticks"),
        (Array(MIDIFileFixtures.file(tracks: [MIDIFileFixtures.track([(0, [0x90, 60, 1])])]).dropLast(6)), "truncated"),
        (MIDIFileFixtures.file(tracks: []), "no track"),
    ] as [([UInt8], String)])
    func damaged(bytes: [UInt8], expected: String) {
        #expect { _ = try StandardMIDIFile(bytes: bytes, path: "x.mid") } throws: { error in
            guard let error = error as? StandardMIDIFileError else { return false }
            return error.description.hasPrefix("x.mid: ") && error.description.contains(expected)
        }
    }

    @Test("20 000 mutated files: each is read or refused with a byte offset, never a crash or a hang")
    func mutations() throws {
        let msc = ShowControlMessage(device: 1, command: 0x01, cueNumber: "1.5").bytes
        let base = MIDIFileFixtures.file(format: 1, tracks: [
            MIDIFileFixtures.track((0..<20).map { ($0 * 96, [0x90, UInt8(60 + $0), 100]) }, tempo: 500_000),
            MIDIFileFixtures.track((0..<20).map { ($0 * 96 + 10, msc) }),
        ])
        var generator = SeededRandom(seed: 17)
        var read = 0, refused = 0
        for _ in 0..<20_000 {
            var bytes = base
            for _ in 0...(generator.next() % 8) { bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next()) }
            if generator.next() % 4 == 0 { bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count)) + 1)) }
            do {
                let file = try StandardMIDIFile(bytes: bytes)
                #expect(file.events.allSatisfy { $0.seconds.isFinite && $0.seconds >= 0 })
                read += 1
            } catch {
                #expect(error.offset != nil || error.problem.contains("MThd"))
                refused += 1
            }
        }
        #expect(read > 0 && refused > 0)
    }
}

@Suite("Session triggers: parsed, checked, mapped to commands")
struct MIDITriggerTests {
    static let audio: [(name: String, samples: [Float])] = [("bed.wav", Signals.constant(0.125, frames: 48000 * 2)),
                                                             ("click.wav", Signals.impulse(at: 0, frames: 4800, value: 0.5))]
    static let cues = """
        channels: 1
        layers: { bed: {}, fx: {} }
        cues:
          - { name: bed, layer: bed, file: bed.wav, at: 0 }
          - { name: bell, number: 1, layer: fx, file: click.wav, at: manual }
          - { name: horn, number: "2.5", layer: fx, file: click.wav, at: manual }

        """

    /// Loads `text` (cues above plus triggers) and checks its triggers.
    static func load(_ triggers: String) throws -> (Session, TemporaryTestDirectory) {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-triggers")
        for (name, samples) in audio {
            try FileFixtures.writeWAV(path: temp.file(name), samples: samples, format: StreamFormat(sampleRate: 48000, channelCount: 1))
        }
        try FileFixtures.writeText(path: temp.file("show.yaml"), cues + triggers)
        return (try Session.load(path: temp.file("show.yaml")), temp)
    }

    @Test("every kind of trigger maps its message to its command; filters on channel, velocity, value and device")
    func mapping() throws {
        let (session, _temp) = try Self.load("""
            triggers:
              - { note: 60, do: go }
              - { note: 61, channel: 2, velocity: 127, do: start horn }
              - { cc: 20, do: stop }
              - { cc: 21, value: 0, do: panic }
              - { program: 4, do: "level bell -6dB 2" }
              - { msc: go }
              - { msc: stop, device: 3 }
              - { msc: resume }
              - { msc: all_off, do: panic }
              - { msc: load }
              - { msc: reset }
            """)
        _ = _temp
        let triggers = try MIDITriggers(session: session)
        func commands(_ bytes: [UInt8]) throws -> [ControlCommand] { try triggers.commands(for: MIDIMessage(bytes: bytes)).map(\.command) }
        #expect(try commands([0x90, 60, 1]) == [.go(nil)])
        #expect(try commands([0x95, 60, 1]) == [.go(nil)])                       // any channel
        #expect(try commands([0x80, 60, 1]).isEmpty)                             // note off
        #expect(try commands([0x91, 61, 127]) == [.startCue(.name("horn"))])
        #expect(try commands([0x91, 61, 100]).isEmpty)                           // other velocity
        #expect(try commands([0x90, 61, 127]).isEmpty)                           // other channel
        #expect(try commands([0xB0, 20, 127]) == [.stop])
        #expect(try commands([0xB0, 20, 0]).isEmpty)                             // a button's release
        #expect(try commands([0xB0, 21, 0]) == [.panic])
        #expect(try commands([0xC0, 4]) == [.setCueLevel(.name("bell"), decibels: -6, ramp: 2)])
        #expect(try commands(ShowControlMessage(device: 9, command: 0x01, cueNumber: "2.5").bytes) == [.go(.name("2.5"))])
        #expect(try commands(ShowControlMessage(device: 9, command: 0x01).bytes) == [.go(nil)])
        #expect(try commands(ShowControlMessage(device: 9, command: 0x02, cueNumber: "1").bytes).isEmpty)   // device 3 only
        #expect(try commands(ShowControlMessage(device: 3, command: 0x02, cueNumber: "1").bytes) == [.pauseCue(.name("1"))])
        #expect(try commands(ShowControlMessage(device: 127, command: 0x02).bytes) == [.pause])               // all call
        #expect(try commands(ShowControlMessage(device: 0, command: 0x03, cueNumber: "1").bytes) == [.resumeCue(.name("1"))])
        #expect(try commands(ShowControlMessage(device: 0, command: 0x08).bytes) == [.panic])
        #expect(try commands(ShowControlMessage(device: 0, command: 0x05, cueNumber: "3").bytes) == [.selectPlayhead(.name("3"))])
        #expect(try commands(ShowControlMessage(device: 0, command: 0x05).bytes) == [.status])
        #expect(try commands(ShowControlMessage(device: 0, command: 0x0A).bytes) == [.reset])
    }

    @Test("errors in triggers are reported at their FILE:LINE:COLUMN", arguments: [
        ("triggers:\n  - { note: 128, do: go }\n", 2, "note '128' is not a MIDI note number"),
        ("triggers:\n  - { note: 60 }\n", 2, "has no 'do:'"),
        ("triggers:\n  - { note: 60, cc: 1, do: go }\n", 2, "both 'note' and 'cc'"),
        ("triggers:\n  - { do: go }\n", 2, "answers no MIDI message"),
        ("triggers:\n  - { msc: fire }\n", 2, "not a MIDI Show Control command"),
        ("triggers:\n  - { msc: go, channel: 1 }\n", 2, "has no a channel"),
        ("triggers:\n  - { cc: 7, velocity: 3, do: stop }\n", 2, "only notes have one"),
        ("triggers:\n  - { note: 60, channel: 17, do: go }\n", 2, "channel '17'"),
        ("triggers:\n  - { note: 60, do: 'start gong' }\n", 2, "names no cue"),
        ("triggers:\n  - { note: 60, do: 'gain drums -3dB' }\n", 2, "names no layer"),
        ("triggers:\n  - { note: 60, do: jump }\n", 2, "unknown command 'jump'"),
        ("triggers: { note: 60 }\n", 1, "must be a list"),
        ("triggers:\n  - { note: 60, do: go, velocity: x }\n", 2, "velocity 'x'"),
    ] as [(String, Int, String)])
    func errors(text: String, line: Int, expected: String) throws {
        let base = Self.cues.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        do {
            let (session, _temp) = try Self.load(text)
            _ = _temp
            _ = try MIDITriggers(session: session)
            Issue.record("no error for \(text)")
        } catch let error as SessionError {
            let hit = error.diagnostics.first { $0.message.contains(expected) }
            #expect(hit != nil, "\(error)")
            #expect(hit?.location.line == base + line, "\(error)")
            #expect(hit?.location.path.hasSuffix("show.yaml") == true)
        }
    }

    @Test("a cue number names its cue over OSC and MIDI alike; numbers must be unique")
    func numbers() throws {
        let (session, _temp) = try Self.load("")
        _ = _temp
        let timeline = try session.timeline(rate: 48000)
        let numbers = session.document.cues.map(\.number)
        #expect(numbers == [nil, "1", "2.5"])
        #expect(try ControlDispatcher.resolve(.name("2.5"), in: timeline, numbers: numbers) == "horn")
        #expect(try ControlDispatcher.resolve(.name("1"), in: timeline, numbers: numbers) == "bell")
        #expect(try ControlDispatcher.resolve(.name("bed"), in: timeline, numbers: numbers) == "bed")
        // With numbers given, a bare position no longer names a cue.
        #expect(try ControlDispatcher.resolve(.name("3"), in: timeline, numbers: numbers) == "3")
        let duplicate = Self.cues.replacingOccurrences(of: "number: \"2.5\"", with: "number: 1")
        let temp = try TemporaryTestDirectory(prefix: "lockstep-triggers")
        for (name, samples) in Self.audio {
            try FileFixtures.writeWAV(path: temp.file(name), samples: samples, format: StreamFormat(sampleRate: 48000, channelCount: 1))
        }
        try FileFixtures.writeText(path: temp.file("show.yaml"), duplicate)
        #expect { _ = try Session.load(path: temp.file("show.yaml")) } throws: { error in
            (error as? SessionError)?.diagnostics.contains { $0.message.contains("cue number '1' is already used") && $0.location.line == 6 } ?? false
        }
    }
}

@Suite("MIDI control (offline): each command lands on its event's sample plus the latency")
struct MIDIControlTests {
    static let triggers = """
        triggers:
          - { note: 60, do: go }
          - { cc: 20, do: stop horn }
          - { program: 9, do: pause }
          - { msc: go }

        """

    @Test("note, MSC and CC land exactly latency samples after their events; broken and unmatched MIDI is counted")
    func landsOnItsSample() throws {
        let show = try OfflineShow(MIDITriggerTests.cues + Self.triggers, audio: MIDITriggerTests.audio)
        let dispatcher = ControlDispatcher(player: show.player)
        let midi = MIDIControl(dispatcher: dispatcher, triggers: try MIDITriggers(session: show.player.session), latency: 512)
        try show.render(4096)
        // A GO from a note at sample 5000 (ahead of what is computed: 4 buffers of 1024 from 4096).
        let go = midi.handle(MIDIEvent(sampleTime: 5000, bytes: [0x90, 60, 99]))
        #expect(go.count == 1 && go[0].isOK, "\(go)")
        #expect(go[0].data?["start"] == .integer(5512) && go[0].data?["lateFrames"] == .integer(0), "\(go)")
        // MSC GO 2.5 (horn) at 9000.
        let msc = midi.handle(MIDIEvent(sampleTime: 9000, bytes: ShowControlMessage(device: 1, command: 0x01, cueNumber: "2.5").bytes))
        #expect(msc.first?.data?["start"] == .integer(9512), "\(msc)")
        // Stop horn from a CC at 9300: it fades out from 9812.
        let stop = midi.handle(MIDIEvent(sampleTime: 9300, bytes: [0xB0, 20, 127]))
        #expect(stop.first?.data?["start"] == .integer(9812), "\(stop)")
        #expect(midi.handle(MIDIEvent(sampleTime: 9400, bytes: [0x90, 0x80, 1])).isEmpty)
        #expect(midi.handle(MIDIEvent(sampleTime: 9400, bytes: [0x90, 59, 1])).isEmpty)
        try show.render(until: 20000)
        let output = show.output
        #expect(output[5511] == 0.125 && output[5512] == 0.625 && output[5513] == 0.125)
        #expect(output[9511] == 0.125 && output[9512] == 0.625)
        // After the stop's 5 ms fade only the bed is left.
        #expect(output[9812 + 240 + 10] == 0.125)
        let counts = midi.statistics
        #expect(counts.received == 5 && counts.matched == 3 && counts.broken == 1 && counts.unmatched == 1, "\(counts)")
        #expect(midi.lastBrokenMessage?.contains("data byte 80") == true)
    }

    @Test("with midiInputEnabled off a note fires nothing (counted as overridden) while MSC still does; with mscInputEnabled off MSC fires nothing; on again, the note reaches the dispatcher")
    func inputOverrides() throws {
        let show = try OfflineShow(MIDITriggerTests.cues + Self.triggers, audio: MIDITriggerTests.audio)
        let dispatcher = ControlDispatcher(player: show.player)
        let midi = MIDIControl(dispatcher: dispatcher, triggers: try MIDITriggers(session: show.player.session), latency: 512)
        try show.render(4096)
        #expect(dispatcher.execute(try ControlLine.parse("override midiInputEnabled off"), address: "override").isOK)
        #expect(midi.handle(MIDIEvent(sampleTime: 5000, bytes: [0x90, 60, 99])).isEmpty)
        let msc = midi.handle(MIDIEvent(sampleTime: 6000, bytes: ShowControlMessage(device: 1, command: 0x01, cueNumber: "2.5").bytes))
        #expect(msc.first?.isOK == true, "\(msc)")
        dispatcher.overrides.set(.mscInputEnabled, enabled: false)
        #expect(midi.handle(MIDIEvent(sampleTime: 7000, bytes: ShowControlMessage(device: 1, command: 0x01, cueNumber: "2.5").bytes)).isEmpty)
        let on = dispatcher.execute(try ControlLine.parse("override midiInputEnabled on"), address: "override")
        #expect(on.isOK && on.summary == "midiInputEnabled on", "\(on.json)")
        let note = midi.handle(MIDIEvent(sampleTime: 8000, bytes: [0x90, 60, 99]))
        // (It reaches the dispatcher: the MSC GO above fired the last manual cue, so this one has none.)
        #expect(note.count == 1 && note[0].code == .nothingWaiting, "\(note.map(\.json))")
        #expect(midi.statistics.overridden == 2 && midi.statistics.matched == 2, "\(midi.statistics)")
        let asked = dispatcher.execute(try ControlLine.parse("override mscInputEnabled"), address: "override")
        #expect(asked.data == .bool(false) && asked.summary.hasPrefix("mscInputEnabled is off: "), "\(asked.json)")
        #expect(throws: ControlError.self) { try ControlLine.parse("override mscInputEnabled maybe") }
        #expect(throws: ControlError.self) { try ControlLine.parse("override lights off") }
        let (web, address) = try WebCommand.parse(#"{"command":"override","key":"sysexInputEnabled","enabled":false}"#)
        #expect(dispatcher.execute(web, address: address).isOK && !dispatcher.overrides.isEnabled(.sysexInputEnabled))
    }

    @Test("a MIDI file rendered offline places every command as a live run would; a session pause cannot be rendered")
    func renderedFromAFile() throws {
        let (session, temp) = try MIDITriggerTests.load(Self.triggers)
        let events = try StandardMIDIFile(bytes: MIDIFileFixtures.sampleExact([
            (1000, [0x90, 60, 1]), (3000, ShowControlMessage(device: 1, command: 0x01, cueNumber: "2.5").bytes),
        ])).events(sampleRate: 48000)
        #expect(events.map(\.sampleTime) == [1000, 3000])
        let control = MIDIRenderControl(events: events, triggers: try MIDITriggers(session: session), latency: 512)
        var renderer = SessionRenderer(session: session, outputPath: temp.file("out.wav"), duration: .seconds(0.5))
        renderer.control = control.renderControl
        let summary = try renderer.run()
        #expect(summary.timeline.cues.map(\.start) == [0, 1512, 3512])
        let rendered = try FileFixtures.readFloat(path: temp.file("out.wav"))
        #expect(rendered[1511] == 0.125 && rendered[1512] == 0.625 && rendered[3512] == 0.625, "\(rendered[3508...3516])")
        let replies = control.replies
        #expect(replies.allSatisfy { $0.isOK })

        let paused = MIDIRenderControl(events: [MIDIEvent(sampleTime: 2000, bytes: [0xC0, 9])], triggers: try MIDITriggers(session: session),
                                       latency: 512)
        renderer.outputPath = temp.file("paused.wav")
        renderer.control = paused.renderControl
        #expect { _ = try renderer.run() } throws: { error in
            (error as? ControlError)?.message.contains("sends 'pause'") ?? false
        }
        #expect(!FileManager.default.fileExists(atPath: temp.file("paused.wav")))
    }
}
