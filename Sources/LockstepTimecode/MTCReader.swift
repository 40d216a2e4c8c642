/// Reads MIDI time code: quarter-frame messages (`F1 0pdddd`) and full-frame messages
/// (`F0 7F 7F 01 01 hh mm ss ff F7`), each with the sample time it arrived on, into labelled
/// frames and the sample time each frame started on.
///
/// Eight quarter-frames, pieces 0 to 7 in a row, carry the label of the frame on whose first
/// quarter piece 0 arrived; that frame started on piece 0's sample time (as ``MTCMessages``
/// sends them: a receiver that waits for piece 7 is two frames later, the "+2 frames" of MTC).
/// So a frame is read every two frames, and its start is as exact as the sender put piece 0:
/// exact to the sample inside the JACK graph from a sample-exact sender, within the quarter-frame
/// a cable's timing blurs otherwise. A full frame (a locate) is a frame starting on its own sample
/// time; pieces read across it are dropped.
public struct MTCReader: Sendable {
    /// One frame read.
    public struct Frame: Sendable, Hashable {
        /// Its label.
        public var timecode: Timecode
        /// The rate the messages name.
        public var rate: TimecodeRate
        /// The sample time of its first sample.
        public var sampleTime: Int64
        /// Whether it came from a full-frame message (a locate) rather than eight quarter-frames.
        public var isFullFrame: Bool
    }

    private var pieces = [Int](repeating: 0, count: 8)
    private var nextPiece = 0
    private var pieceZeroTime: Int64 = 0

    /// Creates a reader waiting for piece 0.
    public init() {}

    /// Takes one MIDI message received on `sampleTime`; returns the frame it completes, if any.
    public mutating func read(_ bytes: [UInt8], at sampleTime: Int64) -> Frame? {
        if bytes.count == 2, bytes[0] == 0xF1 {
            let piece = Int(bytes[1] >> 4) & 7, value = Int(bytes[1] & 0x0F)
            guard piece == nextPiece else {
                nextPiece = 0
                if piece != 0 { return nil }
                return read(bytes, at: sampleTime)
            }
            if piece == 0 { pieceZeroTime = sampleTime }
            pieces[piece] = value
            nextPiece = (piece + 1) % 8
            guard piece == 7, let rate = Self.rate(code: (pieces[7] >> 1) & 3) else { return nil }
            let label = Timecode(hours: pieces[6] | (pieces[7] & 1) << 4, minutes: pieces[4] | pieces[5] << 4,
                                 seconds: pieces[2] | pieces[3] << 4, frames: pieces[0] | pieces[1] << 4)
            guard (try? label.validate(at: rate)) != nil else { return nil }
            return Frame(timecode: label, rate: rate, sampleTime: pieceZeroTime, isFullFrame: false)
        }
        if bytes.count == 10, bytes[0..<5] == [0xF0, 0x7F, 0x7F, 0x01, 0x01], bytes[9] == 0xF7,
           let rate = Self.rate(code: Int(bytes[5] >> 5) & 3) {
            nextPiece = 0
            let label = Timecode(hours: Int(bytes[5] & 0x1F), minutes: Int(bytes[6]), seconds: Int(bytes[7]), frames: Int(bytes[8]))
            guard (try? label.validate(at: rate)) != nil else { return nil }
            return Frame(timecode: label, rate: rate, sampleTime: sampleTime, isFullFrame: true)
        }
        return nil
    }

    /// The rate of MTC's rate code (0: 24, 1: 25, 2: 29.97df, 3: 30).
    static func rate(code: Int) -> TimecodeRate? {
        TimecodeRate.allCases.first { MTCMessages.rateCode($0) == code }
    }
}
