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

    @Test("a value that is not [HOST:]PORT, a passcode without --osc or --osc-tcp, a reply port without --osc, is a usage error (64)")
    func usage() throws {
        let bad = try CLI.run(["session", "run", session, "--osc", "localhost:http", "--start-server", "never"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--osc 'localhost:http': 'http' is not a port (0 to 65535); write PORT, HOST:PORT or [IPV6]:PORT"))
        let lonely = try CLI.run(["session", "run", session, "--osc-passcode", "x", "--start-server", "never"])
        #expect(lonely.status == 64 && lonely.stderr.contains("--osc-passcode needs --osc [HOST:]PORT or --osc-tcp [HOST:]PORT"))
        let replyPort = try CLI.run(["session", "run", session, "--osc-tcp", "9000", "--osc-reply-port", "9001", "--start-server", "never"])
        #expect(replyPort.status == 64 && replyPort.stderr.contains("--osc-reply-port needs --osc [HOST:]PORT (TCP replies come back on the connection)"))
        let tcp = try CLI.run(["session", "run", session, "--osc-tcp", "[::1", "--start-server", "never"])
        #expect(tcp.status == 64 && tcp.stderr.contains("--osc-tcp '[::1': the IPv6 address has no closing ']'"), "\(tcp.stderr)")
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
        let listener = try OSCTCPServer.Listener(binding: OSCEndpoint(host: "127.0.0.1", port: 0))
        let tcp = try CLI.run(["session", "run", session, "--osc-tcp", "127.0.0.1:\(listener.localAddress.port)", "--start-server", "dummy"])
        #expect(tcp.status == 1)
        #expect(tcp.stderr.contains("lockstep: session run: OSC: cannot listen on 127.0.0.1:\(listener.localAddress.port) (TCP): Address already in use; the port is in use (QLab, another Lockstep, an OSC tool?); choose another with --osc-tcp HOST:PORT"), "\(tcp.stderr)")
        #expect(!tcp.stderr.contains("started jackd"))
    }
}
