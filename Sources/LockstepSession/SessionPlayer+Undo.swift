/// Undo and redo of cue edits (``SessionPlayer/edit(_:_:)``): each puts the session file back as
/// it was before (or after) the edit, applied as any edit is — at once to a cue not placed, at its
/// next start to one placed.
extension SessionPlayer {
    /// One edit: the session before and after it.
    struct EditStep: Sendable {
        var before: Session
        var after: Session
        /// Cues renamed by it: old name → new.
        var renames: [String: String]
        /// The cue edited, named as before and after the edit, and what was edited.
        var focusBefore: String
        var focusAfter: String
        var key: String
    }

    /// How many edits, undos and redos were made in this run.
    public var editCount: Int { editCounter.load(ordering: .acquiring) }

    /// How many edits can be undone, and redone.
    public var undoDepth: (undo: Int, redo: Int) { state.withLock { ($0.undoStack.count, $0.redoStack.count) } }

    /// Undoes the last edit not undone.
    /// - Returns: what the undo did (the cue, the key, where it lands).
    /// - Throws: ``PlayerError`` (`nothingWaiting`) when there is nothing to undo.
    @discardableResult
    public func undo() throws(PlayerError) -> EditResult { try travel(back: true) }

    /// Makes the last edit undone again.
    /// - Returns: what the redo did.
    /// - Throws: ``PlayerError`` (`nothingWaiting`) when there is nothing to redo.
    @discardableResult
    public func redo() throws(PlayerError) -> EditResult { try travel(back: false) }

    /// Installs the session file before the last edit (`back`) or after the last undone one, and
    /// moves that edit to the other stack.
    private func travel(back: Bool) throws(PlayerError) -> EditResult {
        try control { state throws(PlayerError) -> EditResult in
            guard let step = back ? state.undoStack.last : state.redoStack.last else {
                throw PlayerError(.nothingWaiting, back ? "undo: no edit to undo" : "redo: no undone edit to redo")
            }
            let renames = back ? Dictionary(step.renames.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first }) : step.renames
            let result = try install(back ? step.before : step.after, in: &state, renames: renames,
                                     focus: back ? step.focusBefore : step.focusAfter, key: step.key,
                                     label: "\(back ? "undo" : "redo") of \(step.key)")
            editCounter.add(1, ordering: .releasing)
            if back {
                state.undoStack.removeLast()
                state.redoStack.append(step)
            } else {
                state.redoStack.removeLast()
                state.undoStack.append(step)
            }
            return result
        }
    }
}
