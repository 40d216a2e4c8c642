import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepSchema
import LockstepTestSupport
import Testing

extension JACKTests {
    /// One session on three machines through netjack2, on one machine: a master and two slaves in
    /// network namespaces (`Scripts/netjack-rig.sh`), `lockstep session run --align-outputs` on
    /// the master with a layer to each slave and one to a local port.
    ///
    /// Every layer plays the same ramp file (sample k holds (k + 1)·2⁻²², exact), so each recorded
    /// sample says which file frame it is. A timecode client on the master plays its JACK frame
    /// time into each slave's second channel; a capture on each slave records both channels, so
    /// every sample that reached a slave is placed on the master frame it was sent on. The local
    /// layer is recorded on the master. An output's sample is *heard* at that master frame plus the
    /// playback latency the master's JACK declares for the port it goes to (to_slave_N: netjack2's
    /// L·period/2; system:playback_1: the dummy driver's); the test requires every sample of every
    /// output to be heard on one master frame per file frame — 0 frames apart.
    ///
    /// Plays `LOCKSTEP_NETJACK_SECONDS` seconds (default 15; the issue's proof is 60), with a 2 s
    /// outage of slave C (all its packets dropped in its input hook) at a fifth of the run and 5 %
    /// packet loss into slave B for 2 s at three fifths. What was lost (frames per output, packets dropped, the engine's
    /// discontinuities) is printed; what arrived must be on its frame, before, during and after.
    @Suite("netjack2: one session on a master and two slaves (network namespaces)", .serialized)
    struct NetJackTests {
        static let step: Float = 1.0 / 4_194_304     // 2⁻²²
        static var seconds: Int {
            Int(ProcessInfo.processInfo.environment["LOCKSTEP_NETJACK_SECONDS"] ?? "") ?? 15
        }

        /// What one output received, placed on the master's clock.
        struct Arrivals {
            /// File frame → the master frame it is heard on (the first time it arrived).
            var heard: [Int: Int64] = [:]
            /// Samples that arrived on another frame than the first arrival of the same file
            /// frame, or twice.
            var repeated = 0
            /// Samples of the file that never arrived.
            var missing = 0
        }

        /// Places recorded `values` (ramp samples) heard at `masterFrame(i)` + `latency`.
        static func arrivals(values: [Float], frames: Int, fileFrames: Int, latency: Int,
                             masterFrame: (Int) -> Int64?) -> Arrivals {
            var result = Arrivals()
            for i in 0..<min(frames, values.count) where values[i] != 0 {
                let k = Int((values[i] / step).rounded()) - 1
                guard k >= 0 && k < fileFrames, let frame = masterFrame(i) else { continue }
                if result.heard[k] == nil { result.heard[k] = frame + Int64(latency) } else { result.repeated += 1 }
            }
            result.missing = fileFrames - result.heard.count
            return result
        }

        @Test("layers on slave B, slave C and a local port are heard on the same master frame, through loss and a slave outage")
        func alignedAcrossMachines() throws {
            let seconds = Self.seconds
            let rig: NetJackRig
            do { rig = try NetJackRig(seconds: seconds + 60) } catch let reason as NetJackRig.Unavailable {
                print("netjack2 test skipped: \(reason)")
                return
            }
            defer { rig.stop() }
            let temp = try TemporaryTestDirectory(prefix: "lockstep-netjack")
            let rate = 48000
            let fileFrames = seconds * rate
            let ramp = (0..<fileFrames).map { Float($0 + 1) * Self.step }
            let writer = try AudioFileWriter(path: temp.file("ramp.wav"), format: StreamFormat(sampleRate: Double(rate), channelCount: 1))
            try ramp.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: fileFrames) }
            try writer.close()
            let (slaveB, slaveC) = (rig.slaves[0], rig.slaves[1])
            let session = temp.file("show.yaml")
            try """
            rate: \(rate)
            channels: 1
            layers:
              b: { ports: [\(slaveB):to_slave_1] }
              c: { ports: [\(slaveC):to_slave_1] }
              local: { ports: [system:playback_1] }
            cues:
              - { name: b, layer: b, file: ramp.wav, at: 2 }
              - { name: c, layer: c, file: ramp.wav, at: 2 }
              - { name: local, layer: local, file: ramp.wav, at: 2 }
            """.write(toFile: session, atomically: true, encoding: .utf8)

