import Foundation
import Lockstep
import LockstepControl
import LockstepSession
import LockstepTestSupport
import Testing

/// MIDI learn through the dispatcher: the next MIDI message becomes a trigger, written into the
/// session's `triggers:`, answered by the MIDI surface at once; unlearn removes a cue's triggers.
@Suite("MIDI learn and unlearn (offline)")
struct MIDILearnTests {
    @Test("learn arms; a note becomes a trigger line and fires its cue from then on; unlearn removes it; an unknown cue is refused")
    func learnAndUnlearn() throws {
        let show = try OfflineShow("""
            channels: 1
            layers: { fx: {} }
            cues:
              - { name: bell, layer: fx, file: hit.wav, at: manual }
              - { name: horn, layer: fx, file: hit.wav, at: manual }
            triggers:
              - { program: 4, do: go horn }

            """, audio: [("hit.wav", Signals.impulse(at: 0, frames: 16, value: 0.5))])
        try show.render(1024)
        let dispatcher = ControlDispatcher(player: show.player)
        let midi = MIDIControl(dispatcher: dispatcher, triggers: try MIDITriggers(session: show.player.session), latency: nil)
        #expect(!dispatcher.execute(try ControlLine.parse("learn go nobody"), address: "learn").isOK)
        let armed = dispatcher.execute(try ControlLine.parse("learn go bell"), address: "learn")
        #expect(armed.isOK && armed.summary.contains("go bell"), "\(armed.summary)")
        // A note off is no trigger: it passes; the note on is learned.
        #expect(midi.handle(MIDIEvent(sampleTime: 1024, bytes: [0x80, 60, 0])).isEmpty)
        let learned = midi.handle(MIDIEvent(sampleTime: 1100, bytes: [0x92, 60, 100]))
        #expect(learned.count == 1 && learned[0].isOK && learned[0].summary.hasPrefix("learned note 60, channel 3, do go bell"), "\(learned)")
        #expect(show.player.editedSession.text.hasSuffix("""
            triggers:
              - { program: 4, do: go horn }
              - { note: 60, channel: 3, do: go bell }

            """), "\(show.player.editedSession.text)")
        // From now on the note fires the bell.
        let fired = midi.handle(MIDIEvent(sampleTime: 1200, bytes: [0x92, 60, 100]))
        #expect(fired.count == 1 && fired[0].isOK && fired[0].summary.contains("bell"), "\(fired)")
        let forgot = dispatcher.execute(try ControlLine.parse("unlearn bell"), address: "unlearn")
        #expect(forgot.isOK, "\(forgot.summary)")
        #expect(!show.player.editedSession.text.contains("note: 60"))
        #expect(dispatcher.execute(try ControlLine.parse("unlearn horn"), address: "unlearn").isOK)
        #expect(show.player.editedSession.text.hasSuffix("triggers: []\n"), "\(show.player.editedSession.text)")
        #expect(!dispatcher.execute(try ControlLine.parse("unlearn horn"), address: "unlearn").isOK)
        #expect(midi.handle(MIDIEvent(sampleTime: 1300, bytes: [0x92, 60, 100])).isEmpty)
    }

    @Test("learn takes a controller (not one at 0), a program change and an MSC GO as well: each becomes its trigger line and fires its cue")
    func learnEveryKind() throws {
        let show = try OfflineShow("""
            channels: 1
            layers: { fx: {} }
            cues:
              - { name: bell, layer: fx, file: hit.wav, at: manual }
              - { name: horn, layer: fx, file: hit.wav, at: manual }
              - { name: gong, layer: fx, file: hit.wav, at: manual }

            """, audio: [("hit.wav", Signals.impulse(at: 0, frames: 16, value: 0.5))])
        try show.render(1024)
        let dispatcher = ControlDispatcher(player: show.player)
        let midi = MIDIControl(dispatcher: dispatcher, triggers: try MIDITriggers(session: show.player.session), latency: nil)
        /// MSC GO of cue 5, all-call device (F0 7F 7F 02 01 01 '5' F7).
        let mscGo: [UInt8] = [0xF0, 0x7F, 0x7F, 0x02, 0x01, 0x01, 0x35, 0xF7]
        let cases: [(cue: String, ignored: [UInt8]?, bytes: [UInt8], said: String, line: String)] = [
            ("bell", [0xB0, 7, 0], [0xB0, 7, 127], "learned cc 7, channel 1, do go bell", "  - { cc: 7, channel: 1, do: go bell }"),
            ("horn", nil, [0xC4, 12], "learned program 12, channel 5, do go horn", "  - { program: 12, channel: 5, do: go horn }"),
            ("gong", nil, mscGo, "learned msc go, do go gong", "  - { msc: go, do: go gong }"),
        ]
        var time: Int64 = 1024
        for item in cases {
            #expect(dispatcher.execute(try ControlLine.parse("learn go \(item.cue)"), address: "learn").isOK)
            if let ignored = item.ignored {
                // (A controller at 0 — a fader down, a button released — is no trigger.)
                #expect(midi.handle(MIDIEvent(sampleTime: time, bytes: ignored)).isEmpty)
            }
            time += 64
            let learned = midi.handle(MIDIEvent(sampleTime: time, bytes: item.bytes))
            #expect(learned.count == 1 && learned[0].isOK && learned[0].summary.hasPrefix(item.said), "\(item.cue): \(learned.map(\.summary))")
            #expect(show.player.editedSession.text.contains(item.line + "\n"), "\(item.cue): \(show.player.editedSession.text)")
            // From now on the message fires its cue.
            time += 64
            let fired = midi.handle(MIDIEvent(sampleTime: time, bytes: item.bytes))
            #expect(fired.count == 1 && fired[0].isOK && fired[0].summary.contains(item.cue), "\(item.cue): \(fired.map(\.summary))")
        }
    }
}
