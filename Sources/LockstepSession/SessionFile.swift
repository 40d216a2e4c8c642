import Foundation
import LockstepFiles

/// Saving a session's edits to its file: atomically (written beside it, flushed, renamed over
/// it), the previous version kept as `FILE.bak`, and never over a file that changed on disk since
/// the session was read from it unless asked.
public enum SessionFile {
    /// What a save did.
    public struct Saved: Sendable, Hashable {
        /// The session file.
        public var path: String
        /// Where the previous version is kept.
        public var backupPath: String
        /// How many values changed (of the cues in both versions).
        public var changes: Int
        /// Cues added and removed since the last save.
        public var added = 0, removed = 0
    }

    /// What a file holds as last read or saved: its text and the document read from it.
    public struct Base: Sendable {
        /// The file's text.
        public var text: String
        /// The document read from it (where each value is written).
        public var document: SessionDocument

        /// The file as `session` was read from it.
        public init(_ session: Session) {
            text = session.text
            document = session.document
        }

        init(text: String, document: SessionDocument) {
            self.text = text
            self.document = document
        }
    }

    /// Writes `edited` (the session's document with the run's edits) into `session`'s file,
    /// changing only the values edited (``SessionFileEditor``).
    /// - Parameter force: write even though the file changed on disk since it was read (its
    ///   current text is kept as the backup).
    /// - Throws: ``SessionFileEditError`` when the file changed on disk (without `force`), cannot
    ///   be read or written, or the edits cannot be written into it.
    @discardableResult
    public static func save(_ edited: SessionDocument, of session: Session, force: Bool = false) throws(SessionFileEditError) -> Saved {
        try save(edited, base: Base(session), force: force).saved
    }

    /// Writes `edited` into the file `base` describes (as last read or saved), changing only the
    /// values that differ from `base`; returns what was done and the file's new base.
    /// - Throws: as ``save(_:of:force:)``.
    public static func save(_ edited: SessionDocument, base: Base, force: Bool = false) throws(SessionFileEditError) -> (saved: Saved, base: Base) {
        let path = base.document.path
        guard !base.text.isEmpty else {
            throw SessionFileEditError("this run was not read from a session file (lockstep play makes its session from its files): nothing to save to")
        }
        let onDisk = try onDisk(path, base: base, force: force)
        let text = try SessionFileEditor.apply(to: base.text, original: base.document, edited: edited)
        let changes = zip(base.document.cues, edited.cues).reduce(0) { count, pair in
            count + SessionFileEditor.keys.filter { SessionFileEditor.value(of: $0, in: pair.0) != SessionFileEditor.value(of: $0, in: pair.1) }.count
        }
        let backup = path + ".bak"
        do {
            try write(onDisk, to: backup)
            try write(text, to: path)
        } catch {
            throw SessionFileEditError("\(path): cannot save: \(error.message); the file is unchanged")
        }
        var parser = SessionParser(path: path, text: text)
        let document = (try? parser.parseCollecting().0) ?? edited
        return (Saved(path: path, backupPath: backup, changes: changes), Base(text: text, document: document))
    }

    /// Writes `session` (a session as edited, ``SessionPlayer/editedSession``: its text already
    /// holds every edit) into the file `base` describes; returns what was done and the new base.
    /// - Throws: as ``save(_:of:force:)``.
    public static func save(_ session: Session, base: Base, force: Bool = false) throws(SessionFileEditError) -> (saved: Saved, base: Base) {
        let path = base.document.path
        guard !base.text.isEmpty, !session.text.isEmpty else {
            throw SessionFileEditError("this run was not read from a session file (lockstep play makes its session from its files): nothing to save to")
        }
        let onDisk = try onDisk(path, base: base, force: force)
        var saved = Saved(path: path, backupPath: path + ".bak", changes: 0)
        let before = Dictionary(base.document.cues.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Set(session.document.cues.map(\.name))
        let oldBytes = Array(base.text.utf8), newBytes = Array(session.text.utf8)
        for cue in session.document.cues {
            guard let old = before[cue.name] else { saved.added += 1; continue }
            let values = SessionFileEditor.keys.filter { SessionFileEditor.value(of: $0, in: old) != SessionFileEditor.value(of: $0, in: cue) }.count
            // (A value of another key — a file, a layer — counts once.)
            let written = { (cue: SessionDocument.Cue, bytes: [UInt8]) in cue.source.map { Array(bytes[$0.mapping]) } ?? [] }
            saved.changes += values > 0 ? values : (written(old, oldBytes) != written(cue, newBytes) ? 1 : 0)
        }
        saved.removed = base.document.cues.filter { !after.contains($0.name) }.count
        do {
            try write(onDisk, to: saved.backupPath)
            try write(session.text, to: path)
        } catch {
            throw SessionFileEditError("\(path): cannot save: \(error.message); the file is unchanged")
        }
        return (saved, Base(text: session.text, document: session.document))
    }

    /// The file at `path` as it is now: refused when it is not `base`'s text (unless `force`).
    static func onDisk(_ path: String, base: Base, force: Bool) throws(SessionFileEditError) -> String {
        let onDisk: String
        do { onDisk = try Session.readSessionFile(path) } catch {
            throw SessionFileEditError("\(path): \(error.problem)")
        }
        if onDisk != base.text && !force {
            throw SessionFileEditError("\(path) changed on disk since the session was read from it; reload the session, or save anyway (save force) to replace those changes (they are kept in \(path).bak)")
        }
        return onDisk
    }

    /// Writes `text` to `path` atomically.
    static func write(_ text: String, to path: String) throws(FileError) {
        let output = try AtomicFileOutput(destinationPath: path)
        try output.write(Array(text.utf8))
        try output.commit()
    }
}

extension SessionFile {
    /// Where two texts first differ: `line N was "…", is "…"`.
    public static func firstDifference(_ old: String, _ new: String) -> String {
        let a = old.components(separatedBy: "\n"), b = new.components(separatedBy: "\n")
        for index in 0..<max(a.count, b.count) {
            let was = index < a.count ? a[index] : nil, now = index < b.count ? b[index] : nil
            guard was != now else { continue }
            func show(_ line: String?) -> String { line.map { "\"\($0.count > 60 ? String($0.prefix(60)) + "…" : $0)\"" } ?? "nothing" }
            return "line \(index + 1) was \(show(was)), is \(show(now))"
        }
        return "the same lines, other bytes"
    }
}
