import CJack
import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepTestSupport
import Testing

extension JACKTests {
    /// A device that survives a restart of its server: queues hold while it is away and play on,
    /// on a timeline that continues from the last rendered frame.
    @Suite("Server restarts", .serialized)
    struct RestartTests {
        let temp: TemporaryTestDirectory
        static let step: Float = 1.0 / 65536

        init() throws { temp = try TemporaryTestDirectory(prefix: "lockstep-restart") }

        @Test("killed and restarted under the same name, the server gets the same ports and connections back; the mix recorded across it is one unbroken ramp")
        func survivesRestart() throws { try retryingOnXruns("RestartTests.survivesRestart", survivesRestartRun) }

        func survivesRestartRun(_ xrun: XrunFlag) throws {
            let server = try JACKServer(period: 256)
            let name = server.name
            let device = try JACKDevice(options: .init(clientName: "lockstep-survivor", serverName: name,
                                                       connectToPhysicalOutputs: false, survivesServerRestart: true))
            let engine = try Engine(device: device)
            try device.start()
            try device.connect(device.outputPortNames[0], to: "system:playback_1")
            let q = try engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1), name: "ramp") { _, _ in }
            let ramp = Signals.ramp(frames: 48000 * 6, start: 1, step: Self.step)
            try q.enqueueSamples(ramp)
            let path = temp.file("mix.wav")
            try? FileManager.default.removeItem(atPath: path)       // a run before this one's
            let recorder = try FileRecorder(engine: engine, path: path, channels: 1, sampleFormat: .float32, source: .mix)
            let start = try engine.start([q]).sampleTime
            try recorder.start(at: start)
            #expect(ThreadedTestDevice.wait(timeout: 5) { engine.currentTime().sampleTime > start + 24000 })

            server.kill()
            #expect(ThreadedTestDevice.wait(timeout: 5) { device.isWaitingForServer })
            #expect(engine.deviceError == nil)
            usleep(300_000)         // a wait for time: an outage of a known length (checked below)
            let again = try JACKServer(name: name, period: 256)
            #expect(ThreadedTestDevice.wait(timeout: 10) { !device.isWaitingForServer && device.isRunning })
            #expect(ThreadedTestDevice.wait(timeout: 5) {
                engine.discontinuities.contains { $0.kind == .serverRestart }
            })
            // The same ports, connected as before.
            #expect(ThreadedTestDevice.wait(timeout: 5) {
                ((try? JACKGraph.listPorts(server: again.name)) ?? []).contains {
                    $0.name == device.outputPortNames[0] && $0.connections == ["system:playback_1"]
                }
            })
            let resumed = try #require(engine.discontinuities.first { $0.kind == .serverRestart })
            let lost = try #require(engine.discontinuities.first { $0.kind == .serverLost })
            #expect(resumed.sampleTime == lost.sampleTime, "the timeline goes on from the last rendered frame")
            #expect(resumed.detail >= 300)
            #expect(ThreadedTestDevice.wait(timeout: 5) { engine.currentTime().sampleTime > resumed.sampleTime + 24000 })
            #expect(q.isRunning)

            let end = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime) + 2400
            try recorder.stop(atSampleTime: end)
            #expect(ThreadedTestDevice.wait(timeout: 5) { !recorder.isRecording })
            let summary = try recorder.stop()
            let samples = try readAudio(path).samples
            #expect(summary.framesWritten == end - start)
            // An xrun skips frames at JACK: the timeline jumps and the recording with it.
            xrun.set(engine.discontinuities.contains { $0.kind == .xrun })
            let broken = samples.indices.first { samples[$0] != ramp[$0] }
            #expect(broken == nil, "the recorded mix breaks at frame \(broken ?? -1)")
            try q.stop()
            // Closed while its server runs: libjack's close of a client whose server is gone can
            // hold its process-wide lock for ever, and no later client of this process could open.
            withExtendedLifetime(again) { device.stop() }
        }

        @Test("play --reconnect plays the whole file across a server restart; its recording of the mix is the file, unbroken")
        func playReconnects() throws {
            let server = try JACKServer(period: 256)
            let name = server.name
            let ramp = Signals.ramp(frames: 48000 * 3, start: 1, step: Self.step)
            let path = try temp.writeAudio("ramp.wav", ramp)
            let recording = temp.file("mix.wav")
            let running = try CLI.spawn(["play", path, "--server", name, "--client-name", "lockstep-reconnect", "--no-connect",
                                         "--reconnect", "--record", recording, "--json"])
            #expect(ThreadedTestDevice.wait(timeout: 10) {
                ((try? FileManager.default.attributesOfItem(atPath: recording)[.size] as? Int) ?? 0) > 100_000
            })
            server.kill()
            #expect(ThreadedTestDevice.wait(timeout: 5) { running.errorOutputSoFar.contains("waiting for it to come back") })
            let again = try JACKServer(name: name, period: 256)
            let result = running.wait(timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("the JACK server is back"))
            let line = try #require(result.stdout.split(separator: "\n").last)
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let kinds = (summary["discontinuities"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
            #expect(kinds.contains("serverLost") && kinds.contains("serverRestart"), "\(kinds)")
            let samples = try readAudio(recording).samples
            #expect(samples.count / 2 >= ramp.count)
            let broken = (0..<min(ramp.count, samples.count / 2)).first { samples[2 * $0] != ramp[$0] }
            #expect(broken == nil, "the recorded mix breaks at frame \(broken ?? -1)")
            _ = again
        }

        @Test("play --reconnect restarts the jackd it started when that one dies, and plays on")
        func restartsItsOwnServer() throws {
            let name = LifecycleTests.privateServerName()
            let ramp = Signals.ramp(frames: 48000 * 4, start: 1, step: Self.step)
            let path = try temp.writeAudio("ramp.wav", ramp)
            let recording = temp.file("mix.wav")
            let running = try CLI.spawn(["play", path, "--start-server", "dummy", "--no-connect", "--reconnect",
                                         "--record", recording, "--json"], environment: ["JACK_DEFAULT_SERVER": name])
            #expect(ThreadedTestDevice.wait(timeout: 20) { LifecycleTests.serverPID(running.errorOutputSoFar) != nil })
            let first = try #require(LifecycleTests.serverPID(running.errorOutputSoFar))
            #expect(ThreadedTestDevice.wait(timeout: 10) {
                ((try? FileManager.default.attributesOfItem(atPath: recording)[.size] as? Int) ?? 0) > 100_000
            })
            kill(first, SIGKILL)
            let result = running.wait(timeout: 30)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("started it again"), "\(result.stderr)")
            #expect(result.stderr.contains("the JACK server is back"))
            let samples = try readAudio(recording).samples
            #expect(samples.count / 2 >= ramp.count)
            let broken = (0..<min(ramp.count, samples.count / 2)).first { samples[2 * $0] != ramp[$0] }
            #expect(broken == nil, "the recorded mix breaks at frame \(broken ?? -1)")
            // The second server went with lockstep.
            let pids = result.stderr.components(separatedBy: "pid ").dropFirst().compactMap { Int32($0.prefix { $0.isNumber }) }
            #expect(pids.count == 2)
            #expect(pids.allSatisfy { pid in ThreadedTestDevice.wait(timeout: 8) { LifecycleTests.isGone(pid) } })
        }
    }
}
