import CJack
import Foundation
import LockstepTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension JACKTests {
    /// Tests of the JACK test fixtures themselves (server, capture, ramp source, staller), so that
    /// the device and CLI suites built on them can trust what they report.
    @Suite("JACK test fixtures", .serialized)
    struct FixtureTests {
        /// Whether a process with this id exists (zombies included).
        static func processExists(_ pid: Int32) -> Bool {
            kill(pid, 0) == 0 || errno == EPERM
        }

        /// The ids of `jackd` processes whose command line names the server `name`.
        static func jackdProcesses(serving name: String) -> [Int32] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap { entry -> Int32? in
                guard let pid = Int32(entry),
                      let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
                let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
                guard let first = arguments.first, first.hasSuffix("jackd"),
                      let flag = arguments.firstIndex(of: "-n"), flag + 1 < arguments.count,
                      arguments[flag + 1] == name else { return nil }
                return pid
            }
        }

        /// The `/dev/shm/jack-<uid>-<n>` segments process `pid` has mapped.
        static func sharedMemorySegments(of pid: Int32) -> Set<String> {
            guard let maps = try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8) else { return [] }
            return Set(maps.split(separator: "\n").compactMap { line -> String? in
                guard let path = line.split(separator: " ", omittingEmptySubsequences: true).last,
                      path.hasPrefix("/dev/shm/jack-\(getuid())-") else { return nil }
                return String(path)
            })
        }

        static func seconds(since start: ContinuousClock.Instant) -> Double {
            let elapsed = ContinuousClock.now - start
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        }

        @Test("A server starts, serves the dummy driver's ports, and stops without leaving a process")
        func serverStartsAndStops() throws {
            let server = try JACKServer()
            #expect(server.isRunning)
            #expect(server.name.hasPrefix("lockstep-test-\(getpid())-"))
            #expect(server.sampleRate == 48000 && server.period == 256)
            #expect(server.commandLine.contains("-d dummy -r 48000 -p 256 -C 2 -P 2"))
            let ports = try server.portNames()
            #expect(Set(["system:capture_1", "system:capture_2", "system:playback_1", "system:playback_2"])
                .isSubset(of: Set(ports)), "ports: \(ports)")
            let (rate, size) = try server.withClient { client in
                (Int(jack_get_sample_rate(client)), Int(jack_get_buffer_size(client)))
            }
            #expect(rate == 48000 && size == 256)
            #expect(server.clientEnvironment["JACK_DEFAULT_SERVER"] == server.name)
            let pid = server.pid
            #expect(JACKServer.registeredServerProcessIDs.contains(pid))
            #expect(Self.processExists(pid))
            #expect(Self.jackdProcesses(serving: server.name) == [pid])

            server.stop()
            #expect(!server.isRunning)
            #expect(!Self.processExists(pid))
            #expect(Self.jackdProcesses(serving: server.name).isEmpty)
            #expect(!JACKServer.registeredServerProcessIDs.contains(pid))
            #expect(!FileManager.default.fileExists(atPath: "/dev/shm/jack_\(server.name)_\(getuid())_0"))
            server.stop()  // idempotent
            #expect(throws: JACKFixtureError.self) { try server.portNames() }
        }

        @Test("A name already served is refused, and a server that cannot start reports jackd's log")
        func startupErrors() throws {
            let server = try JACKServer()
            do {
                _ = try JACKServer(name: server.name)
                Issue.record("a second server with the same name started")
            } catch JACKFixtureError.serverNameInUse(let name) {
                #expect(name == server.name)
            }
            server.stop()

            let started = ContinuousClock.now
            do {
                _ = try JACKServer(extraDriverArguments: ["--no-such-option"])
                Issue.record("jackd started with a bogus driver option")
            } catch let error as JACKFixtureError {
                guard case .serverExitedDuringStartup(let command, _, let log) = error else {
                    Issue.record("unexpected error \(error)")
                    return
                }
                #expect(command.contains(" -r -d dummy"), "falls back to -r after -R failed: \(command)")
                #expect(log.contains("Options for driver 'dummy'"), "log tail: \(log)")
                #expect(error.description.contains("--- jackd log (tail) ---"))
            }
            #expect(Self.seconds(since: started) < 3)
        }

        @Test("A capture records a ramp source sample-exactly, at the frame times the source played them")
        func captureRecordsRamp() throws { try retryingOnXruns("FixtureTests", captureRecordsRampRun) }

        func captureRecordsRampRun(_ xrun: XrunFlag) throws {
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 3)
            let source = try JACKRampSource(server: server, channels: 2)
            #expect(capture.portNames == ["\(capture.clientName):in_1", "\(capture.clientName):in_2"])
            // jackd connects only ports of active clients: the capture runs first, the source
            // connects itself when it starts.
            try capture.start()
            try source.start(connectingTo: capture.portNames)
            #expect(try server.connections(of: source.portNames[0]) == [capture.portNames[0]])

            let wanted = 2 * server.sampleRate
            let started = ContinuousClock.now
            let startFrames = capture.frames
            #expect(capture.waitForFrames(startFrames + wanted, timeout: 4), "recorded \(capture.frames) frames")
            let elapsed = Self.seconds(since: started)
            capture.stop()
            source.stop()

            // The dummy driver runs in real time.
            #expect(elapsed > 1.6 && elapsed < 2.6, "2 s of audio took \(elapsed) s")
            let sourceStart = try #require(source.firstFrameTime)
            let frames = capture.frames
            // An xrun lets a client miss a cycle: frame times and the source's count part ways.
            xrun.set(capture.xrunCount > 0 || source.xrunCount > 0)
            for channel in 0..<2 {
                let samples = capture.channel(channel)
                // Silence until the connection took effect, a few periods after the source's first cycle.
                let first = try #require(capture.firstNonSilentRecordedFrame(channel: channel))
                let firstOffset = Int(Int32(bitPattern: capture.frameTime(ofRecordedFrame: first) &- sourceStart))
                #expect(firstOffset >= 1 && firstOffset < 8 * server.period, "connected after \(firstOffset) frames")
                // From then on the capture holds exactly the source's frame of the same JACK frame
                // time: no latency from client to client, nothing lost, nothing repeated.
                var mismatch: String?
                for index in first..<frames {
                    let offset = Int(Int32(bitPattern: capture.frameTime(ofRecordedFrame: index) &- sourceStart))
                    let expected = source.value(atFrame: offset)
                    if samples[index] != expected {
                        mismatch = "channel \(channel) frame \(index) (source frame \(offset)): "
                            + "\(samples[index]) instead of \(expected)"
                        break
                    }
                }
                #expect(mismatch == nil, "\(mismatch ?? "")")
                #expect(frames - first >= wanted - 8 * server.period)
                // The ramp counts up by one step per frame throughout.
                let rampBreak = (first + 1..<frames).first { samples[$0] - samples[$0 - 1] != 1.0 / 65536 }
                #expect(rampBreak == nil, "the ramp breaks at recorded frame \(rampBreak ?? -1)")
                #expect(source.frameIndex(ofValue: samples[first]) == firstOffset)
                #expect(capture.firstNonSilentFrame(channel: channel) == sourceStart &+ UInt32(firstOffset))
                #expect(capture.firstNonSilentExtendedFrameTime(channel: channel)
                        == capture.extendedFrameTime(ofRecordedFrame: 0) + Int64(first))
            }
            #expect(capture.droppedFrames == 0)
            #expect(source.framesPlayed >= frames - 8 * server.period)
        }

        @Test("Recorded frame times follow sample counting: one period per cycle, no gaps without xruns")
        func frameTimesFollowSampleCounting() throws { try retryingOnXruns("FixtureTests", frameTimesRun) }

        func frameTimesRun(_ xrun: XrunFlag) throws {
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: ["system:capture_1"], maxSeconds: 2)
            try capture.start()
            #expect(capture.waitForFrames(server.sampleRate / 2, timeout: 3))
            let lastRecorded = capture.frameTime(ofRecordedFrame: capture.frames - 1)
            let now = try #require(capture.currentFrameTime)
            capture.stop()
            #expect(capture.currentFrameTime == nil)

            let cycles = capture.cycles
            #expect(cycles.count >= server.sampleRate / 2 / server.period)
            #expect(cycles.allSatisfy { $0.frames == server.period })
            #expect(cycles.first?.firstRecordedFrame == 0)
            for (previous, next) in zip(cycles, cycles.dropFirst()) {
                #expect(next.firstRecordedFrame == previous.firstRecordedFrame + previous.frames)
            }
            xrun.set(capture.xrunCount > 0)
            #expect(capture.frameTimeDiscontinuities == 0, "\(capture.frameTimeDiscontinuities) frame-time jumps")
            let span = capture.extendedFrameTime(ofRecordedFrame: capture.frames - 1)
                - capture.extendedFrameTime(ofRecordedFrame: 0)
            #expect(span == Int64(capture.frames - 1))
            // JACK's clock stood within a few periods of the last recorded frame when we read it.
            let lead = Int(Int32(bitPattern: now &- lastRecorded))
            #expect(lead >= -server.period && lead < 8 * server.period,
                    "frame time \(now) vs last recorded \(lastRecorded)")
            // system:capture_1 of the dummy driver is silent.
            #expect(capture.firstNonSilentRecordedFrame(channel: 0) == nil)
        }

        @Test("setBufferSize changes the period the clients see")
        func bufferSizeChange() throws {
            let server = try JACKServer(period: 256)
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 3)
            try capture.start()
            #expect(capture.wait(timeout: 2) { capture.cycleCount >= 10 })

            try server.setBufferSize(512)
            #expect(server.period == 512)
            #expect(try server.withClient { Int(jack_get_buffer_size($0)) } == 512)
            let switched = capture.cycleCount
            #expect(capture.wait(timeout: 2) { capture.cycleCount >= switched + 10 })
            #expect(capture.cycles.suffix(5).allSatisfy { $0.frames == 512 })

            try server.setBufferSize(128)
            let again = capture.cycleCount
            #expect(capture.wait(timeout: 2) { capture.cycleCount >= again + 10 })
            #expect(capture.cycles.suffix(5).allSatisfy { $0.frames == 128 })
            #expect(server.period == 128)
            // jackd2 quirk: the first cycle after a size change starts `new size` frames after the
            // previous one, not `old size` frames, so frame time jumps once per change. Device sample
            // time must count frames, not follow jack_last_frame_time.
            #expect(capture.frameTimeDiscontinuities <= 2 + capture.xrunCount)
            capture.stop()

            #expect(throws: JACKFixtureError.self) { try server.setBufferSize(7) }
            server.stop()
            #expect(throws: JACKFixtureError.self) { try server.setBufferSize(256) }
        }

        @Test("A stalled cycle causes an xrun that the capture counts")
        func stallerCausesXrun() throws {
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 3)
            let staller = try JACKStaller(server: server)
            try capture.start()
            try staller.start()
            #expect(capture.wait(timeout: 2) { staller.cycleCount >= 20 })
            let baseline = capture.xrunCount

            // Four periods of busy-waiting in one cycle; repeat a few times should the server absorb one.
            let periodMicroseconds = server.period * 1_000_000 / server.sampleRate
            var attempts = 0
            while capture.xrunCount == baseline && attempts < 3 {
                #expect(staller.stallAndWait(forMicroseconds: 4 * periodMicroseconds))
                _ = capture.wait(timeout: 0.5) { capture.xrunCount > baseline }
                attempts += 1
            }
            #expect(capture.xrunCount > baseline, "no xrun after \(attempts) stalls; log: \(server.logTail())")
            #expect(staller.stallCount == attempts)
            #expect(!capture.serverWentAway && server.isRunning)
            staller.stop()
            capture.stop()
        }

        @Test("Stopping the server with clients attached shuts them down promptly")
        func stopWithClientsAttached() throws {
            let server = try JACKServer()
            let source = try JACKRampSource(server: server, channels: 1)
            let capture = try JACKCapture(server: server, sources: source.portNames, maxSeconds: 1)
            try source.start()
            try capture.start()
            #expect(capture.waitForFrames(server.period * 4, timeout: 2))
            let started = ContinuousClock.now
            server.stop()
            #expect(Self.seconds(since: started) < 1.5)
            #expect(capture.wait(timeout: 2) { capture.serverWentAway && source.serverWentAway })
            #expect(capture.shutdownReason != nil)
            capture.stop()
            source.stop()
            #expect(Self.jackdProcesses(serving: server.name).isEmpty)
        }

        @Test("Killing the server fires the clients' shutdown callbacks without a crash")
        func serverDeathReachesClients() throws {
            let server = try JACKServer()
            let source = try JACKRampSource(server: server, channels: 1)
            let capture = try JACKCapture(server: server, sources: source.portNames, maxSeconds: 3)
            let staller = try JACKStaller(server: server)
            try source.start()
            try capture.start()
            try staller.start()
            #expect(capture.waitForFrames(server.period * 8, timeout: 2))
            let pid = server.pid

            let segments = Self.sharedMemorySegments(of: pid)
            #expect(!segments.isEmpty)
            server.kill()
            #expect(!server.isRunning)
            #expect(segments.allSatisfy { !FileManager.default.fileExists(atPath: $0) }, "left: \(segments)")
            #expect(!JACKServer.registeredServerProcessIDs.contains(pid))
            #expect(!Self.processExists(pid))
            #expect(capture.wait(timeout: 3) {
                capture.serverWentAway && source.serverWentAway && staller.serverWentAway
            })
            #expect(capture.shutdownReason != nil)
            let frames = capture.frames
            #expect(frames > 0)
            capture.stop()
            source.stop()
            staller.stop()
            #expect(capture.channel(0).count == frames)
            #expect(throws: JACKFixtureError.self) { _ = try JACKCapture(server: server, sources: [], channels: 1) }
            #expect(!FileManager.default.fileExists(atPath: "/dev/shm/jack_\(server.name)_\(getuid())_0"))
        }
    }
}
