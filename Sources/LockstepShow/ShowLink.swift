import Foundation
import LockstepSession
import NIOCore
import NIOExtras

/// The link between a main run of a show and its backup (`session run --main` and
/// `--backup-of`): JSON Lines over TCP.
///
/// The backup opens it with ``Message/hello(passcode:text:)``; the main answers
/// ``Message/refused(reason:)`` (a wrong passcode, a session whose text differs) or
/// ``Message/welcome(text:edits:run:moment:)``, then sends a ``Message/state(change:moment:)`` after
/// each change of its run (what changed: ``Change``; its edits first, ``Message/edits(_:)``) and a
/// ``Message/clock(moment:)`` every ``ShowJournal/clockInterval`` while
/// it plays — the records of its show journal — and ``Message/end`` when it ends normally. Both
/// sides send the hashes of their output (``Message/hashes(_:)``, ``OutputHasher``) and, where a
/// divergence starts, their samples of that block (``Message/samples(start:samples:)``).
public enum ShowLink {
    /// One line of the link.
    public enum Message: Sendable, Hashable {
        /// The backup's first line: the shared passcode and its session file's text.
        case hello(passcode: String, text: String)
        /// The main refuses the backup, saying why.
        case refused(reason: String)
        /// The main accepts: its session text (as edited, after its `edits`th edit), its run's
        /// state and where it is.
        case welcome(text: String, edits: Int, run: SessionPlayer.RunState, moment: ShowJournal.Moment)
        /// The main's run changed (the state it sent before, with ``Change`` applied).
        case state(change: Change, moment: ShowJournal.Moment)
        /// Where the main's session is now.
        case clock(moment: ShowJournal.Moment)
        /// The main's run ended normally.
        case end
        /// The main's edits since the last it sent (``LockstepSession/SessionPlayer/EditRecord``).
        case edits([SessionPlayer.EditRecord])
        /// Either side: the hashes of its output's blocks hashed since it last sent them
        /// (``OutputHasher``).
        case hashes([OutputHasher.BlockHash])
        /// Either side: its samples of the block at session sample `start` (interleaved), sent
        /// when that block's hashes differ and the block before did not.
        case samples(start: Int64, samples: [Float])
        /// The backup: how far its session time is ahead of the main's (milliseconds, negative
        /// behind, as it last measured), and with `--free-clock` how it steers (parts per million
        /// its session plays faster than its device's frames) and the part of that which takes up
        /// the clocks' difference (the steering loop's integral).
        case position(offsetMilliseconds: Double, steeringPPM: Double?, driftPPM: Double?)
    }

    /// The link's version: a peer of another version is refused.
    public static let version = 2
    /// The longest line either side accepts (a welcome carries the session's text).
    public static let maximumLine = 16 << 20

    private struct Line: Codable {
        var kind: String
        var version: Int?
        var passcode: String?
        var text: String?
        var reason: String?
        var run: SessionPlayer.RunState?
        var change: Change?
        var moment: ShowJournal.Moment?
        var blocks: [WireBlock]?
        var edits: [SessionPlayer.EditRecord]?
        var count: Int?
        var start: Int64?
        /// Samples: little-endian 32-bit floats, base64.
        var data: String?
        var offset: Double?
        var ppm: Double?
        var drift: Double?
    }

    /// A block's hashes on the wire: 16 hex digits each (JSON numbers lose 64-bit integers).
    private struct WireBlock: Codable {
        var start: Int64
        var hashes: [String]
        var time: Double
    }

