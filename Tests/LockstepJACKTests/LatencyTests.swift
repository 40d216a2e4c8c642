import CJack
import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepTestSupport
import Testing

extension JACKTests {
    /// Port latencies from JACK's latency API in the device timeline: recordings put each frame
    /// on the time it was heard, and outputs of different playback latency can be aligned at
    /// their far ends. The peers are test clients that declare latencies as device drivers do.
    @Suite("Latency compensation", .serialized)
    struct LatencyTests {
        let temp: TemporaryTestDirectory
        static let step: Float = 1.0 / 65536

        init() throws { temp = try TemporaryTestDirectory(prefix: "lockstep-latency") }

        @Test("a recording of two inputs of capture latency 100 and 300 puts every frame on the sample it was heard")
        func captureLatency() throws { try retryingOnXruns("LatencyTests", captureLatencyRun) }

        func captureLatencyRun(_ xrun: XrunFlag) throws {
            let server = try JACKServer(period: 256)
            // Port i delivers the ramp heard at frame n at port time first + n + latency[i].
            let source = try JACKRampSource(server: server, channels: 2, signal: .ramp(start: 1, step: Self.step),
                                            captureLatencies: [100, 300])
            try source.start()
            let device = try JACKDevice(options: .init(clientName: "lockstep-heard", serverName: server.name,
                                                       channelCount: 2, inputChannelCount: 2, connectToPhysicalOutputs: false))
            let engine = try Engine(device: device)
            try device.start()
            try device.connect(source.portNames[0], to: device.inputPortNames[0])
            try device.connect(source.portNames[1], to: device.inputPortNames[1])
            #expect(ThreadedTestDevice.wait(timeout: 5) { device.captureLatency == 300 && device.inputDelays == [200, 0] })
            let path = temp.newFile("heard.wav")
            let recorder = try FileRecorder(engine: engine, path: path, channels: 2, sampleFormat: .float32)
            let start = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime) + 4800
            let frames: Int64 = 24000
            try recorder.start(at: start)
            try recorder.stop(atSampleTime: start + frames)
            #expect(ThreadedTestDevice.wait(timeout: 10) { !recorder.isRecording && engine.currentTime().sampleTime > start + frames + 1000 })
            let summary = try recorder.stop()
            #expect(summary.framesWritten == frames)
            #expect(summary.startSampleTime == start)
            #expect(engine.discontinuities.contains { $0.kind == .captureLatencyChange && $0.detail == 300 })

            let samples = try readAudio(path).samples
            // A server xrun shifts the source's ramp against JACK's frame clock.
            xrun.set(source.xrunCount > 0)
            let first = Int64(try #require(source.firstFrameTime))
            var mismatches = 0
            for k in 0..<Int(frames) {
                // Heard at device (= JACK frame) time start + k: the source's frame start + k − first.
                let expected = source.value(atFrame: Int(start - first) + k)
                if samples[2 * k] != expected || samples[2 * k + 1] != expected {
                    if mismatches == 0 { print("frame \(k): \(samples[2 * k]), \(samples[2 * k + 1]) instead of \(expected)") }
                    mismatches += 1
                }
            }
            #expect(mismatches == 0, "\(mismatches) frames off the heard timeline")
        }

        @Test("with playback compensation on, outputs of playback latency 64 and 512 reach their far ends on the same sample; off by default")
        func playbackLatency() throws {
            #expect(JACKDevice.Options().compensatesPlaybackLatency == false)
            let server = try JACKServer(period: 256)
            let speakers = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 6, playbackLatencies: [64, 512])
            try speakers.start()
            let device = try JACKDevice(options: .init(clientName: "lockstep-aligned", serverName: server.name,
                                                       connectToPhysicalOutputs: false, compensatesPlaybackLatency: true))
            let engine = try Engine(device: device)
            try device.start()
            try device.connect(device.outputPortNames[0], to: speakers.portNames[0])
            try device.connect(device.outputPortNames[1], to: speakers.portNames[1])
            #expect(ThreadedTestDevice.wait(timeout: 5) { device.playbackLatency == 512 && device.outputDelays == [448, 0] })
            let q = try engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 2), name: "click") { _, _ in }
            try q.enqueueSamples(Signals.impulse(at: 0, frames: 1000, value: 0.5, channels: 2))
            try q.stop(immediately: false)
            let start = try engine.start([q]).sampleTime
            #expect(speakers.wait(timeout: 5) { speakers.currentFrameTime.map { Int64($0) > (start + 4800) & 0xFFFF_FFFF } ?? false })
            let left = try #require(speakers.firstNonSilentExtendedFrameTime(channel: 0))
            let right = try #require(speakers.firstNonSilentExtendedFrameTime(channel: 1))
            // Heard at arrival + the speaker's latency: the same sample, start + 512, on both.
            #expect(left + 64 == start + 512, "left arrived at \(left), start \(start)")
            #expect(right + 512 == start + 512, "right arrived at \(right), start \(start)")
            #expect(engine.discontinuities.contains { $0.kind == .playbackLatencyChange && $0.detail == 512 })
        }

        @Test("play --align-outputs: both sides of a stereo file are heard on one sample through ports of playback latency 64 and 512")
        func playAlignsOutputs() throws { try retryingOnXruns("LatencyTests.playAlignsOutputs", playAlignsOutputsRun) }

        func playAlignsOutputsRun(_ xrun: XrunFlag) throws {
            let server = try JACKServer(period: 256)
            let speakers = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 8, playbackLatencies: [64, 512])
            try speakers.start()
            let path = try temp.writeAudio("click.wav", Signals.impulse(at: 0, frames: 24000, value: 0.5, channels: 2), channels: 2)
            let result = try CLI.run(["play", path, "--server", server.name, "--client-name", "lockstep-align", "--align-outputs",
                                      "--connect", speakers.portNames[0], "--connect", speakers.portNames[1], "--json"], timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            let line = try #require(result.stdout.split(separator: "\n").last)
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let start = Int64(try #require(summary["startSampleTime"] as? Int))
            #expect(summary["playbackLatency"] as? Int == 512)
            #expect(summary["outputDelays"] as? [Int] == [448, 0])
            let left = try #require(speakers.firstNonSilentExtendedFrameTime(channel: 0))
            let right = try #require(speakers.firstNonSilentExtendedFrameTime(channel: 1))
            // A server xrun can hold a client back a cycle: the capture then hears one side late.
            let breaks = summary["discontinuityCounts"] as? [String: Int] ?? [:]
            xrun.set(speakers.xrunCount > 0 || breaks["xrun"] != nil)
            let context = "left \(left), right \(right), start \(start), capture xruns \(speakers.xrunCount), breaks \(breaks)"
            #expect(left + 64 == right + 512, "\(context)")
            #expect(right == start, "\(context)")
        }
    }
}
