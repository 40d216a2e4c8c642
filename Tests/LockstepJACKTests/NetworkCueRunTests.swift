import Foundation
import Lockstep
import LockstepFiles
import LockstepOSC
import LockstepTestSupport
import Testing

extension JACKTests {
    /// Network cues live: `session run` sends each cue's OSC message when the session reaches it —
    /// a timed one, one a GO fires, and again after a reset — to a UDP receiver on loopback.
    @Suite("lockstep session run: network cues send their OSC messages", .serialized)
    struct NetworkCueRunTests {
        @Test("a timed network cue and one a GO fires each send their message once, on the sample the log names; reset sends the timed one again; with networkLocalOutputEnabled off nothing is sent")
        func sendsLive() throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-network-cue")
            let receiver = try OSCTestPeer(serverPort: 9)
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.constant(0.125, frames: 48000),
                                      format: StreamFormat(sampleRate: 48000, channelCount: 1))
            try FileFixtures.writeText(path: temp.file("show.yaml"), """
                channels: 1
                cues:
                  - { name: bed, file: bed.wav, at: 0 }
                  - { name: lights, type: network, destination: 127.0.0.1:\(receiver.port), message: "/cue/12/go 7", at: 0.3 }
                  - { name: bell, file: bed.wav, at: manual, to: 0.1, continue: auto-continue, post_wait: 0.05 }
                  - { name: desk, type: network, destination: 127.0.0.1:\(receiver.port), message: '/fader/1 0.5 "house open"' }
                """)
            let server = try JACKServer(period: 256)
            let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name, "--client-name", "network-cues",
                                         "--no-connect", "--control", "-", "--json"], withInput: true)
            defer { if running.isRunning { running.send(SIGKILL) } }
            let timed = try #require(receiver.next("/cue/12/go", timeout: 10), "\(running.errorOutputSoFar)")
            #expect(timed.arguments == [.int32(7)])
            #expect(running.waitForErrorOutput(containing: "network cue lights: sent /cue/12/go 7 to 127.0.0.1:\(receiver.port) at 0:00.300 (sample 14400)"),
                    "\(running.errorOutputSoFar)")
            #expect(running.send(line: "go", awaiting: "go bell at"))
            let fired = try #require(receiver.next("/fader/1", timeout: 5))
            #expect(fired.arguments == [.float(0.5), .string("house open")])
            #expect(running.send(line: "reset", awaiting: "reset:"))
            #expect(receiver.next("/cue/12/go", timeout: 5) != nil, "the timed cue is not sent again after reset")
            // Network output to this machine switched off: the GO's cue sends nothing, and says why.
            #expect(running.send(line: "override networkLocalOutputEnabled off", awaiting: "networkLocalOutputEnabled off"))
            #expect(running.send(line: "go", awaiting: "go bell at"))
            #expect(running.waitForErrorOutput(containing: "network cue desk: /fader/1 to 127.0.0.1:\(receiver.port) not sent: the override networkLocalOutputEnabled is off"),
                    "\(running.errorOutputSoFar)")
            #expect(receiver.next("/fader/1", timeout: 0.5) == nil)
            running.closeInput()
            running.send(SIGINT)
            _ = running.wait(timeout: 20)
            #expect(receiver.pending.messages.isEmpty, "sent more than once: \(receiver.pending.messages.map(\.address))")
        }
    }
}
