import LockstepSchema
import LockstepSession

/// A command that could not be understood or carried out: which kind of error, and what to do
/// about it.
public struct ControlError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which kind of error (the reply's `code`).
    public var code: ControlErrorCode
    /// What went wrong and what to do.
    public var message: String
    /// Creates an error of kind `code`.
    public init(_ code: ControlErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
    /// The player's error as a control error of the same kind.
    public init(_ error: PlayerError) {
        self.init(ControlErrorCode(error.kind), error.message)
    }
    /// The message.
    public var description: String { message }
}

extension ControlErrorCode {
    /// The code of a player's error of `kind`.
    public init(_ kind: PlayerError.Kind) {
        switch kind {
        case .unknownCue: self = .unknownCue
        case .unknownLayer: self = .unknownLayer
        case .notManual: self = .notManual
        case .nothingWaiting: self = .nothingWaiting
        case .doubleGo: self = .doubleGo
        case .wrongState: self = .wrongState
        case .outOfRange: self = .outOfRange
        case .invalidEdit: self = .invalidEdit
        case .failed: self = .failed
        }
    }
}

extension ControlReply {
    /// A reply reporting `error`.
    public static func error(_ address: String, _ error: ControlError) -> ControlReply {
        .error(address, error.code, error.message)
    }
}
