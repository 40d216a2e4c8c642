import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension JACKTests {
    /// `set-layer LAYER ports …` during `session run`: a playing layer moves from the master mix
    /// onto ports of its own, to other ports, and back — each time on the device sample the reply
    /// names, captured by an independent JACK client on all three destinations.
    @Suite("lockstep session run: a layer's ports edited live", .serialized)
    struct LayerPortsEditTests {
        static let step: Float = 1.0 / 65536

        @Test("out of the master mix onto its own ports and back on one cycle's first frame (never doubled, never missing); to other ports silent only between the two replied samples; each reply names the sample the capture finds")
        func reroutes() throws { try retryingOnXruns("LayerPortsEditTests", run) }

        func run(_ xrun: XrunFlag) throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-layer-ports")
            // A ramp from 1 (never 0): each captured sample says which bed sample it is.
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.ramp(frames: 48000, start: 1, step: Self.step),
                                      format: StreamFormat(sampleRate: 48000, channelCount: 1))
            try FileFixtures.writeText(path: temp.file("show.yaml"), """
                channels: 1
                layers: { bed: {} }
                cues:
                  - { name: bed, layer: bed, file: bed.wav, at: 0, loop: forever }

                """)
            let server = try JACKServer(period: 256)
            let capture = try JACKCapture(server: server, sources: [], channels: 3, maxSeconds: 20)
            try capture.start()
            let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name, "--client-name", "ports-edit",
                                         "--connect", capture.portNames[0], "--control", "-", "--no-journal"], withInput: true)
            defer { if running.isRunning { running.send(SIGKILL) } }
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil }, "\(running.errorOutputSoFar)")
            usleep(300_000)
            var routed: [Int64] = []
            for ports in [capture.portNames[1], capture.portNames[2], "none"] {
                let mark = running.errorOutputSoFar.count
                #expect(running.send(line: "set-layer bed ports \(ports)", awaiting: "from device sample "), "\(running.errorOutputSoFar)")
                let reply = String(running.errorOutputSoFar.dropFirst(mark))
                let sample = reply.range(of: "from device sample ").map { Int64(reply[$0.upperBound...].prefix { $0.isNumber }) ?? -1 } ?? -1
                routed.append(sample)
                usleep(300_000)
            }
            _ = capture.wait(timeout: 5) { capture.frames > 0 }
            running.closeInput()
            running.send(SIGINT)
            let result = running.wait(timeout: 20)
            capture.stop()
            #expect(result.status == 130, "\(result.stderr)")
            xrun.set(capture.xrunCount > 0 || result.stdout.contains("\"kind\":\"xrun\""))
            #expect(routed.count == 3 && routed.allSatisfy { $0 > 0 }, "\(routed): \(result.stderr)")
            guard routed.count == 3, routed.allSatisfy({ $0 > 0 }) else { return }

            let master = capture.channel(0), first = capture.channel(1), second = capture.channel(2)
            func at(_ sample: Int64) -> Int? { capture.recordedIndex(atFrameTime: sample) }
            let indices = routed.map(at)
            #expect(indices.allSatisfy { $0 != nil }, "\(routed) not captured")
            guard let r1 = indices[0], let r2 = indices[1], let r3 = indices[2] else { return }
            // Which bed sample each captured sample is (the ramp's value), or nil for silence.
            func bed(_ value: Float) -> Int? { value == 0 ? nil : Int((value / Self.step).rounded()) }
            let start = master.firstIndex { $0 != 0 } ?? 0
            var heard: [(index: Int, where: Int, bed: Int)] = []
            var doubled: [Int] = [], silent: [Int] = []
            // (Up to 0.2 s after the last route: the run's fade-out at its end follows.)
            for index in start..<min(capture.frames, r3 + 9600) {
                let values = [master[index], first[index], second[index]]
                let sounding = values.indices.filter { values[$0] != 0 }
                if sounding.count > 1 { doubled.append(index) }
                if let channel = sounding.first { heard.append((index, channel, bed(values[channel])!)) } else { silent.append(index) }
            }
            // Never doubled; silent only between the second reroute's two routes (own → own).
            #expect(doubled.isEmpty, "doubled at \(doubled.prefix(5))")
            #expect(silent.allSatisfy { $0 > r1 && $0 < r2 }, "silent at \(silent.prefix(5))… (routes at \(r1), \(r2), \(r3))")
            // Where it sounds: the master up to r1, then its own first port up to the silence,
            // the second port from r2, the master again from r3.
            let misplaced = heard.filter { entry in
                let expected = entry.index < r1 ? 0 : entry.index < r2 ? 1 : entry.index < r3 ? 2 : 0
                return entry.where != expected
            }
            #expect(misplaced.isEmpty, "\(misplaced.count) samples on another destination, first \(misplaced.prefix(3)); routes at \(r1), \(r2), \(r3)")
            // One bed sample after another (a loop wraps from 48000 to 1), whichever port: nothing
            // lost or repeated where it moves.
            var breaks: [Int] = []
            for (previous, entry) in zip(heard, heard.dropFirst()) where entry.index == previous.index + 1 {
                if entry.bed != previous.bed + 1 && !(previous.bed == 48000 && entry.bed == 1) { breaks.append(entry.index) }
            }
            #expect(breaks.isEmpty, "the bed breaks at \(breaks.prefix(5))")
            #expect(heard.contains { $0.index == r1 } && heard.contains { $0.index == r3 } && first[r1] != 0 && master[r1 - 1] != 0)
            print("LayerPortsEditTests: routes at device samples \(routed); \(silent.count) silent samples while the ports changed (own → own), 0 doubled, 0 misplaced")
        }
    }
}
