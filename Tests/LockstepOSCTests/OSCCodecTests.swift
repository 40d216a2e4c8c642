import Foundation
import LockstepControl
import LockstepOSC
import Testing

@Suite("OSC messages through liblo: encoding, decoding, and packets that are not OSC")
struct OSCCodecTests {
    @Test("every argument type survives liblo's encoding and decoding")
    func roundTrip() throws {
        let message = OSCMessage("/cue/bell/level", [
            .int32(-7), .int64(1 << 40), .float(-6.5), .double(0.125), .string("bell"), .symbol("sym"), .character(65),
            .blob([1, 2, 3]), .bool(true), .bool(false), .null, .impulse, .timeTag(0x0000_0001_8000_0000), .midi(0, 0x90, 60, 127),
        ])
        let bytes = try message.encoded()
        #expect(bytes.count % 4 == 0)
        let decoded = try bytes.withUnsafeBytes { try OSCMessage(decoding: $0) }
        #expect(decoded == message)
        #expect(decoded.arguments.map(\.typeTag) == Array("ihfdsScbTFNItm"))
    }

    @Test("malformed packets are errors that say what is wrong, never a crash")
    func malformed() throws {
        func problem(_ bytes: [UInt8]) -> String? {
            do { _ = try bytes.withUnsafeBytes { try OSCMessage(decoding: $0) }; return nil } catch { return (error as? OSCError)?.message }
        }
        #expect(problem([])?.hasPrefix("the packet is empty") == true)
        #expect(problem(Array("/go".utf8))?.contains("the address is not a terminated, padded OSC string") == true)
        #expect(problem(Array("/go\0".utf8))?.contains("the type tag string is missing") == true)
        #expect(problem(Array("/go\0s\0\0\0".utf8))?.contains("does not start with ','") == true)
        #expect(problem(Array("/go\0,i\0\0\0\0".utf8))?.contains("an argument does not match its type tag") == true)
        #expect(problem(Array("/go\0,\0\0\0junk".utf8))?.contains("the arguments do not fill the packet exactly") == true)
        #expect(problem(Array("go\0\0,\0\0\0".utf8)) == "the address 'go' does not start with '/'; OSC addresses look like /go")
    }

    @Test("random bytes and every truncation of a valid message decode or fail cleanly")
    func fuzz() throws {
        var generator = SystemRandomNumberGenerator()
        var failures = 0
        for length in 0..<2000 {
            let bytes = (0..<(length % 97)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            do { _ = try bytes.withUnsafeBytes { try OSCMessage(decoding: $0) } } catch { failures += 1 }
        }
        #expect(failures > 1900)
        let valid = try OSCMessage("/lockstep/layer/bed/gain", [.float(-6), .string("ramp"), .blob([9, 9, 9, 9, 9])]).encoded()
        for cut in 0..<valid.count {
            var damaged = Array(valid.prefix(cut))
            #expect(throws: OSCError.self) { _ = try damaged.withUnsafeBytes { try OSCMessage(decoding: $0) } }
            damaged = valid
            damaged[cut] ^= 0xff                                       // one byte flipped: decodes or fails, no crash
            _ = try? damaged.withUnsafeBytes { try OSCMessage(decoding: $0) }
        }
    }

    @Test("a bundle is told apart, and the address of a packet is read where there is one")
    func bundlesAndAddresses() throws {
        #expect(Array("#bundle\0\0\0\0\0\0\0\0\u{1}".utf8).withUnsafeBytes { OSCMessage.isBundle($0) })
        #expect(try OSCMessage("/go").encoded().withUnsafeBytes { !OSCMessage.isBundle($0) })
        #expect(try OSCMessage("/cue/a/start").encoded().withUnsafeBytes { OSCMessage.address(of: $0) } == "/cue/a/start")
        #expect(Array("garbage!".utf8).withUnsafeBytes { OSCMessage.address(of: $0) } == nil)
    }
}

@Suite("OSC endpoints and peers")
struct OSCEndpointTests {
    @Test("--osc values: PORT, HOST:PORT, [IPV6]:PORT, HOST; mistakes say how to write it")
    func parse() throws {
        #expect(try OSCEndpoint.parse("53000") == OSCEndpoint(host: "127.0.0.1", port: 53000))
        #expect(try OSCEndpoint.parse("0.0.0.0:9000") == OSCEndpoint(host: "0.0.0.0", port: 9000))
        #expect(try OSCEndpoint.parse("[::1]:9000") == OSCEndpoint(host: "::1", port: 9000))
        #expect(try OSCEndpoint.parse("localhost") == OSCEndpoint(host: "localhost", port: 53000))
        #expect(OSCEndpoint(host: "::1", port: 1).description == "[::1]:1")
        for bad in ["", "70000", "host:port", "::1:9000", "[::1", "[::1]9000", ":9000"] {
            #expect(throws: OSCError.self, "\(bad)") { try OSCEndpoint.parse(bad) }
        }
        let error = #expect(throws: OSCError.self) { try OSCEndpoint.parse("127.0.0.1:x") }
        #expect(error?.message == "--osc '127.0.0.1:x': 'x' is not a port (0 to 65535); write PORT, HOST:PORT or [IPV6]:PORT, e.g. 53000, 127.0.0.1:53000 or 0.0.0.0:53000")
    }

    @Test("loopback or not, and the same host at another port")
    func peers() throws {
        let local = try OSCPeer.resolve(OSCEndpoint(host: "127.0.0.1", port: 53000))
        #expect(local.isLoopback && local.description == "127.0.0.1:53000")
        #expect(local.with(port: 53001).description == "127.0.0.1:53001")
        #expect(try OSCPeer.resolve(OSCEndpoint(host: "127.4.5.6", port: 1)).isLoopback)
        #expect(try OSCPeer.resolve(OSCEndpoint(host: "::1", port: 1)).isLoopback)
        #expect(try OSCPeer.resolve(OSCEndpoint(host: "::ffff:127.0.0.1", port: 1)).isLoopback)
        #expect(try !OSCPeer.resolve(OSCEndpoint(host: "0.0.0.0", port: 1), passive: true).isLoopback)
        #expect(try !OSCPeer.resolve(OSCEndpoint(host: "192.168.1.20", port: 1)).isLoopback)
        #expect(try OSCPeer.resolve(OSCEndpoint(host: "::1", port: 7)).description == "[::1]:7")
    }
}
