import CJack
import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

extension JACKTests {
    /// Live commands as processes people kill: exit codes, the jackd lockstep started, files that
    /// exist already, ports that do not.
    @Suite("Live commands under signals", .serialized)
    struct LifecycleTests {
        let temp: TemporaryTestDirectory

        init() throws { temp = try TemporaryTestDirectory(prefix: "lockstep-lifecycle") }

        /// Whether process `pid` is gone (a zombie waiting for a reaper counts as gone).
        static func isGone(_ pid: Int32) -> Bool {
            guard let state = processState(pid) else { return true }
            return state == "Z" || state == "X"
        }

        /// The state letter of process `pid` in /proc (R, S, T stopped, Z…), nil when it is gone.
        static func processState(_ pid: Int32) -> Character? {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            return stat[stat.index(close, offsetBy: 2)]
        }

        /// The pid of the jackd lockstep says it started, from its standard error.
        static func serverPID(_ stderr: String) -> Int32? {
            guard let range = stderr.range(of: ", pid ") else { return nil }
            return Int32(stderr[range.upperBound...].prefix { $0.isNumber })
        }

        /// A private server name that no test server uses.
        static func privateServerName() -> String { "lockstep-owned-\(getpid())-\(UInt16.random(in: 0...UInt16.max))" }

        @Test("the jackd play and session run start stops with them whatever ends them: SIGINT 130, SIGTERM 143, SIGHUP 129, SIGKILL",
              arguments: [("play", SIGINT), ("play", SIGHUP), ("play", SIGKILL), ("session", SIGTERM), ("session", SIGKILL)])
        func ownedServerNeverOrphaned(command: String, signal: Int32) throws {
            let tone = try temp.writeAudio("tone.wav", Signals.constant(0.1, frames: 48000 * 30))
            let name = Self.privateServerName()
            var arguments = ["play", tone, "--loop", "--no-connect", "--start-server", "dummy", "--json"]
            if command == "session" {
                let session = temp.file("show.yaml")
                try "layers:\n  a: {}\ncues:\n  - { name: x, layer: a, file: \(tone), at: 0 }\n"
                    .write(toFile: session, atomically: true, encoding: .utf8)
                arguments = ["session", "run", session, "--no-connect", "--start-server", "dummy", "--json"]
            }
            let running = try CLI.spawn(arguments, environment: ["JACK_DEFAULT_SERVER": name])
            #expect(ThreadedTestDevice.wait(timeout: 20) { Self.serverPID(running.errorOutputSoFar) != nil },
                    "no server started: \(running.errorOutputSoFar)")
            let pid = try #require(Self.serverPID(running.errorOutputSoFar))
            #expect(!Self.isGone(pid))
            #expect(JACKServer.waitForPort(matching: "^lockstep:out_", onServer: name), "lockstep never registered its ports")
            running.send(signal)
            let result = running.wait(timeout: 20)
            if signal != SIGKILL {
                #expect(result.status == 128 + signal, "\(result.stderr)")
                let summary = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
                #expect(summary.contains("\"interrupted\":true"), "\(result.stdout)")
            }
            #expect(ThreadedTestDevice.wait(timeout: 8) { Self.isGone(pid) }, "jackd \(pid) outlived lockstep")
            // A server stopped while it removes a dead client leaves its sockets and semaphores.
            let shared = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? []
            #expect(!shared.contains { $0.contains(name) }, "the server left \(shared.filter { $0.contains(name) }) in /dev/shm")
            let logs = (try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? []
            #expect(!logs.contains { $0.hasPrefix("lockstep-jackd-\(running.pid)") }, "a server log was left behind")
        }

