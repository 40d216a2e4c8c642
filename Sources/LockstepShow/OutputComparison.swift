import Foundation
import Synchronization

/// One side of a show link comparing its output with the other side's, block by block
/// (``OutputHasher``): the peer's hashes come in (``receive(_:)``), each is compared once this
/// side has hashed the same block (``compare()``), and a block that differs after one that did
/// not (or the first) starts a divergence. For it this side sends its own samples of that block,
/// and the peer's samples of it (``exact(start:samples:)``) give the first differing session
/// sample and the outputs that differ.
public final class OutputComparison: Sendable {
    /// What a comparison found.
    public enum Finding: Sendable, Hashable {
        /// The block at session sample `start` differs on `outputs` (numbered from 1), and the
        /// block before it did not: a divergence starts there. Send this side's samples of it.
        case diverged(start: Int64, outputs: [Int])
        /// The block at `start` is the same again after differing ones.
        case agrees(start: Int64)
    }

    /// A divergence found to the sample.
    public struct Divergence: Sendable, Hashable {
        /// The first session sample that differs.
        public var position: Int64
        /// The outputs (numbered from 1) that differ in its block.
        public var outputs: [Int]

        /// Creates a divergence.
        public init(position: Int64, outputs: [Int]) {
            self.position = position
            self.outputs = outputs
        }
    }

    /// What has been compared so far.
    public struct Tally: Sendable, Hashable {
        /// Blocks compared.
        public var compared = 0
        /// Blocks that differed.
        public var differing = 0
        /// The first divergence found to the sample, if any.
        public var first: Divergence?
    }

    /// Seconds a peer's hash waits for this side's block before it is let go.
    public static let patience = 10.0
    /// Seconds apart by the system clock that two sides' hashes of a block may be and still be
    /// of the same playing of it (not one before a seek or reset and one after).
    public static let tolerance = 0.25

    private struct State {
        var peer: [Int64: (block: OutputHasher.BlockHash, arrived: Date)] = [:]
        var differing: Set<Int64> = []
        var tally = Tally()
    }
    private let state = Mutex(State())
    private let hasher: OutputHasher

    /// Compares `hasher`'s blocks with a peer's.
    public init(hasher: OutputHasher) { self.hasher = hasher }

    /// The tally.
    public var tally: Tally { state.withLock { $0.tally } }

    /// Takes the peer's hashes.
    public func receive(_ blocks: [OutputHasher.BlockHash]) {
        let now = Date()
        state.withLock { state in
            for block in blocks { state.peer[block.start] = (block, now) }
        }
    }

    /// Compares every peer block this side has hashed too, in session order.
    public func compare() -> [Finding] {
        let now = Date()
        return state.withLock { state in
            var findings: [Finding] = []
            for start in state.peer.keys.sorted() {
                guard let (block, arrived) = state.peer[start] else { continue }
                let theirs = block.hashes
                // This side's playing of the block, if it played it at about the same time; one
                // from well before may yet be played again (wait), one from well after will not.
                guard let own = hasher.hashes(of: start), own.time > block.time - Self.tolerance else {
                    if now.timeIntervalSince(arrived) > Self.patience { state.peer[start] = nil }
                    continue
                }
                state.peer[start] = nil
                guard own.time < block.time + Self.tolerance else { continue }
                let mine = own.hashes
                state.tally.compared += 1
                let before = start - Int64(OutputHasher.blockFrames)
                let outputs = zip(mine, theirs).enumerated().filter { $0.element.0 != $0.element.1 }.map { $0.offset + 1 }
                    + (mine.count == theirs.count ? [] : Array(min(mine.count, theirs.count) + 1...max(mine.count, theirs.count)))
                if outputs.isEmpty {
                    if state.differing.remove(before) != nil { findings.append(.agrees(start: start)) }
                } else {
                    state.tally.differing += 1
                    if state.differing.remove(before) == nil { findings.append(.diverged(start: start, outputs: outputs)) }
                    state.differing.insert(start)
                }
            }
            return findings
        }
    }

    /// Compares (``compare()``), handing `send` this side's samples of each block where a
    /// divergence starts, for the peer to find its first differing sample.
    public func compare(sending send: (ShowLink.Message) -> Void) -> [Finding] {
        let findings = compare()
        for case .diverged(let start, _) in findings {
            if let samples = hasher.samples(of: start) { send(.samples(start: start, samples: samples)) }
        }
        return findings
    }

    /// The first sample that differs between this side's block at `start` and the peer's
    /// `samples` of it (nil: this side no longer keeps the block, or they are the same).
    public func exact(start: Int64, samples: [Float]) -> Divergence? {
        guard let mine = hasher.samples(of: start) else { return nil }
        let channels = hasher.channelCount
        var first: Int?
        var outputs: Set<Int> = []
        for index in 0..<min(mine.count, samples.count) where mine[index].bitPattern != samples[index].bitPattern {
            if first == nil { first = index }
            outputs.insert(index % channels + 1)
        }
        if first == nil, mine.count != samples.count { first = min(mine.count, samples.count) }
        guard let first else { return nil }
        let frame = first / channels
        let divergence = Divergence(position: start + Int64(frame), outputs: outputs.sorted())
        state.withLock { state in
            if state.tally.first.map({ divergence.position < $0.position }) ?? true { state.tally.first = divergence }
        }
        return divergence
    }
}
