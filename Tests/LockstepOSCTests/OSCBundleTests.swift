import Foundation
import LockstepOSC
import Testing

@Suite("OSC bundles and time tags, decoded by liblo")
struct OSCBundleTests {
    func decode(_ bytes: [UInt8]) throws(OSCError) -> OSCBundle {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(OSCError) in try OSCBundle(decoding: raw) } }
        return try result.get()
    }

    func message(_ address: String, _ arguments: [OSCArgument] = []) -> OSCPacket { .message(OSCMessage(address, arguments)) }

    @Test("nested bundles are flattened in order, each message with the time tag of the bundle holding it; arguments survive")
    func nested() throws {
        let outer = OSCTimeTag(rawValue: 0xEEB0_1C1B_8000_0000), inner = OSCTimeTag(rawValue: 0xEEB0_1C1C_0000_0000)
        let packet = OSCPacket.bundle(outer, [
            message("/go", [.string("bell")]),
            .bundle(inner, [message("/cue/horn/start"), message("/lockstep/layer/bed/gain", [.float(-6), .double(2)])]),
            message("/thump"),
        ])
        let bundle = try decode(try packet.encoded())
        #expect(bundle.timeTag == outer && bundle.depth == 2)
        #expect(bundle.entries == [
            .init(timeTag: outer, message: OSCMessage("/go", [.string("bell")])),
            .init(timeTag: inner, message: OSCMessage("/cue/horn/start")),
            .init(timeTag: inner, message: OSCMessage("/lockstep/layer/bed/gain", [.float(-6), .double(2)])),
            .init(timeTag: outer, message: OSCMessage("/thump")),
        ])
    }

    @Test("malformed bundles are refused whole: an element running past the end, a bad message inside a nested bundle, a cut time tag, a zero-length last element")
    func malformed() throws {
        let head = Array("#bundle\0".utf8) + [0, 0, 0, 0, 0, 0, 0, 1]
        let go = try OSCMessage("/go").encoded()
        func problem(_ bytes: [UInt8]) -> String? {
            do { _ = try decode(bytes); return nil } catch { return error.message }
        }
        #expect(problem(head + [0, 0, 0, 64] + go)?.hasPrefix("not a valid OSC bundle: ") == true)
        let badMessage = Array("/go\0,s\0\0".utf8)                              // a string argument that is not there
        let nested = head + [0, 0, 0, UInt8(badMessage.count)] + badMessage
        #expect(problem(head + [0, 0, 0, UInt8(go.count)] + go + [0, 0, 0, UInt8(nested.count)] + nested)?
            .hasPrefix("not a valid OSC bundle: an argument does not match its type tag") == true)
        #expect(problem(Array("#bundle\0".utf8) + [0, 0, 0]) != nil)
        #expect(problem(head + [0, 0, 0, 0]) != nil)
        #expect(problem(head + [0, 0, 0, UInt8(go.count)] + go + [0, 0]) != nil)    // two stray bytes
        let noSlash = try OSCMessage("go").encoded()
        #expect(problem(head + [0, 0, 0, UInt8(noSlash.count)] + noSlash) == "not a valid OSC bundle: the address 'go' does not start with '/'; send a bundle as liblo, QLab or Companion encode it")
    }

    @Test("limits: more than 64 messages, or nesting deeper than 8, is refused")
    func limits() throws {
        let many = OSCPacket.bundle(.immediately, Array(repeating: message("/thump"), count: 65))
        #expect(throws: OSCError.self) { try decode(try many.encoded()) }
        #expect(try decode(try OSCPacket.bundle(.immediately, Array(repeating: message("/thump"), count: 64)).encoded()).entries.count == 64)
        func deep(_ levels: Int) -> OSCPacket { levels == 1 ? .bundle(.immediately, [message("/go")]) : .bundle(.immediately, [deep(levels - 1)]) }
        #expect(try decode(try deep(8).encoded()).depth == 8)
        do {
            _ = try decode(try deep(9).encoded())
            Issue.record("a bundle 9 deep was accepted")
        } catch {
            #expect(error.message == "the bundle nests 9 deep; the limit is 8. Send flatter bundles")
        }
    }

    @Test("time tags: immediately is 1; wall-clock seconds round-trip to the 2^-32 s; host time follows one reading of both clocks")
    func timeTags() {
        #expect(OSCTimeTag.immediately.isImmediate && !OSCTimeTag(rawValue: 2).isImmediate)
        let tag = OSCTimeTag(secondsSince1970: 1_700_000_000.25)
        #expect(tag.rawValue == UInt64(1_700_000_000 + 2_208_988_800) << 32 | 0x4000_0000)
        #expect(tag.secondsSince1970 == 1_700_000_000.25)
        #expect(tag.hostTime(wallNow: 1_700_000_000, hostNow: 5_000_000) == 5_250_000)
        #expect(tag.hostTime(wallNow: 1_700_000_001, hostNow: 5_000_000) == 4_250_000)
        #expect(tag.hostTime(wallNow: 1_700_000_100, hostNow: 5_000_000) == 0)         // (before the host clock began)
        let now = OSCTimeTag.now(plus: 0.3).seconds(after: OSCTimeTag.wallClock())
        #expect(now > 0.29 && now <= 0.3)
    }
}
