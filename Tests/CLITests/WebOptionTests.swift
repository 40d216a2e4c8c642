import Foundation
import LockstepOSC
import LockstepTestSupport
import Testing

/// `--web` on the command line: bare (127.0.0.1:8080), with a port, with a host and port, before
/// or after the file; the address is bound before any JACK server starts, so a port held by this
/// test shows which address each form asked for without a server.
@Suite("session run and play --web [[HOST:]PORT] (the built binary, no JACK server needed)", .serialized)
struct WebOptionTests {
    let temp: TemporaryTestDirectory
    let session: String

    init() throws {
        temp = try TemporaryTestDirectory(prefix: "lockstep-cli-web")
        try FileFixtures.writeWAV(path: temp.file("a.wav"), samples: Signals.constant(0.1, frames: 480), format: .init(sampleRate: 48000, channelCount: 1))
        session = temp.file("show.yaml")
        try FileFixtures.writeText(path: session, "cues: [ { file: a.wav } ]\n")
    }

    /// What `arguments` said, run in the session's folder with 127.0.0.1:8080 and another port
    /// held (by this test, or by whatever already holds 8080): the web server's refusal names the
    /// address it tried.
    func held(_ arguments: [String]) throws -> CLI.Result {
        try CLI.run(arguments + ["--start-server", "never"], in: temp.path)
    }

    @Test("--web alone means 127.0.0.1:8080, before or after the file; PORT and HOST:PORT as given; help says so")
    func bare() throws {
        // Hold 127.0.0.1:8080 (if another program holds it already, it is held all the same).
        let standard = try? OSCTCPServer.Listener(binding: OSCEndpoint(host: "127.0.0.1", port: 8080))
        let other = try OSCTCPServer.Listener(binding: OSCEndpoint(host: "127.0.0.1", port: 0))
        let port = other.localAddress.port
        defer { _ = (standard, other) }
        let inUse = "cannot listen there: the port is in use"
        for arguments in [["session", "run", session, "--web"], ["session", "run", "--web", session], ["session", "run", "--web", "show.yaml"],
                          ["session", "run", session, "--web", "--json"], ["play", temp.file("a.wav"), "--web"],
                          ["play", "--web", "a.wav"]] {
            let result = try held(arguments)
            #expect(result.status == 1 && result.stderr.contains("--web 127.0.0.1:8080: \(inUse)"), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("jackd"), "\(arguments): \(result.stderr)")
        }
        for (value, address) in [("\(port)", "127.0.0.1:\(port)"), ("127.0.0.1:\(port)", "127.0.0.1:\(port)"), ("localhost:\(port)", "localhost:\(port)")] {
            for arguments in [["session", "run", session, "--web", value], ["session", "run", session, "--web=\(value)"],
                              ["session", "run", "--web", value, session]] {
                let result = try held(arguments)
                #expect(result.status == 1 && result.stderr.contains("--web \(address): \(inUse)"), "\(arguments): \(result.stderr)")
            }
        }
        // Help: the value is optional, and a bare --web's address is written out.
        let help = try CLI.run(["session", "run", "--help"])
        let flat = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(flat.contains("--web [<[HOST:]PORT>]") && flat.contains("--web alone serves it on 127.0.0.1:8080")
                && flat.contains("(default as flag: 127.0.0.1:8080)"), "\(help.stdout)")
    }

    @Test("a value that is not [HOST:]PORT is a usage error (64) saying how to write it; --web-token needs --web")
    func usage() throws {
        let bad = try CLI.run(["session", "run", session, "--web", "80a0", "--start-server", "never"])
        #expect(bad.status == 64 && bad.stderr.contains("--web '80a0' is not [HOST:]PORT; write PORT, HOST:PORT or [IPV6]:PORT"), "\(bad.stderr)")
        #expect(!bad.stderr.contains("a bare --web"))
        // A word that is no address and no file: probably a file name mistyped after a bare --web.
        let missing = try CLI.run(["session", "run", "--web", "missing.yaml", session, "--start-server", "never"])
        #expect(missing.status == 64 && missing.stderr.contains("--web 'missing.yaml' is not [HOST:]PORT")
                && missing.stderr.contains("a bare --web takes the word after it for its address unless that word is an existing file"), "\(missing.stderr)")
        let token = try CLI.run(["session", "run", session, "--web-token", "s3cret", "--start-server", "never"])
        #expect(token.status == 64 && token.stderr.contains("--web-token needs --web [HOST:]PORT"), "\(token.stderr)")
        let empty = try CLI.run(["session", "run", session, "--web", "--web-token", "", "--start-server", "never"])
        #expect(empty.status == 64 && empty.stderr.contains("--web-token is empty"), "\(empty.stderr)")
    }

    @Test("--osc and --osc-tcp alone mean 127.0.0.1:53000 (QLab's port), before or after the file; with a value as given")
    func bareOSC() throws {
        // Hold 127.0.0.1:53000 over UDP and TCP (if another program holds it, it is held all the same).
        let udp = try? OSCUDPSocket(binding: OSCEndpoint(host: "127.0.0.1", port: 53000))
        let tcp = try? OSCTCPServer.Listener(binding: OSCEndpoint(host: "127.0.0.1", port: 53000))
        let other = try OSCUDPSocket(binding: OSCEndpoint(host: "127.0.0.1", port: 0))
        let port = other.localAddress.port
        defer { _ = (udp, tcp, other) }
        for (option, kind) in [("--osc", "UDP"), ("--osc-tcp", "TCP")] {
            for arguments in [["session", "run", session, option], ["session", "run", option, session], ["session", "run", option, "show.yaml"],
                              ["session", "run", session, option, "--json"], ["play", option, "a.wav"]] {
                let result = try held(arguments)
                #expect(result.status == 1 && result.stderr.contains("cannot listen on 127.0.0.1:53000 (\(kind))"), "\(arguments): \(result.stderr)")
                #expect(!result.stderr.contains("jackd"), "\(arguments): \(result.stderr)")
            }
        }
        let given = try held(["session", "run", session, "--osc", "\(port)"])
        #expect(given.status == 1 && given.stderr.contains("cannot listen on 127.0.0.1:\(port) (UDP)"), "\(given.stderr)")
        // --osc takes a bare HOST too (port 53000): a word that is no file is a host name.
        let mistyped = try CLI.run(["session", "run", "--osc", "missing.yaml", session, "--start-server", "never"])
        #expect(mistyped.status == 1 && mistyped.stderr.contains("cannot resolve 'missing.yaml'"), "\(mistyped.stderr)")
        let help = try CLI.run(["session", "run", "--help"])
        let flat = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(flat.contains("--osc [<[HOST:]PORT>]") && flat.contains("--osc alone listens on 127.0.0.1:53000")
                && flat.contains("--osc-tcp [<[HOST:]PORT>]"), "\(help.stdout)")
    }
}
