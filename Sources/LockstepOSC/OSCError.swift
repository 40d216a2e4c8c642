/// A problem with OSC: a packet that is not OSC, an endpoint that cannot be used.
public struct OSCError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem.
    public enum Code: String, Sendable, Hashable {
        /// A packet liblo cannot decode as an OSC message.
        case malformed
        /// A message liblo cannot encode.
        case encoding
        /// An `--osc` value that is not `[HOST:]PORT`.
        case invalidEndpoint
        /// A host name that does not resolve.
        case unresolvedHost
        /// The socket could not be made or bound (port in use, no permission).
        case cannotBind
    }

    /// What kind of problem.
    public var code: Code
    /// What went wrong and what to do.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
