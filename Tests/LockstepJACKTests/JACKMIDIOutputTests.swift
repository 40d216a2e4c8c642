import Foundation
import Lockstep
import LockstepJACK
import LockstepTestSupport
import Testing

extension JACKTests {
    /// The JACK MIDI output port: scheduled events go out on their own frames, recorded by an
    /// independent client; cancelled ones never; one scheduled twice once; a past one late.
    @Suite("JACK MIDI output", .serialized)
    struct JACKMIDIOutputTests {
        @Test("events go out on their frames in time order; a cancellation drops what follows it; a repeated key is sent once; a past sample goes out at the next cycle's start, counted late")
        func schedule() throws {
            let server = try JACKServer(period: 256)
            var options = JACKDevice.Options(clientName: "lockstep-midi-out", serverName: server.name, connectToPhysicalOutputs: false)
            options.midiOutputPortNames = ["midi_out", "mtc_out"]
            let device = try JACKDevice(options: options)
            let output = try #require(device.midiOutput(named: "midi_out"))
            #expect(output.portName == "lockstep-midi-out:midi_out")
            #expect(device.midiOutputs.map(\.portName) == ["lockstep-midi-out:midi_out", "lockstep-midi-out:mtc_out"])
            let recorder = try JACKMIDIRecorder(server: server)
            try recorder.start()
            try device.start()
            try device.connect(output.portName, to: recorder.portName)
            let base = device.currentTime().sampleTime + 9600
            // Out of order within a batch, two in one cycle, one far ahead that a cancel drops.
            #expect(output.schedule([.event(key: 2, sampleTime: base + 300, bytes: [0xB0, 7, 64]),
                                     .event(key: 1, sampleTime: base, bytes: [0x90, 60, 100]),
                                     .event(key: 3, sampleTime: base + 310, bytes: [0x80, 60, 0]),
                                     .event(key: 4, sampleTime: base + 4800, bytes: [0xC0, 9])]))
            // A re-plan: cancel from base + 1000, schedule key 3 again (already waiting: once) and a new one.
            #expect(output.schedule([.cancel(from: base + 1000),
                                     .event(key: 3, sampleTime: base + 310, bytes: [0x80, 60, 0]),
                                     .event(key: 5, sampleTime: base + 2000, bytes: [0xF0, 0x7D, 0x01, 0xF7])]))
            #expect(recorder.wait(forCount: 4, timeout: 5))
            // Once those went out: key 1 again (sent already: never twice) and a sample long past.
            let past = device.currentTime().sampleTime - 5000
            #expect(output.schedule([.event(key: 1, sampleTime: base, bytes: [0x90, 60, 100]),
                                     .event(key: 6, sampleTime: past, bytes: [0x90, 61, 1])]))
            #expect(recorder.wait(forCount: 5, timeout: 5))
            Thread.sleep(forTimeInterval: 0.2)
            device.stop()
            recorder.stop()
            let events = recorder.events
            #expect(events.map(\.bytes) == [[0x90, 60, 100], [0xB0, 7, 64], [0x80, 60, 0], [0xF0, 0x7D, 0x01, 0xF7], [0x90, 61, 1]],
                    "\(events)")
            let frames = [base, base + 300, base + 310, base + 2000].map { device.jackFrameTime(forSampleTime: $0) }
            #expect(Array(events.map(\.frame).prefix(4)) == frames)
            let statistics = output.statistics
            #expect(statistics.sent == 5 && statistics.late == 1 && statistics.dropped == 0 && statistics.repeats == 2, "\(statistics)")
            let late = output.takeLateEvents()
            #expect(late.map(\.key) == [6] && late.first.map { $0.sampleTime == past && $0.lateFrames > 5000 } == true, "\(late)")
            // The late one went out on the first frame of a cycle.
            let lateFrame = try #require(events.last?.frame)
            #expect(Int64(device.sampleTime(forJACKFrameTime: lateFrame) - past) == late.first?.lateFrames)
        }
    }
}
