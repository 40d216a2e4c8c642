/// A control command that cannot be carried out (unknown cue, a paused cue fired…).
public struct PlayerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which kind of error.
    public enum Kind: Sendable, Hashable {
        /// No cue has that name.
        case unknownCue
        /// No layer has that name.
        case unknownLayer
        /// The cue is not a manual cue.
        case notManual
        /// Nothing at the playhead (past the last manual cue), or nothing to select that way.
        case nothingWaiting
        /// A plain `go` inside the double-GO window after the previous one: ignored.
        case doubleGo
        /// The session or cue is not in the state the command needs.
        case wrongState
        /// A value outside its range.
        case outOfRange
        /// An edit that would make the session invalid (the message is what `session check` would
        /// say of it).
        case invalidEdit
        /// Carrying it out failed.
        case failed
    }

    /// Which kind of error.
    public var kind: Kind
    /// What went wrong and what to do.
    public var message: String
    /// Creates an error of `kind`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
    /// The message.
    public var description: String { message }
}
