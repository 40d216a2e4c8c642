import Foundation
import LockstepOSC
import LockstepTestSupport
import Testing

@Suite("session run --osc options (the built binary, no JACK server needed)")
struct OSCOptionTests {
    let temp: TemporaryTestDirectory
    let session: String

    init() throws {
        temp = try TemporaryTestDirectory(prefix: "lockstep-cli-osc")
        try FileFixtures.writeWAV(path: temp.file("a.wav"), samples: Signals.constant(0.1, frames: 480), format: .init(sampleRate: 48000, channelCount: 1))
        session = temp.file("show.yaml")
        try FileFixtures.writeText(path: session, "cues: [ { file: a.wav } ]\n")
    }

    @Test("a value that is not [HOST:]PORT, or a passcode without --osc, is a usage error (64)")
    func usage() throws {
        let bad = try CLI.run(["session", "run", session, "--osc", "localhost:http", "--start-server", "never"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--osc 'localhost:http': 'http' is not a port (0 to 65535); write PORT, HOST:PORT or [IPV6]:PORT"))
        let lonely = try CLI.run(["session", "run", session, "--osc-passcode", "x", "--start-server", "never"])
        #expect(lonely.status == 64 && lonely.stderr.contains("--osc-passcode and --osc-reply-port need --osc [HOST:]PORT"))
        let port = try CLI.run(["session", "run", session, "--osc", "9000", "--osc-reply-port", "0", "--start-server", "never"])
        #expect(port.status == 64 && port.stderr.contains("--osc-reply-port 0 is not a UDP port; use 1 to 65535"))
    }

    @Test("a port in use fails at once, before any JACK server is started, saying what to do")
    func portInUse() throws {
        let taken = try OSCUDPSocket(binding: OSCEndpoint(host: "127.0.0.1", port: 0))
        let result = try CLI.run(["session", "run", session, "--osc", "127.0.0.1:\(taken.localAddress.port)", "--start-server", "dummy"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("lockstep: session run: OSC: cannot listen on 127.0.0.1:\(taken.localAddress.port) (UDP): Address already in use; the port is in use"))
        #expect(!result.stderr.contains("started jackd"))
    }
}
