import Foundation
import LockstepOSC
import LockstepSession
import LockstepTestSupport
import Testing

/// Network cues live: the sender, real UDP on loopback, driven by an offline render.
@Suite("Network cues: OSC messages sent as the session reaches them")
struct NetworkCueTests {
    @Test("the sender sends each network cue once the session reaches its sample: timed, fired by GO, and again after a reset")
    func sends() throws {
        let receiver = try OSCTestPeer(serverPort: 9)
        let show = try OfflineShow("""
            channels: 1
            cues:
              - { name: bed, file: bed.wav, at: 0 }
              - { name: lights, type: network, destination: 127.0.0.1:\(receiver.port), message: "/cue/12/go 1 0.5 house", at: 2400 samples }
              - { name: bell, file: bed.wav, at: manual, continue: auto-continue }
              - { name: desk, type: network, destination: 127.0.0.1:\(receiver.port), message: /fader/1 }
            """, audio: [("bed.wav", Signals.constant(0.125, frames: 4800))])
        #expect(show.player.timeline.actionSummary(show.player.timeline.cues[1]) == "network 127.0.0.1:\(receiver.port) /cue/12/go 1 0.5 house")
        let sender = NetworkCueSender(player: show.player)
        try show.render(2048)
        #expect(sender.step().isEmpty)
        try show.render(until: 2500)
        let first = sender.step()
        #expect(first.map(\.cue) == ["lights"] && first[0].position == 2400 && first[0].problem == nil)
        let message = try #require(receiver.next("/cue/12/go"))
        #expect(message.arguments == [.int32(1), .float(0.5), .string("house")])
        #expect(sender.step().isEmpty)                                          // once
        let fired = try show.player.go()
        try show.render(until: Int(fired.start) + 10)
        #expect(sender.step().map(\.cue) == ["desk"], "go \(fired), position \(show.player.position), desk \(show.player.timeline.cues[3])")
        #expect(receiver.next("/fader/1") != nil)
        let background = show.renderInBackground()
        try show.player.reset()
        background.stop()
        // (The top plays again 50 ms after the reset.)
        try show.render(until: show.output.count + 9600)
        #expect(sender.step().map(\.cue) == ["lights"], "position \(show.player.position)")                         // the top again
    }
}
