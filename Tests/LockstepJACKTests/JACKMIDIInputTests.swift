import Foundation
import Lockstep
import LockstepJACK
import LockstepTestSupport
import Testing

extension JACKTests {
    /// The JACK MIDI input port: events arrive on their own frames; what it cannot keep is
    /// dropped and counted, never blocking the process thread.
    @Suite("JACK MIDI input", .serialized)
    struct JACKMIDIInputTests {
        @Test("events carry their frame; a message longer than 256 bytes is dropped and counted; the port survives it")
        func framesAndOversizedMessages() throws {
            let server = try JACKServer(period: 256)
            let device = try JACKDevice(options: .init(clientName: "lockstep-midi-in", serverName: server.name,
                                                       connectToPhysicalOutputs: false, midiInputPortName: "midi_in"))
            let input = try #require(device.midiInput)
            #expect(input.portName == "lockstep-midi-in:midi_in")
            try device.start()
            let sender = try JACKMIDISender(server: server)
            try sender.start(connectingTo: input.portName)
            usleep(200_000)
            let base = sender.frameTime &+ 2400
            let dump: [UInt8] = [0xF0, 0x7E] + [UInt8](repeating: 0x11, count: 300) + [0xF7]
            sender.send([0x90, 60, 100], atFrame: base)
            sender.send(dump, atFrame: base &+ 100)
            sender.send([0xB0, 7, 64], atFrame: base &+ 300)
            #expect(sender.waitUntilSent(timeout: 5))
            var events: [MIDIEvent] = []
            let deadline = Date().addingTimeInterval(5)
            while events.count < 2 && Date() < deadline { events += input.read(timeout: 0.1) }
            #expect(events.map(\.bytes) == [[0x90, 60, 100], [0xB0, 7, 64]])
            let sent = sender.sentFrames
            #expect(events.map { device.jackFrameTime(forSampleTime: $0.sampleTime) } == [sent[0], sent[2]])
            let statistics = input.statistics
            #expect(statistics.received == 3 && statistics.droppedOversized == 1 && statistics.droppedRingFull == 0, "\(statistics)")
            device.stop()
        }
    }
}