        @Test("record never replaces an existing take without --force, and a bad --port leaves no file")
        func recordProtectsFiles() throws {
            let server = try JACKServer()
            let take = temp.file("take.wav")
            try Data("yesterday's take".utf8).write(to: URL(fileURLWithPath: take))
            let refused = try CLI.run(["record", "-o", take, "--port", "system:capture_1", "--duration", "0.2",
                                       "--server", server.name])
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("\(take) exists; choose another name, or add --force"), "\(refused.stderr)")
            #expect(try String(contentsOfFile: take, encoding: .utf8) == "yesterday's take")

            let replaced = try CLI.run(["record", "-o", take, "--port", "system:capture_1", "--duration", "0.2",
                                        "--server", server.name, "--force", "--json"], timeout: 20)
            #expect(replaced.status == 0, "\(replaced.stderr)")
            #expect(try AudioFileReader(path: take).frameCount == 9600)

            let missing = temp.file("never.wav")
            let bad = try CLI.run(["record", "-o", missing, "--port", "nobody:nothing", "--duration", "0.2",
                                   "--server", server.name])
            #expect(bad.status == 1)
            #expect(bad.stderr.contains("nobody:nothing"), "\(bad.stderr)")
            #expect(!FileManager.default.fileExists(atPath: missing))

            // Everything is validated before an existing take is replaced, and before a file is made.
            let forced = try CLI.run(["record", "-o", take, "--port", "nobody:nothing", "--duration", "0.2",
                                      "--server", server.name, "--force"])
            #expect(forced.status == 1, "\(forced.stderr)")
            #expect(try AudioFileReader(path: take).frameCount == 9600, "a failed --force record touched the take")
            for (arguments, mention) in [(["--port", "nocolon"], "nocolon"), (["--start-at=-1"], "the value '-1' is invalid for '--start-at <start-at>': negative"),
                                         (["--start-at", "100"], "--start-at 100 is in the past")] {
                let result = try CLI.run(["record", "-o", missing, "--duration", "0.2", "--server", server.name] + arguments)
                #expect(result.status != 0 && result.status < 128, "\(arguments): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains(mention), "\(arguments): \(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: missing), "\(arguments) left a file")
            }

