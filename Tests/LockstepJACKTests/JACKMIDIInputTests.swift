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

        @Test("after the server is killed and restarted under its name, midi_in is there again, its connection restored, and its events carry frames on the continued timeline")
        func survivesServerRestart() throws {
            let server = try JACKServer(period: 256)
            let name = server.name
            let device = try JACKDevice(options: .init(clientName: "lockstep-midi-restart", serverName: name,
                                                       connectToPhysicalOutputs: false, survivesServerRestart: true,
                                                       midiInputPortName: "midi_in"))
            let input = try #require(device.midiInput)
            let engine = try Engine(device: device)
            try device.start()
            let first = try JACKMIDISender(server: server, name: "desk")
            try first.start(connectingTo: input.portName)
            first.send([0x90, 60, 100], atFrame: first.frameTime &+ 1024)
            #expect(first.waitUntilSent(timeout: 5))
            var before: [MIDIEvent] = []
            var deadline = Date().addingTimeInterval(5)
            while before.isEmpty && Date() < deadline { before += input.read(timeout: 0.1) }
            #expect(before.map(\.bytes) == [[0x90, 60, 100]])

            // The server dies under both clients (the desk stays connected until then).
            server.kill()
            #expect(ThreadedTestDevice.wait(timeout: 5) { device.isWaitingForServer })
            first.stop()
            // A wait for time: libjack's close of a client whose server is gone (the desk) must
            // finish before this process opens another, or it holds libjack's lock for ever.
            usleep(300_000)
            let again = try JACKServer(name: name, period: 256)
            #expect(ThreadedTestDevice.wait(timeout: 10) { !device.isWaitingForServer && device.isRunning })
            // The sender comes back after the device, under its name: the connection the device
            // had is restored when its port appears.
            let second = try JACKMIDISender(server: again, name: "desk")
            try second.start()
            #expect(ThreadedTestDevice.wait(timeout: 5) {
                ((try? JACKGraph.listPorts(server: again.name)) ?? []).contains {
                    $0.name == input.portName && $0.connections == [second.portName]
                }
            }, "\((try? JACKGraph.listPorts(server: again.name)) ?? [])")
            let restart = try #require(engine.discontinuities.first { $0.kind == .serverRestart })
            second.send([0x90, 62, 90], atFrame: second.frameTime &+ 1024)
            #expect(second.waitUntilSent(timeout: 5))
            var after: [MIDIEvent] = []
            deadline = Date().addingTimeInterval(5)
            while after.isEmpty && Date() < deadline { after += input.read(timeout: 0.1) }
            #expect(after.map(\.bytes) == [[0x90, 62, 90]])
            // On the device's timeline, which went on from the last frame rendered before the loss.
            let event = try #require(after.first)
            #expect(event.sampleTime > restart.sampleTime)
            #expect(device.jackFrameTime(forSampleTime: event.sampleTime) == second.sentFrames.first)
            second.stop()
            device.stop()
        }
    }
}
