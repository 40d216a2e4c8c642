/// `lockstep session check --json` (and `session render --json`) for a session with problems:
/// `valid` false and every problem with its place.
public struct SessionCheckFailure: Sendable, Hashable, Codable {
    /// One problem.
    public struct Problem: Sendable, Hashable, Codable {
        /// The file it is in.
        public var file: String
        /// Its line, from 1.
        public var line: Int
        /// Its column, from 1.
        public var column: Int
        /// Its kind (`syntax`, `unknownKey`, `missingFile`, …).
        public var kind: String
        /// What is wrong and what would fix it.
        public var message: String

        /// Creates a problem.
        public init(file: String, line: Int, column: Int, kind: String, message: String) {
            self.file = file
            self.line = line
            self.column = column
            self.kind = kind
            self.message = message
        }
    }

    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// Always false.
    public var valid = false
    /// Every problem found.
    public var errors: [Problem]

    /// Creates a failure report.
    public init(errors: [Problem]) { self.errors = errors }
}
