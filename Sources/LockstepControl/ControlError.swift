/// A command that could not be understood or carried out, with what to do about it.
public struct ControlError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong and what to do.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
