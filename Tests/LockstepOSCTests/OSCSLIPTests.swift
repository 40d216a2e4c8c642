import LockstepOSC
import Testing

@Suite("SLIP framing (OSC 1.1 over TCP)")
struct OSCSLIPTests {
    @Test("encoding escapes END and ESC and frames the packet with END on both sides")
    func encode() {
        #expect(SLIP.encode([0x01, 0xC0, 0xDB, 0x02]) == [0xC0, 0x01, 0xDB, 0xDC, 0xDB, 0xDD, 0x02, 0xC0])
        #expect(SLIP.encode([]) == [0xC0, 0xC0])
    }

    @Test("a frame split over reads at every byte, an escape split between two reads, several frames in one read, empty frames skipped")
    func splitFrames() {
        let packets: [[UInt8]] = [Array("/go\0,\0\0\0".utf8), [0xC0, 0xDB, 0xC0, 0xDB, 0xDC, 0xDD], [0xDB], [7]]
        let stream = packets.flatMap(SLIP.encode) + [0xC0, 0xC0]
        // One byte a read: every split point, the escapes' among them.
        var decoder = SLIPDecoder()
        var frames: [[UInt8]] = []
        for byte in stream {
            for event in decoder.feed([byte]) {
                guard case .frame(let frame) = event else { Issue.record("unexpected \(event)"); continue }
                frames.append(frame)
            }
        }
        #expect(frames == packets)
        // All in one read.
        var whole = SLIPDecoder()
        #expect(whole.feed(stream) == packets.map(SLIPDecoder.Event.frame))
        // Every two-piece split.
        for cut in 0...stream.count {
            var split = SLIPDecoder()
            let events = split.feed(stream[..<cut]) + split.feed(stream[cut...])
            #expect(events == packets.map(SLIPDecoder.Event.frame), "cut at \(cut)")
        }
        // A frame's bytes held until its END comes.
        var pending = SLIPDecoder()
        #expect(pending.feed([0xC0, 1, 2, 0xDB]).isEmpty && pending.pendingCount == 2)
        #expect(pending.feed([0xDC, 0xC0]) == [.frame([1, 2, 0xC0])])
    }

    @Test("a frame over the limit is reported once and dropped up to its END; the next frame decodes")
    func oversized() {
        var decoder = SLIPDecoder(maximumFrameSize: 8)
        #expect(decoder.feed(SLIP.encode(Array(repeating: 1, count: 8))) == [.frame(Array(repeating: 1, count: 8))])
        #expect(decoder.feed([0xC0] + Array(repeating: 2, count: 9)) == [.oversized])
        #expect(decoder.feed(Array(repeating: 2, count: 100)).isEmpty)
        #expect(decoder.feed([0xC0, 3, 0xC0]) == [.frame([3])])
        // Escaped bytes count after unescaping: 8 ENDs, escaped, fit.
        #expect(decoder.feed(SLIP.encode(Array(repeating: 0xC0, count: 8))) == [.frame(Array(repeating: 0xC0, count: 8))])
    }

    @Test("ESC followed by anything but ESC_END or ESC_ESC drops the frame with an error; ESC END too")
    func badEscape() {
        var decoder = SLIPDecoder()
        #expect(decoder.feed([0xC0, 1, 0xDB, 0x41, 2, 0xC0, 5, 0xC0]) == [.badEscape(0x41), .frame([5])])
        #expect(decoder.feed([1, 0xDB, 0xC0, 6, 0xC0]) == [.badEscape(0xC0), .frame([6])])
    }

    @Test("any bytes, any splits: what is encoded comes back whole")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let packets = (0..<Int.random(in: 1...5, using: &generator)).map { _ in
                (0..<Int.random(in: 1...300, using: &generator)).map { _ in [0xC0, 0xDB, 0xDC, 0xDD, UInt8.random(in: 0...255, using: &generator)].randomElement(using: &generator)! }
            }
            var stream = packets.flatMap(SLIP.encode)[...]
            var decoder = SLIPDecoder()
            var events: [SLIPDecoder.Event] = []
            while !stream.isEmpty {
                let piece = stream.prefix(Int.random(in: 1...64, using: &generator))
                events += decoder.feed(piece)
                stream = stream.dropFirst(piece.count)
            }
            #expect(events == packets.map(SLIPDecoder.Event.frame))
        }
    }
}