    /// `message` as one line, newline included.
    public static func encode(_ message: Message) -> Data {
        var line: Line
        switch message {
        case .hello(let passcode, let text): line = Line(kind: "hello", version: version, passcode: passcode, text: text)
        case .refused(let reason): line = Line(kind: "refused", reason: reason)
        case .welcome(let text, let edits, let run, let moment):
            line = Line(kind: "welcome", version: version, text: text, run: run, moment: moment, count: edits)
        case .edits(let edits): line = Line(kind: "edits", edits: edits)
        case .state(let change, let moment): line = Line(kind: "state", change: change, moment: moment)
        case .clock(let moment): line = Line(kind: "clock", moment: moment)
        case .end: line = Line(kind: "end")
        case .hashes(let blocks):
            line = Line(kind: "hashes", blocks: blocks.map { block in
                WireBlock(start: block.start, hashes: block.hashes.map { String(format: "%016llx", $0) }, time: block.time)
            })
        case .samples(let start, let samples):
            var bytes = Data(capacity: samples.count * 4)
            for sample in samples { withUnsafeBytes(of: sample.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
            line = Line(kind: "samples", start: start, data: bytes.base64EncodedString())
        case .position(let offset, let ppm, let drift): line = Line(kind: "position", offset: offset, ppm: ppm, drift: drift)
        }
        var data = (try? JSONEncoder().encode(line)) ?? Data()
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// The message of one line (without its newline).
    /// - Throws: ``LinkError`` naming what is wrong with it.
    public static func decode(_ bytes: some Collection<UInt8>) throws(LinkError) -> Message {
        guard let line = try? JSONDecoder().decode(Line.self, from: Data(bytes)) else {
            throw LinkError("a line that is not a link message (\(bytes.count) bytes)")
        }
        func need<T>(_ value: T?, _ key: String) throws(LinkError) -> T {
            guard let value else { throw LinkError("a '\(line.kind)' line without its '\(key)'") }
            return value
        }
        switch line.kind {
        case "hello":
            guard line.version == version else { throw LinkError("a peer of link version \(line.version.map(String.init) ?? "?") (this is \(version)): run the same Lockstep on both machines") }
            return .hello(passcode: try need(line.passcode, "passcode"), text: try need(line.text, "text"))
        case "refused": return .refused(reason: try need(line.reason, "reason"))
        case "welcome":
            guard line.version == version else { throw LinkError("a main of link version \(line.version.map(String.init) ?? "?") (this is \(version)): run the same Lockstep on both machines") }
            return .welcome(text: try need(line.text, "text"), edits: line.count ?? 0, run: try need(line.run, "run"), moment: try need(line.moment, "moment"))
        case "edits": return .edits(try need(line.edits, "edits"))
        case "state": return .state(change: try need(line.change, "change"), moment: try need(line.moment, "moment"))
        case "clock": return .clock(moment: try need(line.moment, "moment"))
        case "end": return .end
        case "position":
            let offset = try need(line.offset, "offset")
            guard offset.isFinite, line.ppm?.isFinite ?? true, line.drift?.isFinite ?? true else {
                throw LinkError("a 'position' line with a number that is not finite")
            }
            return .position(offsetMilliseconds: offset, steeringPPM: line.ppm, driftPPM: line.drift)
        case "hashes":
            return .hashes(try need(line.blocks, "blocks").map { (block: WireBlock) throws(LinkError) in
                var hashes: [UInt64] = []
                for text in block.hashes {
                    guard let hash = UInt64(text, radix: 16) else { throw LinkError("a 'hashes' line with a hash that is not hexadecimal ('\(text)')") }
                    hashes.append(hash)
                }
                return OutputHasher.BlockHash(start: block.start, hashes: hashes, time: block.time)
            })
        case "samples":
            guard let bytes = Data(base64Encoded: try need(line.data, "data")), bytes.count % 4 == 0 else {
                throw LinkError("a 'samples' line whose data is not base64 of 32-bit floats")
            }
            var samples: [Float] = []
            samples.reserveCapacity(bytes.count / 4)
            var bits: UInt32 = 0
            for (index, byte) in bytes.enumerated() {
                bits |= UInt32(byte) << UInt32(8 * (index % 4))
                if index % 4 == 3 {
                    samples.append(Float(bitPattern: bits))
                    bits = 0
                }
            }
            return .samples(start: try need(line.start, "start"), samples: samples)
        default: throw LinkError("a line of unknown kind '\(line.kind)'")
        }
    }

    /// Whether two passcodes are equal, in a time that does not depend on where they differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = x.count ^ y.count
        for index in 0..<max(x.count, y.count) {
            difference |= Int((index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0))
        }
        return difference == 0
    }

    /// The channel handlers that turn a TCP stream into ``Message``s: lines of at most
    /// ``maximumLine`` bytes.
    static func framing() -> [any ChannelHandler] {
        [ByteToMessageHandler(LineBasedFrameDecoder(), maximumBufferSize: maximumLine)]
    }
}

/// What went wrong on a show link, said for the operator.
public struct LinkError: Error, Sendable, CustomStringConvertible {
    /// The message.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
