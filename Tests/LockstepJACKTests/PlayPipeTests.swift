import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

extension JACKTests {
    /// `sox … | lockstep play -`: standard input is played as it arrives, not after it ends.
    @Suite("lockstep play - (a pipe, live)", .serialized)
    struct PlayPipeTests {
        let temp: TemporaryTestDirectory

        init() throws {
            temp = try TemporaryTestDirectory(prefix: "lockstep-play-pipe")
        }

        @Test("play - starts while its input pipe is still open, plays what arrives, and ends when the pipe does")
        func playsWhileInputIsOpen() throws { try retryingOnXruns("PlayPipeTests", pipeRun) }

        /// One run of ``playsWhileInputIsOpen()``.
        func pipeRun(_ xrun: XrunFlag) throws {
            // A WAV as sox writes one into a pipe (length "unknown"): 2 s of a 0.25 DC-shifted
            // sine, never silent, so the first sound heard is the stream's first frame.
            let sox = try CLI.run(["-c", "sox -D -n -r 48000 -c 1 -b 16 -t wav - synth 2 sine 440 gain -12 dcshift 0.25 2>/dev/null | cat > '\(temp.file("stream.wav"))'"],
                                  executable: "/bin/bash")
            #expect(sox.status == 0, "\(sox.stderr)")
            let stream = try Data(contentsOf: URL(fileURLWithPath: temp.file("stream.wav")))
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 20)
            try capture.start()
            let running = try CLI.spawn(["play", "-", "--server", server.name, "--client-name", "play-pipe",
                                         "--connect", capture.portNames[0], "--connect", capture.portNames[1]],
                                        withInput: true)
            // The first second, then nothing more for a while: the pipe stays open.
            let firstSecond = stream.prefix(44 + 96_000)
            running.send(data: Data(firstSecond))
            let heard = capture.wait(timeout: 15) { capture.firstNonSilentRecordedFrame(channel: 0) != nil }
            #expect(heard, "nothing played while the input was open: \(running.errorOutputSoFar)")
            #expect(running.isRunning)
            // The second second, then the end of the stream.
            running.send(data: Data(stream.dropFirst(44 + 96_000)))
            running.closeInput()
            let result = running.wait(timeout: 30)
            #expect(result.status == 0, "\(result.stderr)")
            xrun.set(capture.xrunCount > 0)
            // What was heard is the stream: 2 s of it, sample for sample.
            let live = capture.channel(0)
            let first = try #require(capture.firstNonSilentRecordedFrame(channel: 0))
            let expected = stream.dropFirst(44).withUnsafeBytes { raw in
                raw.bindMemory(to: Int16.self).map { Float(Int16(littleEndian: $0)) / 32768 }
            }
            let compared = min(expected.count, live.count - first)
            #expect(compared == 96_000, "heard \(compared) frames of 96000")
            let same = Array(live[first..<(first + compared)]) == Array(expected.prefix(compared))
            let firstDifferent = (0..<compared).first { live[first + $0] != expected[$0] }
            #expect(same, "the frames played are not the stream's: first different at stream frame \(firstDifferent ?? -1) of \(compared); capture xruns \(capture.xrunCount); play: \(result.stderr)")
        }
    }
}
