import CJack
import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepTestSupport
import Testing

extension JACKTests {
    /// The device timeline across changes of the server: it counts the frames really rendered,
    /// while JACK's own frame clock jumps at every period change (jackd2 moves it by new − old
    /// period). Checked against an independent capture client and the offline render.
    @Suite("Timeline across period changes", .serialized)
    struct TimelineTests {
        let temp: TemporaryTestDirectory
        static let step: Float = 1.0 / 65536

        init() throws { temp = try TemporaryTestDirectory(prefix: "lockstep-timeline") }

        /// Waits until the capture holds `seconds` more audio than now.
        func advance(_ capture: JACKCapture, seconds: Double) {
            let target = capture.frames + Int(seconds * 48000)
            _ = capture.waitForFrames(target, timeout: seconds * 4 + 2)
        }

        @Test("play --record across periods 256→1024→512→256 equals an independent capture and the offline render, sample for sample; a start scheduled across a change lands on its sample; the clock jumps are reported with their lengths")
        func periodChangesDuringPlay() throws { try retryingOnXruns("TimelineTests", periodChangesRun) }

        func periodChangesRun(_ xrun: XrunFlag) throws {
            let server = try JACKServer(period: 256)
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 12)
            try capture.start()
            #expect(capture.waitForFrames(2048, timeout: 5))
            // Layer a: a mono ramp (every frame distinct) for 3 s; layer b: a 44.1 kHz stereo sine
            // (through the rate converter) starting 1 s in — scheduled before the first period
            // change, played after it.
            let a = try temp.writeAudio("ramp.wav", Signals.ramp(frames: 48000 * 3, start: 1, step: Self.step))
            let b = try temp.writeAudio("sine.wav", Signals.sine(frequency: 441, sampleRate: 44100, frames: 66150, amplitude: 0.25,
                                                        channels: 2), rate: 44100, channels: 2)
            let reference = temp.newFile("reference.wav")
            let render = try CLI.run(["render", a, b, "--offset", "0", "--offset", "1", "-o", reference])
            #expect(render.status == 0, "\(render.stderr)")
            let offline = try readAudio(reference)
            #expect(offline.channels == 2)
            let frames = offline.samples.count / 2

            let recording = temp.newFile("rec.wav")
            let running = try CLI.spawn(["play", a, b, "--offset", "0", "--offset", "1", "--record", recording,
                                         "--server", server.name, "--client-name", "lockstep-timeline",
                                         "--connect", capture.portNames[0], "--connect", capture.portNames[1], "--json"])
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
            try server.setBufferSize(1024)
            advance(capture, seconds: 0.6)
            try server.setBufferSize(512)
            advance(capture, seconds: 0.5)
            try server.setBufferSize(256)
            let result = running.wait(timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            let line = try #require(result.stdout.split(separator: "\n").last)
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let start = try #require(summary["startSampleTime"] as? Int)
            #expect(summary["startJACKFrame"] as? Int == start & 0xFFFF_FFFF)   // JACK's clock had not jumped yet
            let gaps = try #require(summary["discontinuities"] as? [[String: Any]])
            // An xrun skips frames at the server: the capture and the recording then leave the render.
            xrun.set(gaps.contains { $0["kind"] as? String == "xrun" } || capture.xrunCount > 0)
            let jumps = gaps.filter { $0["kind"] as? String == "clockJump" }.compactMap { $0["frames"] as? Int }
            let periods = gaps.filter { $0["kind"] as? String == "bufferSizeChange" }.compactMap { $0["detail"] as? Double }
            #expect(periods == [1024, 512, 256])
            #expect(jumps == [768, -512, -256], "\(gaps)")
            #expect(!gaps.contains { $0["kind"] as? String == "underrun" })

            // The independent capture: JACK's frame clock had not jumped yet at the start.
            let first = try #require(capture.recordedIndex(atFrameTime: Int64(start)))
            let left = capture.channel(0), right = capture.channel(1)
            #expect(left.count >= first + frames)
            var captureMismatches = 0
            for i in 0..<min(frames, left.count - first)
            where left[first + i] != offline.samples[2 * i] || right[first + i] != offline.samples[2 * i + 1] {
                if captureMismatches == 0 { print("capture differs first at frame \(i): \(left[first + i]) vs \(offline.samples[2 * i])") }
                captureMismatches += 1
            }
            #expect(captureMismatches == 0, "\(captureMismatches) frames differ from the render")

            // Lockstep's own recording of the mix, from the start on.
            let recorded = try readAudio(recording)
            #expect(recorded.channels == 2)
            #expect(recorded.samples.count >= offline.samples.count)
            var recordMismatches = 0
            for i in 0..<min(offline.samples.count, recorded.samples.count) where recorded.samples[i] != offline.samples[i] {
                if recordMismatches == 0 { print("recording differs first at sample \(i): \(recorded.samples[i]) vs \(offline.samples[i])") }
                recordMismatches += 1
            }
            #expect(recordMismatches == 0, "\(recordMismatches) samples differ from the render")
            let recordSummary = try #require(summary["recording"] as? [String: Any])
            #expect(recordSummary["lostFrames"] as? Int == 0)
        }

        @Test("the device clock counts rendered frames; its mapping to JACK's frame time follows each jump")
        func mappingFollowsJumps() throws {
            let server = try JACKServer(period: 256)
            let device = try JACKDevice(options: .init(clientName: "lockstep-clock", serverName: server.name,
                                                       connectToPhysicalOutputs: false))
            let engine = try Engine(device: device)
            try device.start()
            #expect(device.jackFrameOffset == 0)
            let before = engine.currentTime().sampleTime
            #expect(abs(Int64(device.jackFrameTime(forSampleTime: before)) - Int64(before & 0xFFFF_FFFF)) == 0)
            try server.setBufferSize(1024)
            #expect(ThreadedTestDevice.wait(timeout: 5) { engine.discontinuities.contains { $0.kind == .clockJump } })
            #expect(device.jackFrameOffset == 768)
            let jump = try #require(engine.discontinuities.first { $0.kind == .clockJump })
            #expect(jump.length == 768)
            let change = try #require(engine.discontinuities.first { $0.kind == .bufferSizeChange })
            #expect(change.detail == 1024)
            #expect(change.sampleTime == jump.sampleTime)
            // The mapping: the device time of JACK's current frame is the device's current time.
            let now = engine.currentTime().sampleTime
            let jackNow = device.jackFrameTime(forSampleTime: now)
            #expect(device.sampleTime(forJACKFrameTime: jackNow) == now)
            #expect(Int64(jackNow) == (now + 768) & 0xFFFF_FFFF)
            // Host time round trip through the new mapping stays within a frame.
            let host = engine.hostTime(forSampleTime: now)
            #expect(abs(engine.sampleTime(forHostTime: host) - now) <= 1)
            try server.setBufferSize(256)
            #expect(ThreadedTestDevice.wait(timeout: 5) { engine.discontinuities.filter { $0.kind == .clockJump }.count == 2 })
            #expect(device.jackFrameOffset == 0)
        }
    }
}