            // The latencies the master declares, through `lockstep ports`.
            let listed = try CLI.run(["ports", "--server", rig.master, "--net-slaves", "--json"])
            #expect(listed.status == 0, "\(listed.stderr)")
            let listing = try JSONSchema.decode(PortsReport.self, from: listed.stdout)
            let slaves = listing.netSlaves
            #expect(listing.ports.isEmpty && slaves.map(\.name) == [slaveB, slaveC])
            let toSlaveLatency = rig.networkLatency * rig.period / 2
            #expect(slaves.allSatisfy { $0.playbackLatency == toSlaveLatency }, "\(slaves)")
            let ports = try JACKGraph.listPorts(server: rig.master)
            let localLatency = try #require(ports.first { $0.name == "system:playback_1" }?.playbackLatency)
            #expect(localLatency != toSlaveLatency, "the test needs outputs of different latency")

            // What session check says run would do.
            let check = try CLI.run(["session", "check", session, "--jack", "--server", rig.master, "--json"])
            #expect(check.status == 0, "\(check.stderr)")
            let checked = try #require(try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any])
            let planned = ((checked["outputs"] as? [String: Any])?["outputs"] as? [[String: Any]]) ?? []
            let largest = max(localLatency, toSlaveLatency)
            let plannedDelays = Dictionary(planned.compactMap { o in (o["output"] as? String).map { ($0, o["delay"] as? Int ?? -1) } },
                                           uniquingKeysWith: { a, _ in a })
            #expect(plannedDelays == ["out_1": 0, "b_1": largest - toSlaveLatency, "c_1": largest - toSlaveLatency,
                                      "local_1": largest - localLatency], "\(check.stdout)")

            // Recorders on the slaves (layer, timecode): `lockstep record`, one process per slave
            // (libjack holds clients of one server per process), and a capture of the local layer
            // on the master.
            let captureSeconds = Double(seconds + 20)
            // A client can open on each slave (under load a slave's first clients can time out).
            for server in rig.slaveServers {
                var listed = try CLI.run(["ports", "--server", server])
                for _ in 0..<20 where listed.status != 0 {
                    usleep(250_000)
                    listed = try CLI.run(["ports", "--server", server])
                }
                #expect(listed.status == 0, "slave server \(server): \(listed.stderr)")
            }
            let recordings = rig.slaveServers.indices.map { temp.file("slave\($0).wav") }
            let recorders = try zip(rig.slaveServers, recordings).map { server, path in
                try CLI.spawn(["record", "-o", path, "--server", server, "--port", "system:capture_1", "--port", "system:capture_2",
                               "--duration", String(Int(captureSeconds) - 6), "--json"])
            }
            let timecode = try JACKRampSource(serverName: rig.master, channels: 1, signal: .frameTime)
            try timecode.start(connectingTo: ["\(slaveB):to_slave_2"])
            try timecode.connect(channel: 0, to: "\(slaveC):to_slave_2")
            let local = try JACKCapture(serverName: rig.master, sources: [], channels: 1, maxSeconds: captureSeconds)
            Thread.sleep(forTimeInterval: 0.5)     // the recorders are connected
            try local.start()

            let client = "lsnj\(getpid() % 100_000)"
            let running = try CLI.spawn(["session", "run", session, "--server", rig.master, "--client-name", client,
                                         "--no-connect", "--align-outputs", "--json", "--start-server", "never"])
            let localPort = "\(client):local_1"
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline && !((try? JACKGraph.listPorts(server: rig.master)) ?? []).contains(where: { $0.name == localPort }) {
                usleep(20_000)
            }
            do { try local.connect(localPort, toChannel: 0) } catch {
                Issue.record("\(error); session run: \(running.errorOutputSoFar)")
                throw error
            }

            // While it plays: everything into slave C dropped for 2 s (its ports go away and come
            // back when it has rejoined), then 5 % into slave B for 2 s.
            let playStart = Date().addingTimeInterval(2)
            Thread.sleep(until: playStart.addingTimeInterval(Double(seconds) / 5))
            try rig.send("loss c 100")
            Thread.sleep(forTimeInterval: 2)
            try rig.send("loss c 0")
            Thread.sleep(until: playStart.addingTimeInterval(Double(seconds) * 3 / 5))
            try rig.send("loss b 5")
            Thread.sleep(forTimeInterval: 2)
            try rig.send("loss b 0")
            let result = running.wait(timeout: Double(seconds + 30))
            let dropped = try rig.droppedPackets()
            let recorded = recorders.map { $0.wait(timeout: 20) }
            local.stop()
            timecode.stop()
            for record in recorded { #expect(record.status == 0, "\(record.stderr)") }
            #expect(result.status == 0, "\(result.stderr)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data((result.stdout.split(separator: "\n").last ?? "").utf8)) as? [String: Any])
            let discontinuities = (summary["discontinuities"] as? [[String: Any]] ?? []).map { "\($0["kind"] ?? "")@\($0["sampleTime"] ?? "")" }
            let applied = (summary["outputs"] as? [[String: Any]]) ?? []
            let appliedDelays = Dictionary(applied.compactMap { o in (o["port"] as? String).map { ($0, o["delay"] as? Int ?? -1) } },
                                           uniquingKeysWith: { a, _ in a })
            #expect(appliedDelays["\(client):b_1"] == largest - toSlaveLatency && appliedDelays["\(client):local_1"] == largest - localLatency,
                    "\(applied)")

            // Place every sample on the master's clock.
            var outputs: [(String, Arrivals)] = []
            for (name, path) in zip(["slave B", "slave C"], recordings) {
                let reader = try AudioFileReader(path: path)
                let frames = Int(reader.frameCount)
                var samples = [Float](repeating: 0, count: frames * 2)
                _ = try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: frames) }
                reader.close()
                let layer = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
                let code = stride(from: 1, to: samples.count, by: 2).map { samples[$0] }
                outputs.append((name, Self.arrivals(values: layer, frames: frames, fileFrames: fileFrames, latency: toSlaveLatency) { i in
                    code[i] == 0 ? nil : Int64(code[i])
                }))
            }
            outputs.append(("local", Self.arrivals(values: local.channel(0), frames: local.frames, fileFrames: fileFrames,
                                                   latency: localLatency) { local.extendedFrameTime(ofRecordedFrame: $0) }))
            // Every file frame k must be heard on landing + k, at every output.
            let starts = outputs.map { $0.1.heard[0] }
            let landing = starts.first ?? nil
            var lines: [String] = []
            var misplaced: [String: Int] = [:]
            for (name, arrivals) in outputs {
                let wrong = arrivals.heard.filter { $0.value - Int64($0.key) != landing }
                misplaced[name] = wrong.count
                lines.append("\(name): first sample heard at master frame \(arrivals.heard[0].map(String.init) ?? "-"), "
                             + "\(arrivals.heard.count) of \(fileFrames) frames arrived, \(arrivals.missing) lost, "
                             + "\(wrong.count) on another frame, \(arrivals.repeated) repeated")
            }
            var kinds: [String: Int] = [:]
            for entry in discontinuities { kinds[String(entry.split(separator: "@").first ?? ""), default: 0] += 1 }
            let latencyChanges = discontinuities.filter { $0.hasPrefix("playbackLatencyChange@") }
            let report = "netjack2, \(seconds) s at \(rate) Hz, period \(rig.period), -l \(rig.networkLatency): " + lines.joined(separator: "; ")
                + "; packets dropped: \(dropped.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
                + "; engine discontinuities: \(kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
                + "; latency changes at \(latencyChanges.map { String($0.dropFirst("playbackLatencyChange@".count)) }.joined(separator: ", "))"
            print(report)
            #expect(starts.allSatisfy { $0 != nil && $0 == starts[0] }, "\(report)")
            #expect(misplaced.values.allSatisfy { $0 == 0 }, "\(report)")
            #expect(outputs[2].1.missing == 0, "the local output loses nothing: \(report)")
            #expect(dropped["b", default: 0] > 0 && dropped["c", default: 0] > 0, "\(report)")
            #expect(outputs[1].1.missing > 0, "the outage of slave C loses frames: \(report)")
            // The outage takes slave C's ports away: the engine reports the change of its
            // compensation (besides the first, when the ports were connected); when C has rejoined
            // within the run, the engine connected it again and reported that too, and what C
            // received after is on its frame (checked above with everything else).
            let rejoined = outputs[1].1.heard.keys.contains { $0 > fileFrames * 2 / 5 + 2 * rate + rate }
            print("slave C rejoined during the run: \(rejoined)")
            // At least the first (when the ports were connected); the outage is reported when
            // netjack2 took slave C's ports away (it does not always within 2 s), and a rejoin
            // with them back.
            #expect(latencyChanges.count >= (rejoined ? 3 : 1), "\(report)")
        }
    }
}
