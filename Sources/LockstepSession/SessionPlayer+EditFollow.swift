import Foundation

/// Edits a following run makes on the same samples (a backup following its main's edits).
extension SessionPlayer {
    /// One edit of the run, as a run following it makes it: the session text after it, the cues
    /// it renamed, and the session sample it landed on.
    public struct EditRecord: Sendable, Hashable, Codable {
        /// The run's edits so far (undo and redo count too): each new one counts one more.
        public var count: Int
        /// The session file's text after the edit.
        public var text: String
        /// Cues it renamed: old name → new.
        public var renames: [String: String]
        /// The session sample it landed on.
        public var sample: Int64
        /// The rate of ``sample``.
        public var rate: Double

        /// Creates a record.
        public init(count: Int, text: String, renames: [String: String], sample: Int64, rate: Double) {
            self.count = count
            self.text = text
            self.renames = renames
            self.sample = sample
            self.rate = rate
        }
    }

    /// How many edits the player remembers for a run following it.
    static let editHistory = 256

    /// The edits made after the `count`th (the run's first edit, undo or redo counts 1), oldest
    /// first, as far as they are remembered.
    public func edits(after count: Int) -> [EditRecord] {
        state.withLock { $0.edits.filter { $0.count > count } }
    }

    /// The session as edited and the number of the latest edit it holds (its ``EditRecord``'s
    /// count; 0: none), together.
    public var editedState: (session: Session, editCount: Int) { state.withLock { ($0.session, $0.edits.last?.count ?? 0) } }

    /// Makes another run's edit (``EditRecord``) here: the session becomes its text, on its
    /// sample (or the first this device can still change, when that is later: the returned
    /// result's sample says which), as ``edit(_:_:)`` makes an edit; it can be undone.
    /// - Throws: ``PlayerError`` (`invalidEdit`) when the text is not a valid session here.
    @discardableResult
    public func follow(edit record: EditRecord) throws(PlayerError) -> EditResult {
        let sample = Int64((Double(record.sample) * rate / record.rate).rounded())
        return try control { state throws(PlayerError) -> EditResult in
            let next = try reread(record.text, of: state.session, label: "the main's edit \(record.count)")
            let landing = max(sample, state.earliestChangeable ?? sample)
            return try commit(next, in: &state, renames: record.renames, focus: record.renames.values.first ?? "", key: "",
                              label: "the main's edit \(record.count)", at: landing)
        }
    }
}
