import Foundation
import LockstepSession
import LockstepTestSupport
import Testing

/// MIDI cues in the session format: each message key and the bytes it sends; the checks of the keys.
@Suite("MIDI cues: the message keys, their bytes and the session-file checks")
struct MIDICueParseTests {
    @Test("each message key makes the bytes MIDI defines, on the cue's channel; a session of MIDI cues alone has a silent layer")
    func bytes() throws {
        let fixture = try SessionFixture()
        let session = try Session.load(path: try fixture.session("""
            cues:
              - { name: on, type: midi, note: 60, velocity: 100, channel: 2, at: 1 }
              - { name: off, type: midi, note_off: 60, at: 1 }
              - { name: cc, type: midi, cc: 7, value: 99, channel: 16, at: 1 }
              - { name: pc, type: midi, program: 5, at: 1 }
              - { name: bend, type: midi, pitch_bend: -8192, at: 1 }
              - { name: top, type: midi, pitch_bend: 8191, at: 1 }
              - { name: msc, type: midi, msc: go, q_number: 1.5, q_list: 2, device: 3, command_format: 16, at: manual }
              - { name: all, type: midi, msc: all_off, at: manual }
              - { name: sx, type: midi, sysex: F07D0102F7, at: 2 }
            """))
        let timeline = try session.timeline(rate: 48000)
        let bytes = timeline.cues.map { cue -> [UInt8] in
            guard case .midi(let message) = cue.action else { return [] }
            return message.bytes
        }
        #expect(bytes == [[0x91, 60, 100], [0x80, 60, 64], [0xBF, 7, 99], [0xC0, 5], [0xE0, 0, 0], [0xE0, 0x7F, 0x7F],
                          [0xF0, 0x7F, 3, 0x02, 0x10, 0x01, 0x31, 0x2E, 0x35, 0x00, 0x32, 0xF7],
                          [0xF0, 0x7F, 0x7F, 0x02, 0x7F, 0x08, 0xF7], [0xF0, 0x7D, 0x01, 0x02, 0xF7]])
        #expect(timeline.cues[0].start == 48000 && timeline.cues[8].start == 96000)
        #expect(timeline.layers.map(\.name) == ["main"])
        #expect(timeline.actionSummary(timeline.cues[6]) == "midi msc go 1.5 list 2 device 3")
        #expect(SessionDocument.CueType.midi.qlabName == "MIDI")
    }

    @Test("a MIDI cue sends one message with the keys that go with it; each mistake is one error at its line")
    func mistakes() throws {
        let fixture = try SessionFixture()
        let problems = try fixture.diagnostics("""
            cues:
              - { name: a, type: midi, note: 60, cc: 3, at: 1 }
              - { name: b, type: midi, msc: fire, at: manual }
              - { name: c, type: midi, sysex: "F0 7D 81 F7", at: 2 }
              - { name: d, type: midi, cc: 7, at: 3 }
              - { name: e, type: midi, program: 3, velocity: 3, at: 3 }
              - { name: f, type: midi, at: 3 }
              - { name: g, type: midi, msc: all_off, q_number: 3, at: 3 }
              - { name: h, type: midi, note: 128, channel: 0, at: 3 }
              - { name: i, type: midi, msc: go, q_list: 2, at: 3 }
              - { name: j, type: midi, sysex: "F0 7D", gain: 3, at: 3 }
            """)
        let messages = problems.map { "\($0.location.line): \($0.message)" }
        #expect(messages.sorted() == [
            "2: cue 1 has both 'note' and 'cc'; a MIDI cue sends one message: keep one of cc, msc, note, note_off, pitch_bend, program, sysex",
            "3: cue 2: msc 'fire' is not a MIDI Show Control command a MIDI cue sends; use one of go, stop, resume, load, all_off, restore, reset, go_off",
            "4: cue 3: sysex a SysEx message's data bytes are 00…7F; this one holds 81",
            "5: cue 4 ('d'): a control change needs 'value:' (0 to 127)",
            "6: cue 5 ('e'): 'velocity' does not go with 'program'; remove it",
            "7: cue 6 ('f'): a MIDI cue needs a message: one of cc, msc, note, note_off, pitch_bend, program, sysex (e.g. 'note: 60' or 'msc: go')",
            "8: cue 7 ('g'): 'q_number' does not go with 'msc' all_off; remove it",
            "9: cue 8: channel '0' is not a MIDI channel; write a whole number from 1 to 16",
            "9: cue 8: note '128' is not a MIDI note number; write a whole number from 0 to 127",
            "10: cue 9 ('i'): 'q_list' names the list of a cue number; add 'q_number:'",
            "11: cue 10 ('j'): a midi cue has no 'gain'; it takes cc, channel, command_format, device, msc, note, note_off, pitch_bend, program, q_list, q_number, sysex, value, velocity besides the keys every cue takes",
            "11: cue 10: sysex a SysEx message starts with F0, ends with F7 and has data between; write e.g. F0 7D 01 F7",
        ].sorted(), "\(messages.joined(separator: "\n"))")
    }
}
