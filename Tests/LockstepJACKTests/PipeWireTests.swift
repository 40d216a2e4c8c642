import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// A private PipeWire daemon (no session manager, its dummy driver) for one test.
final class PipeWireDaemon {
    let runtimeDirectory: TemporaryTestDirectory
    let process: Process

    static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/pipewire") && FileManager.default.isExecutableFile(atPath: "/usr/bin/pw-jack")
    }

    init() throws {
        runtimeDirectory = try TemporaryTestDirectory(prefix: "lockstep-pipewire")
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtimeDirectory.path)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pipewire")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtimeDirectory.path
        environment["DBUS_SESSION_BUS_ADDRESS"] = ""
        environment.removeValue(forKey: "JACK_DEFAULT_SERVER")
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(5)
        while !FileManager.default.fileExists(atPath: runtimeDirectory.file("pipewire-0")) && Date() < deadline {
            usleep(20_000)
        }
        // The socket exists before the daemon has loaded its drivers: wait for the dummy driver.
        let ready = Date().addingTimeInterval(5)
        while Date() < ready {
            guard let listing = try? spawn("/usr/bin/pw-cli", ["ls", "Node"]) else { break }
            if Self.finish(listing, timeout: 2).stdout.contains("Dummy-Driver") { break }
        }
    }

    var environment: [String: String] { ["XDG_RUNTIME_DIR": runtimeDirectory.path] }

    /// Starts `executable` with `arguments` as a client of this daemon, output to pipes.
    func spawn(_ executable: String, _ arguments: [String]) throws -> (process: Process, out: Pipe, err: Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in self.environment { environment[key] = value }
        environment.removeValue(forKey: "JACK_DEFAULT_SERVER")
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return (process, out, err)
    }

    /// Runs `lockstep` with `arguments` under PipeWire's libjack (`pw-jack`).
    func spawnLockstep(_ arguments: [String]) throws -> (process: Process, out: Pipe, err: Pipe) {
        try spawn("/usr/bin/pw-jack", [CLI.binary] + arguments)
    }

    /// Waits up to `timeout` seconds for a spawned process (terminating it then) and returns its
    /// standard output and error.
    static func finish(_ spawned: (process: Process, out: Pipe, err: Pipe), timeout: Double) -> (stdout: String, stderr: String) {
        let deadline = Date().addingTimeInterval(timeout)
        while spawned.process.isRunning && Date() < deadline { usleep(20_000) }
        if spawned.process.isRunning { spawned.process.terminate() }
        spawned.process.waitUntilExit()
        return (String(decoding: spawned.out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
                String(decoding: spawned.err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
    }
}

extension PipeWireDaemon {
    /// Records half a second of `port` with `lockstep record` as another client of this daemon.
    /// - Returns: the file and the device sample time (JACK frame) of its first frame.
    func recordHalfSecond(of port: String, in temp: TemporaryTestDirectory) throws -> (path: String, start: Int) {
        let path = temp.file("after-\(UInt32.random(in: 0...UInt32.max)).wav")
        let recorded = try CLI.run([CLI.binary, "record", "-o", path, "--port", port, "--duration", "0.5", "--json"],
                                   environment: environment, timeout: 20, executable: "/usr/bin/pw-jack")
        #expect(recorded.status == 0, "\(recorded.stderr)")
        let take = try #require(try JSONSerialization.jsonObject(with: Data((recorded.stdout.split(separator: "\n").last ?? "").utf8)) as? [String: Any])
        #expect(take["sampleRate"] as? Int == 44100)
        return (path, try #require(take["startSampleTime"] as? Int))
    }

    /// Compares a recording (one channel, 44.1 kHz, first frame at JACK frame `start`) with a ramp
    /// file (frame f holds (f + 1) × `step`, at 48 kHz) converted to 44.1 kHz that plays file frame
    /// `fileFrame` at JACK frame `resumedJACK`.
    /// - Returns: the frames compared and the largest difference.
    static func compareWithRamp(_ recording: (path: String, start: Int), fileFrame: Double, resumedJACK: Int,
                                rampFrames: Int, step: Float) throws -> (checked: Int, worst: Float) {
        let heard = try readAudio(recording.path).samples
        var checked = 0, worst: Float = 0
        for k in 0..<heard.count {
            let since = Int64(Int32(truncatingIfNeeded: UInt32(truncatingIfNeeded: recording.start + k) &- UInt32(truncatingIfNeeded: resumedJACK)))
            guard since > 64 else { continue }                   // past the converter's start
            let source = fileFrame + Double(since) * 48000 / 44100
            guard source < Double(rampFrames - 64) else { continue }
            worst = max(worst, abs(heard[k] - Float((source + 1) * Double(step))))
            checked += 1
        }
        return (checked, worst)
    }
}

extension JACKTests {
    @Suite("PipeWire's JACK", .serialized, .enabled(if: PipeWireDaemon.isAvailable, "pipewire and pw-jack are not installed"))
    struct PipeWireTests {
        @Test("lockstep plays and records its mix under PipeWire's JACK, sample-exact")
        func playsUnderPipeWire() throws {
            let daemon = try PipeWireDaemon()
            let temp = try TemporaryTestDirectory(prefix: "lockstep-pw")
            let ramp = Signals.ramp(frames: 24000, start: 1)
            let path = try temp.writeAudio("ramp.wav", ramp)
            let recording = temp.file("mix.wav")
            // pw-jack runs lockstep with PipeWire's libjack.
            let running = try daemon.spawnLockstep(["play", path, "--start-server", "never", "--no-connect",
                                                    "--record", recording, "--json"])
            let (stdout, stderr) = PipeWireDaemon.finish(running, timeout: 30)
            #expect(running.process.terminationStatus == 0, "\(stderr)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data((stdout.split(separator: "\n").last ?? "").utf8)) as? [String: Any])
            #expect((summary["frames"] as? Int ?? 0) >= 24000)
            let reader = try AudioFileReader(path: recording)
            var mix = [Float](repeating: 0, count: Int(reader.frameCount) * 2)
            _ = try mix.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
            #expect(mix.count >= 48000)
            let mismatch = (0..<min(24000, mix.count / 2)).first { mix[2 * $0] != ramp[$0] }
            #expect(mismatch == nil, "frame \(mismatch ?? -1)")
        }

        @Test("a rate change under PipeWire: every layer stops on the change's sample (nothing at the wrong pitch), the mix recording ends there, and play goes on at the new rate from where it was")
        func rateChangePlaysOn() throws {
            let daemon = try PipeWireDaemon()
            let temp = try TemporaryTestDirectory(prefix: "lockstep-pw-rate")
            let step: Float = 1.0 / 65536
            let ramp = Signals.ramp(frames: 48000 * 6, start: 1, step: step)
            let path = try temp.writeAudio("ramp.wav", ramp)
            let recording = temp.file("mix.wav")
            let client = "lockstep-rate"
            let running = try CLI.spawn([CLI.binary, "play", path, "--start-server", "never", "--no-connect", "--client-name", client,
                                         "--record", recording, "--json"],
                                        environment: daemon.environment, executable: "/usr/bin/pw-jack")
            // Once it plays (the recording grows past its header), force the graph to 44.1 kHz.
            #expect(ThreadedTestDevice.wait(timeout: 15) {
                ((try? FileManager.default.attributesOfItem(atPath: recording)[.size] as? Int) ?? 0) > 200_000
            })
            _ = PipeWireDaemon.finish(try daemon.spawn("/usr/bin/pw-metadata", ["-n", "settings", "0", "clock.force-rate", "44100"]),
                                      timeout: 10)
            #expect(ThreadedTestDevice.wait(timeout: 10) { running.errorOutputSoFar.contains("plays on from where it was") },
                    "\(running.errorOutputSoFar)")
            // Record what plays now, at 44.1 kHz, with another client (compared below).
            let after = try daemon.recordHalfSecond(of: "\(client):out_1", in: temp)
            let result = running.wait(timeout: 30)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("rate changed from 48000 Hz to 44100 Hz"), "\(result.stderr)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data((result.stdout.split(separator: "\n").last ?? "").utf8)) as? [String: Any])
            let gaps = try #require(summary["discontinuities"] as? [[String: Any]])
            let change = try #require(gaps.first { $0["kind"] as? String == "sampleRateChange" })
            #expect(change["detail"] as? Double == 44100)
            let changedAt = try #require(change["sampleTime"] as? Int)
            let start = try #require(summary["startSampleTime"] as? Int)
            let resumed = try #require((summary["rateChanges"] as? [[String: Any]])?.first)
            #expect(resumed["sampleRate"] as? Int == 44100)
            #expect(resumed["sampleTime"] as? Int == changedAt)
            // The layer goes on from the file frame it had reached at the change (48 kHz file, 48 kHz before).
            let fileFrame = try #require((resumed["fileFrames"] as? [Int])?.first)
            #expect(fileFrame == changedAt - start)

            // The recording of the mix holds the ramp, exactly, up to the change and nothing after.
            #expect(try AudioFileReader(path: recording).format.sampleRate == 48000)
            let mix = try readAudio(recording).samples
            #expect(mix.count / 2 == changedAt - start, "recorded \(mix.count / 2) frames, change \(changedAt - start) after the start")
            let mismatch = (0..<(mix.count / 2)).first { mix[2 * $0] != ramp[$0] }
            #expect(mismatch == nil, "frame \(mismatch ?? -1)")

            // After the change: the file converted to 44.1 kHz (right pitch), from the right frame.
            let resumedJACK = try #require(resumed["resumedJACKFrame"] as? Int)
            let (checked, worst) = try PipeWireDaemon.compareWithRamp(after, fileFrame: Double(fileFrame), resumedJACK: resumedJACK,
                                                                      rampFrames: ramp.count, step: step)
            #expect(checked > 10000, "only \(checked) frames of the resumed layer were recorded")
            #expect(worst < 1e-4, "the resumed layer is off by up to \(worst) from the file at its position")
        }

        @Test("session run under a PipeWire rate change plays on from the same place in the session, at the new rate")
        func sessionRateChangePlaysOn() throws {
            let daemon = try PipeWireDaemon()
            let temp = try TemporaryTestDirectory(prefix: "lockstep-pw-session-rate")
            let step: Float = 1.0 / 65536
            let ramp = Signals.ramp(frames: 48000 * 6, start: 1, step: step)
            let path = try temp.writeAudio("ramp.wav", ramp)
            let show = temp.file("show.yaml")
            try "layers:\n  a: {}\ncues:\n  - { name: one, layer: a, file: \(path), at: 0 }\n"
                .write(toFile: show, atomically: true, encoding: .utf8)
            let client = "lockstep-session-rate"
            let running = try CLI.spawn([CLI.binary, "session", "run", show, "--start-server", "never", "--no-connect",
                                         "--client-name", client, "--json"],
                                        environment: daemon.environment, executable: "/usr/bin/pw-jack")
            // A wait for time: the session must play a while at 48 kHz before the rate changes.
            usleep(1_000_000)
            _ = PipeWireDaemon.finish(try daemon.spawn("/usr/bin/pw-metadata", ["-n", "settings", "0", "clock.force-rate", "44100"]),
                                      timeout: 10)
            #expect(ThreadedTestDevice.wait(timeout: 10) { running.errorOutputSoFar.contains("the session plays on from") },
                    "\(running.errorOutputSoFar)")
            let after = try daemon.recordHalfSecond(of: "\(client):out_1", in: temp)
            let result = running.wait(timeout: 30)
            #expect(result.status == 0, "\(result.stderr)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data((result.stdout.split(separator: "\n").last ?? "").utf8)) as? [String: Any])
            let change = try #require((summary["rateChanges"] as? [[String: Any]])?.first)
            #expect(change["sampleRate"] as? Int == 44100)
            #expect(summary["sampleRate"] as? Int == 44100)
            let position = try #require(change["position"] as? Int)
            let resumedJACK = try #require(change["resumedJACKFrame"] as? Int)
            #expect(position > 44100 / 2)                            // it had played a while at 48 kHz
            let (checked, worst) = try PipeWireDaemon.compareWithRamp(after, fileFrame: Double(position) * 48000 / 44100,
                                                                      resumedJACK: resumedJACK, rampFrames: ramp.count, step: step)
            #expect(checked > 10000, "only \(checked) frames of the resumed session were recorded")
            #expect(worst < 1e-4, "the resumed session is off by up to \(worst) from the file at its place")
        }
    }
}
