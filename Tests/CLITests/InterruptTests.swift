import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// Offline commands as processes people kill: a signal mid-render leaves nothing behind and never
/// touches an existing file; even SIGKILL leaves nothing (the file being written has no name).
@Suite("Signals against render and session render", .serialized)
struct InterruptTests {
    let temp: TemporaryTestDirectory

    init() throws { temp = try TemporaryTestDirectory(prefix: "lockstep-interrupt") }

    /// A long 44.1 kHz mono file (rendering six layers of it at 48 kHz takes seconds).
    func longFile() throws -> String {
        let path = temp.file("long.wav")
        let writer = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 44100, channelCount: 1, sampleFormat: .int16))
        let second = Signals.sine(frequency: 300, sampleRate: 44100, frames: 44100, amplitude: 0.1)
        for _ in 0..<300 {
            try second.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 44100) }
        }
        try writer.close()
        return path
    }

    /// The hidden temporary files in the folder.
    func temporaries() throws -> [String] { try temp.contents().filter { $0.hasSuffix(".tmp-render") } }

    /// Waits until the process `pid` has an unnamed (`O_TMPFILE`) or hidden temporary file in the
    /// folder open and has written more than a megabyte to it.
    func waitForTemporary(_ pid: pid_t) -> Bool {
        ThreadedTestDevice.wait(timeout: 20) {
            let folder = "/proc/\(pid)/fd"
            guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return false }
            return descriptors.contains { fd in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(fd)"),
                      target.hasPrefix(temp.path + "/"), target.hasSuffix("(deleted)") || target.hasSuffix(".tmp-render") else { return false }
                var info = stat()
                return stat("\(folder)/\(fd)", &info) == 0 && info.st_size > 1_000_000
            }
        }
    }

    @Test("SIGINT, SIGTERM, SIGHUP and SIGQUIT mid-render: exit 128+N, no temporary file, the existing output untouched",
          arguments: [SIGINT, SIGTERM, SIGHUP, SIGQUIT])
    func signalMidRender(signal: Int32) throws {
        let long = try longFile()
        let output = temp.file("mix.wav")
        try Data("an earlier mix".utf8).write(to: URL(fileURLWithPath: output))
        let running = try CLI.spawn(["render", long, long, long, long, long, long, "-o", output])
        #expect(waitForTemporary(running.pid), "no temporary file appeared: \(running.errorOutputSoFar)")
        running.send(signal)
        let result = running.wait(timeout: 20)
        #expect(result.status == 128 + signal, "\(result.stderr)")
        #expect(result.stderr.contains("interrupted"))
        #expect(try temporaries().isEmpty)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "an earlier mix")
    }

    @Test("session render: SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGKILL leave no temporary file; a new output is not made, an existing one is untouched",
          arguments: [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGKILL])
    func sessionRender(signal: Int32) throws {
        let long = try longFile()
        let session = temp.file("show.yaml")
        try """
            layers:
              a: {}
              b: {}
            cues:
              - { name: one, layer: a, file: \(long), at: 0 }
              - { name: two, layer: b, file: \(long), at: 0.5 }
            """.write(toFile: session, atomically: true, encoding: .utf8)
        for existing in [false, true] {
            let output = temp.file("show.wav")
            if existing { try Data("an earlier show".utf8).write(to: URL(fileURLWithPath: output)) }
            let running = try CLI.spawn(["session", "render", session, "-o", output])
            #expect(waitForTemporary(running.pid), "no temporary file appeared: \(running.errorOutputSoFar)")
            running.send(signal)
            let result = running.wait(timeout: 20)
            if signal == SIGKILL {
                #expect(result.uncaughtSignal == SIGKILL)
            } else {
                #expect(result.status == 128 + signal, "\(result.stderr)")
                #expect(result.stderr.contains("interrupted"), "\(result.stderr)")
            }
            #expect(try temp.contents().sorted() == (existing ? ["long.wav", "show.wav", "show.yaml"] : ["long.wav", "show.yaml"]))
            if existing { #expect(try String(contentsOfFile: output, encoding: .utf8) == "an earlier show") }
        }
    }

    @Test("SIGKILL mid-render leaves nothing: the file being written has no name until it is complete")
    func killedRenderLeavesNothing() throws {
        let long = try longFile()
        let output = temp.file("mix.wav")
        let running = try CLI.spawn(["render", long, long, long, long, long, long, "-o", output])
        #expect(waitForTemporary(running.pid), "no temporary file appeared: \(running.errorOutputSoFar)")
        running.send(SIGKILL)
        _ = running.wait(timeout: 10)
        #expect(try temp.contents() == ["long.wav"])
        let again = try CLI.run(["render", long, "-o", output, "--offset", "0"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try temp.contents().sorted() == ["long.wav", "mix.wav"])
    }

    @Test("info on a file with a valid header and no frames: one error naming it, exit 1")
    func emptyFile() throws {
        let path = temp.file("empty.wav")
        let writer = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .int16))
        try writer.close()
        let result = try CLI.run(["info", path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(path): the header is valid but the file holds no audio frames"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }
}
