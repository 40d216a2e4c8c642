import Foundation
import Lockstep
import LockstepSession
import LockstepShow
import LockstepTestSupport
import Testing

/// ``OutputHasher``, ``OutputComparison`` and their link messages, offline: the hashes are those
/// of the samples rendered, block by block of session samples; a comparison finds a differing
/// block, and the other side's samples its first differing sample.
@Suite("Output hashes of a show link (offline)")
struct OutputHasherTests {
    static let text = """
        channels: 2
        layers: { bed: { channel_map: "1:1" }, fx: { channel_map: "1:2" } }
        cues:
          - { name: bed, layer: bed, file: bed.wav, at: 0 }
          - { name: hit, layer: fx, file: hit.wav, at: 0.1 }
        """

    /// A show rendered 40 000 frames, hashed; its output (2 channels interleaved).
    static func hashed() throws -> (OfflineShow, OutputHasher) {
        let show = try OfflineShow(text, audio: [("bed.wav", Signals.ramp(frames: 48000, start: 1, step: 1.0 / 65536)),
                                                 ("hit.wav", Signals.ramp(frames: 9000, start: 7, step: 1.0 / 4096))], channels: 2)
        let hasher = try OutputHasher(engine: show.engine, channels: 2, player: { [player = show.player] in player })
        try show.render(40000)
        let blocks = 40000 / OutputHasher.blockFrames
        let deadline = Date().addingTimeInterval(10)
        while hasher.hashes(of: Int64((blocks - 1) * OutputHasher.blockFrames)) == nil && Date() < deadline { usleep(10_000) }
        return (show, hasher)
    }

    @Test("every whole block of session samples is hashed as the samples rendered on it, channel by channel, and kept")
    func hashesAreTheRenderedSamples() throws {
        let (show, hasher) = try Self.hashed()
        defer { hasher.stop() }
        let frames = OutputHasher.blockFrames
        let fresh = hasher.takeFresh()
        #expect(fresh.map(\.start) == (0..<(40000 / frames)).map { Int64($0 * frames) })
        #expect(hasher.takeFresh().isEmpty, "taken once")
        for block in fresh {
            let samples = Array(show.output[Int(block.start) * 2..<(Int(block.start) + frames) * 2])
            #expect(block.hashes == OutputHasher.hashes(of: samples, channels: 2), "block \(block.start)")
            #expect(hasher.samples(of: block.start) == samples)
        }
        #expect(Set(fresh[1].hashes).count == 2, "the two outputs hash apart")
    }

    @Test("a comparison: the same hashes agree; one block that differs starts a divergence and the next agrees again; the other side's samples give the first differing sample and output")
    func comparisonFindsTheSample() throws {
        let (_, hasher) = try Self.hashed()
        defer { hasher.stop() }
        let mine = hasher.takeFresh()
        let comparison = OutputComparison(hasher: hasher)
        var theirs = mine
        theirs[5].hashes[1] ^= 1
        comparison.receive(theirs)
        let start = Int64(5 * OutputHasher.blockFrames)
        #expect(comparison.compare() == [.diverged(start: start, outputs: [2]), .agrees(start: start + 4096)])
        #expect(comparison.compare().isEmpty, "each block compared once")
        #expect(comparison.tally.compared == mine.count && comparison.tally.differing == 1 && comparison.tally.first == nil)
        var samples = try #require(hasher.samples(of: start))
        samples[1234 * 2 + 1] = 0.5
        #expect(comparison.exact(start: start, samples: samples) == OutputComparison.Divergence(position: start + 1234, outputs: [2]))
        #expect(comparison.tally.first?.position == start + 1234)
        #expect(comparison.exact(start: start, samples: try #require(hasher.samples(of: start))) == nil, "the same samples: no divergence")
        // A playing of the block well apart in time (before a seek or a reset) is not compared.
        var later = mine[6]
        later.time += 5
        later.hashes[0] ^= 1
        comparison.receive([later])
        #expect(comparison.compare().isEmpty && comparison.tally.compared == mine.count)
    }

    @Test("hashes, samples and a backup's position cross the link exactly (64-bit hashes as hex, every float's bits: -0, NaN, subnormals)")
    func linkMessages() throws {
        let block = OutputHasher.BlockHash(start: 8192, hashes: [.max, 0, 0xcbf2_9ce4_8422_2325], time: 1_780_000_000.125)
        guard case .hashes(let blocks) = try ShowLink.decode(ShowLink.encode(.hashes([block])).dropLast()) else {
            Issue.record("not hashes")
            return
        }
        #expect(blocks == [block])
        let samples: [Float] = [-0.0, .nan, .leastNonzeroMagnitude, 1, -.greatestFiniteMagnitude, .infinity]
        guard case .samples(let start, let back) = try ShowLink.decode(ShowLink.encode(.samples(start: 4096, samples: samples)).dropLast()) else {
            Issue.record("not samples")
            return
        }
        #expect(start == 4096 && back.map(\.bitPattern) == samples.map(\.bitPattern))
        #expect(throws: LinkError.self) { try ShowLink.decode(Array(#"{"kind":"hashes","blocks":[{"start":0,"hashes":["xyz"],"time":0}]}"#.utf8)) }
        #expect(throws: LinkError.self) { try ShowLink.decode(Array(#"{"kind":"samples","start":0,"data":"AAA"}"#.utf8)) }
        // A backup's position: its offset and its steering (none without --free-clock).
        for message in [ShowLink.Message.position(offsetMilliseconds: -0.125, steeringPPM: -1009.3, driftPPM: -998.7),
                        .position(offsetMilliseconds: 3, steeringPPM: nil, driftPPM: nil)] {
            #expect(try ShowLink.decode(ShowLink.encode(message).dropLast()) == message)
        }
        #expect(throws: LinkError.self) { try ShowLink.decode(Array(#"{"kind":"position"}"#.utf8)) }
    }
}
