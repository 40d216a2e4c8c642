/// A SMPTE timecode frame rate: 24, 25, 29.97 drop-frame or 30 frames per second.
///
/// Its raw value is how the CLI and the docs spell it (`--ltc-fps 29.97df`).
public enum TimecodeRate: String, CaseIterable, Sendable, CustomStringConvertible {
    /// 24 fps (film).
    case fps24 = "24"
    /// 25 fps (PAL, EBU).
    case fps25 = "25"
    /// 30000/1001 fps with drop-frame labels (NTSC): frames 00 and 01 are skipped at the start of
    /// every minute except every tenth, so the labels keep up with the clock.
    case fps2997DropFrame = "29.97df"
    /// 30 fps (non-drop).
    case fps30 = "30"

    /// Parses the CLI's spelling (`24`, `25`, `29.97df`, `30`).
    /// - Throws: ``TimecodeError`` naming the accepted rates.
    public init(parsing text: String) throws(TimecodeError) {
        guard let rate = TimecodeRate(rawValue: text.lowercased()) else {
            let hint = text.hasPrefix("29.97") ? " (29.97 fps is supported as drop-frame only: 29.97df)" : ""
            throw TimecodeError("'\(text)' is not a timecode rate\(hint); give one of \(Self.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self = rate
    }

    /// The labels' frames per second: 24, 25 or 30 (29.97 counts its labels in thirties).
    public var nominalFramesPerSecond: Int {
        switch self {
        case .fps24: 24
        case .fps25: 25
        case .fps2997DropFrame, .fps30: 30
        }
    }

    /// The real rate as a fraction, frames per `denominator` seconds: 24/1, 25/1, 30000/1001, 30/1.
    public var numerator: Int64 { self == .fps2997DropFrame ? 30000 : Int64(nominalFramesPerSecond) }
    /// The real rate's denominator (1001 for 29.97, else 1).
    public var denominator: Int64 { self == .fps2997DropFrame ? 1001 : 1 }

    /// Whether the labels drop frames (29.97df).
    public var isDropFrame: Bool { self == .fps2997DropFrame }

    /// Frames in 24 hours of labels (where timecode wraps to 00:00:00:00).
    public var framesPerDay: Int64 {
        // Drop-frame: 17 982 frames every ten minutes.
        isDropFrame ? 144 * 17_982 : Int64(nominalFramesPerSecond) * 86_400
    }

    /// The CLI spelling.
    public var description: String { rawValue }
}

/// A bad timecode, timecode rate or LTC setting; the message says what to give instead.
public struct TimecodeError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and what to do.
    public var message: String
    /// Creates the error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
