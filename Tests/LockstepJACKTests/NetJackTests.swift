import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepSchema
import LockstepTestSupport
import Synchronization
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
    /// Plays `LOCKSTEP_NETJACK_SECONDS` seconds (default 14; 60 was the original proof). At a fifth
    /// of the run slave C's network is cut for 5 s, both ways (what C receives and what the master
    /// receives from C is dropped in the receivers' input hooks): netjack2's master gives a slave
    /// up after 2 s without a packet (its receive timeout), so C's ports leave the master's graph;
    /// C's own driver times out and restarts, and joins again within a second of the cut's end (its
    /// announcements reach the master again), under its name. The engine must report that: C's
    /// output lost its destination at a master frame inside the cut, was connected again after it
    /// (two `playbackLatencyChange`s on those samples, the delay 256 → 0 → 256), for fewer frames
    /// than C missed — and what C received after is on its frame. At three fifths, 5 % of what
    /// slave B receives is dropped for 2 s: B plays silence (or what a lost packet left) for what
    /// is lost (netjack2 declares no other latency), the rest on its frame (if netjack2 gives B
    /// up, the engine and the timecode follow it back as for C; the engine sets an output's delay
    /// before it connects the output again, so the first frame that reaches a returning slave is
    /// on its sample). What was lost is printed.
    ///
    /// Where the system does not allow exactness, frames are counted and printed, not required:
    /// while netjack2's master blocks on a silent slave (up to 2 s before it gives the slave up)
    /// the test's own clients may run out of the graph's order; in an xrun in which the master's
    /// clock skipped frames every layer skips as many (lost at all outputs alike, every later
    /// frame on its sample), a clock jump moves every later frame by its length, and the
    /// ``disturbanceMargin`` periods around either are not required; around the master's other xruns the local capture may miss
    /// part of a period. Around those xruns and in B's loss, a frame heard off its sample is
    /// excused only where another output heard the same file frame on its sample (the engine
    /// played it on time; JACK ran the test's clients out of order, or a lost packet left old
    /// data) — or, around an xrun, where every output heard it on the same frame within a period
    /// (JACK's frame clock stuttered: the outputs still agree) — and counted.
    ///
    /// When the master xrun outside the outages it blocked in (a loaded machine) and the run then
    /// failed its checks, those failures are known issues and the scenario runs once more,
    /// strictly; each misplaced run of frames is printed with the nearest xrun and what the other
    /// outputs heard there.
    @Suite("netjack2: one session on a master and two slaves (network namespaces)", .serialized)
    struct NetJackTests {
        static let step: Float = 1.0 / 4_194_304     // 2⁻²²
        static var seconds: Int {
            Int(ProcessInfo.processInfo.environment["LOCKSTEP_NETJACK_SECONDS"] ?? "") ?? 14
        }
        /// Periods either side of a master xrun or clock jump in which frames off their sample
        /// (or, at the local capture, lost) are counted and printed rather than required: JACK's
        /// dummy driver, netjack2 and the test's own clients are not exact there on a loaded
        /// 2-core machine (seen: a skip of a period, a jump back two periods later, and a period
        /// heard a period or two off just after).
        static let disturbanceMargin = 3
        /// How long slave C's network is cut: well past netjack2's 2 s receive timeout.
        static let cutSeconds = 5.0

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

        @Test("layers on slave B, slave C and a local port are heard on the same master frame, through loss and an outage slave C rejoins from")
        func alignedAcrossMachines() throws { try retryingOnXruns("NetJackTests", alignedRun) }

        /// One run of ``alignedAcrossMachines()``; `xrun` is set once the master is known to have
        /// xrun outside the planned outages (a loaded machine).
        func alignedRun(_ xrun: XrunFlag) throws {
            let seconds = Self.seconds
            let rig: NetJackRig
            // The rig's own time limit (its servers are stopped then) is well past the test's
            // end: start-up up to 40 s, then about seconds + 40.
            do { rig = try NetJackRig(seconds: 2 * seconds + 120) } catch let reason as NetJackRig.Unavailable {
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
            // on the master. Every client has a name of its own on the machine: jackd2 names a
            // client's socket after the client alone, so two clients of one name opening at once
            // on two servers (the slaves; another test's) take each other's socket and both are
            // refused. libjack's own messages go to their standard error (LOCKSTEP_JACK_DEBUG).
            let client = "lsnj\(getpid() % 100_000)"
            let captureSeconds = Double(seconds) + 20 + Self.cutSeconds
            let recordings = rig.slaveServers.indices.map { temp.file("slave\($0).wav") }
            let recorders = try zip(rig.slaveServers, recordings).enumerated().map { index, entry in
                try CLI.spawn(["record", "-o", entry.1, "--server", entry.0, "--client-name", "\(client)-rec\(index)",
                               "--port", "system:capture_1", "--port", "system:capture_2",
                               "--duration", String(Int(captureSeconds) - 6), "--json"], environment: ["LOCKSTEP_JACK_DEBUG": "1"])
            }
            let timecode = try JACKRampSource(serverName: rig.master, channels: 1, signal: .frameTime)
            try timecode.start(connectingTo: ["\(slaveB):to_slave_2"])
            try timecode.connect(channel: 0, to: "\(slaveC):to_slave_2")
            // A slave the master gives up comes back with new ports: the timecode follows it (the
            // engine follows its outputs itself; this client is the test's). Watched every 100 ms.
            let following = Mutex(["\(slaveB):to_slave_2", "\(slaveC):to_slave_2"])
            let watching = Atomic<Bool>(true)
            let watcher = Thread {
                while watching.load(ordering: .acquiring) {
                    let existing = timecode.serverPorts()
                    for (index, port) in following.withLock({ $0 }).enumerated() {
                        guard let now = JACKGraph.successor(of: port, among: existing),
                              !timecode.isConnected(channel: 0, to: now) else { continue }
                        if (try? timecode.connect(channel: 0, to: now)) != nil { following.withLock { $0[index] = now } }
                    }
                    usleep(100_000)
                }
            }
            watcher.start()
            let local = try JACKCapture(serverName: rig.master, sources: [], channels: 1, maxSeconds: captureSeconds)
            // A wait for time: the recorders connect on the slaves' servers, which this process
            // cannot open clients of (libjack holds clients of one server per process).
            Thread.sleep(forTimeInterval: 0.5)
            try local.start()

            let running = try CLI.spawn(["session", "run", session, "--server", rig.master, "--client-name", client,
                                         "--no-connect", "--align-outputs", "--json", "--start-server", "never"])
            let localPort = "\(client):local_1"
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline && running.isRunning
                    && !((try? JACKGraph.listPorts(server: rig.master)) ?? []).contains(where: { $0.name == localPort }) {
                usleep(20_000)
            }
            do { try local.connect(localPort, toChannel: 0) } catch {
                let ports = ((try? JACKGraph.listPorts(server: rig.master)) ?? []).map(\.name)
                Issue.record("\(error); session run (running: \(running.isRunning)): \(running.errorOutputSoFar) \(running.outputSoFar); master's ports: \(ports); recorders: \(recorders.map(\.errorOutputSoFar))")
                throw error
            }

            // While it plays: slave C's network cut for 5 s, then 5 % of what B receives dropped
            // for 2 s (waits for time by design: outages of a set length at set times). The
            // master frames around the cut, from the local capture's client.
            func masterFrame() -> Int64 { Int64(local.currentFrameTime ?? 0) }
            let playStart = Date().addingTimeInterval(2)
            Thread.sleep(until: playStart.addingTimeInterval(Double(seconds) / 5))
            let cutOn = masterFrame()
            try rig.send("cut c on")
            Thread.sleep(forTimeInterval: Self.cutSeconds)
            try rig.send("cut c off")
            let cutOff = masterFrame()
            // C joins again (the watcher reconnects its timecode).
            let rejoinDeadline = Date().addingTimeInterval(10)
            while !timecode.isConnected(channel: 0, to: following.withLock { $0[1] }) && Date() < rejoinDeadline { usleep(50_000) }
            let rejoinedPort: String? = timecode.isConnected(channel: 0, to: following.withLock { $0[1] }) ? following.withLock { $0[1] } : nil
            Thread.sleep(until: max(Date(), playStart.addingTimeInterval(Double(seconds) * 3 / 5)))
            let lossOn = masterFrame()
            try rig.send("loss b 5")
            Thread.sleep(forTimeInterval: 2)
            try rig.send("loss b 0")
            let lossOff = masterFrame()
            let result = running.wait(timeout: Double(seconds) + 30 + Self.cutSeconds)
            let dropped = try rig.droppedPackets()
            // The show is over: the slaves have what they received of it a few periods later.
            // The recorders (each bounded by its --duration) are stopped then, as with Ctrl-C.
            usleep(1_000_000)
            for recorder in recorders where recorder.isRunning { recorder.send(SIGINT) }
            let recorded = recorders.map { $0.wait(timeout: 20) }
            watching.store(false, ordering: .releasing)
            while !watcher.isFinished { usleep(10_000) }
            local.stop()
            timecode.stop()
            for record in recorded { #expect(record.status == 0 || record.status == 130, "\(record.stderr)") }
            #expect(result.status == 0, "\(result.stderr)")
            let report = try JSONSchema.decode(SessionRunReport.self, from: result.stdout.split(separator: "\n").last ?? "")
            let appliedDelays = Dictionary(report.outputs.map { ($0.port, $0.delay) }, uniquingKeysWith: { a, _ in a })
            #expect(appliedDelays["\(client):b_1"] == largest - toSlaveLatency && appliedDelays["\(client):local_1"] == largest - localLatency,
                    "\(report.outputs)")

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
            let outputC = report.outputs.first { $0.port == "\(client):c_1" }
            let outage = outputC?.outages.first
            // Every file frame k must be heard on landing + k, at every output — except while
            // netjack2's master blocks: from the cut until it gives C up, its netmanager client for
            // C hangs in a receive, JACK's engine moves on without it, and in that time the test's
            // own clients (the timecode, the local capture) may run in another order than the
            // graph's for a period (seen: a period missing from the local capture, half a period
            // of B's timecode one period old). Frames heard then are counted and printed, not
            // required; every other frame must be on its sample.
            //
            // An xrun in which the master's clock skipped frames (the engine reports it with its
            // length): every layer skips as many frames of its audio, so every later frame stays
            // on landing + k; the frames skipped are lost at every output alike, and the period
            // around each skip (where the test's capture and timecode see it) is counted, not
            // required, like the block.
            let starts = outputs.map { $0.1.heard[0] }
            let landing = starts.first ?? nil
            // The master blocks from the cut until it gives C up; and for netjack2's 2 s receive
            // timeout before any other slave it gave up (B, if the loss was too much for it).
            let stall = cutOn...((outage?.lostSampleTime ?? cutOff) + Int64(largest + rig.period))
            let otherOutages = report.outputs.filter { $0.port != "\(client):c_1" }.flatMap(\.outages)
            let blocked = [stall] + otherOutages.map { ($0.lostSampleTime - Int64(5 * rate / 2))...($0.lostSampleTime + Int64(largest + rig.period)) }
            // A clock jump (JACK's frame clock moving against the frames rendered, reported with
            // its signed length) moves every later frame by as much on the master's clock.
            let skips = report.discontinuities.filter { ($0.kind == "xrun" || $0.kind == "clockJump") && $0.frames != 0 }
                .sorted { $0.sampleTime < $1.sampleTime }
            let jumps = skips.filter { $0.kind == "clockJump" }
            func expected(_ k: Int) -> Int64 {
                var heard = (landing ?? 0) + Int64(k)
                for jump in jumps where heard - Int64(largest) >= jump.sampleTime { heard += jump.frames }
                return heard
            }
            // Seen in CI: an xrun that skipped a period followed two periods later by a clock
            // jump back by as much, and the outputs a period or two off their samples for one
            // period just after the jump — the cycles next to a skip or jump are JACK's, not the
            // engine's: `margin` periods either side are counted, not required.
            let margin = Int64(Self.disturbanceMargin * rig.period)
            let disturbed = blocked + skips.map { skip in
                (skip.sampleTime + Int64(largest) - margin)...(skip.sampleTime + Int64(largest) + abs(skip.frames) + margin)
            }
            func isDisturbed(_ k: Int) -> Bool { let heard = expected(k); return disturbed.contains { $0.contains(heard) } }
            // The master xrun outside the outages it blocked in (seen in CI: 79 xruns in a run,
            // a slave's frame a period late there and nowhere else): a loaded machine, and the
            // exact checks below become known issues; the scenario then runs once more, strictly.
            xrun.set(skips.contains { skip in !blocked.contains { $0.contains(skip.sampleTime) } }
                     || report.discontinuities.contains { entry in entry.kind == "xrun" && !blocked.contains { $0.contains(entry.sampleTime) } })
            // The master's other xruns move nothing, but around one the test's capture may miss or
            // record twice part of a period (seen: 96 frames): the local output's losses there
            // are counted, not required.
            let xruns = report.discontinuities.filter { $0.kind == "xrun" }
                .map { ($0.sampleTime + Int64(largest) - margin)...($0.sampleTime + Int64(largest) + margin) }
            func nearXrun(_ k: Int) -> Bool { let heard = expected(k); return xruns.contains { $0.contains(heard) } }
            var lines: [String] = []
            var misplaced: [String: Int] = [:]
            var lostOutsideStall: [String: Int] = [:]
            // Where the system disturbs the measurement — around the master's xruns (JACK may run
            // the test's clients and netjack2's master out of the graph's order for a cycle, seen:
            // the local capture recording a period one period late), and while B loses packets
            // (netjack2 leaves what a lost packet carried as it was) — a frame heard off its
            // sample is excused only where another output heard that same file frame on its
            // sample: the engine is proven to have played it on time.
            let lossWindow = lossOn...(lossOff + Int64(largest + 2 * rig.period))
            func inSystemWindow(_ k: Int) -> Bool { nearXrun(k) || lossWindow.contains(expected(k)) }
            func heardOnTimeElsewhere(_ k: Int, than name: String) -> Bool {
                outputs.contains { $0.0 != name && $0.1.heard[k] == expected(k) }
            }
            // Around an xrun JACK's frame clock itself may stutter (seen: two cycles of the local
            // capture with one frame time, every output then a period "late" for a period): the
            // outputs still agree with each other, which is what alignment means. Excused only
            // where every output that heard the frame heard it on the same frame, within a period.
            func shiftedAlike(_ k: Int) -> Bool {
                let heard = outputs.compactMap { $0.1.heard[k] }
                guard heard.count >= 2, let first = heard.first else { return false }
                return heard.allSatisfy { $0 == first } && abs(first - expected(k)) <= Int64(rig.period)
            }
            var excused: [String: Int] = [:]
            var offSample: [String: Int] = [:]
            var misplacedDetail: [String] = []
            for (name, arrivals) in outputs {
                let wrong = arrivals.heard.filter { $0.value != expected($0.key) }
                offSample[name] = wrong.count
                let undisturbed = wrong.filter { !isDisturbed($0.key) }
                let unexcused = undisturbed.filter {
                    !(inSystemWindow($0.key) && heardOnTimeElsewhere($0.key, than: name)) && !(nearXrun($0.key) && shiftedAlike($0.key))
                }
                misplaced[name] = unexcused.count
                // Where each run of them was: file frame, length, offset, expected master frame,
                // the nearest xrun the engine reported, and what the other outputs heard there.
                var misplacedRuns: [(k: Int, count: Int, offset: Int64)] = []
                for (k, frame) in unexcused.sorted(by: { $0.key < $1.key }) {
                    let offset = frame - expected(k)
                    if let last = misplacedRuns.last, last.k + last.count == k, last.offset == offset {
                        misplacedRuns[misplacedRuns.count - 1].count += 1
                    } else { misplacedRuns.append((k, 1, offset)) }
                }
                for run in misplacedRuns.prefix(6) {
                    let at = expected(run.k)
                    let nearest = report.discontinuities.filter { $0.kind == "xrun" }.min { abs($0.sampleTime - at) < abs($1.sampleTime - at) }
                    let others = outputs.filter { $0.0 != name }.map { "\($0.0) \($0.1.heard[run.k].map { String($0 - at) } ?? "missing")" }
                    misplacedDetail.append("\(name) misplaced \(run.count) from file frame \(run.k) by \(run.offset) (expected at master frame \(at); "
                                           + "nearest xrun \(nearest.map { "at \($0.sampleTime), \($0.sampleTime - at)" } ?? "none"); others: \(others.joined(separator: ", ")))")
                }
                excused[name] = undisturbed.count - misplaced[name, default: 0]
                let missing = (0..<fileFrames).filter { arrivals.heard[$0] == nil }
                let lostOutside = missing.filter { !isDisturbed($0) && !(name == "local" && nearXrun($0)) }
                lostOutsideStall[name] = lostOutside.count
                // Runs of frames lost outside the disturbed windows: first file frame and length.
                var runs: [(Int, Int)] = []
                for k in lostOutside {
                    if let last = runs.last, last.0 + last.1 == k { runs[runs.count - 1].1 += 1 } else { runs.append((k, 1)) }
                }
                let runText = runs.count <= 6 ? runs.map { "\($0.1) from \($0.0)" }.joined(separator: ", ") : "\(runs.count) runs"
                // Where the misplaced ones were: by how much, from which file frame, how many.
                let offsets = Dictionary(grouping: wrong, by: { $0.value - expected($0.key) })
                    .sorted { $0.key < $1.key }
                    .map { "\($0.key > 0 ? "+" : "")\($0.key) from file frame \($0.value.map(\.key).min() ?? 0) ×\($0.value.count)" }
                lines.append("\(name): first sample heard at master frame \(arrivals.heard[0].map(String.init) ?? "-"), "
                             + "\(arrivals.heard.count) of \(fileFrames) frames arrived, \(arrivals.missing) lost "
                             + "(\(arrivals.missing - lostOutsideStall[name, default: 0]) while the master blocked or skipped\(name == "local" ? " or near an xrun" : "")"
                             + "\(name == "local" && !runs.isEmpty ? "; others: \(runText)" : "")), "
                             + "\(wrong.count) on another frame\(offsets.isEmpty ? "" : " (\(offsets.joined(separator: ", ")))")"
                             + "\(wrong.count == misplaced[name] ? "" : " (\(wrong.count - misplaced[name, default: 0] - excused[name, default: 0]) while the master blocked or skipped, \(excused[name, default: 0]) near an xrun or in B's loss and heard on time elsewhere or alike everywhere)"), "
                             + "\(arrivals.repeated) repeated")
            }
            // Where the local capture heard a frame off its sample: the capture's cycles around
            // it (JACK frame time, length) and the nearest xrun the engine reported.
            var localDetail = ""
            if let localArrivals = outputs.first(where: { $0.0 == "local" })?.1,
               let k = localArrivals.heard.filter({ $0.value != expected($0.key) }).map(\.key).min() {
                let target = expected(k) - Int64(localLatency)
                let cycles = local.cycles
                let base = cycles.first.map { Int64($0.frameTime) } ?? 0
                let near = cycles.enumerated().filter { abs(base + Int64($0.element.frameTime &- cycles[0].frameTime) - target) <= Int64(3 * rig.period) }
                let xrun = report.discontinuities.filter { $0.kind == "xrun" }.min { abs($0.sampleTime - expected(k)) < abs($1.sampleTime - expected(k)) }
                localDetail = "; local capture around file frame \(k) (expected at master frame \(expected(k)), sent \(target)): cycles "
                    + near.map { "#\($0.offset) at \(base + Int64($0.element.frameTime &- cycles[0].frameTime))+\($0.element.frames)" }.joined(separator: ", ")
                    + ", heard there \(localArrivals.heard[k].map(String.init) ?? "-"), next file frame \(localArrivals.heard[k + rig.period].map(String.init) ?? "-")"
                    + "; nearest xrun at \(xrun.map { "\($0.sampleTime) (\($0.frames) frames)" } ?? "-")"
            }
            var kinds: [String: Int] = [:]
            for entry in report.discontinuities { kinds[entry.kind, default: 0] += 1 }
            let latencyChanges = report.discontinuities.filter { $0.kind == "playbackLatencyChange" }.map(\.sampleTime)
            var outageTexts: [String] = []
            for output in report.outputs {
                for o in output.outages {
                    let again: String
                    if let at = o.rejoinedSampleTime { again = "connected again at \(at) to \(o.rejoinedAs ?? "?")" } else { again = "not back" }
                    outageTexts.append("\(output.port) lost \(o.destination) at \(o.lostSampleTime), \(again) after \(o.frames) frames")
                }
            }
            let outageText = "cut of C at master frames \(cutOn)…\(cutOff), B's loss at \(lossOn)…\(lossOff); outages: " + outageTexts.joined(separator: ", ")
            let text = "netjack2, \(seconds) s at \(rate) Hz, period \(rig.period), -l \(rig.networkLatency): " + lines.joined(separator: "; ")
                + "; packets dropped: \(dropped.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
                + "; \(outageText)"
                + "; engine discontinuities: \(kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
                + (skips.isEmpty ? "" : " (clock: \(skips.map { "\($0.kind) \($0.frames) frames at \($0.sampleTime)" }.joined(separator: ", ")))")
                + "; latency changes at \(latencyChanges.map(String.init).joined(separator: ", "))"
                + localDetail
                + (misplacedDetail.isEmpty ? "" : "; " + misplacedDetail.joined(separator: "; "))
            print(text)
            // (i) Every layer lands on one master frame at all three outputs, 0 frames apart.
            #expect(starts.allSatisfy { $0 != nil && $0 == starts[0] }, "\(text)")
            #expect(misplaced.values.allSatisfy { $0 == 0 }, "\(text)")
            #expect(lostOutsideStall["local"] == 0, "the local output loses nothing: \(text)")
            // What is excused stays an exception: under 1 % of the file off its sample anywhere.
            #expect(offSample.values.allSatisfy { $0 < fileFrames / 100 }, "frames off their sample: \(offSample); \(text)")
            #expect(stall.count < 4 * rate, "the master blocked for less than 4 s: \(stall)")
            #expect(dropped["b", default: 0] > 0 && dropped["c", default: 0] > 0 && dropped["m", default: 0] > 0, "\(text)")
            // (ii) The outage: C's output lost its destination inside the cut, was connected to C
            // again after it, and the engine re-aligned on both samples.
            let lost = try #require(outage, "no outage reported for \(client):c_1: \(text)")
            #expect(outputC?.outages.count == 1, "\(text)")
            #expect(lost.destination == "\(slaveC):to_slave_1" && lost.netSlave == slaveC, "\(lost)")
            #expect(lost.lostSampleTime > cutOn && lost.lostSampleTime < cutOff, "\(text)")
            let back = try #require(lost.rejoinedSampleTime, "slave C did not come back: \(text)")
            #expect(back > cutOff && lost.frames == back - lost.lostSampleTime, "\(text)")
            #expect(lost.rejoinedAs.map { JACKGraph.successor(of: lost.destination, among: [$0]) != nil } == true, "\(lost)")
            #expect(rejoinedPort != nil, "C's ports came back on the master")
            // Its delay: 0 while it has nowhere to go, then back to 256 once C declares its latency
            // again; every change of it is a playbackLatencyChange on the same sample.
            let changes = outputC?.changes ?? []
            #expect(changes.first.map { $0.sampleTime == lost.lostSampleTime && $0.latency == nil && $0.delay == 0 } == true, "\(changes)")
            #expect(changes.last.map { $0.latency == toSlaveLatency && $0.delay == largest - toSlaveLatency } == true, "\(changes)")
            #expect(changes.contains { $0.sampleTime == back }, "\(changes)")
            #expect(changes.allSatisfy { latencyChanges.contains($0.sampleTime) }, "\(changes) \(text)")
            // (iii) What C missed includes the frames its output had nowhere to go, and what it
            // received after it came back is on its frame (checked above with everything else).
            #expect(outputs[1].1.missing >= Int(lost.frames), "\(text)")
            let firstAfter = Int(back) + largest - Int(landing ?? 0) + rate
            #expect(outputs[1].1.heard.keys.contains { $0 > firstAfter }, "C plays again after it rejoined: \(text)")
        }
    }
}
