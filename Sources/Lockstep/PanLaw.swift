import Foundation

/// The pan law of ``QueueParameter/pan``: equal power, normalized so the centre keeps unity gain.
///
/// For pan `p` in −1…1 and `θ = (p + 1)·π/4`, output 1 (left) gets `√2·cos θ` and output 2
/// (right) `√2·sin θ`: at the centre both are 1 (a mono queue plays at unity on both outputs, as
/// without pan, and a stereo queue is unchanged); hard left is `√2` (+3 dB) left and silence
/// right. `left² + right²` is 2 for every position, so a source keeps its loudness as it moves. A
/// mono queue's one channel feeds both sides; a stereo queue's left channel is scaled by the left
/// gain and its right channel by the right gain (balance). Pan changes ramp like Volume changes.
public enum PanLaw {
    /// The left and right gains for `pan` (clamped to −1…1); exactly (1, 1) at 0.
    public static func gains(_ pan: Float) -> (left: Float, right: Float) {
        let p = Double(min(max(pan, -1), 1))
        if p == 0 { return (1, 1) }
        let theta = (p + 1) * Double.pi / 4
        return (Float(2.0.squareRoot() * cos(theta)), Float(2.0.squareRoot() * sin(theta)))
    }

    /// The two gains packed for an atomic: left in the low 32 bits, right in the high ones.
    static func packed(_ pan: Float) -> UInt64 {
        let (left, right) = gains(pan)
        return UInt64(left.bitPattern) | UInt64(right.bitPattern) << 32
    }

    /// (1, 1) packed: no pan.
    static let unity = UInt64(Float(1).bitPattern) | UInt64(Float(1).bitPattern) << 32
    /// Marks "no pan event" in a segment.
    static let none = UInt64.max
}