            let played = temp.file("played.wav")
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: played))
            let tone = try temp.writeAudio("short.wav", Signals.constant(0.1, frames: 4800))
            let play = try CLI.run(["play", tone, "--record", played, "--no-connect", "--server", server.name])
            #expect(play.status == 1)
            #expect(play.stderr.contains("\(played) exists"), "\(play.stderr)")
            #expect(try String(contentsOfFile: played, encoding: .utf8) == "keep me")

            // --record onto an input, by any path to it, is refused even with --force.
            let before = try Data(contentsOf: URL(fileURLWithPath: tone))
            let link = temp.file("link.wav")
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: tone)
            for target in [tone, link, temp.path + "/./short.wav"] {
                let onto = try CLI.run(["play", tone, "--record", target, "--force", "--no-connect", "--server", server.name])
                #expect(onto.status == 64, "\(target): \(onto.stderr)")
                #expect(onto.stderr.contains("the same file as the input"), "\(onto.stderr)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: tone)) == before)
        }

        @Test("Ctrl-C ends play and record on a frozen server (SIGSTOP): a watchdog exits 130 within seconds; a second signal at once")
        func frozenServer() throws {
            let server = try JACKServer()
            let tone = try temp.writeAudio("tone.wav", Signals.constant(0.1, frames: 48000))
            for (index, arguments) in [["play", tone, "--loop", "--no-connect"], ["record", "-o", temp.file("frozen.wav"), "--port", "system:capture_1"]].enumerated() {
                let running = try CLI.spawn(arguments + ["--server", server.name])
                #expect(server.waitForPorts(matching: "^lockstep"), "lockstep never registered its ports")
                Foundation.kill(server.pid, SIGSTOP)
                defer { Foundation.kill(server.pid, SIGCONT) }
                #expect(ThreadedTestDevice.wait(timeout: 5) { Self.processState(server.pid) == "T" })
                running.send(SIGINT)
                if index == 1 {
                    // A wait for time: two signals sent at once reach the handler as one.
                    usleep(300_000)
                    running.send(SIGINT)
                }
                let result = running.wait(timeout: 15)
                #expect(result.status == 130, "\(arguments[0]): \(result.status) \(result.stderr)")
                let reason = index == 0 ? "did not stop within 5 s" : "a second signal arrived"
                #expect(result.stderr.contains(reason), "\(arguments[0]): \(result.stderr)")
                Foundation.kill(server.pid, SIGCONT)
                #expect(server.waitForPorts(matching: "^lockstep", present: false), "the stopped client's ports stayed")
            }
        }

        @Test("a FLAC take killed with SIGKILL keeps every complete block: it decodes to an unbroken ramp, and render --accept-truncated converts it")
        func killedFLACStaysReadable() throws { try retryingOnXruns("LifecycleTests", killedFLACRun) }

        func killedFLACRun(_ xrun: XrunFlag) throws {
            let server = try JACKServer()
            let step: Float = 1.0 / 8_388_608                  // one 24-bit step: exact in the file
            let source = try JACKRampSource(server: server, channels: 1, signal: .ramp(start: 1, step: step))
            try source.start()
            let take = temp.newFile("take.flac")
            let running = try CLI.spawn(["record", "-o", take, "--port", source.portNames[0], "--server", server.name,
                                         "--sample-format", "s24"])
            // A ramp compresses to almost nothing: wait for the file, then for 1.5 s of recording.
            #expect(ThreadedTestDevice.wait(timeout: 10) { FileManager.default.fileExists(atPath: take) })
            let played = source.framesPlayed
            #expect(ThreadedTestDevice.wait(timeout: 10) { source.framesPlayed >= played + 72000 })
            running.send(SIGKILL)
            _ = running.wait(timeout: 10)
            let reader = try AudioFileReader(path: take)
            #expect(reader.isTruncated)                        // the header never got its length
            var samples = [Float](repeating: 0, count: Int(reader.frameCount))
            let got = try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
            #expect(got == Int(reader.frameCount))
            #expect(got > 24000, "only \(got) frames survived")
            // Consecutive ramp values (24-bit holds these exactly): nothing garbled, nothing missing.
            let breaks = (1..<got).filter { samples[$0] - samples[$0 - 1] != step }
            // The recorder fills frames the server skipped in an xrun with silence.
            xrun.set(source.xrunCount > 0)
            #expect(breaks.isEmpty, "the ramp breaks at \(breaks.prefix(3))")
            let fixed = temp.newFile("fixed.wav")
            let refused = try CLI.run(["render", take, "-o", fixed, "--channels", "1"])
            #expect(refused.status == 1)
            let converted = try CLI.run(["render", take, "-o", fixed, "--channels", "1", "--accept-truncated"])
            #expect(converted.status == 0, "\(converted.stderr)")
            #expect(converted.stderr.contains("warning: \(take)"))
            #expect(try readAudio(fixed).samples == samples)
        }

        @Test("record: SIGTERM closes the file, prints the summary and exits 143")
        func recordTerminated() throws {
            let server = try JACKServer()
            let source = try JACKRampSource(server: server, channels: 1)
            try source.start()
            let take = temp.file("take.wav")
            let running = try CLI.spawn(["record", "-o", take, "--port", source.portNames[0], "--server", server.name, "--json"])
            #expect(ThreadedTestDevice.wait(timeout: 10) {
                ((try? FileManager.default.attributesOfItem(atPath: take)[.size] as? Int) ?? 0) > 100_000
            })
            running.send(SIGTERM)
            let result = running.wait(timeout: 10)
            #expect(result.status == 143, "\(result.stderr)")
            let line = try #require(result.stdout.split(separator: "\n").last)
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(summary["interrupted"] as? Bool == true)
            let frames = try #require(summary["frames"] as? Int)
            #expect(try AudioFileReader(path: take).frameCount == Int64(frames))
        }
    }
}
