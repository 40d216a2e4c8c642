import CJack
import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepSchema
import LockstepTestSupport
import Synchronization
import Testing

extension JACKTests {
    /// Recording from the JACK graph: `lockstep record`, the file recorder and input queues.
    @Suite("Recording through JACK", .serialized)
    struct RecordTests {
        let temp: TemporaryTestDirectory

        init() throws {
            temp = try TemporaryTestDirectory(prefix: "lockstep-record")
        }

        /// Reads a whole file as interleaved floats.
        func read(_ path: String) throws -> (StreamFormat, [Float]) {
            let reader = try AudioFileReader(path: path)
            let frames = Int(reader.frameCount)
            var samples = [Float](repeating: 0, count: frames * reader.format.channelCount)
            let got = try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: frames) }
            #expect(got == frames)
            return (reader.format, samples)
        }

        /// Keeps both cores busy while it lives.
        final class CPULoad: @unchecked Sendable {
            final class Flag: Sendable { let stop = Atomic<Bool>(false) }
            let flag = Flag()
            init(threads: Int = 2) {
                for _ in 0..<threads {
                    let flag = self.flag
                    let thread = Thread {
                        var x = 0.0
                        while !flag.stop.load(ordering: .relaxed) { for i in 0..<10_000 { x += sin(Double(i)) } }
                        _ = x
                    }
                    thread.start()
                }
            }
            deinit { flag.stop.store(true, ordering: .relaxed) }
        }

        @Test("record: every frame of a ramp, each one count after the previous, with the CPU kept busy")
        func recordsEveryFrame() throws { try retryingOnXruns("RecordTests", recordsEveryFrameRun) }

        func recordsEveryFrameRun(_ xrun: XrunFlag) throws {
            let server = try JACKServer()
            let source = try JACKRampSource(server: server, channels: 2)
            try source.start()
            let path = temp.newFile("take.wav")
            let load = CPULoad()
            let result = try CLI.run(["record", "-o", path, "--server", server.name, "--port", source.portNames[0],
                                      "--port", source.portNames[1], "--duration", "3", "--json", "--json-events"], timeout: 30)
            _ = load
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n")
            let last = try #require(lines.last)
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
            // Known before any check: a server xrun (seen by the source, which then missed cycles
            // and shifted its own counter, or reported by the recorder) loses cycles at JACK itself.
            let recorderXrun = (summary["discontinuities"] as? [[String: Any]])?.contains { $0["kind"] as? String == "xrun" } ?? false
            xrun.set(source.xrunCount > 0 || recorderXrun)
            #expect(summary["frames"] as? Int == 144_000)
            let start = try #require(summary["startSampleTime"] as? Int)
            // The schema: the summary decodes as RecordReport; the events name the first sample
            // and the frames written.
            let report = try JSONSchema.decode(RecordReport.self, from: last)
            #expect(report.schema == 1 && report.seconds == 3 && report.channelPeakDB.count == 2)
            #expect(report.peakDB == report.channelPeakDB.compactMap { $0 }.max())
            #expect(report.callbackTime.map { $0.cycles > 0 } == true, "\(String(describing: report.callbackTime))")
            let events = try lines.dropLast().map { try JSONSchema.decode(ControlUpdate.self, from: $0) }
            #expect(events.first { $0.kind == .recordStarted }?.sampleTime == Int64(start))
            #expect(events.first { $0.kind == .recordEnded }?.frames == 144_000)
            #expect(events.filter { [.recordStarted, .recordEnded].contains($0.kind) }.allSatisfy { $0.file == path && $0.layer == nil })
            let (format, samples) = try read(path)
            #expect(format.channelCount == 2 && format.sampleRate == 48000)
            #expect(samples.count == 144_000 * 2)
            let sourceStart = Int64(try #require(source.firstFrameTime))
            let frames = samples.count / 2
            let wrong = (0..<frames).first { i in
                let expected = source.value(atFrame: Int((Int64(start) + Int64(i) - sourceStart) & 0xFFFF_FFFF))
                return samples[2 * i] != expected || samples[2 * i + 1] != expected
            }
            #expect(wrong == nil, "frame \(wrong ?? 0) is not the source's frame at its time")
            let breaks = (1..<max(1, frames)).filter { samples[2 * $0] - samples[2 * ($0 - 1)] != 1.0 / 65536 }
            #expect(breaks.isEmpty, "the ramp breaks at \(breaks.prefix(3))")
            #expect((summary["discontinuities"] as? [Any])?.isEmpty == true, "\(summary["discontinuities"] ?? [])")
        }

        @Test("a recorder killed with SIGKILL leaves a readable file holding all but the last moment")
        func killedRecorder() throws { try retryingOnXruns("RecordTests", killedRecorderRun) }

        func killedRecorderRun(_ xrun: XrunFlag) throws {
            let server = try JACKServer()
            let source = try JACKRampSource(server: server, channels: 1)
            try source.start()
            let path = temp.newFile("killed.wav")
            let running = try CLI.spawn(["record", "-o", path, "--server", server.name, "--port", source.portNames[0]])
            // Killed once the source has played 2 s into the recorder.
            try server.waitForConnection(source.portNames[0], to: "lockstep-record:in_1", timeout: 10)
            let connected = source.framesPlayed
            #expect(ThreadedTestDevice.wait(timeout: 10) { source.framesPlayed >= connected + 96000 })
            running.send(SIGKILL)
            let recorded = source.framesPlayed - connected
            _ = running.wait(timeout: 5)
            let (format, samples) = try read(path)
            #expect(format.channelCount == 1)
            // At most about a second short of what was recorded before the kill.
            #expect(samples.count >= recorded - 48000, "\(samples.count) frames kept of \(recorded) recorded")
            #expect(samples.count > 0)
            let breaks = (1..<samples.count).filter { samples[$0] - samples[$0 - 1] != 1.0 / 65536 }
            xrun.set(source.xrunCount > 0)
            #expect(breaks.isEmpty, "the ramp breaks at \(breaks.prefix(3))")
        }

        @Test("record: Ctrl-C flushes and closes the file; the summary says it was interrupted")
        func interruptedRecording() throws {
            let server = try JACKServer()
            let source = try JACKRampSource(server: server, channels: 1)
            try source.start()
            let path = temp.file("interrupted.wav")
            let running = try CLI.spawn(["record", "-o", path, "--server", server.name, "--port", source.portNames[0],
                                         "--sample-format", "s24", "--json"])
            try server.waitForConnection(source.portNames[0], to: "lockstep-record:in_1", timeout: 10)
            let connected = source.framesPlayed
            #expect(ThreadedTestDevice.wait(timeout: 10) { source.framesPlayed >= connected + 36000 })
            running.send(SIGINT)
            let result = running.wait(timeout: 10)
            #expect(result.status == 130, "\(result.stderr)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect(summary["interrupted"] as? Bool == true)
            let written = try #require(summary["frames"] as? Int)
            #expect(written > 24000)
            let reader = try AudioFileReader(path: path)
            #expect(Int(reader.frameCount) == written)          // every captured frame is in the file
            #expect(reader.format.sampleFormat == .int24)
            #expect(!reader.isTruncated)
        }

        @Test("ports report their latency from JACK's latency API")
        func latency() throws {
            let server = try JACKServer()
            let device = try JACKDevice(options: .init(clientName: "lockstep-latency", serverName: server.name,
                                                       channelCount: 2, inputChannelCount: 1))
            try device.start()
            let capture = try #require(device.latency(ofPort: "system:capture_1"))
            let playback = try #require(device.latency(ofPort: "system:playback_1"))
            // The same numbers JACK itself reports.
            try server.withClient(named: "latency-probe") { client in
                var range = jack_latency_range_t()
                jack_port_get_latency_range(jack_port_by_name(client, "system:playback_1"), JackPlaybackLatency, &range)
                #expect(Int(range.min) == playback.playback.lowerBound && Int(range.max) == playback.playback.upperBound)
                jack_port_get_latency_range(jack_port_by_name(client, "system:capture_1"), JackCaptureLatency, &range)
                #expect(Int(range.min) == capture.capture.lowerBound && Int(range.max) == capture.capture.upperBound)
            }
            #expect(device.latency(ofPort: "no-such:port") == nil)
            device.stop()
        }

        @Test("a full disk stops the recording with one clear error and keeps what was written readable")
        func fullDisk() throws { try retryingOnXruns("RecordTests", fullDiskRun) }

        func fullDiskRun(_ xrun: XrunFlag) throws {
            let mountPoint = temp.file("small")
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            let mount = Process()
            mount.executableURL = URL(fileURLWithPath: "/bin/mount")
            mount.arguments = ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint]
            try mount.run()
            mount.waitUntilExit()
            guard mount.terminationStatus == 0 else {
                print("note: cannot mount a small tmpfs here (not root?); full-disk test skipped")
                return
            }
            defer {
                let umount = Process()
                umount.executableURL = URL(fileURLWithPath: "/bin/umount")
                // Lazy: detached even while a file on it is still open (a failed run's
                // recorder), so the folder never stays mounted.
                umount.arguments = ["-l", mountPoint]
                try? umount.run()
                umount.waitUntilExit()
            }
            let server = try JACKServer()
            let source = try JACKRampSource(server: server, channels: 2)
            try source.start()
            let path = mountPoint + "/take.wav"
            let result = try CLI.run(["record", "-o", path, "--server", server.name, "--port", source.portNames[0],
                                      "--port", source.portNames[1], "--duration", "20"], timeout: 40)
            #expect(result.status != 0)
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("take.wav") && result.stderr.contains("disk"), "\(result.stderr)")
            let (_, samples) = try read(path)
            #expect(samples.count / 2 > 48000, "only \(samples.count / 2) frames kept")
            let breaks = (1..<(samples.count / 2)).filter { samples[2 * $0] - samples[2 * ($0 - 1)] != 1.0 / 65536 }
            xrun.set(source.xrunCount > 0)
            #expect(breaks.isEmpty, "the ramp breaks at \(breaks.prefix(3))")
        }

        @Test("an input queue whose callback stalls reports exactly the frames it lost, as silence in place")
        func stalledCallback() throws { try retryingOnXruns("RecordTests", stalledCallbackRun) }

        func stalledCallbackRun(_ xrun: XrunFlag) throws {
            let server = try JACKServer()
            let source = try JACKRampSource(server: server, channels: 1)
            let device = try JACKDevice(options: .init(clientName: "lockstep-stall", serverName: server.name, channelCount: 0,
                                                       inputChannelCount: 1, connectToPhysicalOutputs: false))
            let engine = try Engine(device: device)
            let collected = Mutex<[(Int64, [Float])]>([])
            let stalled = Atomic<Bool>(false)
            let queue = try engine.makeInputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1), ringSeconds: 0.5) { queue, buffer, start, frames in
                let samples = buffer.withFloatSamples { Array($0.prefix(frames)) }
                collected.withLock { $0.append((start, samples)) }
                if !stalled.exchange(true, ordering: .relaxed) { usleep(1_500_000) }    // one long stall
                try? queue.enqueue(buffer)
            }
            for _ in 0..<4 { try queue.enqueue(try queue.allocateBuffer(frameCapacity: 4800)) }
            try device.start()
            try source.start(connectingTo: device.inputPortNames)
            #expect(ThreadedTestDevice.wait(timeout: 5) { source.isConnected(channel: 0, to: device.inputPortNames[0]) })
            let start = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime)
            try queue.start(at: start)
            try queue.stop(atSampleTime: start + 48000 * 3)
            let end = start + 48000 * 3
            #expect(ThreadedTestDevice.wait(timeout: 10) {
                engine.currentTime().sampleTime > end + 4800 && !queue.isRunning && !collected.withLock({ $0.isEmpty })
            })
            let lost = queue.lostFrames
            #expect(lost > 0)
            let overflow = engine.discontinuities.filter { $0.kind == .overflow }
            #expect(overflow.map(\.length).reduce(0, +) == lost)
            // Reassemble: every delivered frame sits at its device time; the recording covers every
            // frame from start to start + 3 s exactly once, with silence exactly where frames were lost.
            let pieces = collected.withLock { $0 }.sorted { $0.0 < $1.0 }
            var timeline: [Float] = []
            var expectedStart = start
            for (pieceStart, samples) in pieces {
                #expect(pieceStart == expectedStart, "a delivery starts at \(pieceStart), not \(expectedStart)")
                timeline += samples
                expectedStart = pieceStart + Int64(samples.count)
            }
            #expect(timeline.count == 48000 * 3)
            let sourceStart = Int64(try #require(source.firstFrameTime))
            // A server xrun shifts the source's ramp against JACK's frame clock (the engine may
            // be told of one the source is not).
            let xruns = engine.discontinuities.filter { $0.kind == .xrun }
            xrun.set(source.xrunCount > 0 || !xruns.isEmpty)
            var silent = 0
            for (i, value) in timeline.enumerated() {
                if value == 0 { silent += 1; continue }
                let expected = source.value(atFrame: Int((start + Int64(i) - sourceStart) & 0xFFFF_FFFF))
                if value != expected {
                    Issue.record("frame \(i): \(value) instead of \(expected); source xruns \(source.xrunCount), engine xruns \(xruns.map(\.sampleTime))")
                    break
                }
            }
            #expect(Int64(silent) == lost, "source xruns \(source.xrunCount), engine xruns \(xruns.map(\.sampleTime)), overflows \(overflow.map { ($0.sampleTime, $0.length) })")
        }

        @Test("play --record records the mix on the same sample as the playback")
        func recordWhilePlaying() throws {
            let server = try JACKServer()
            let path = temp.file("ramp.wav")
            let writer = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: 1))
            let ramp = Signals.ramp(frames: 24000, start: 1)
            try ramp.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 24000) }
            try writer.close()
            let recording = temp.file("mix.wav")
            let result = try CLI.run(["play", path, "--server", server.name, "--no-connect", "--record", recording, "--json"],
                                     timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let rec = try #require(summary["recording"] as? [String: Any])
            #expect(rec["startSampleTime"] as? Int == summary["startSampleTime"] as? Int)
            let (_, mix) = try read(recording)
            #expect(mix.count >= 24000 * 2)
            for i in 0..<24000 {
                if mix[2 * i] != ramp[i] || mix[2 * i + 1] != ramp[i] {
                    Issue.record("frame \(i): \(mix[2 * i]) instead of \(ramp[i])")
                    break
                }
            }
        }
    }
}
