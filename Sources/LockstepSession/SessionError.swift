/// Where something is in a session file: its path, line and column (both counted from 1).
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// The session file's path as given.
    public var path: String
    /// The line, from 1.
    public var line: Int
    /// The column, from 1 (in Unicode scalars, as libyaml counts).
    public var column: Int

    /// Creates a location.
    public init(path: String, line: Int, column: Int) {
        self.path = path
        self.line = line
        self.column = column
    }

    /// `path:line:column`, the form editors and compilers use.
    public var description: String { "\(path):\(line):\(column)" }
}

/// One problem found in a session file, with where it is and what would fix it.
public struct SessionDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The file is not valid YAML.
        case syntax
        /// A key the format does not have.
        case unknownKey
        /// A required key is missing.
        case missingKey
        /// A value of the wrong type or shape (a list where a mapping belongs, say).
        case invalidValue
        /// A time that is malformed or negative.
        case invalidTime
        /// A gain that is malformed or out of range.
        case invalidGain
        /// An audio file that is missing, unreadable or unusable.
        case audioFile
        /// A cue names a layer that does not exist.
        case unknownLayer
        /// A cue names a cue that does not exist.
        case unknownCue
        /// Two cues or layers share a name.
        case duplicateName
        /// `after`/`with` references form a cycle.
        case cycle
        /// Keys that contradict each other, or a timeline that cannot be built.
        case conflict
        /// Aliases that would expand the document beyond ``SessionParser/maximumAliasExpansion``
        /// nodes (an alias bomb).
        case aliasLimit
    }

    /// What kind of problem it is.
    public var kind: Kind
    /// Where it is.
    public var location: SourceLocation
    /// What is wrong, and what would fix it.
    public var message: String

    /// Creates a diagnostic.
    public init(_ kind: Kind, at location: SourceLocation, _ message: String) {
        self.kind = kind
        self.location = location
        self.message = message
    }

    /// `FILE:LINE:COLUMN: error: message`.
    public var description: String { "\(location): error: \(message)" }
}

/// A session file that cannot be used: every problem found, each with its line and column.
///
/// The description lists them one a line as `FILE:LINE:COLUMN: error: what is wrong; what to do`.
public struct SessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Every problem found, in file order.
    public var diagnostics: [SessionDiagnostic]

    /// Creates an error from its diagnostics (at least one).
    public init(_ diagnostics: [SessionDiagnostic]) {
        self.diagnostics = diagnostics.sorted {
            ($0.location.line, $0.location.column) < ($1.location.line, $1.location.column)
        }
    }

    /// Creates an error with one diagnostic.
    public init(_ kind: SessionDiagnostic.Kind, at location: SourceLocation, _ message: String) {
        self.init([SessionDiagnostic(kind, at: location, message)])
    }

    /// One line per diagnostic.
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
