/// Something a live show tells its operator as it happens: the server went away or came back, the
/// rate changed and the show played on, a layer started late.
public struct ShowNote: Sendable, Hashable, CustomStringConvertible {
    /// How much it matters.
    public enum Level: Sendable, Hashable {
        /// A change worth knowing (the server came back).
        case notice
        /// Something that was heard (a late start, skipped to stay on the timeline).
        case warning
        /// Something that ends or damages the show (it cannot play on at a new rate).
        case error
    }

    /// How much it matters.
    public var level: Level
    /// One sentence saying what happened, in lower case, as the CLI prints it.
    public var text: String

    /// A note of `level` saying `text`.
    public init(_ level: Level, _ text: String) {
        self.level = level
        self.text = text
    }

    public var description: String { text }
}

/// A change of the server's sample rate that a show played on through: every layer stopped on the
/// change's sample (rather than play at the wrong pitch) and was made again at the new rate.
public struct ShowRateChange: Sendable, Hashable {
    /// The device sample time of the first cycle at the new rate.
    public var sampleTime: Int64
    /// The new rate.
    public var sampleRate: Int
    /// A session's position (at the new rate) it played on from.
    public var position: Int64?
    /// The device sample time it played on at (nil while a session was paused).
    public var resumedSampleTime: Int64?
    /// `resumedSampleTime` on JACK's 32-bit frame clock.
    public var resumedJACKFrame: UInt32?
    /// Layers of files: per layer, the file frame (of the whole play) it played on from.
    public var fileFrames: [Int64]?
}

/// What a show's last step found: why it ends.
public enum ShowEnd: Sendable, Hashable {
    /// Everything placed has played and nothing can still be fired (or every layer finished).
    case finished
    /// The duration it was given has played.
    case durationReached
    /// The device failed (``Engine/deviceError``) or the layers stopped on an error.
    case failed
}
