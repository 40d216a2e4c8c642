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
}
